#include "traces/trace_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "traces/framing.h"
#include "vm/base/assert.h"
#include "vm/base/out_of_memory.h"
#include "vm/bytecode/limits.h"

namespace scanback::trace {

// Where the bytes come from: a file (pread, so reads may run on several threads) or memory.
class TraceReader::Source {
 public:
  virtual ~Source() = default;
  virtual uint64_t size() = 0;  // the current size
  // Exactly `size` bytes at `offset`, or false.
  virtual bool read(uint64_t offset, void* out, size_t size) const = 0;
};

namespace {

class FileSource final : public TraceReader::Source {
 public:
  explicit FileSource(int fd) : fd_(fd) {}
  ~FileSource() override { ::close(fd_); }
  uint64_t size() override {
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || st.st_size < 0) return 0;
    return static_cast<uint64_t>(st.st_size);
  }
  bool read(uint64_t offset, void* out, size_t size) const override {
    auto* p = static_cast<uint8_t*>(out);
    while (size > 0) {
      const ssize_t n = ::pread(fd_, p, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      p += n;
      offset += static_cast<uint64_t>(n);
      size -= static_cast<size_t>(n);
    }
    return true;
  }

 private:
  int fd_;
};

class MemorySource final : public TraceReader::Source {
 public:
  explicit MemorySource(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  uint64_t size() override { return bytes_.size(); }
  bool read(uint64_t offset, void* out, size_t size) const override {
    if (offset > bytes_.size() || bytes_.size() - offset < size) return false;
    if (size) std::memcpy(out, bytes_.data() + offset, size);
    return true;
  }

 private:
  std::vector<uint8_t> bytes_;
};

// zstd can expand at most this much: an RLE block is 4 bytes for up to 128 KiB. A frame header
// claiming more than storedSize * this is corrupt, and nothing is allocated for it.
constexpr uint64_t kMaxZstdRatio = 32768;

struct DecompressContext {
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  ~DecompressContext() { ZSTD_freeDCtx(ctx); }
};

ZSTD_DCtx* decompressContext() {
  thread_local DecompressContext context;
  return context.ctx;
}

bool isCycleBlock(BlockKind kind) {
  return kind == BlockKind::Chunk || kind == BlockKind::Gap || kind == BlockKind::Continuation;
}

}  // namespace

std::unique_ptr<TraceReader> TraceReader::open(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = fmt::format("cannot open: {}", std::strerror(errno));
    return nullptr;
  }
  std::unique_ptr<TraceReader> reader(new TraceReader(std::make_unique<FileSource>(fd)));
  if (!reader->init(error)) return nullptr;
  return reader;
}

std::unique_ptr<TraceReader> TraceReader::openBytes(std::vector<uint8_t> bytes, std::string& error) {
  std::unique_ptr<TraceReader> reader(new TraceReader(std::make_unique<MemorySource>(std::move(bytes))));
  if (!reader->init(error)) return nullptr;
  return reader;
}

TraceReader::TraceReader(std::unique_ptr<Source> source) : source_(std::move(source)) {}
TraceReader::~TraceReader() = default;

bool TraceReader::loadBlock(uint64_t offset, BlockKind kind, std::vector<uint64_t>& words, size_t& size,
                            FrameHeader* frame, std::string& error, std::span<const uint8_t> prefix) const {
  uint8_t raw[kFrameHeaderBytes];
  if (offset > fileSize_ || fileSize_ - offset < kFrameHeaderBytes || !source_->read(offset, raw, sizeof raw)) {
    error = fmt::format("block at offset {}: frame header past the end of the file ({} bytes)", offset, fileSize_);
    return false;
  }
  std::string why;
  const std::optional<FrameHeader> h = decodeFrameHeader(raw, why);
  if (!h) {
    error = fmt::format("block at offset {}: {}", offset, why);
    return false;
  }
  if (h->kind != kind) {
    error = fmt::format("block at offset {} is a {} block, expected a {} block", offset, blockKindName(h->kind),
                        blockKindName(kind));
    return false;
  }
  const uint64_t available = fileSize_ - offset - kFrameHeaderBytes;
  if (h->storedSize > available) {
    error = fmt::format("block at offset {}: payload of {} bytes runs past the end of the file ({} bytes left)", offset,
                        h->storedSize, available);
    return false;
  }
  if (h->compression == kZstdWithChunkPrefix && prefix.empty()) {
    error = fmt::format("block at offset {}: compressed against the block before it, read without it", offset);
    return false;
  }
  // (Against a prefix, zstd may expand further: it copies from it; the raw size limit still holds.)
  if (h->compression == kZstd &&
      static_cast<uint64_t>(h->rawSize) > static_cast<uint64_t>(h->storedSize) * kMaxZstdRatio) {
    error = fmt::format("block at offset {}: raw size {} is impossible for {} compressed bytes", offset, h->rawSize,
                        h->storedSize);
    return false;
  }
  // Both sizes are checked now: storedSize against the file, rawSize against the limit and the
  // most zstd can expand.
  std::vector<uint64_t> stored;
  uint8_t* payload;
  // Up to kMaxRawBlockBytes each (the sizes are checked above): a trace of a large image may not
  // fit in the memory there is.
  const auto reading = [&] {
    return fmt::format("reading the {} block at offset {} of the trace", blockKindName(kind), offset);
  };
  if (h->compression == kStored) {
    // rawSize == storedSize, a multiple of 8 (decodeFrameHeader)
    allocating([&] { words.assign(h->storedSize / 8, 0); }, h->storedSize, reading);
    payload = reinterpret_cast<uint8_t*>(words.data());
  } else {
    allocating([&] { stored.resize((h->storedSize + 7) / 8); }, h->storedSize, reading);
    payload = reinterpret_cast<uint8_t*>(stored.data());
  }
  if (!source_->read(offset + kFrameHeaderBytes, payload, h->storedSize)) {
    error = fmt::format("block at offset {}: cannot read {} payload bytes", offset, h->storedSize);
    return false;
  }
  const uint64_t hash = payloadHash(payload, h->storedSize);
  if (hash != h->payloadHash) {
    error = fmt::format("block at offset {}: payload hash {:016x} != {:016x} in the frame header (corrupt data)",
                        offset, hash, h->payloadHash);
    return false;
  }
  if (h->compression != kStored) {
    const unsigned long long content = ZSTD_getFrameContentSize(payload, h->storedSize);
    if (content != h->rawSize) {
      error = fmt::format("block at offset {}: zstd frame content size {} != raw size {}", offset,
                          content == ZSTD_CONTENTSIZE_ERROR     ? std::string("(invalid frame)")
                          : content == ZSTD_CONTENTSIZE_UNKNOWN ? std::string("(unknown)")
                                                                : std::to_string(content),
                          h->rawSize);
      return false;
    }
    allocating([&] { words.assign(h->rawSize / 8, 0); }, h->rawSize, reading);
    ZSTD_DCtx* dctx = decompressContext();
    if (h->compression == kZstdWithChunkPrefix)
      ZSTD_DCtx_refPrefix(dctx, prefix.data(), prefix.size());  // this frame only
    const size_t n = ZSTD_decompressDCtx(dctx, words.data(), h->rawSize, payload, h->storedSize);
    if (ZSTD_isError(n) || n != h->rawSize) {
      error = fmt::format("block at offset {}: zstd: {}", offset,
                          ZSTD_isError(n) ? ZSTD_getErrorName(n) : fmt::format("{} bytes, expected {}", n, h->rawSize));
      return false;
    }
  }
  // decodeFrameHeader() refused a raw size that is not a multiple of 8: the decoder reads whole words.
  SB_ASSERT(words.size() * 8 == h->rawSize, "block at offset {}: {} words for {} raw bytes", offset, words.size(),
            h->rawSize);
  size = h->rawSize;
  if (frame) *frame = *h;
  return true;
}

bool TraceReader::init(std::string& error) {
  fileSize_ = source_->size();
  char magic[sizeof kFileMagic];
  if (fileSize_ < sizeof kFileMagic || !source_->read(0, magic, sizeof magic)) {
    error = fmt::format("{} bytes: too short for a scanback trace", fileSize_);
    return false;
  }
  if (std::memcmp(magic, kFileMagic, sizeof magic) != 0) {
    error = "not a scanback trace (no SCANBACK magic at the start)";
    return false;
  }
  const uint64_t at = sizeof kFileMagic;
  uint8_t raw[kFrameHeaderBytes];
  if (fileSize_ - at < kFrameHeaderBytes || !source_->read(at, raw, sizeof raw)) {
    error = fmt::format("the trace is cut off inside its header block ({} bytes)", fileSize_);
    return false;
  }
  std::string why;
  const std::optional<FrameHeader> frame = decodeFrameHeader(raw, why);
  if (!frame) {
    error = fmt::format("corrupt header block at offset {}: {}", at, why);
    return false;
  }
  if (frame->kind != BlockKind::Header) {
    error = fmt::format("the first block (offset {}) is a {} block, not a header", at, blockKindName(frame->kind));
    return false;
  }
  if (frame->storedSize > fileSize_ - at - kFrameHeaderBytes) {
    error = fmt::format("the trace is cut off inside its header block ({} bytes, the header needs {})", fileSize_,
                        at + kFrameHeaderBytes + frame->storedSize);
    return false;
  }
  std::vector<uint64_t> words;
  size_t size = 0;
  if (!loadBlock(at, BlockKind::Header, words, size, nullptr, why) ||
      !decodeHeader({reinterpret_cast<const uint8_t*>(words.data()), size}, at, header_, why)) {
    error = fmt::format("corrupt header: {}", why);
    return false;
  }
  if (header_.minReaderVersion > kFormatVersion) {
    error = fmt::format(
        "the trace has format version {} and needs a reader of version {} or later; this scanback "
        "reads format version {}",
        header_.formatVersion, header_.minReaderVersion, kFormatVersion);
    return false;
  }
  // No program scanback compiles has a larger image (vm/bytecode/limits.h): a header that claims
  // one is refused before anything is sized by it.
  if (header_.imageSize > kMaxImageBytes) {
    error = fmt::format("the header claims an image of {} bytes; scanback's limit is {}", header_.imageSize,
                        imageLimitText());
    return false;
  }
  headerBlock_ = BlockInfo{at, BlockKind::Header, 0, 0, frame->storedSize, frame->rawSize, {}, {}};
  numbered_ = header_.formatVersion >= kFirstNumberedVersion;
  limits_.push_back({0, ChunkLimits{header_.imageSize, header_.statementCount}});
  scanEnd_ = at + kFrameHeaderBytes + frame->storedSize;

  if (!tryIndex(why)) {
    if (!why.empty()) {
      notes_.push_back(fmt::format("the index is unusable ({}); blocks found by scanning", why));
      if (trailerIndexOffset_) unusableIndex_ = UnusableIndex{*trailerIndexOffset_, why};
    }
    scan(scanEnd_);
  }
  rebuildWarnings();
  return true;
}

// Uses the trailer + index when both are valid and agree with the file. `why` stays empty when
// the file simply has no trailer (a recorder still writing, or one that crashed).
bool TraceReader::tryIndex(std::string& why) {
  if (fileSize_ < scanEnd_ + kTrailerBytes) return false;
  uint8_t raw[kTrailerBytes];
  if (!source_->read(fileSize_ - kTrailerBytes, raw, sizeof raw)) return false;
  const std::optional<Trailer> trailer = decodeTrailer(raw, why);
  if (!trailer) {
    if (std::memcmp(raw, kTrailerMagic, sizeof kTrailerMagic) != 0) why.clear();
    return false;
  }
  const uint64_t end = fileSize_ - kTrailerBytes;
  if (trailer->sizeBeforeTrailer != end) {
    why = fmt::format("the trailer gives the size before it as {}, the file has {}", trailer->sizeBeforeTrailer, end);
    return false;
  }
  if (trailer->indexOffset < scanEnd_ || trailer->indexOffset > end) {
    why = fmt::format("the trailer points at offset {}, outside {}..{}", trailer->indexOffset, scanEnd_, end);
    return false;
  }
  trailerIndexOffset_ = trailer->indexOffset;
  std::vector<uint64_t> words;
  size_t size = 0;
  FrameHeader frame;
  std::vector<BlockInfo> entries;
  if (!loadBlock(trailer->indexOffset, BlockKind::Index, words, size, &frame, why) ||
      !decodeIndex({reinterpret_cast<const uint8_t*>(words.data()), size}, trailer->indexOffset, entries, why)) {
    return false;
  }
  if (trailer->indexOffset + kFrameHeaderBytes + frame.storedSize != end) {
    why = fmt::format("the index block ends at {}, the trailer starts at {}",
                      trailer->indexOffset + kFrameHeaderBytes + frame.storedSize, end);
    return false;
  }
  uint64_t expected = scanEnd_;
  uint64_t next = 0;
  bool anyCycles = false;
  for (size_t i = 0; i < entries.size(); ++i) {
    const BlockInfo& e = entries[i];
    if (e.offset != expected) {
      why = fmt::format("index entry {} is at offset {}, the previous block ends at {}", i, e.offset, expected);
      return false;
    }
    if (e.kind == BlockKind::Header || e.kind == BlockKind::Index) {
      why = fmt::format("index entry {} is a {} block", i, blockKindName(e.kind));
      return false;
    }
    if (e.storedSize > kMaxStoredBlockBytes || e.rawSize > kMaxRawBlockBytes ||
        e.offset + kFrameHeaderBytes + e.storedSize > trailer->indexOffset) {
      why = fmt::format("index entry {} has sizes {}/{} that do not fit", i, e.storedSize, e.rawSize);
      return false;
    }
    if (isCycleBlock(e.kind)) {
      if ((anyCycles && e.firstCycle < next) || e.firstCycle + e.cycleCount < e.firstCycle) {
        why = fmt::format("index entry {} covers cycles {}+{}, the previous ones end at {}", i, e.firstCycle,
                          e.cycleCount, next);
        return false;
      }
      next = e.firstCycle + e.cycleCount;
      anyCycles = true;
    }
    expected = e.offset + kFrameHeaderBytes + e.storedSize;
  }
  if (expected != trailer->indexOffset) {
    why = fmt::format("the indexed blocks end at {}, the index block is at {}", expected, trailer->indexOffset);
    return false;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    // The index lists the blocks as the writer numbered them: the i-th is block i + 1.
    if (!admit(entries[i], static_cast<uint32_t>(i + 1))) continue;
    if (entries[i].kind == BlockKind::ProgramChange) {
      std::string bad;
      if (!addProgramChange(entries[i], bad)) {
        corruptOffset_ = entries[i].offset;
        corruptError_ = bad;
        notes_.push_back(fmt::format("{}; the {} blocks before it are readable", bad, blocks_.size()));
        break;
      }
    }
    addBlock(entries[i]);
  }
  indexBlock_ = BlockInfo{trailer->indexOffset, BlockKind::Index, 0, 0, frame.storedSize, frame.rawSize, {}, {}};
  scanEnd_ = end;
  usedIndex_ = true;
  complete_ = true;
  return true;
}

bool TraceReader::addProgramChange(const BlockInfo& block, std::string& error) {
  ProgramChangeData change;
  if (!readProgramChange(block, change, error)) return false;
  if (change.imageSize > kMaxImageBytes) {
    error = fmt::format("the program change at cycle {} claims an image of {} bytes; scanback's limit is {}",
                        change.atCycle, change.imageSize, imageLimitText());
    return false;
  }
  limits_.push_back({block.offset, ChunkLimits{change.imageSize, change.statementCount}});
  return true;
}

void TraceReader::scan(uint64_t from) {
  uint64_t off = from;
  auto corrupt = [&](const std::string& why) {
    corruptOffset_ = off;
    corruptError_ = why;
    notes_.push_back(fmt::format("corrupt block: {}; scanning stopped there, the {} blocks before it are readable", why,
                                 blocks_.size()));
  };
  auto cut = [&](uint64_t remaining) {
    size_t chunks = 0;
    for (const BlockInfo& b : blocks_) chunks += b.kind == BlockKind::Chunk;
    tailWarning_ =
        fmt::format("trace ends {} bytes into a block at offset {} (cut off): {} complete chunk{} {} readable",
                    remaining, off, chunks, chunks == 1 ? "" : "s", chunks == 1 ? "is" : "are");
  };
  std::vector<uint8_t> buffer;
  const std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(), XXH3_freeState);
  while (off < fileSize_) {
    const uint64_t remaining = fileSize_ - off;
    if (remaining == kTrailerBytes) {
      uint8_t raw[kTrailerBytes];
      std::string ignored;
      std::optional<Trailer> trailer;
      if (source_->read(off, raw, sizeof raw)) trailer = decodeTrailer(raw, ignored);
      if (trailer && trailer->sizeBeforeTrailer == off) {
        complete_ = true;
        break;
      }
    }
    if (remaining < kFrameHeaderBytes) {
      cut(remaining);
      break;
    }
    uint8_t raw[kFrameHeaderBytes];
    if (!source_->read(off, raw, sizeof raw)) {
      cut(remaining);
      break;
    }
    std::string why;
    const std::optional<FrameHeader> h = decodeFrameHeader(raw, why);
    if (!h) {
      corrupt(fmt::format("block at offset {}: {}", off, why));
      break;
    }
    if (h->storedSize > remaining - kFrameHeaderBytes) {
      cut(remaining);
      break;
    }
    // Verify the payload hash, reading in pieces so a large block costs no large buffer.
    XXH3_64bits_reset(state.get());
    buffer.resize(std::min<size_t>(h->storedSize, 1u << 20));
    bool readOk = true;
    for (uint64_t done = 0; done < h->storedSize;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), h->storedSize - done));
      if (!source_->read(off + kFrameHeaderBytes + done, buffer.data(), n)) {
        readOk = false;
        break;
      }
      XXH3_64bits_update(state.get(), buffer.data(), n);
      done += n;
    }
    if (!readOk) {
      cut(remaining);
      break;
    }
    const uint64_t hash = XXH3_64bits_digest(state.get());
    if (hash != h->payloadHash) {
      corrupt(fmt::format("block at offset {}: payload hash {:016x} != {:016x} in the frame header (corrupt data)", off,
                          hash, h->payloadHash));
      break;
    }
    const BlockInfo info{off, h->kind, h->firstCycle, h->cycleCount, h->storedSize, h->rawSize, {}, {}};
    if (h->kind == BlockKind::Header) {
      corrupt(fmt::format("block at offset {}: a second header block", off));
      break;
    }
    if (isCycleBlock(h->kind) && h->firstCycle + h->cycleCount < h->firstCycle) {
      corrupt(fmt::format("block at offset {}: cycles {}+{} overflow", off, h->firstCycle, h->cycleCount));
      break;
    }
    if (h->kind == BlockKind::Index) {
      indexBlock_ = info;
      admitSequence(info, h->sequence);
    } else if (admit(info, h->sequence)) {
      if (h->kind == BlockKind::ProgramChange && !addProgramChange(info, why)) {
        corrupt(why);
        break;
      }
      addBlock(info);
    }
    off += kFrameHeaderBytes + h->storedSize;
    scanEnd_ = off;
  }
}

