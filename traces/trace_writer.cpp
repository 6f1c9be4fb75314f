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

// The checks create() makes of a header: what the writer can write.
bool writableHeader(const HeaderData& header, std::string& error) {
  if (header.tasks.size() > 65536) {
    error = fmt::format("{} tasks: a trace holds at most 65536", header.tasks.size());
    return false;
  }
  if (header.options.zstdLevel < ZSTD_minCLevel() || header.options.zstdLevel > ZSTD_maxCLevel()) {
    error =
        fmt::format("zstd level {} out of range {}..{}", header.options.zstdLevel, ZSTD_minCLevel(), ZSTD_maxCLevel());
    return false;
  }
  return true;
}

// A block framed elsewhere (a runtime's stream): its frame header, and its payload all there and
// matching its hash. nullopt with `error` ("a block ...") when it is not sound.
std::optional<FrameHeader> checkFramed(std::span<const uint8_t> block, std::string& error) {
  if (block.size() < kFrameHeaderBytes) {
    error = fmt::format("a block of {} bytes (no frame header)", block.size());
    return std::nullopt;
  }
  std::string why;
  std::optional<FrameHeader> h = decodeFrameHeader(block.data(), why);
  if (!h) {
    error = "a block with a bad frame header: " + why;
    return std::nullopt;
  }
  if (kFrameHeaderBytes + h->storedSize != block.size()) {
    error =
        fmt::format("a block of {} bytes whose frame header says {}", block.size(), kFrameHeaderBytes + h->storedSize);
    return std::nullopt;
  }
  if (payloadHash(block.data() + kFrameHeaderBytes, h->storedSize) != h->payloadHash) {
    error = "a block whose payload does not match its hash";
    return std::nullopt;
  }
  return h;
}

// The message of a header or program change block (never compressed against a block before it).
bool unframedMessage(const FrameHeader& h, const uint8_t* payload, std::vector<uint64_t>& words, std::string& error) {
  // zstd expands at most this much (an RLE block is 4 bytes for up to 128 KiB): nothing is
  // allocated for a raw size no payload of this size can have.
  constexpr uint64_t kMostExpansion = 32768;
  if (h.compression == kZstdWithChunkPrefix) {
    error = "compressed against a block before it, which only a continuation is";
    return false;
  }
  if (h.compression == kZstd && uint64_t{h.rawSize} > uint64_t{h.storedSize} * kMostExpansion) {
    error = fmt::format("raw size {} is impossible for {} compressed bytes", h.rawSize, h.storedSize);
    return false;
  }
  words.assign(h.rawSize / 8, 0);  // a whole number of words (decodeFrameHeader)
  if (h.compression == kStored) {
    std::memcpy(words.data(), payload, h.rawSize);
    return true;
  }
  const size_t n = ZSTD_decompress(words.data(), h.rawSize, payload, h.storedSize);
  if (ZSTD_isError(n) || n != h.rawSize) {
    error = fmt::format("zstd: {}",
                        ZSTD_isError(n) ? ZSTD_getErrorName(n) : fmt::format("{} bytes, expected {}", n, h.rawSize));
    return false;
  }
  return true;
}

