#include "traces/trace_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "traces/framing.h"

namespace scanback::trace {

namespace {

std::string errnoText() { return std::strerror(errno); }

bool writeAll(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::string directoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

std::unique_ptr<TraceWriter> TraceWriter::create(const std::string& path, const HeaderData& header,
                                                 std::string& error) {
  if (header.tasks.size() > 65536) {
    error = fmt::format("{} tasks: a trace holds at most 65536", header.tasks.size());
    return nullptr;
  }
  if (header.options.zstdLevel < ZSTD_minCLevel() || header.options.zstdLevel > ZSTD_maxCLevel()) {
    error =
        fmt::format("zstd level {} out of range {}..{}", header.options.zstdLevel, ZSTD_minCLevel(), ZSTD_maxCLevel());
    return nullptr;
  }
  const std::string partial = path + ".partial";
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = fmt::format("cannot create {}: {}", partial, errnoText());
    return nullptr;
  }
  std::unique_ptr<TraceWriter> writer(new TraceWriter(path, fd, header));
  auto failed = [&](std::string why) {
    error = std::move(why);
    writer.reset();
    ::unlink(partial.c_str());
    return nullptr;
  };
  if (!writer->encoder_.ok()) return failed("cannot create a zstd compression context");
  if (!writeAll(fd, reinterpret_cast<const uint8_t*>(kFileMagic), sizeof kFileMagic)) {
    return failed(fmt::format("cannot write {}: {}", partial, errnoText()));
  }
  writer->bytesWritten_ = sizeof kFileMagic;
  if (!writer->writeBlock(BlockKind::Header, 0, 0, encodeHeader(header), nullptr)) {
    return failed(writer->lastError());
  }
  return writer;
}

TraceWriter::TraceWriter(std::string path, int fd, const HeaderData& header)
    : path_(std::move(path)), fd_(fd), encoder_(header.options.zstdLevel) {
  limits_.imageSize = header.imageSize;
  limits_.statementCount = header.statementCount;
}

TraceWriter::~TraceWriter() {
  if (fd_ >= 0) ::close(fd_);
}

bool TraceWriter::fail(std::string message) {
  error_ = std::move(message);
  return false;
}

bool TraceWriter::usable() {
  if (fd_ < 0) return fail("the trace writer is closed");
  if (failed_) return fail(fmt::format("the trace writer failed earlier: {}", error_));
  return true;
}

bool TraceWriter::writeBlock(BlockKind kind, uint64_t firstCycle, uint64_t cycleCount,
                             const std::vector<uint8_t>& message, BlockInfo* info) {
  std::string why;
  const std::span<const uint8_t> block = encoder_.frame(kind, firstCycle, cycleCount, message, why);
  if (block.empty()) return fail(std::move(why));
  return appendBlock(block, kind, firstCycle, cycleCount, static_cast<uint32_t>(message.size()), info);
}

bool TraceWriter::appendBlock(std::span<const uint8_t> block, BlockKind kind, uint64_t firstCycle, uint64_t cycleCount,
                              uint32_t rawSize, BlockInfo* info) {
  if (!writeAll(fd_, block.data(), block.size())) {
    const std::string reason = errnoText();
    // Keep the file a valid prefix: drop whatever part of the block reached it.
    if (::ftruncate(fd_, static_cast<off_t>(bytesWritten_)) == 0) {
      ::lseek(fd_, static_cast<off_t>(bytesWritten_), SEEK_SET);
    }
    failed_ = true;
    return fail(fmt::format("cannot write {}: {}", partialPath(), reason));
  }
  if (info) {
    info->offset = bytesWritten_;
    info->kind = kind;
    info->firstCycle = firstCycle;
    info->cycleCount = cycleCount;
    info->storedSize = static_cast<uint32_t>(block.size() - kFrameHeaderBytes);
    info->rawSize = rawSize;
  }
  bytesWritten_ += block.size();
  rawBytes_ += rawSize;
  return true;
}

bool TraceWriter::writeChunk(const ChunkData& chunk) {
  if (!usable()) return false;
  if (endedBy_) return fail(fmt::format("a chunk after the {}: it ends the trace", endedBy_));
  if (chunk.firstCycle < nextCycle_) {
    return fail(fmt::format("chunk starts at cycle {}, before the end of the previous chunk or gap (cycle {})",
                            chunk.firstCycle, nextCycle_));
  }
  std::string why;
  if (!validateChunk(chunk, limits_, why))
    return fail(fmt::format("invalid chunk at cycle {}: {}", chunk.firstCycle, why));
  BlockInfo info;
  if (!writeBlock(BlockKind::Chunk, chunk.firstCycle, chunk.cycleCount(), encodeChunk(chunk), &info)) return false;
  blocks_.push_back(info);
  nextCycle_ = chunk.firstCycle + chunk.cycleCount();
  return true;
}

bool TraceWriter::writeEncodedChunk(const EncodedChunk& chunk) {
  if (!usable()) return false;
  if (chunk.empty()) return fail("an empty encoded chunk (not made by BlockEncoder::encodeChunk)");
  if (endedBy_) return fail(fmt::format("a chunk after the {}: it ends the trace", endedBy_));
  if (chunk.firstCycle() < nextCycle_) {
    return fail(fmt::format("chunk starts at cycle {}, before the end of the previous chunk or gap (cycle {})",
                            chunk.firstCycle(), nextCycle_));
  }
  // Validated when it was encoded: against the program in effect here, or it is not valid here.
  if (chunk.limits().imageSize != limits_.imageSize || chunk.limits().statementCount != limits_.statementCount) {
    return fail(fmt::format(
        "chunk at cycle {} was encoded for an image of {} bytes and {} statements; the program in effect has {} "
        "and {}",
        chunk.firstCycle(), chunk.limits().imageSize, chunk.limits().statementCount, limits_.imageSize,
        limits_.statementCount));
  }
  // The bytes may have waited in memory for a long time: check that they are still the block.
  const std::span<const uint8_t> block = chunk.bytes();
  std::string why;
  std::optional<FrameHeader> h;
  if (block.size() >= kFrameHeaderBytes) h = decodeFrameHeader(block.data(), why);
  if (!h || h->kind != BlockKind::Chunk || h->firstCycle != chunk.firstCycle() || h->cycleCount != chunk.cycleCount() ||
      h->rawSize != chunk.rawSize() || kFrameHeaderBytes + h->storedSize != block.size() ||
      payloadHash(block.data() + kFrameHeaderBytes, h->storedSize) != h->payloadHash) {
    return fail(
        fmt::format("encoded chunk at cycle {} is damaged{}{}", chunk.firstCycle(), why.empty() ? "" : ": ", why));
  }
  BlockInfo info;
  if (!appendBlock(block, BlockKind::Chunk, chunk.firstCycle(), chunk.cycleCount(), chunk.rawSize(), &info))
    return false;
  blocks_.push_back(info);
  nextCycle_ = chunk.firstCycle() + chunk.cycleCount();
  return true;
}

bool TraceWriter::writeGap(const GapData& gap) {
  if (!usable()) return false;
  if (endedBy_) return fail(fmt::format("a gap after the {}: it ends the trace", endedBy_));
  if (gap.firstCycle < nextCycle_) {
    return fail(fmt::format("gap starts at cycle {}, before the end of the previous chunk or gap (cycle {})",
                            gap.firstCycle, nextCycle_));
  }
  if (gap.firstCycle + gap.cycleCount < gap.firstCycle) {
    return fail(fmt::format("gap of {} cycles from cycle {} overflows", gap.cycleCount, gap.firstCycle));
  }
  BlockInfo info;
  if (!writeBlock(BlockKind::Gap, gap.firstCycle, gap.cycleCount, encodeGap(gap), &info)) return false;
  blocks_.push_back(info);
  nextCycle_ = gap.firstCycle + gap.cycleCount;
  return true;
}

bool TraceWriter::writeProgramChange(const ProgramChangeData& change) {
  if (!usable()) return false;
  if (endedBy_) return fail(fmt::format("a program change after the {}: it ends the trace", endedBy_));
  if (change.atCycle < nextCycle_) {
    return fail(fmt::format("program change at cycle {}, before the end of the previous chunk or gap (cycle {})",
                            change.atCycle, nextCycle_));
  }
  BlockInfo info;
  if (!writeBlock(BlockKind::ProgramChange, change.atCycle, 0, encodeProgramChange(change), &info)) return false;
  blocks_.push_back(info);
  limits_.imageSize = change.imageSize;
  limits_.statementCount = change.statementCount;
  return true;
}

bool TraceWriter::writeFault(const FaultData& fault) {
  if (!usable()) return false;
  if (endedBy_) return fail(fmt::format("a fault after the {}: it ends the trace", endedBy_));
  BlockInfo info;
  if (!writeBlock(BlockKind::Fault, fault.cycle, 0, encodeFault(fault), &info)) return false;
  blocks_.push_back(info);
  endedBy_ = "fault";
  return true;
}

bool TraceWriter::writeOpenCycle(const OpenCycleData& open) {
  if (!usable()) return false;
  if (endedBy_) return fail(fmt::format("an open cycle after the {}: it ends the trace", endedBy_));
  if (open.cycle < nextCycle_) {
    return fail(
        fmt::format("open cycle {}, before the end of the previous chunk or gap (cycle {})", open.cycle, nextCycle_));
  }
  if (open.keyframe.size() != limits_.imageSize)
    return fail(fmt::format("open cycle {}: keyframe size {} != image size {}", open.cycle, open.keyframe.size(),
                            limits_.imageSize));
  BlockInfo info;
  if (!writeBlock(BlockKind::OpenCycle, open.cycle, 0, encodeOpenCycle(open), &info)) return false;
  blocks_.push_back(info);
  endedBy_ = "open cycle";
  return true;
}

bool TraceWriter::flush() {
  if (!usable()) return false;
  if (::fdatasync(fd_) != 0) return fail(fmt::format("cannot sync {}: {}", partialPath(), errnoText()));
  return true;
}

bool TraceWriter::close() {
  if (!usable()) {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    return false;
  }
  BlockInfo index;
  bool ok = writeBlock(BlockKind::Index, 0, 0, encodeIndex(blocks_), &index);
  if (ok) {
    uint8_t trailer[kTrailerBytes];
    encodeTrailer(Trailer{index.offset, bytesWritten_}, trailer);
    ok = writeAll(fd_, trailer, sizeof trailer);
    if (ok) {
      bytesWritten_ += sizeof trailer;
    } else {
      fail(fmt::format("cannot write {}: {}", partialPath(), errnoText()));
    }
  }
  if (ok && ::fsync(fd_) != 0) ok = fail(fmt::format("cannot sync {}: {}", partialPath(), errnoText()));
  if (::close(fd_) != 0 && ok) ok = fail(fmt::format("cannot close {}: {}", partialPath(), errnoText()));
  fd_ = -1;
  if (!ok) {
    failed_ = true;
    return false;
  }
  if (::rename(partialPath().c_str(), path_.c_str()) != 0) {
    failed_ = true;
    return fail(fmt::format("cannot rename {} to {}: {}", partialPath(), path_, errnoText()));
  }
  // Make the rename durable too.
  const int dir = ::open(directoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return true;
}

}  // namespace scanback::trace