namespace {
std::string cycleRange(uint64_t first, uint64_t count) {
  return count == 1 ? fmt::format("cycle {}", first) : fmt::format("cycles {}..{}", first, first + count - 1);
}
std::string blockRange(uint64_t first, uint64_t last) {
  return first == last ? fmt::format("block {} is", first) : fmt::format("blocks {}..{} are", first, last);
}
}  // namespace

bool TraceReader::admitSequence(const BlockInfo& block, uint32_t sequence) {
  missingBlocks_.reset();
  if (!numbered_) return true;
  if (sequence < nextSequence_) {
    const bool cycles = isCycleBlock(block.kind);
    damage_.push_back(DamageData{
        cycles ? block.firstCycle : nextCycle_, cycles ? block.cycleCount : 0, block.offset,
        fmt::format("the {} block at offset {}{} is numbered {}, a number an earlier block has: a copy, left out",
                    blockKindName(block.kind), block.offset,
                    cycles ? fmt::format(" ({})", cycleRange(block.firstCycle, block.cycleCount)) : std::string(),
                    sequence)});
    return false;
  }
  if (sequence > nextSequence_) missingBlocks_ = {nextSequence_, uint64_t{sequence} - 1};
  SB_ASSERT(sequence >= nextSequence_, "block {} admitted after block {}", sequence, nextSequence_ - 1);
  nextSequence_ = uint64_t{sequence} + 1;
  return true;
}

