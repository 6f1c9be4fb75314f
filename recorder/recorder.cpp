#include "recorder/recorder.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <chrono>
#include <cstring>
#include <unordered_map>

#include "traces/trace_writer.h"

namespace scanback::recorder {

namespace {

// One cycle as it crosses the queue. Followed by: keyframe bytes, statement ids (u32), encoded
// input changes, encoded writes, fault message.
// The digest's image hash is computed by the writer, not the scan thread: the scan thread only
// sends the 64-byte blocks of the image that changed since the last record (found by comparing
// with a shadow copy that stays in cache), and the writer keeps the full image up to date.
constexpr uint32_t kBlock = 64;

struct RecordHeader {
  uint64_t cycle;
  int64_t startNs;
  uint64_t droppedBefore;  // cycles dropped right before this one
  uint32_t steps;
  uint32_t imageHash;
  uint32_t statementCount;
  uint32_t inputBytes;
  uint32_t writeBytes;
  uint32_t keyframeBytes;
  uint32_t deltaBytes;      // changed image blocks: (u32 offset, up to 64 bytes) each
  uint32_t faultCode;
  uint32_t faultStatement;
  uint32_t faultMessageBytes;
  uint16_t task;
  uint8_t flags;
  uint8_t reserved;
};
constexpr uint8_t kHasStatements = 1;
constexpr uint8_t kFaulted = 2;
constexpr uint8_t kGapOnly = 4;  // no cycle: cycles dropped at the end of the recording

template <class T>
void putRaw(std::vector<uint8_t>& out, const T& v) {
  const size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

// 64 bytes equal? Inline and branch-free inside the block, so that the compiler vectorises it.
inline bool sameBlock(const uint8_t* a, const uint8_t* b) {
  uint64_t diff = 0;
  for (int i = 0; i < 8; ++i) {
    uint64_t x, y;
    std::memcpy(&x, a + i * 8, 8);
    std::memcpy(&y, b + i * 8, 8);
    diff |= x ^ y;
  }
  return diff == 0;
}

uint64_t chunkBytes(const trace::ChunkData& c) {
  uint64_t n = c.keyframe.size() + c.cycleCount() * 22;
  for (const auto& p : c.pathTable) n += p.size() * 4;
  for (const auto& w : c.inputChanges) n += w.bytes.size() + 9;
  for (const auto& w : c.writes) n += w.bytes.size() + 9;
  return n;
}

}  // namespace

Recorder::Recorder(Runtime& runtime, const RecorderOptions& options)
    : runtime_(runtime), options_(options), ring_(options.queueBytes) {}

std::unique_ptr<Recorder> Recorder::start(Runtime& runtime, const RecorderOptions& options, std::string& error) {
  if (runtime.inCycle()) {
    error = "the recorder attaches between cycles";
    return nullptr;
  }
  std::unique_ptr<Recorder> r(new Recorder(runtime, options));
  if (r->options_.keyframeEvery == 0) r->options_.keyframeEvery = 1;
  const Program& p = runtime.program();
  trace::HeaderData h;
  h.scanbackVersion = "0.1.0";
  h.programHash = p.hash;
  h.sources = p.sources.files();
  for (const TaskInfo& t : p.tasks) h.tasks.push_back({t.name, t.intervalNs, t.priority});
  h.options.keyframeEvery = r->options_.keyframeEvery;
  h.options.zstdLevel = options.zstdLevel;
  h.options.statements = options.statements;
  h.options.ringBytes = options.ringBytes;
  h.options.ringDurationNs = options.ringDurationNs;
  h.startWallTimeNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  h.imageSize = p.imageSize();
  h.statementCount = static_cast<uint32_t>(p.statements.size());
  r->writer_ = trace::TraceWriter::create(options.path, h, error);
  if (!r->writer_) return nullptr;

  // Everything the scan thread touches per cycle is allocated here, once.
  r->keyframe_.resize(p.imageSize());
  r->shadow_.resize(p.imageSize());
  r->inputChanges_.reserve(static_cast<size_t>(p.input.size) * 7 + 16);
  r->writes_.reserve(4096);
  if (options.statements) {
    r->statementLog_.resize(options.maxStatementsPerCycle);
    runtime.vm().setStatementLog(r->statementLog_.data(), r->statementLog_.data() + r->statementLog_.size());
  }
  runtime.setHooks(r.get());
  r->attached_ = true;
  r->thread_ = std::thread([rec = r.get()] { rec->writerLoop(); });
  return r;
}

Recorder::~Recorder() {
  if (attached_ || thread_.joinable()) {
    std::string ignored;
    finish(ignored);
  }
}

// ---------------------------------------------------------------- scan thread

void Recorder::beforeCycle(const Runtime& rt) {
  const Program& p = rt.program();
  const uint8_t* image = rt.vm().image();
  if (needKeyframe_) {
    std::memcpy(keyframe_.data(), image, keyframe_.size());
    std::memcpy(shadow_.data(), image, shadow_.size());  // deltas of this record are against it
    haveKeyframe_ = true;
  }
  // Input changes: the %I bytes about to be latched that differ from the image, as runs.
  inputChanges_.clear();
  const std::vector<uint8_t>& field = rt.inputs();
  const uint8_t* latched = image + p.input.offset;
  for (uint32_t i = 0; i < p.input.size;) {
    if (field[i] == latched[i]) {
      ++i;
      continue;
    }
    uint32_t j = i;
    while (j < p.input.size && field[j] != latched[j] && j - i < 0xFFFF) ++j;
    const uint32_t offset = p.input.offset + i;
    const uint16_t len = static_cast<uint16_t>(j - i);
    putRaw(inputChanges_, offset);
    putRaw(inputChanges_, len);
    inputChanges_.insert(inputChanges_.end(), field.begin() + i, field.begin() + j);
    i = j;
  }
  writes_.clear();
  for (const ExternalWrite& w : rt.pendingWrites()) {
    putRaw(writes_, w.offset);
    putRaw(writes_, w.bit);
    const uint16_t len = static_cast<uint16_t>(std::min<size_t>(w.bytes.size(), 0xFFFF));
    putRaw(writes_, len);
    writes_.insert(writes_.end(), w.bytes.begin(), w.bytes.begin() + len);
  }
  if (options_.statements) runtime_.vm().rewindStatementLog();
}

void Recorder::afterCycle(const Runtime& rt, RunStatus status) {
  const Vm& vm = rt.vm();
  const CycleStart& c = rt.currentCycle();
  const bool faulted = status == RunStatus::Faulted;
  RecordHeader h{};
  h.cycle = c.cycle;
  h.startNs = c.startNs;
  h.task = static_cast<uint16_t>(c.task);
  h.steps = static_cast<uint32_t>(vm.steps());
  const uint32_t imageSize = vm.imageSize();
  const uint32_t blocks = (imageSize + kBlock - 1) / kBlock;
  const bool pathRecorded = options_.statements && !vm.statementLogOverflowed();
  h.statementCount = pathRecorded ? static_cast<uint32_t>(vm.statementLogEnd() - vm.statementLogBegin()) : 0;
  h.flags = static_cast<uint8_t>((pathRecorded ? kHasStatements : 0) | (faulted ? kFaulted : 0));
  h.inputBytes = static_cast<uint32_t>(inputChanges_.size());
  h.writeBytes = static_cast<uint32_t>(writes_.size());
  const bool startsChunk = needKeyframe_ && haveKeyframe_;
  h.keyframeBytes = startsChunk ? static_cast<uint32_t>(keyframe_.size()) : 0;
  h.droppedBefore = droppedRun_;
  std::string faultMessage;
  if (faulted) {
    h.faultCode = static_cast<uint32_t>(vm.fault().code);
    h.faultStatement = vm.fault().statement;
    faultMessage = rt.faultMessage();
    h.faultMessageBytes = static_cast<uint32_t>(faultMessage.size());
  }
  // Room for every block changing; only what did change is committed.
  const size_t size = sizeof h + h.keyframeBytes + size_t{h.statementCount} * 4 + h.inputBytes + h.writeBytes +
                      h.faultMessageBytes + size_t{blocks} * (4 + kBlock);
  uint8_t* out = ring_.reserve(size);
  if (!out && faulted) {
    // The task has stopped: waiting for the writer cannot slow a scan any more, and the fault
    // must not be lost.
    for (int i = 0; i < 5000 && !out; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      out = ring_.reserve(size);
    }
  }
  if (!out) {
    ++droppedRun_;
    dropped_.fetch_add(1, std::memory_order_relaxed);
    needKeyframe_ = true;
    haveKeyframe_ = false;
    return;
  }
  uint8_t* const start = out;
  out += sizeof h;
  if (h.keyframeBytes) {
    std::memcpy(out, keyframe_.data(), h.keyframeBytes);
    out += h.keyframeBytes;
  }
  const uint8_t* image = vm.image();
  uint8_t* const deltaStart = out;
  for (uint32_t b = 0; b < blocks; ++b) {
    const uint32_t offset = b * kBlock;
    const uint32_t n = std::min(kBlock, imageSize - offset);
    if (n == kBlock ? sameBlock(image + offset, shadow_.data() + offset)
                    : std::memcmp(image + offset, shadow_.data() + offset, n) == 0)
      continue;
    std::memcpy(shadow_.data() + offset, image + offset, n);
    std::memcpy(out, &offset, 4);
    std::memcpy(out + 4, image + offset, n);
    out += 4 + n;
  }
  h.deltaBytes = static_cast<uint32_t>(out - deltaStart);
  std::memcpy(start, &h, sizeof h);
  if (h.statementCount) {
    std::memcpy(out, vm.statementLogBegin(), size_t{h.statementCount} * 4);
    out += size_t{h.statementCount} * 4;
  }
  if (h.inputBytes) std::memcpy(out, inputChanges_.data(), h.inputBytes);
  out += h.inputBytes;
  if (h.writeBytes) std::memcpy(out, writes_.data(), h.writeBytes);
  out += h.writeBytes;
  if (h.faultMessageBytes) std::memcpy(out, faultMessage.data(), h.faultMessageBytes);
  out += h.faultMessageBytes;
  ring_.commit(static_cast<size_t>(out - start));
  if (droppedRun_) gaps_.fetch_add(1, std::memory_order_relaxed);
  droppedRun_ = 0;
  recorded_.fetch_add(1, std::memory_order_relaxed);
  if (startsChunk) {
    needKeyframe_ = false;
    haveKeyframe_ = false;
    cyclesInChunk_ = 0;
  }
  if (++cyclesInChunk_ >= options_.keyframeEvery) needKeyframe_ = true;
}

// ---------------------------------------------------------------- writer thread

void Recorder::writerLoop() {
  for (;;) {
    std::span<const uint8_t> rec = ring_.front();
    if (rec.empty()) {
      if (stop_.load(std::memory_order_acquire)) {
        if (ring_.front().empty()) break;
        continue;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (const int64_t delay = writerDelayUs_.load(std::memory_order_relaxed); delay > 0) {
      // Sleep in small steps so that lifting the delay takes effect at once.
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(delay);
      while (std::chrono::steady_clock::now() < until && writerDelayUs_.load(std::memory_order_relaxed) > 0)
        std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(delay, 1000)));
    }
    processRecord(rec);
    ring_.pop();
  }
  flushChunk();
  if (options_.ringBytes || options_.ringDurationNs) writeFinalRing();
}

void Recorder::processRecord(std::span<const uint8_t> rec) {
  RecordHeader h;
  std::memcpy(&h, rec.data(), sizeof h);
  const uint8_t* p = rec.data() + sizeof h;
  const bool ringMode = options_.ringBytes || options_.ringDurationNs;
  if (h.droppedBefore) {
    flushChunk();
    trace::GapData gap{h.cycle - h.droppedBefore, h.droppedBefore};
    if (ringMode) ringGaps_.push_back(gap);
    else if (writer_ && writeError_.empty() && !writer_->writeGap(gap)) writeError_ = writer_->lastError();
  }
  if (h.flags & kGapOnly) return;
  if (h.keyframeBytes) {
    flushChunk();
    chunk_ = trace::ChunkData{};
    chunk_.firstCycle = h.cycle;
    chunk_.keyframe.assign(p, p + h.keyframeBytes);
    pathHashes_.clear();
    chunkOpen_ = true;
    writerImage_ = chunk_.keyframe;
    p += h.keyframeBytes;
  }
  for (const uint8_t* d = p; d < p + h.deltaBytes;) {
    uint32_t offset;
    std::memcpy(&offset, d, 4);
    const uint32_t n = std::min<uint32_t>(kBlock, static_cast<uint32_t>(writerImage_.size()) - offset);
    std::memcpy(writerImage_.data() + offset, d + 4, n);
    d += 4 + n;
  }
  p += h.deltaBytes;
  h.imageHash = static_cast<uint32_t>(XXH3_64bits(writerImage_.data(), writerImage_.size()));
  if (!chunkOpen_) return;  // cannot happen: every chunk's first record carries its keyframe
  const uint32_t index = chunk_.cycleCount();
  chunk_.tasks.push_back(h.task);
  chunk_.startTimes.push_back(h.startNs);
  chunk_.stepCounts.push_back(h.steps);
  chunk_.imageHashes.push_back(h.imageHash);
  if (options_.statements) {
    uint32_t pathIndex = trace::kNoPath;
    if (h.flags & kHasStatements) {
      const uint32_t* ids = reinterpret_cast<const uint32_t*>(p);  // 8-byte aligned in the ring
      const size_t hash = static_cast<size_t>(XXH3_64bits(p, size_t{h.statementCount} * 4));
      for (size_t k = 0; k < pathHashes_.size(); ++k) {
        const auto& known = chunk_.pathTable[k];
        if (pathHashes_[k] == hash && known.size() == h.statementCount &&
            std::memcmp(known.data(), ids, size_t{h.statementCount} * 4) == 0) {
          pathIndex = static_cast<uint32_t>(k);
          break;
        }
      }
      if (pathIndex == trace::kNoPath) {
        pathIndex = static_cast<uint32_t>(chunk_.pathTable.size());
        std::vector<uint32_t> path(h.statementCount);
        std::memcpy(path.data(), p, size_t{h.statementCount} * 4);
        chunk_.pathTable.push_back(std::move(path));
        pathHashes_.push_back(hash);
      }
    }
    chunk_.paths.push_back(pathIndex);
  }
  p += size_t{h.statementCount} * 4;
  auto readWrites = [&](const uint8_t* q, uint32_t bytes, bool withBit, std::vector<trace::ImageWriteData>& out) {
    const uint8_t* end = q + bytes;
    while (q < end) {
      trace::ImageWriteData w;
      w.cycleIndex = index;
      std::memcpy(&w.offset, q, 4);
      q += 4;
      if (withBit) {
        std::memcpy(&w.bit, q, 1);
        q += 1;
      }
      uint16_t len;
      std::memcpy(&len, q, 2);
      q += 2;
      w.bytes.assign(q, q + len);
      q += len;
      out.push_back(std::move(w));
    }
  };
  readWrites(p, h.inputBytes, false, chunk_.inputChanges);
  p += h.inputBytes;
  readWrites(p, h.writeBytes, true, chunk_.writes);
  p += h.writeBytes;
  if (h.flags & kFaulted) {
    trace::FaultData f;
    f.cycle = h.cycle;
    f.step = h.steps;
    f.statement = h.faultStatement;
    f.code = h.faultCode;
    f.message.assign(reinterpret_cast<const char*>(p), h.faultMessageBytes);
    flushChunk();
    if (ringMode) fault_ = f;
    else if (writer_ && writeError_.empty() && !writer_->writeFault(f)) writeError_ = writer_->lastError();
  }
}

void Recorder::flushChunk() {
  if (!chunkOpen_ || chunk_.cycleCount() == 0) return;
  chunkOpen_ = false;
  chunks_.fetch_add(1, std::memory_order_relaxed);
  if (options_.ringBytes || options_.ringDurationNs) {
    // Flight recorder: keep finished chunks in memory and forget the oldest beyond the limits.
    ringChunkSizes_.push_back(chunkBytes(chunk_));
    ringChunkBytes_ += ringChunkSizes_.back();
    ringChunks_.push_back(std::move(chunk_));
    auto tooMuch = [&] {
      if (ringChunks_.size() <= 1) return false;
      if (options_.ringBytes && ringChunkBytes_ > options_.ringBytes) return true;
      if (options_.ringDurationNs) {
        const int64_t newest = ringChunks_.back().startTimes.back();
        const int64_t oldestEnd = ringChunks_.front().startTimes.back();
        if (newest - oldestEnd > options_.ringDurationNs) return true;
      }
      return false;
    };
    while (tooMuch()) {
      ringChunkBytes_ -= ringChunkSizes_.front();
      ringChunkSizes_.erase(ringChunkSizes_.begin());
      ringChunks_.erase(ringChunks_.begin());
    }
    chunk_ = trace::ChunkData{};
    return;
  }
  if (writer_ && writeError_.empty() && !writer_->writeChunk(chunk_)) writeError_ = writer_->lastError();
  publishSizes();
  chunk_ = trace::ChunkData{};
}

void Recorder::publishSizes() {
  if (!writer_) return;
  bytesWritten_.store(writer_->bytesWritten(), std::memory_order_relaxed);
  rawBytes_.store(writer_->rawBytes(), std::memory_order_relaxed);
}

void Recorder::writeFinalRing() {
  if (!writer_ || !writeError_.empty()) return;
  const uint64_t first = ringChunks_.empty() ? 0 : ringChunks_.front().firstCycle;
  size_t g = 0;
  for (const trace::ChunkData& c : ringChunks_) {
    // Gaps that fall inside the kept history stay in it.
    while (g < ringGaps_.size() && ringGaps_[g].firstCycle + ringGaps_[g].cycleCount <= c.firstCycle) {
      if (ringGaps_[g].firstCycle >= first && !writer_->writeGap(ringGaps_[g])) {
        writeError_ = writer_->lastError();
        return;
      }
      ++g;
    }
    if (!writer_->writeChunk(c)) {
      writeError_ = writer_->lastError();
      return;
    }
  }
  if (fault_ && !writer_->writeFault(*fault_)) writeError_ = writer_->lastError();
}

bool Recorder::finish(std::string& error) {
  if (attached_) {
    runtime_.setHooks(nullptr);
    runtime_.vm().setStatementLog(nullptr, nullptr);
    attached_ = false;
    if (droppedRun_) {
      // Cycles dropped at the very end still get their gap record. The scan is over, so
      // waiting for room in the queue slows nothing down.
      RecordHeader h{};
      h.cycle = runtime_.cycle();
      h.droppedBefore = droppedRun_;
      h.flags = kGapOnly;
      uint8_t* out = nullptr;
      for (int i = 0; i < 100000 && !(out = ring_.reserve(sizeof h)); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (out) {
        std::memcpy(out, &h, sizeof h);
        ring_.commit();
        gaps_.fetch_add(1, std::memory_order_relaxed);
        droppedRun_ = 0;
      }
    }
  }
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }
  if (writer_) {
    if (!writer_->close() && writeError_.empty()) writeError_ = writer_->lastError();
    publishSizes();
  }
  if (!writeError_.empty()) {
    error = writeError_;
    return false;
  }
  return true;
}

RecorderStats Recorder::stats() const {
  RecorderStats s;
  s.cyclesRecorded = recorded_.load(std::memory_order_relaxed);
  s.cyclesDropped = dropped_.load(std::memory_order_relaxed);
  s.gaps = gaps_.load(std::memory_order_relaxed);
  s.chunks = chunks_.load(std::memory_order_relaxed);
  s.bytesWritten = bytesWritten_.load(std::memory_order_relaxed);
  s.rawBytes = rawBytes_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace scanback::recorder