// Reads `size` bytes at `offset`; false at the end of the file or on an error.
bool readAt(int fd, uint64_t offset, uint8_t* out, size_t size) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The block at `offset` of a file of `fileSize` bytes: its frame header, and its payload (all
// there, matching its hash) in `payload`. False with `error` naming the offset.
bool readFramed(int fd, uint64_t offset, uint64_t fileSize, FrameHeader& frame, std::vector<uint8_t>& payload,
                std::string& error) {
  uint8_t raw[kFrameHeaderBytes];
  if (fileSize - offset < kFrameHeaderBytes) {
    error = fmt::format("cut off at offset {}: {} bytes of a block's {}-byte frame header", offset, fileSize - offset,
                        kFrameHeaderBytes);
    return false;
  }
  if (!readAt(fd, offset, raw, sizeof raw)) {
    error = fmt::format("cannot read the block at offset {}: {}", offset, errnoText());
    return false;
  }
  std::string why;
  const std::optional<FrameHeader> h = decodeFrameHeader(raw, why);
  if (!h) {
    error = fmt::format("block at offset {}: {}", offset, why);
    return false;
  }
  const uint64_t left = fileSize - offset - kFrameHeaderBytes;
  if (h->storedSize > left) {
    error = fmt::format("cut off at offset {}: the {} block there has {} of its {} payload bytes", offset,
                        blockKindName(h->kind), left, h->storedSize);
    return false;
  }
  payload.resize(h->storedSize);
  if (!readAt(fd, offset + kFrameHeaderBytes, payload.data(), payload.size())) {
    error = fmt::format("cannot read the block at offset {}: {}", offset, errnoText());
    return false;
  }
  const uint64_t hash = payloadHash(payload.data(), payload.size());
  if (hash != h->payloadHash) {
    error = fmt::format("block at offset {}: payload hash {:016x} != {:016x} in the frame header (corrupt data)",
                        offset, hash, h->payloadHash);
    return false;
  }
  frame = *h;
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
  if (!writableHeader(header, error)) return nullptr;
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

std::unique_ptr<TraceWriter> TraceWriter::createExclusive(const std::string& path, std::span<const uint8_t> headerBlock,
                                                          std::string& error) {
  std::string why;
  const std::optional<FrameHeader> frame = checkFramed(headerBlock, why);
  if (!frame) {
    error = "its header block is " + why;
    return nullptr;
  }
  if (frame->kind != BlockKind::Header) {
    error = fmt::format("its header block is a {} block", blockKindName(frame->kind));
    return nullptr;
  }
  std::vector<uint64_t> words;
  HeaderData header;
  if (!unframedMessage(*frame, headerBlock.data() + kFrameHeaderBytes, words, why) ||
      !decodeHeader(std::span(reinterpret_cast<const uint8_t*>(words.data()), frame->rawSize), sizeof kFileMagic,
                    header, why)) {
    error = "its header block: " + why;
    return nullptr;
  }
  if (!writableHeader(header, error)) return nullptr;
  // Never through a link, never over another file: whatever is at `path` stays as it is.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = errno == EEXIST ? "it exists (a trace created exclusively never replaces a file)"
                            : fmt::format("cannot create it: {}", errnoText());
    return nullptr;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    error = "another recording took it at the same moment";
    return nullptr;
  }
  std::unique_ptr<TraceWriter> writer(new TraceWriter(path, fd, header));
  writer->inPlace_ = true;
  auto failed = [&](std::string reason) {
    error = std::move(reason);
    writer.reset();
    ::unlink(path.c_str());
    return nullptr;
  };
  if (!writer->encoder_.ok()) return failed("cannot create a zstd compression context");
  if (!writeAll(fd, reinterpret_cast<const uint8_t*>(kFileMagic), sizeof kFileMagic))
    return failed(fmt::format("cannot write it: {}", errnoText()));
  writer->bytesWritten_ = sizeof kFileMagic;
  if (!writer->appendBlock(headerBlock, BlockKind::Header, 0, 0, frame->rawSize, nullptr))
    return failed(writer->lastError());
  return writer;
}

std::unique_ptr<TraceWriter> TraceWriter::openToAppend(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = fmt::format("cannot open it: {}", errnoText());
    return nullptr;
  }
  auto refused = [&](std::string why) {
    ::close(fd);
    error = std::move(why);
    return nullptr;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return refused(fmt::format("cannot check it: {}", errnoText()));
  if (!S_ISREG(st.st_mode)) return refused("it is not a regular file");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return refused(errno == EWOULDBLOCK ? "another recording is writing to it (it is locked by a running scanback)"
                                        : fmt::format("cannot lock it: {}", errnoText()));
  }
  const uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  uint8_t magic[sizeof kFileMagic];
  if (fileSize < sizeof magic || !readAt(fd, 0, magic, sizeof magic) ||
      std::memcmp(magic, kFileMagic, sizeof magic) != 0)
    return refused("not a scanback trace (no SCANBACK magic at the start)");
  FrameHeader frame;
  std::vector<uint8_t> payload;
  std::vector<uint64_t> words;
  HeaderData header;
  std::string why;
  if (!readFramed(fd, sizeof magic, fileSize, frame, payload, why)) return refused(why);
  if (frame.kind != BlockKind::Header)
    return refused(fmt::format("block at offset {} is a {} block, expected the header block", sizeof magic,
                               blockKindName(frame.kind)));
  if (!unframedMessage(frame, payload.data(), words, why) ||
      !decodeHeader(std::span(reinterpret_cast<const uint8_t*>(words.data()), frame.rawSize), sizeof magic, header,
                    why))
    return refused(fmt::format("header block at offset {}: {}", sizeof magic, why));
  if (!writableHeader(header, why)) return refused(why);
  std::unique_ptr<TraceWriter> writer(new TraceWriter(path, fd, header));
  writer->inPlace_ = true;
  if (!writer->encoder_.ok()) {
    error = "cannot create a zstd compression context";
    return nullptr;
  }
  writer->bytesWritten_ = sizeof magic + kFrameHeaderBytes + frame.storedSize;
  writer->rawBytes_ = frame.rawSize;
  writer->nextSequence_ = 1;
  if (!writer->takeUp(fileSize, error)) return nullptr;
  // Appended at the end of what was read (an index and trailer were cut off).
  if (::lseek(fd, static_cast<off_t>(writer->bytesWritten_), SEEK_SET) != static_cast<off_t>(writer->bytesWritten_)) {
    error = fmt::format("cannot seek to its end: {}", errnoText());
    return nullptr;
  }
  return writer;
}