bool TraceReader::admit(const BlockInfo& block, uint32_t sequence) {
  if (!admitSequence(block, sequence)) return false;
  const bool cycles = isCycleBlock(block.kind);
  const std::string missing =
      missingBlocks_ ? fmt::format(" ({} missing)", blockRange(missingBlocks_->first, missingBlocks_->second))
                     : std::string();
  if (cycles && sawCycles_ && block.firstCycle < nextCycle_) {
    damage_.push_back(DamageData{block.firstCycle, block.cycleCount, block.offset,
                                 fmt::format("{} in the {} block at offset {} were recorded before it (up to cycle "
                                             "{}): the block is a copy or out of place, and is left out",
                                             cycleRange(block.firstCycle, block.cycleCount), blockKindName(block.kind),
                                             block.offset, nextCycle_ - 1)});
    return false;
  }
  // Where the cycles before this block must end: at its first cycle (a chunk, gap or open cycle),
  // after its cycle (a fault is in the last recorded cycle).
  std::optional<uint64_t> end;
  if (cycles || block.kind == BlockKind::OpenCycle) end = block.firstCycle;
  if (block.kind == BlockKind::Fault && block.firstCycle < UINT64_MAX) end = block.firstCycle + 1;
  if (sawCycles_ && end && *end > nextCycle_) {
    const uint64_t lost = *end - nextCycle_;
    damage_.push_back(DamageData{
        nextCycle_, lost, block.offset,
        fmt::format("{} {} missing before offset {}: no chunk or gap holds {}{}", cycleRange(nextCycle_, lost),
                    lost == 1 ? "is" : "are", block.offset, lost == 1 ? "it" : "them", missing)});
  } else if (missingBlocks_) {
    damage_.push_back(DamageData{
        nextCycle_, 0, block.offset,
        sawCycles_
            ? fmt::format("{} missing before offset {}, after cycle {}: no cycle is lost, but a program change "
                          "or fault may be",
                          blockRange(missingBlocks_->first, missingBlocks_->second), block.offset, nextCycle_ - 1)
            : fmt::format("{} missing at the start of the trace, before offset {}: the cycles before {} may be "
                          "lost",
                          blockRange(missingBlocks_->first, missingBlocks_->second), block.offset,
                          end ? fmt::format("cycle {}", *end) : std::string("its first recorded cycle"))});
  } else if (sawCycles_ && block.kind == BlockKind::Fault && end && *end < nextCycle_) {
    damage_.push_back(DamageData{nextCycle_, 0, block.offset,
                                 fmt::format("the fault block at offset {} is in cycle {}, not in the last recorded "
                                             "cycle ({})",
                                             block.offset, block.firstCycle, nextCycle_ - 1)});
  }
  if (cycles) {
    // A block whose cycles overflow was refused before it got here (scan(), tryIndex()), and one
    // that goes back is left out above: the cycles admitted only increase.
    SB_ASSERT(
        block.firstCycle + block.cycleCount >= block.firstCycle && (!sawCycles_ || block.firstCycle >= nextCycle_),
        "cycles {}+{} admitted after cycle {}", block.firstCycle, block.cycleCount, nextCycle_);
    nextCycle_ = block.firstCycle + block.cycleCount;
    sawCycles_ = true;
  }
  return true;
}

