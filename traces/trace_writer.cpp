#include "traces/trace_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
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

// A frame header and its payload, in one writev() when the kernel takes it all at once.
bool writeAll(int fd, const uint8_t* header, size_t headerSize, const uint8_t* payload, size_t payloadSize) {
  while (headerSize > 0) {
    iovec parts[2] = {{const_cast<uint8_t*>(header), headerSize}, {const_cast<uint8_t*>(payload), payloadSize}};
    const ssize_t n = ::writev(fd, parts, payloadSize ? 2 : 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    const size_t done = static_cast<size_t>(n);
    if (done < headerSize) {
      header += done;
      headerSize -= done;
      continue;
    }
    const size_t fromPayload = done - headerSize;
    headerSize = 0;
    payload += fromPayload;
    payloadSize -= fromPayload;
  }
  return writeAll(fd, payload, payloadSize);
}

// Whether the file at `path` may be replaced by a trace: it does not exist, or it is a regular file
// that starts like a scanback trace. Anything else — a user's file, a link, a device — is never
// overwritten by a recording, whoever asked for it (a DAP client's `record` argument included).
bool replaceable(const std::string& path, const char* what, std::string& error) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return true;
    error = fmt::format("cannot check {}: {}", what, errnoText());
    return false;
  }
  if (S_ISREG(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    char magic[sizeof kFileMagic] = {};
    const bool trace = fd >= 0 && ::pread(fd, magic, sizeof magic, 0) == static_cast<ssize_t>(sizeof magic) &&
                       std::memcmp(magic, kFileMagic, sizeof magic) == 0;
    if (fd >= 0) ::close(fd);
    if (trace) return true;
  }
  error = fmt::format("{} exists and is not a scanback trace{}: a recording only ever replaces a trace", what,
                      S_ISLNK(st.st_mode)   ? " (a symbolic link)"
                      : S_ISDIR(st.st_mode) ? " (a directory)"
                      : S_ISREG(st.st_mode) ? ""
                                            : " (not a regular file)");
  return false;
}

// Whether a recording in progress holds the file at `path` (its .partial, locked while written:
// TraceWriter::create). Such a file is never replaced, by another recording or by a snapshot.
bool lockedByARecording(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool locked = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return locked;
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
  if (!replaceable(path, "the file", error) || !replaceable(partial, "its .partial file", error)) return nullptr;
  // A recording in progress keeps its .partial locked: another one (or a snapshot) to the same
  // path, or to that .partial itself, would destroy its cycles.
  if (lockedByARecording(partial)) {
    error = fmt::format("another recording is writing to it ({} is locked by a running scanback)", partial);
    return nullptr;
  }
  if (lockedByARecording(path)) {
    error = "it is the .partial file of a recording in progress";
    return nullptr;
  }
  // A .partial left by a crashed recording is a trace: it goes. The new one is created exclusively
  // and never through a link, so nothing that appeared in between is written to.
  if (::unlink(partial.c_str()) != 0 && errno != ENOENT) {
    error = fmt::format("cannot replace its old .partial file: {}", errnoText());
    return nullptr;
  }
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = errno == EEXIST ? "another recording created its .partial file at the same moment"
                            : fmt::format("cannot create its .partial file: {}", errnoText());
    return nullptr;
  }
  // Held until the writer closes: the file is this recording's. Another recording that removed
  // the new file between its creation and the lock would leave the lock on a file nobody sees, so
  // the name must still lead to the file locked.
  struct stat mine {
  }, named{};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::fstat(fd, &mine) != 0 || ::stat(partial.c_str(), &named) != 0 ||
      mine.st_ino != named.st_ino || mine.st_dev != named.st_dev) {
    ::close(fd);
    error = "another recording took its .partial file at the same moment";
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
    return failed(fmt::format("cannot write its .partial file: {}", errnoText()));
  }
  writer->bytesWritten_ = sizeof kFileMagic;
  if (!writer->writeBlock(BlockKind::Header, 0, 0, encodeHeader(header), nullptr)) {
    return failed(writer->lastError());
  }
  return writer;
}

TraceWriter::TraceWriter(std::string path, int fd, const HeaderData& header)
    : path_(std::move(path)),
      fd_(fd),
      encoder_(header.options.zstdLevel),
      numbered_(header.formatVersion >= kFirstNumberedVersion) {
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
                             const std::vector<uint8_t>& message, BlockInfo* info, std::span<const uint8_t> prefix) {
  std::string why;
  const std::span<const uint8_t> block = encoder_.frame(kind, firstCycle, cycleCount, message, why, prefix);
  if (block.empty()) return fail(std::move(why));
  return appendBlock(block, kind, firstCycle, cycleCount, static_cast<uint32_t>(message.size()), info);
}