bool TraceWriter::takeUp(uint64_t fileSize, std::string& error) {
  FrameHeader h;
  std::vector<uint8_t> payload;
  std::vector<uint64_t> words;
  while (bytesWritten_ < fileSize) {
    const uint64_t at = bytesWritten_;
    if (!readFramed(fd_, at, fileSize, h, payload, error)) return false;
    // The checks the writer makes of what it writes, made of what it appends to.
    auto refused = [&](const std::string& why) {
      error = fmt::format("block at offset {}: {}", at, why);
      return false;
    };
    if (numbered_ && h.sequence != nextSequence_) {
      return refused(fmt::format("numbered {}, expected {} (a block is missing before it, or present twice)",
                                 h.sequence, nextSequence_));
    }
    if (endedBy_ && h.kind != BlockKind::Index)
      return refused(fmt::format("a {} block after the {}: it ends the trace", blockKindName(h.kind), endedBy_));
    BlockInfo info;
    info.offset = at;
    info.kind = h.kind;
    info.firstCycle = h.firstCycle;
    info.cycleCount = h.cycleCount;
    info.storedSize = h.storedSize;
    info.rawSize = h.rawSize;
    const uint64_t end = at + kFrameHeaderBytes + h.storedSize;
    switch (h.kind) {
      case BlockKind::Header: return refused("a second header block");
      case BlockKind::Chunk:
      case BlockKind::Continuation: {
        const bool continuation = h.kind == BlockKind::Continuation;
        const char* what = continuation ? "continuation" : "chunk";
        if (continuation ? !continues(what, h.firstCycle) : !startsAtNextCycle(what, h.firstCycle))
          return refused(error_);
        wroteChunkBlock(std::move(info), h.firstCycle, h.cycleCount);
        break;
      }
      case BlockKind::Gap:
        if (!startsAtNextCycle("gap", h.firstCycle)) return refused(error_);
        blocks_.push_back(info);
        nextCycle_ = h.firstCycle + h.cycleCount;
        wroteCycles_ = true;
        chunkOpen_ = false;
        break;
      case BlockKind::ProgramChange: {
        ProgramChangeData change;
        std::string why;
        if (!unframedMessage(h, payload.data(), words, why) ||
            !decodeProgramChange(std::span(reinterpret_cast<const uint8_t*>(words.data()), h.rawSize), at, change, why))
          return refused(why);
        limits_.imageSize = change.imageSize;
        limits_.statementCount = change.statementCount;
        blocks_.push_back(info);
        chunkOpen_ = false;
        break;
      }
      case BlockKind::Fault:
      case BlockKind::OpenCycle:
        blocks_.push_back(info);
        endedBy_ = h.kind == BlockKind::Fault ? "fault" : "open cycle";
        break;
      case BlockKind::Index: {
        // A closed trace: its index and trailer go, close() writes them anew.
        uint8_t raw[kTrailerBytes];
        std::string why;
        std::optional<Trailer> trailer;
        if (fileSize - end == kTrailerBytes && readAt(fd_, end, raw, sizeof raw)) trailer = decodeTrailer(raw, why);
        if (!trailer || trailer->indexOffset != at || trailer->sizeBeforeTrailer != end)
          return refused("an index block that the trailer does not end the file with");
        if (::ftruncate(fd_, static_cast<off_t>(at)) != 0)
          return refused(fmt::format("cannot cut off the index block: {}", errnoText()));
        return true;
      }
    }
    bytesWritten_ = end;
    rawBytes_ += h.rawSize;
    ++nextSequence_;
  }
  return true;
}