void TraceReader::addBlock(const BlockInfo& block) {
  ++physicalBlocks_;
  if (block.kind != BlockKind::Continuation) {
    blocks_.push_back(block);
    blocks_.back().continuations.clear();
    return;
  }
  // A continuation belongs to the chunk right before it; without it, its cycles cannot replay.
  BlockInfo* chunk = blocks_.empty() ? nullptr : &blocks_.back();
  if (!chunk || chunk->kind != BlockKind::Chunk || chunk->firstCycle + chunk->cycleCount != block.firstCycle) {
    damage_.push_back(DamageData{
        block.firstCycle, block.cycleCount, block.offset,
        fmt::format("the continuation block at offset {} ({}) follows no chunk: the chunk it continues is missing, "
                    "so its cycles cannot be replayed",
                    block.offset, cycleRange(block.firstCycle, block.cycleCount))});
    return;
  }
  chunk->continuations.push_back(
      ContinuationInfo{block.offset, block.firstCycle, block.cycleCount, block.storedSize, block.rawSize});
  chunk->cycleCount += block.cycleCount;
  if (chunk->writeIndex && block.writeIndex)
    chunk->writeIndex = mergeWriteIndexes(*chunk->writeIndex, *block.writeIndex);
  else
    chunk->writeIndex.reset();
}