bool TraceWriter::appendBlock(std::span<const uint8_t> block, BlockKind kind, uint64_t firstCycle, uint64_t cycleCount,
                              uint32_t rawSize, BlockInfo* info) {
  // The block's number goes into a copy of its frame header: an encoded chunk may be appended to
  // several files (flight-recorder snapshots), each numbering its own blocks.
  uint8_t frame[kFrameHeaderBytes];
  std::memcpy(frame, block.data(), kFrameHeaderBytes);
  if (numbered_) setFrameSequence(frame, nextSequence_);
  if (!writeAll(fd_, frame, sizeof frame, block.data() + kFrameHeaderBytes, block.size() - kFrameHeaderBytes)) {
    const std::string reason = errnoText();
    // Keep the file a valid prefix: drop whatever part of the block reached it.
    recoverable_ = ::ftruncate(fd_, static_cast<off_t>(bytesWritten_)) == 0 &&
                   ::lseek(fd_, static_cast<off_t>(bytesWritten_), SEEK_SET) == static_cast<off_t>(bytesWritten_);
    failed_ = true;
    chunkPaths_.reset();  // the block lost may have been part of a chunk: nothing continues it
    return fail(fmt::format("cannot write its .partial file: {}", reason));
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
  ++nextSequence_;
  return true;
}

bool TraceWriter::startsAtNextCycle(const char* what, uint64_t firstCycle) {
  if (firstCycle < nextCycle_) {
    return fail(fmt::format("{} starts at cycle {}, before the end of the previous chunk or gap (cycle {})", what,
                            firstCycle, nextCycle_));
  }
  // Cycles follow on without a hole: the dropped ones are a gap. A reader takes a hole for a
  // missing block (docs/architecture.md: self-contained traces).
  if (wroteCycles_ && firstCycle != nextCycle_) {
    return fail(fmt::format("{} starts at cycle {}, leaving cycles {}..{} out: write a gap for them", what, firstCycle,
                            nextCycle_, firstCycle - 1));
  }
  return true;
}

bool TraceWriter::continues(const char* what, uint64_t firstCycle, uint32_t pathBase) {
  if (!chunkPaths_) {
    return fail(fmt::format("{} at cycle {} follows no chunk (a gap, a program change or a lost block is before it)",
                            what, firstCycle));
  }
  if (firstCycle != nextCycle_) {
    return fail(fmt::format("{} starts at cycle {}, its chunk ends at cycle {}", what, firstCycle, nextCycle_));
  }
  if (pathBase != *chunkPaths_)
    return fail(fmt::format("{} at cycle {} numbers its paths from {}, its chunk has {}", what, firstCycle, pathBase,
                            *chunkPaths_));
  return true;
}

bool TraceWriter::writeChunk(const ChunkData& chunk) {
  if (!usable()) return false;
  const char* what = chunk.continuation ? "continuation" : "chunk";
  if (endedBy_) return fail(fmt::format("a {} after the {}: it ends the trace", what, endedBy_));
  if (chunk.continuation ? !continues(what, chunk.firstCycle, chunk.pathBase)
                         : !startsAtNextCycle(what, chunk.firstCycle))
    return false;
  std::string why;
  if (!validateChunk(chunk, limits_, why))
    return fail(fmt::format("invalid {} at cycle {}: {}", what, chunk.firstCycle, why));
  BlockInfo info;
  const BlockKind kind = chunk.continuation ? BlockKind::Continuation : BlockKind::Chunk;
  std::vector<uint8_t> message = encodeChunk(chunk);
  if (!writeBlock(kind, chunk.firstCycle, chunk.cycleCount(), message, &info,
                  chunk.continuation ? std::span<const uint8_t>(chunkMessage_) : std::span<const uint8_t>{}))
    return false;
  chunkMessage_ = std::move(message);  // what the chunk's next block is compressed against
  info.writeIndex = chunk.writeIndex;  // copied into the index block, read without decompressing
  blocks_.push_back(std::move(info));
  nextCycle_ = chunk.firstCycle + chunk.cycleCount();
  wroteCycles_ = true;
  chunkPaths_ = chunk.pathBase + static_cast<uint32_t>(chunk.pathTable.size());
  return true;
}

bool TraceWriter::writeEncodedChunk(const EncodedChunk& chunk) {
  if (!usable()) return false;
  if (chunk.empty()) return fail("an empty encoded chunk (not made by BlockEncoder::encodeChunk)");
  const char* what = chunk.continuation() ? "continuation" : "chunk";
  if (endedBy_) return fail(fmt::format("a {} after the {}: it ends the trace", what, endedBy_));
  if (chunk.continuation() ? !continues(what, chunk.firstCycle(), chunk.pathBase())
                           : !startsAtNextCycle(what, chunk.firstCycle()))
    return false;
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
  if (!h || h->kind != chunk.kind() || h->firstCycle != chunk.firstCycle() || h->cycleCount != chunk.cycleCount() ||
      h->rawSize != chunk.rawSize() || kFrameHeaderBytes + h->storedSize != block.size() ||
      payloadHash(block.data() + kFrameHeaderBytes, h->storedSize) != h->payloadHash) {
    return fail(
        fmt::format("encoded chunk at cycle {} is damaged{}{}", chunk.firstCycle(), why.empty() ? "" : ": ", why));
  }
  BlockInfo info;
  if (!appendBlock(block, chunk.kind(), chunk.firstCycle(), chunk.cycleCount(), chunk.rawSize(), &info)) return false;
  info.writeIndex = chunk.writeIndex();
  blocks_.push_back(std::move(info));
  nextCycle_ = chunk.firstCycle() + chunk.cycleCount();
  wroteCycles_ = true;
  chunkPaths_ = chunk.pathEnd();
  return true;
}

bool TraceWriter::writeGap(const GapData& gap) {
  if (!usable()) return false;
  if (endedBy_) return fail(fmt::format("a gap after the {}: it ends the trace", endedBy_));
  if (!startsAtNextCycle("gap", gap.firstCycle)) return false;
  if (gap.firstCycle + gap.cycleCount < gap.firstCycle) {
    return fail(fmt::format("gap of {} cycles from cycle {} overflows", gap.cycleCount, gap.firstCycle));
  }
  BlockInfo info;
  if (!writeBlock(BlockKind::Gap, gap.firstCycle, gap.cycleCount, encodeGap(gap), &info)) return false;
  blocks_.push_back(info);
  chunkPaths_.reset();
  nextCycle_ = gap.firstCycle + gap.cycleCount;
  wroteCycles_ = true;
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
  chunkPaths_.reset();
  limits_.imageSize = change.imageSize;
  limits_.statementCount = change.statementCount;
  return true;
}

bool TraceWriter::writeFault(const FaultData& fault) {
  if (!usable()) return false;
  if (endedBy_) return fail(fmt::format("a fault after the {}: it ends the trace", endedBy_));
  if (wroteCycles_ && fault.cycle + 1 != nextCycle_) {
    return fail(
        fmt::format("fault in cycle {}: the fault is in the last recorded cycle ({})", fault.cycle, nextCycle_ - 1));
  }
  BlockInfo info;
  if (!writeBlock(BlockKind::Fault, fault.cycle, 0, encodeFault(fault), &info)) return false;
  blocks_.push_back(info);
  endedBy_ = "fault";
  return true;
}

bool TraceWriter::writeOpenCycle(const OpenCycleData& open) {
  if (!usable()) return false;
  if (endedBy_) return fail(fmt::format("an open cycle after the {}: it ends the trace", endedBy_));
  if (!startsAtNextCycle("open cycle", open.cycle)) return false;
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
  if (::fdatasync(fd_) != 0) return fail(fmt::format("cannot sync its .partial file: {}", errnoText()));
  return true;
}

bool TraceWriter::recover() {
  if (fd_ < 0) return false;
  if (!failed_) return true;
  if (!recoverable_) return false;
  failed_ = false;
  error_.clear();
  return true;
}

bool TraceWriter::replacePartial(const std::string& path) {
  if (!usable()) return false;
  const std::string target = path + ".partial";
  // Durable before it replaces the file that holds the history now.
  if (::fdatasync(fd_) != 0) return fail(fmt::format("cannot sync its .partial file: {}", errnoText()));
  if (::rename(partialPath().c_str(), target.c_str()) != 0)
    return fail(fmt::format("cannot rename its .partial file to {}: {}", target, errnoText()));
  path_ = path;
  const int dir = ::open(directoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
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
      fail(fmt::format("cannot write its .partial file: {}", errnoText()));
    }
  }
  if (ok && ::fsync(fd_) != 0) ok = fail(fmt::format("cannot sync its .partial file: {}", errnoText()));
  if (::close(fd_) != 0 && ok) ok = fail(fmt::format("cannot close its .partial file: {}", errnoText()));
  fd_ = -1;
  if (!ok) {
    failed_ = true;
    return false;
  }
  if (lockedByARecording(path_)) {  // (it became another recording's .partial since create())
    failed_ = true;
    return fail(fmt::format("{} is the .partial file of a recording in progress: not replaced; this trace stays {}",
                            path_, partialPath()));
  }
  if (::rename(partialPath().c_str(), path_.c_str()) != 0) {
    failed_ = true;
    return fail(fmt::format("cannot rename its .partial file to it: {}", errnoText()));
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