void TraceWriter::wroteChunkBlock(BlockInfo info, uint64_t firstCycle, uint64_t cycleCount) {
  blocks_.push_back(std::move(info));
  nextCycle_ = firstCycle + cycleCount;
  wroteCycles_ = true;
  chunkOpen_ = true;
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
    chunkOpen_ = false;
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

bool TraceWriter::continues(const char* what, uint64_t firstCycle) {
  if (!chunkOpen_) {
    return fail(fmt::format("{} at cycle {} follows no chunk (a gap, a program change or a lost block is before it)",
                            what, firstCycle));
  }
  if (firstCycle != nextCycle_) {
    return fail(fmt::format("{} starts at cycle {}, its chunk ends at cycle {}", what, firstCycle, nextCycle_));
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
  wroteChunkBlock(std::move(info), chunk.firstCycle, chunk.cycleCount());
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
  wroteChunkBlock(std::move(info), chunk.firstCycle(), chunk.cycleCount());
  chunkPaths_ = chunk.pathEnd();
  return true;
}

bool TraceWriter::writeFramedChunk(std::span<const uint8_t> block) {
  if (!usable()) return false;
  std::string why;
  const std::optional<FrameHeader> h = checkFramed(block, why);
  if (!h) return fail("a chunk's block is " + why);
  if (h->kind != BlockKind::Chunk && h->kind != BlockKind::Continuation)
    return fail(fmt::format("a {} block where a chunk's block belongs", blockKindName(h->kind)));
  const char* what = h->kind == BlockKind::Continuation ? "continuation" : "chunk";
  if (endedBy_) return fail(fmt::format("a {} after the {}: it ends the trace", what, endedBy_));
  if (h->cycleCount == 0 || h->firstCycle + h->cycleCount < h->firstCycle)
    return fail(fmt::format("{} at cycle {} of {} cycles", what, h->firstCycle, h->cycleCount));
  if (h->kind == BlockKind::Continuation ? !continues(what, h->firstCycle) : !startsAtNextCycle(what, h->firstCycle))
    return false;
  BlockInfo info;
  if (!appendBlock(block, h->kind, h->firstCycle, h->cycleCount, h->rawSize, &info)) return false;
  wroteChunkBlock(std::move(info), h->firstCycle, h->cycleCount);
  chunkPaths_.reset();  // not decoded: only a framed continuation may follow it
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
  chunkOpen_ = false;
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
  chunkOpen_ = false;
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
  if (inPlace_) return fail("it is written in place: it has no .partial to replace");
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
  if (inPlace_) return true;        // nothing to rename
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