void TraceReader::rebuildWarnings() {
  warnings_ = notes_;
  for (const DamageData& d : damage_) warnings_.push_back(d.what);
  if (!tailWarning_.empty()) warnings_.push_back(tailWarning_);
}

bool TraceReader::refresh() {
  if (complete_ || corruptOffset_) return false;
  const uint64_t size = source_->size();
  if (size <= fileSize_) return false;
  fileSize_ = size;
  const size_t before = physicalBlocks_;
  tailWarning_.clear();
  scan(scanEnd_);
  rebuildWarnings();
  return physicalBlocks_ > before;
}

ChunkLimits TraceReader::limitsAt(uint64_t offset) const {
  auto it = std::upper_bound(limits_.begin(), limits_.end(), offset,
                             [](uint64_t o, const std::pair<uint64_t, ChunkLimits>& e) { return o <= e.first; });
  // `it` is the first entry at or after `offset`; the one before it is in effect.
  if (it == limits_.begin()) return limits_.empty() ? ChunkLimits{} : limits_.front().second;
  return std::prev(it)->second;
}

namespace {
std::span<const uint8_t> bytesOf(const std::vector<uint64_t>& words, size_t size) {
  return {reinterpret_cast<const uint8_t*>(words.data()), size};
}
std::string mismatch(const BlockInfo& b, const FrameHeader& h) {
  return fmt::format("block at offset {}: its frame says cycles {}+{} and {} stored bytes, the index {}+{} and {}",
                     b.offset, h.firstCycle, h.cycleCount, h.storedSize, b.firstCycle, b.cycleCount, b.storedSize);
}
bool sameFrame(const BlockInfo& b, const FrameHeader& h) {
  return h.firstCycle == b.firstCycle && h.cycleCount == b.cycleCount && h.storedSize == b.storedSize;
}
}  // namespace

bool TraceReader::readChunk(const BlockInfo& block, ChunkData& out, std::string& error) const {
  // The chunk's first block, then each continuation appended to it.
  uint64_t continued = 0;
  for (const ContinuationInfo& c : block.continuations) continued += c.cycleCount;
  // addBlock() counts each continuation's cycles into its chunk's.
  SB_ASSERT(continued <= block.cycleCount, "chunk at offset {}: {} cycles, {} of them in continuations", block.offset,
            block.cycleCount, continued);
  BlockInfo first = block;
  first.cycleCount -= continued;
  std::vector<uint64_t> firstMessage;  // what the next continuation is compressed against
  size_t firstSize = 0;
  if (!readBlockOfChunk(first, BlockKind::Chunk, out, error, firstMessage, firstSize, {})) return false;
  ChunkData part;
  std::vector<uint64_t> words;
  size_t size = 0;
  for (const ContinuationInfo& c : block.continuations) {
    const BlockInfo info{c.offset, BlockKind::Continuation, c.firstCycle, c.cycleCount, c.storedSize, c.rawSize, {},
                         {}};
    if (!readBlockOfChunk(info, BlockKind::Continuation, part, error, words, size, bytesOf(firstMessage, firstSize)))
      return false;
    std::swap(words, firstMessage);  // the next block is compressed against this one's message
    firstSize = size;
    std::string why;
    if (!appendContinuation(out, part, why)) {
      error = fmt::format("block at offset {}: {}", c.offset, why);
      return false;
    }
  }
  if (!block.continuations.empty()) {
    std::string why;
    if (!validateChunk(out, limitsAt(block.offset), why)) {
      error = fmt::format("chunk at offset {} with its {} continuations: {}", block.offset, block.continuations.size(),
                          why);
      return false;
    }
  }
  // Each block's cycles were checked against its frame, each continuation follows on: the chunk
  // holds exactly the cycles listed (History indexes its arrays by them).
  SB_ASSERT(out.firstCycle == block.firstCycle && out.cycleCount() == block.cycleCount,
            "chunk at offset {} decoded as cycles {}+{}, listed as {}+{}", block.offset, out.firstCycle,
            out.cycleCount(), block.firstCycle, block.cycleCount);
  return true;
}

bool TraceReader::readBlockOfChunk(const BlockInfo& block, BlockKind kind, ChunkData& out, std::string& error,
                                   std::vector<uint64_t>& words, size_t& size, std::span<const uint8_t> prefix) const {
  FrameHeader h;
  if (!loadBlock(block.offset, kind, words, size, &h, error, prefix)) return false;
  if (!sameFrame(block, h)) {
    error = mismatch(block, h);
    return false;
  }
  if (!decodeChunkOrContinuation(bytesOf(words, size), block.offset, limitsAt(block.offset),
                                 kind == BlockKind::Continuation, out, error))
    return false;
  if (out.firstCycle != h.firstCycle || out.cycleCount() != h.cycleCount) {
    error = fmt::format("block at offset {}: {} holds cycles {}+{}, its frame says {}+{}", block.offset,
                        blockKindName(kind), out.firstCycle, out.cycleCount(), h.firstCycle, h.cycleCount);
    return false;
  }
  return true;
}

bool TraceReader::readGap(const BlockInfo& block, GapData& out, std::string& error) const {
  std::vector<uint64_t> words;
  size_t size = 0;
  FrameHeader h;
  if (!loadBlock(block.offset, BlockKind::Gap, words, size, &h, error)) return false;
  if (!sameFrame(block, h)) {
    error = mismatch(block, h);
    return false;
  }
  if (!decodeGap(bytesOf(words, size), block.offset, out, error)) return false;
  if (out.firstCycle != h.firstCycle || out.cycleCount != h.cycleCount) {
    error = fmt::format("block at offset {}: gap covers cycles {}+{}, its frame says {}+{}", block.offset,
                        out.firstCycle, out.cycleCount, h.firstCycle, h.cycleCount);
    return false;
  }
  return true;
}

bool TraceReader::readFault(const BlockInfo& block, FaultData& out, std::string& error) const {
  std::vector<uint64_t> words;
  size_t size = 0;
  FrameHeader h;
  if (!loadBlock(block.offset, BlockKind::Fault, words, size, &h, error)) return false;
  if (!sameFrame(block, h)) {
    error = mismatch(block, h);
    return false;
  }
  if (!decodeFault(bytesOf(words, size), block.offset, out, error)) return false;
  if (out.cycle != h.firstCycle) {
    error =
        fmt::format("block at offset {}: fault in cycle {}, its frame says {}", block.offset, out.cycle, h.firstCycle);
    return false;
  }
  return true;
}

bool TraceReader::readOpenCycle(const BlockInfo& block, OpenCycleData& out, std::string& error) const {
  std::vector<uint64_t> words;
  size_t size = 0;
  FrameHeader h;
  if (!loadBlock(block.offset, BlockKind::OpenCycle, words, size, &h, error)) return false;
  if (!sameFrame(block, h)) {
    error = mismatch(block, h);
    return false;
  }
  if (!decodeOpenCycle(bytesOf(words, size), block.offset, limitsAt(block.offset), out, error)) return false;
  if (out.cycle != h.firstCycle) {
    error = fmt::format("block at offset {}: open cycle {}, its frame says {}", block.offset, out.cycle, h.firstCycle);
    return false;
  }
  return true;
}

bool TraceReader::readProgramChange(const BlockInfo& block, ProgramChangeData& out, std::string& error) const {
  std::vector<uint64_t> words;
  size_t size = 0;
  FrameHeader h;
  if (!loadBlock(block.offset, BlockKind::ProgramChange, words, size, &h, error)) return false;
  if (!sameFrame(block, h)) {
    error = mismatch(block, h);
    return false;
  }
  if (!decodeProgramChange(bytesOf(words, size), block.offset, out, error)) return false;
  if (out.atCycle != h.firstCycle) {
    error = fmt::format("block at offset {}: program change at cycle {}, its frame says {}", block.offset, out.atCycle,
                        h.firstCycle);
    return false;
  }
  return true;
}

}  // namespace scanback::trace
