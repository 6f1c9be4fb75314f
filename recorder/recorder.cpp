#include "recorder/recorder.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "traces/trace_writer.h"
#include "vm/base/assert.h"
#include "vm/base/version.h"
#include "vm/exec/natives.h"
#include "vm/runtime/step_writes.h"

namespace scanback::recorder {

// One cycle as it crosses the queue. Followed by: keyframe bytes, encoded input changes, encoded
// writes, fault message. (A snapshot mark is one too, with no cycle: see kSnapshotMark.)
struct RecordHeader {
  uint8_t flags;  // first in every record kind
  uint8_t reserved;
  uint16_t task;
  uint32_t steps;  // the live task's statement count
  uint64_t cycle;
  int64_t startNs;
  uint64_t droppedBefore;  // cycles dropped right before this one
  uint32_t inputBytes;
  uint32_t writeBytes;
  uint32_t keyframeBytes;
  uint32_t faultCode;
  uint32_t faultStatement;
  uint32_t faultMessageBytes;
};

namespace {

// The common cycle in half the bytes (every byte the scan thread hands over is a cache line the
// writer's core must give back): no keyframe, writes, fault or gap, and it follows the cycle of the
// record before it in the queue, so its number is that one's plus one and its start time is
// stored as the time since that one's. Followed by the encoded input changes.
struct ShortRecord {
  uint8_t flags;  // kShort
  uint8_t reserved;
  uint16_t task;
  uint32_t steps;
  uint32_t sincePreviousNs;  // start time minus the previous cycle's
  uint16_t inputBytes;       // at most kBatchBytes / 2
  uint16_t reserved2;
};
static_assert(sizeof(ShortRecord) == 16);
constexpr uint8_t kShort = 8;
constexpr uint8_t kFaulted = 2;
// Records are staged on the scan thread and handed to the writer in batches of about this size or
// this many cycles (a 10 ms task's history reaches the writer at most a third of a second late).
constexpr size_t kBatchBytes = 2048;
constexpr uint32_t kBatchCycles = 32;
constexpr uint8_t kGapOnly = 4;  // no cycle: cycles dropped at the end of the recording
// No cycle: every cycle before it has been handed over; `cycle` holds the number of snapshot
// requests made when the scan thread placed it (they may all be served from here on).
constexpr uint8_t kSnapshotMark = 16;
// No cycle: every cycle before `cycle` has been handed over or dropped (`droppedBefore` of them
// right before it); the writer closes its chunk and fulfils syncDone_.
constexpr uint8_t kSyncMark = 32;
constexpr uint8_t kNoCycle = kGapOnly | kSnapshotMark | kSyncMark;

// The queue's capacity (RecorderOptions::queueBytes): as asked, or 256 KiB, and room for at least
// four keyframe records of an image of `imageSize` bytes.
size_t queueBytesFor(size_t requested, uint32_t imageSize) {
  const size_t keyframeRecord = sizeof(RecordHeader) + size_t{imageSize} + kBatchBytes;
  return std::max(requested ? requested : size_t{256} << 10, 4 * keyframeRecord);
}

// A counter only the scan thread writes: a plain load and store, not a locked read-modify-write.
inline void bump(std::atomic<uint64_t>& counter) {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

template <class T>
void putRaw(std::vector<uint8_t>& out, const T& v) {
  const size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

// The bytes of `now` that differ from `before`, as runs (offset u32, length u16, bytes); `base`
// is the image offset of both.
void encodeChanges(const uint8_t* now, const uint8_t* before, uint32_t size, uint32_t base, std::vector<uint8_t>& out) {
  for (uint32_t i = 0; i < size;) {
    if (now[i] == before[i]) {
      ++i;
      continue;
    }
    uint32_t j = i;
    while (j < size && now[j] != before[j] && j - i < 0xFFFF) ++j;
    const uint32_t offset = base + i;
    const uint16_t len = static_cast<uint16_t>(j - i);
    putRaw(out, offset);
    putRaw(out, len);
    out.insert(out.end(), now + i, now + j);
    i = j;
  }
}

// Decodes scan inputs as the scan thread encodes them (offset u32, [bit i8, step i64,] length u16,
// bytes)
// and appends them to `out`, for the cycle at `cycleIndex` of its chunk.
void decodeWrites(const uint8_t* q, size_t bytes, bool withBit, uint32_t cycleIndex,
                  std::vector<trace::ImageWriteData>& out) {
  for (const uint8_t* end = q + bytes; q < end;) {
    trace::ImageWriteData w;
    w.cycleIndex = cycleIndex;
    std::memcpy(&w.offset, q, 4);
    q += 4;
    if (withBit) {  // external writes: with a bit and the statement boundary they were made at
      std::memcpy(&w.bit, q, 1);
      q += 1;
      std::memcpy(&w.atStep, q, 8);
      q += 8;
    }
    uint16_t len;
    std::memcpy(&len, q, 2);
    q += 2;
    w.bytes.assign(q, q + len);
    q += len;
    out.push_back(std::move(w));
  }
}

}  // namespace

// A snapshot asked for, on its way to the writer thread.
struct Recorder::SnapshotRequest {
  std::string path;
  std::promise<SnapshotResult> done;
  uint64_t ticket = 0;  // its place among all requests (snapshotTickets_ before it was counted)
  SnapshotRequest* next = nullptr;
};

Recorder::SnapshotRequest Recorder::closedStack_;

Recorder::Recorder(Runtime& runtime, const RecorderOptions& options)
    : runtime_(runtime),
      options_(options),
      ring_(queueBytesFor(options.queueBytes, runtime.vm().imageSize())),
      vm_(runtime.vm().programPtr()) {}

std::unique_ptr<Recorder> Recorder::start(Runtime& runtime, const RecorderOptions& options, std::string& error) {
  if (runtime.inCycle()) {
    error = "the recorder attaches between cycles";
    return nullptr;
  }
  std::unique_ptr<Recorder> r(new Recorder(runtime, options));
  if (r->options_.keyframeEvery == 0) r->options_.keyframeEvery = 1;
  const Program& p = runtime.program();
  trace::HeaderData h;
  h.scanbackVersion = kScanbackVersion;
  h.programHash = p.hash;
  h.sources = p.sources.files();
  for (const TaskInfo& t : p.tasks) h.tasks.push_back({t.name, t.intervalNs, t.priority});
  h.options.keyframeEvery = r->options_.keyframeEvery;
  h.options.zstdLevel = options.zstdLevel;
  h.options.statements = options.statements;
  h.options.ringBytes = options.ringBytes;
  h.options.ringDurationNs = options.ringDurationNs;
  h.options.statementBudget = runtime.vm().statementBudget();
  h.options.test = p.test;
  h.startWallTimeNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  h.imageSize = p.imageSize();
  h.statementCount = static_cast<uint32_t>(p.statements.size());
  h.writeIndexComplete = options.writeIndex;
  if (r->ringMode()) {
    r->encoder_ = std::make_unique<trace::BlockEncoder>(options.zstdLevel);
    if (!r->encoder_->ok()) {
      error = "cannot create a zstd compression context";
      return nullptr;
    }
    r->limits_ = trace::ChunkLimits{h.imageSize, h.statementCount};
  }
  if (!r->ringMode() || !options.path.empty()) {
    r->writer_ = trace::TraceWriter::create(options.path, h, error);
    if (!r->writer_) return nullptr;
  }
  r->header_ = std::move(h);

  // Everything the scan thread touches per cycle is allocated here, once.
  r->keyframe_.resize(p.imageSize());
  r->inputChanges_.reserve(static_cast<size_t>(p.input.size) * 7 + 16);
  r->writes_.reserve(4096);
  r->staging_.reset(new uint8_t[2 * kBatchBytes]);  // below kBatchBytes + one record of at most that
  // The writer's VM: the same program and watchdog as the live one.
  r->vm_.setStatementBudget(runtime.vm().statementBudget());
  // The write index needs the statements that ran, also when their paths are not recorded, and
  // what each may write: computed here, before the first cycle, since on the writer thread it
  // would hold up the queue (tens of milliseconds for a large program).
  if (options.writeIndex) {
    const std::vector<uint32_t> natives = nativeInstanceSizes();
    r->writeSets_ = std::make_unique<const WriteSets>(p, natives);
  }
  if (options.statements || options.writeIndex) {
    r->statementLog_.resize(options.maxStatementsPerCycle);
    r->vm_.setStatementLog(r->statementLog_.data(), r->statementLog_.data() + r->statementLog_.size());
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
  // One relaxed load per cycle: has a snapshot been requested since the last mark?
  if (const uint64_t tickets = snapshotTickets_.load(std::memory_order_relaxed); tickets != markedTickets_) [[unlikely]]
    markSnapshot(tickets);
  const Program& p = rt.program();
  const uint8_t* image = rt.vm().image();
  if (needKeyframe_) {
    std::memcpy(keyframe_.data(), image, keyframe_.size());
    haveKeyframe_ = true;
  }
  inputChanges_.clear();
  const std::vector<uint8_t>& field = rt.inputs();
  // (A program without %I has an empty field: no memcmp on its null data.)
  if (p.input.size && std::memcmp(field.data(), image + p.input.offset, p.input.size) != 0)  // rare: inputs changed
    encodeChanges(field.data(), image + p.input.offset, p.input.size, p.input.offset, inputChanges_);
  writes_.clear();
  for (const ExternalWrite& w : rt.pendingWrites()) encodeWrite(w, trace::ImageWriteData::kAtCycleStart);
}

void Recorder::encodeWrite(const ExternalWrite& w, int64_t atStep) {
  putRaw(writes_, w.offset);
  putRaw(writes_, w.bit);
  putRaw(writes_, atStep);
  const uint16_t len = static_cast<uint16_t>(std::min<size_t>(w.bytes.size(), 0xFFFF));
  putRaw(writes_, len);
  writes_.insert(writes_.end(), w.bytes.begin(), w.bytes.begin() + len);
}

void Recorder::noteWrite(const ExternalWrite& write, uint64_t step) { encodeWrite(write, static_cast<int64_t>(step)); }

void Recorder::afterCycle(const Runtime& rt, RunStatus status) {
  const Vm& vm = rt.vm();
  const CycleStart& c = rt.currentCycle();
  const bool startsChunk = needKeyframe_ && haveKeyframe_;
  const uint64_t sincePrevious = static_cast<uint64_t>(c.startNs) - static_cast<uint64_t>(queuedStartNs_);
  if (status == RunStatus::CycleDone && !startsChunk && writes_.empty() && inputChanges_.size() <= kBatchBytes / 2 &&
      c.cycle == queuedCycle_ + 1 && c.startNs >= queuedStartNs_ && sincePrevious <= UINT32_MAX) {
    // The common case, kept short: staged, and handed over with the next batch. (A cycle that
    // follows dropped ones always starts a chunk, so it never takes this path.)
    const ShortRecord r{kShort,
                        0,
                        static_cast<uint16_t>(c.task),
                        static_cast<uint32_t>(vm.steps()),
                        static_cast<uint32_t>(sincePrevious),
                        static_cast<uint16_t>(inputChanges_.size()),
                        0};
    queuedCycle_ = c.cycle;
    queuedStartNs_ = c.startNs;
    uint8_t* out = staging_.get() + stagedBytes_;
    std::memcpy(out, &r, sizeof r);
    if (r.inputBytes) std::memcpy(out + sizeof r, inputChanges_.data(), r.inputBytes);
    stagedBytes_ += sizeof r + r.inputBytes;
    if (stagedCycles_++ == 0) firstStagedNs_ = c.startNs;
    const bool due = options_.handOverEveryNs && c.startNs - firstStagedNs_ >= options_.handOverEveryNs;
    if ((stagedBytes_ >= kBatchBytes || stagedCycles_ >= kBatchCycles || due) && !flushStaged(false)) return;
    if (++cyclesInChunk_ >= options_.keyframeEvery) needKeyframe_ = true;
    return;
  }
  const bool faulted = status == RunStatus::Faulted;
  RecordHeader h{};
  h.cycle = c.cycle;
  h.startNs = c.startNs;
  h.task = static_cast<uint16_t>(c.task);
  h.steps = static_cast<uint32_t>(vm.steps());
  h.flags = faulted ? kFaulted : 0;
  h.inputBytes = static_cast<uint32_t>(inputChanges_.size());
  h.writeBytes = static_cast<uint32_t>(writes_.size());
  h.keyframeBytes = startsChunk ? static_cast<uint32_t>(keyframe_.size()) : 0;
  h.droppedBefore = droppedRun_;
  std::string faultMessage;
  if (faulted) {
    h.faultCode = static_cast<uint32_t>(vm.fault().code);
    h.faultStatement = vm.fault().statement;
    faultMessage = rt.faultMessage();
    h.faultMessageBytes = static_cast<uint32_t>(faultMessage.size());
  }
  const size_t size = sizeof h + h.keyframeBytes + h.inputBytes + h.writeBytes + h.faultMessageBytes;
  queuedCycle_ = c.cycle;
  queuedStartNs_ = c.startNs;
  auto put = [&](uint8_t* out) {
    std::memcpy(out, &h, sizeof h);
    out += sizeof h;
    if (h.keyframeBytes) std::memcpy(out, keyframe_.data(), h.keyframeBytes);
    out += h.keyframeBytes;
    if (h.inputBytes) std::memcpy(out, inputChanges_.data(), h.inputBytes);
    out += h.inputBytes;
    if (h.writeBytes) std::memcpy(out, writes_.data(), h.writeBytes);
    out += h.writeBytes;
    if (h.faultMessageBytes) std::memcpy(out, faultMessage.data(), h.faultMessageBytes);
  };
  if (h.keyframeBytes == 0 && size <= kBatchBytes) {
    // Staged too (a record that follows dropped cycles always carries a keyframe, so staged
    // records never start after a gap).
    put(staging_.get() + stagedBytes_);  // (a vector's resize would zero-fill first: rep stos)
    stagedBytes_ += size;
    if (stagedCycles_++ == 0) firstStagedNs_ = c.startNs;
    const bool due = options_.handOverEveryNs && c.startNs - firstStagedNs_ >= options_.handOverEveryNs;
    if ((stagedBytes_ >= kBatchBytes || stagedCycles_ >= kBatchCycles || faulted || due) && !flushStaged(faulted))
      return;
  } else {
    // Keyframes and big records cross on their own, after the staged cycles that precede them.
    if (!flushStaged(faulted) && h.keyframeBytes == 0) {
      dropCycles(1);  // no keyframe to restart from after the dropped batch
      return;
    }
    h.droppedBefore = droppedRun_;
    uint8_t* out = reserve(size, faulted);
    if (!out) {
      dropCycles(1);
      return;
    }
    put(out);
    ring_.commit();
    if (droppedRun_) bump(gaps_);
    droppedRun_ = 0;
    bump(recorded_);
  }
  if (startsChunk) {
    needKeyframe_ = false;
    haveKeyframe_ = false;
    cyclesInChunk_ = 0;
  }
  // After a fault a new chunk starts, should the task be run on.
  if (++cyclesInChunk_ >= options_.keyframeEvery || faulted) needKeyframe_ = true;
}

void Recorder::markSnapshot(uint64_t tickets) {
  // Everything before this cycle goes to the writer now, then the mark. When the queue is full the
  // staged cycles are dropped as usual (a snapshot cannot hold them anyway) and the mark waits for
  // the next cycle.
  flushStaged(false);
  RecordHeader h{};
  h.flags = kSnapshotMark;
  h.cycle = tickets;
  if (uint8_t* out = ring_.reserve(sizeof h)) {
    std::memcpy(out, &h, sizeof h);
    ring_.commit();
    markedTickets_ = tickets;
  }
}

SyncResult Recorder::sync() {
  SyncResult result;
  if (ringMode()) {
    result.error = "a flight recorder keeps its history in memory: only a snapshot writes it to a file";
    return result;
  }
  if (!attached_) {
    result.error = "the recording has finished";
    return result;
  }
  // The task is not scanning, so waiting for room in the queue slows nothing down.
  flushStaged(true);
  RecordHeader h{};
  h.flags = kSyncMark;
  h.cycle = runtime_.inCycle() ? runtime_.currentCycle().cycle : runtime_.cycle();
  h.droppedBefore = droppedRun_;
  uint8_t* out = reserve(sizeof h, true);
  if (!out) {
    result.error = "the recorder's writer has not taken anything for 5 seconds";
    return result;
  }
  syncDone_ = std::promise<SyncResult>();
  std::future<SyncResult> done = syncDone_.get_future();
  // A cycle under way that starts a chunk has its keyframe here already: the image before it,
  // even when the writer has nothing to re-execute (the first cycle, or after dropped ones).
  const bool ownKeyframe = runtime_.inCycle() && needKeyframe_ && haveKeyframe_;
  std::memcpy(out, &h, sizeof h);
  ring_.commit();  // (publishes syncDone_ to the writer)
  {
    std::lock_guard lock(kickMutex_);
    kicked_ = true;
  }
  kick_.notify_one();
  if (droppedRun_) {
    // The writer writes their gap: the next recorded cycle starts a chunk of its own.
    bump(gaps_);
    droppedRun_ = 0;
    needKeyframe_ = true;
  }
  SyncResult synced = done.get();
  if (synced.ok && ownKeyframe) synced.image = keyframe_;
  return synced;
}

void Recorder::idle() {
  flushStaged(false);
  if (const uint64_t tickets = snapshotTickets_.load(std::memory_order_relaxed); tickets != markedTickets_)
    markSnapshot(tickets);
}

bool Recorder::addHistorySink(std::shared_ptr<HistorySink> sink, uint64_t fromCycle, uint64_t maxBytes) {
  if (!ringMode()) return false;
  std::lock_guard lock(historyMutex_);
  // The newest chunks that fit, back to the one that holds fromCycle.
  size_t first = ringChunks_.size();
  uint64_t bytes = 0;
  while (first > 0) {
    const trace::EncodedChunk& c = *ringChunks_[first - 1].block;
    if (c.firstCycle() + c.cycleCount() <= fromCycle) break;
    if (first < ringChunks_.size() && bytes + c.size() > maxBytes) break;
    bytes += c.size();
    --first;
  }
  const uint64_t from = first < ringChunks_.size() ? ringChunks_[first].block->firstCycle() : fromCycle;
  size_t g = 0;
  auto gapsUpTo = [&](uint64_t cycle) {
    for (; g < ringGaps_.size() && ringGaps_[g].firstCycle + ringGaps_[g].cycleCount <= cycle; ++g)
      if (ringGaps_[g].firstCycle >= from) sink->gap(ringGaps_[g]);
  };
  for (size_t i = first; i < ringChunks_.size(); ++i) {
    gapsUpTo(ringChunks_[i].block->firstCycle());
    sink->chunk(ringChunks_[i].block);
  }
  gapsUpTo(UINT64_MAX);
  if (fault_) sink->fault(*fault_);
  sinks_.push_back(std::move(sink));
  return true;
}

void Recorder::removeHistorySink(const HistorySink* sink) {
  std::lock_guard lock(historyMutex_);
  std::erase_if(sinks_, [&](const std::shared_ptr<HistorySink>& s) { return s.get() == sink; });
}

HeldHistory Recorder::held() const {
  HeldHistory h;
  std::lock_guard lock(historyMutex_);
  if (ringChunks_.empty()) return h;
  h.chunks = ringChunks_.size();
  h.firstCycle = ringChunks_.front().block->firstCycle();
  h.endCycle = ringChunks_.back().block->firstCycle() + ringChunks_.back().block->cycleCount();
  h.bytes = ringChunkBytes_;
  return h;
}

CycleInputs Recorder::currentInputs() const {
  CycleInputs out;
  decodeWrites(inputChanges_.data(), inputChanges_.size(), false, 0, out.inputChanges);
  decodeWrites(writes_.data(), writes_.size(), true, 0, out.writes);
  return out;
}

bool Recorder::waitForWriter(size_t bytes, std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(drainMutex_);
  drainBelow_.store(std::max(drainBelow_.load(std::memory_order_relaxed), bytes), std::memory_order_relaxed);
  drainWaiters_.fetch_add(1, std::memory_order_acq_rel);
  const bool done = drained_.wait_for(lock, timeout, [&] { return ring_.used() <= bytes; });
  if (drainWaiters_.fetch_sub(1, std::memory_order_acq_rel) == 1) drainBelow_.store(0, std::memory_order_relaxed);
  return done;
}

uint8_t* Recorder::reserve(size_t size, bool mayWait) {
  uint8_t* out = ring_.reserve(size);
  // When the task has stopped (a fault, the end), waiting for the writer cannot slow a scan any
  // more, and what is left must not be lost.
  for (int i = 0; mayWait && !out && i < 5000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    out = ring_.reserve(size);
  }
  return out;
}

void Recorder::dropCycles(uint64_t count) {
  droppedRun_ += count;
  dropped_.store(dropped_.load(std::memory_order_relaxed) + count, std::memory_order_relaxed);
  needKeyframe_ = true;
  haveKeyframe_ = false;
}

bool Recorder::flushStaged(bool mayWait) {
  if (stagedCycles_ == 0) return true;
  const uint32_t cycles = stagedCycles_;
  stagedCycles_ = 0;
  const size_t bytes = stagedBytes_;
  stagedBytes_ = 0;
  uint8_t* out = reserve(bytes, mayWait);
  if (!out) {
    dropCycles(cycles);
    return false;
  }
  // One large copy into the queue rather than a few bytes per cycle: the queue's cache lines are
  // fetched from the writer's core once per batch, not once per cycle.
  std::memcpy(out, staging_.get(), bytes);
  ring_.commit();
  ring_.prefetchNext(kBatchBytes);
  recorded_.store(recorded_.load(std::memory_order_relaxed) + cycles, std::memory_order_relaxed);
  return true;
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
      serveSnapshots(false);
      if (options_.flushEveryNs && chunkOpen_ &&
          std::chrono::steady_clock::now() - chunkOpenedAt_ >= std::chrono::nanoseconds(options_.flushEveryNs)) {
        flushChunk();  // a reader following the trace sees the cycles so far (the next chunk starts from vm_)
      }
      // Idle: poll again in a millisecond, or at once when sync() asks (a debugger waits for it).
      std::unique_lock lock(kickMutex_);
      kick_.wait_for(lock, std::chrono::milliseconds(1), [&] { return kicked_; });
      kicked_ = false;
      continue;
    }
    if (const int64_t delay = writerDelayUs_.load(std::memory_order_relaxed); delay > 0) {
      // Sleep in small steps so that lifting the delay takes effect at once.
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(delay);
      while (std::chrono::steady_clock::now() < until && writerDelayUs_.load(std::memory_order_relaxed) > 0)
        std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(delay, 1000)));
    }
    // A queue entry holds one or more records back to back.
    for (size_t at = 0; at < rec.size();) {
      RecordHeader h{};
      if (rec[at] & kShort) {
        ShortRecord r;
        std::memcpy(&r, rec.data() + at, sizeof r);
        h.task = r.task;
        h.steps = r.steps;
        h.cycle = takenCycle_ + 1;
        h.startNs = takenStartNs_ + r.sincePreviousNs;
        h.inputBytes = r.inputBytes;
        at += sizeof r;
      } else {
        std::memcpy(&h, rec.data() + at, sizeof h);
        at += sizeof h;
      }
      if (!(h.flags & kNoCycle)) {
        takenCycle_ = h.cycle;
        takenStartNs_ = h.startNs;
      }
      processRecord(h, rec.data() + at);
      at += size_t{h.keyframeBytes} + h.inputBytes + h.writeBytes + h.faultMessageBytes;
    }
    ring_.pop();
    // Anyone in waitForWriter() looks at the queue again. (Both sides read-modify-write the count of
    // waiters after their own step, the pop here, the registration there: whichever comes second
    // sees the other's. A read-modify-write, not a fence: ThreadSanitizer follows those.)
    if (drainWaiters_.fetch_add(0, std::memory_order_acq_rel) &&
        ring_.used() <= drainBelow_.load(std::memory_order_relaxed)) {
      std::lock_guard lock(drainMutex_);
      drained_.notify_all();
    }
    serveSnapshots(false);
  }
  flushChunk();
  // Every cycle has been handed over: the requests still waiting for a mark are served now, and
  // later ones refused.
  serveSnapshots(true);
  if (ringMode()) writeFinalRing();
}

void Recorder::noteDivergence(std::string what) {
  if (divergences_.fetch_add(1, std::memory_order_relaxed) == 0) firstDivergence_ = std::move(what);
}

void Recorder::processRecord(const RecordHeader& h, const uint8_t* p) {
  if (h.flags & kSnapshotMark) {
    servableTickets_ = std::max(servableTickets_, h.cycle);
    return;
  }
  if (h.flags & kSyncMark) return serveSync(h);
  const bool ringMode = this->ringMode();
  if (h.droppedBefore) {
    flushChunk();
    vmValid_ = false;  // the dropped cycles are not re-executed
    trace::GapData gap{h.cycle - h.droppedBefore, h.droppedBefore};
    if (ringMode) {
      std::lock_guard lock(historyMutex_);
      ringGaps_.push_back(gap);
      for (const auto& sink : sinks_) sink->gap(gap);
    } else if (writer_ && writeError_.empty() && !writer_->writeGap(gap))
      writeError_ = writer_->lastError();
  }
  if (h.flags & kGapOnly) return;
  const uint32_t imageSize = vm_.imageSize();
  if (h.keyframeBytes) {
    flushChunk();
    chunk_ = trace::ChunkData{};
    chunk_.firstCycle = h.cycle;
    chunk_.keyframe.assign(p, p + h.keyframeBytes);
    pathHashes_.clear();
    chunkOpen_ = true;
    chunkOpenedAt_ = std::chrono::steady_clock::now();
    if (h.keyframeBytes == imageSize) {
      if (vmValid_ && std::memcmp(vm_.image(), p, imageSize) != 0) {
        uint32_t at = 0;
        while (vm_.image()[at] == p[at]) ++at;
        noteDivergence(
            fmt::format("the image before cycle {} differs from the re-executed one (first at byte {})", h.cycle, at));
      }
      std::memcpy(vm_.image(), p, imageSize);  // the live image wins
      vmValid_ = true;
    }
    startWriteIndex();
    p += h.keyframeBytes;
  }
  if (!chunkOpen_ && vmValid_) {
    // The chunk before was closed early by a sync(): this one starts from the re-executed image
    // (the live image is checked against it again at the next keyframe).
    chunk_ = trace::ChunkData{};
    chunk_.firstCycle = h.cycle;
    chunk_.keyframe.assign(vm_.image(), vm_.image() + imageSize);
    pathHashes_.clear();
    chunkOpen_ = true;
    chunkOpenedAt_ = std::chrono::steady_clock::now();
    startWriteIndex();
  }
  if (!chunkOpen_ || !vmValid_) return;  // cannot happen: a chunk after a gap or fault starts with its keyframe
  const uint32_t index = chunk_.cycleCount();
  // The cycle's scan inputs, applied as Runtime::startCycle applies them: %I changes, then writes.
  auto readWrites = [&](const uint8_t* q, uint32_t bytes, bool withBit, std::vector<trace::ImageWriteData>& out) {
    const size_t from = out.size();
    decodeWrites(q, bytes, withBit, index, out);
    for (size_t i = from; i < out.size(); ++i)
      if (out[i].atStep == trace::ImageWriteData::kAtCycleStart)
        applyWrite(vm_.image(), imageSize, ExternalWrite{out[i].offset, out[i].bit, out[i].bytes});
  };
  readWrites(p, h.inputBytes, false, chunk_.inputChanges);
  p += h.inputBytes;
  const size_t firstWrite = chunk_.writes.size();
  readWrites(p, h.writeBytes, true, chunk_.writes);
  p += h.writeBytes;

  vm_.rewindStatementLog();
  vm_.beginCycle(h.task, h.startNs);
  // Debugger writes made inside the cycle are applied at their statement boundary, as live.
  std::vector<StepWrite> atSteps;
  for (size_t i = firstWrite; i < chunk_.writes.size(); ++i) {
    const trace::ImageWriteData& w = chunk_.writes[i];
    if (w.atStep >= 0) atSteps.push_back({static_cast<uint64_t>(w.atStep), ExternalWrite{w.offset, w.bit, w.bytes}});
  }
  StepWriter stepWriter(std::move(atSteps));
  const RunStatus status = stepWriter.run(vm_);
  const bool liveFaulted = (h.flags & kFaulted) != 0;
  if ((status == RunStatus::Faulted) != liveFaulted || vm_.steps() != h.steps) {
    noteDivergence(fmt::format("cycle {}: the live task {} after {} statements, the re-execution {} after {}", h.cycle,
                               liveFaulted ? "faulted" : "ended", h.steps,
                               status == RunStatus::Faulted ? "faulted" : "ended", vm_.steps()));
  }
  chunk_.tasks.push_back(h.task);
  chunk_.startTimes.push_back(h.startNs);
  chunk_.stepCounts.push_back(h.steps);
  chunk_.imageHashes.push_back(static_cast<uint32_t>(XXH3_64bits(vm_.image(), imageSize)));
  noteBoundary();
  if (options_.statements) {
    uint32_t pathIndex = trace::kNoPath;
    if (!vm_.statementLogOverflowed()) {
      const uint32_t* ids = vm_.statementLogBegin();
      const size_t count = static_cast<size_t>(vm_.statementLogEnd() - ids);
      const size_t hash = static_cast<size_t>(XXH3_64bits(ids, count * 4));
      for (size_t k = 0; k < pathHashes_.size(); ++k) {
        const auto& known = chunk_.pathTable[k];
        if (pathHashes_[k] == hash && known.size() == count && std::memcmp(known.data(), ids, count * 4) == 0) {
          pathIndex = static_cast<uint32_t>(k);
          break;
        }
      }
      if (pathIndex == trace::kNoPath) {
        pathIndex = static_cast<uint32_t>(chunk_.pathTable.size());
        chunk_.pathTable.emplace_back(ids, ids + count);
        pathHashes_.push_back(hash);
      }
    }
    chunk_.paths.push_back(pathIndex);
  }
  if (liveFaulted) {
    trace::FaultData f;
    f.cycle = h.cycle;
    f.step = h.steps;
    f.statement = h.faultStatement;
    f.code = h.faultCode;
    f.message.assign(reinterpret_cast<const char*>(p), h.faultMessageBytes);
    flushChunk();
    vmValid_ = false;
    if (ringMode) {
      std::lock_guard lock(historyMutex_);
      fault_ = f;
      for (const auto& sink : sinks_) sink->fault(f);
    } else if (writer_ && writeError_.empty() && !writer_->writeFault(f))
      writeError_ = writer_->lastError();
  } else if (status == RunStatus::Faulted) {
    // Diverged: the live task goes on, so the re-execution does too, from its own image (the next
    // keyframe puts the live image back).
    std::vector<uint8_t> image(vm_.image(), vm_.image() + imageSize);
    vm_.reset();
    std::memcpy(vm_.image(), image.data(), imageSize);
  }
}

void Recorder::serveSync(const RecordHeader& mark) {
  flushChunk();
  if (mark.droppedBefore) {
    vmValid_ = false;
    const trace::GapData gap{mark.cycle - mark.droppedBefore, mark.droppedBefore};
    if (writer_ && writeError_.empty() && !writer_->writeGap(gap)) writeError_ = writer_->lastError();
  }
  SyncResult result;
  result.endCycle = mark.cycle;
  if (!writeError_.empty()) {
    result.error = writeError_;
  } else {
    result.ok = true;
    if (vmValid_) result.image.assign(vm_.image(), vm_.image() + vm_.imageSize());
  }
  syncDone_.set_value(std::move(result));
}

void Recorder::startWriteIndex() {
  if (!options_.writeIndex) return;
  const uint32_t words = (vm_.imageSize() + 7) / 8;
  boundaryImage_.assign(words, 0);
  std::memcpy(boundaryImage_.data(), vm_.image(), vm_.imageSize());
  changedBits_.assign(words, 0);
  ranStatements_.assign(options_.statements ? 0 : writeSets_->statementCount(), 0);
  ranUnknown_ = false;
}

void Recorder::noteBoundary() {
  if (!options_.writeIndex) return;
  // One pass over the image per cycle, on the writer thread (the scan thread never pays for it):
  // what the scan inputs and anything else changed. What statements wrote, also a value changed
  // and restored within the cycle, comes from their write sets (finishWriteIndex).
  const uint32_t size = vm_.imageSize();
  const uint32_t whole = size / 8;
  const uint8_t* image = vm_.image();
  uint64_t* last = boundaryImage_.data();
  uint64_t* changed = changedBits_.data();
  for (uint32_t i = 0; i < whole; ++i) {
    uint64_t now;
    std::memcpy(&now, image + 8 * i, 8);
    changed[i] |= now ^ last[i];
    last[i] = now;
  }
  if (whole * 8 < size) {
    uint64_t now = 0;
    std::memcpy(&now, image + 8 * whole, size - whole * 8);
    changed[whole] |= now ^ last[whole];
    last[whole] = now;
  }
  // The statements that ran: in the chunk's path table when paths are recorded, else noted here.
  if (vm_.statementLogOverflowed()) {
    ranUnknown_ = true;
  } else if (!options_.statements) {
    for (const uint32_t* id = vm_.statementLogBegin(); id != vm_.statementLogEnd(); ++id)
      if (*id < ranStatements_.size()) ranStatements_[*id] = 1;
  }
}

void Recorder::finishWriteIndex() {
  if (!options_.writeIndex) return;
  // Once per chunk: the bytes that differed at its cycle boundaries (adjacent bytes form one
  // range), every byte the statements that ran in it may write, every byte of its scan inputs
  // (a stimulus value the cycle overwrites leaves no trace at the boundary). Beyond kMaxRanges
  // the ranges nearest each other are merged (a superset is allowed), so the index stays small.
  constexpr size_t kMaxRanges = 256;
  SB_ASSERT(writeSets_, "the write index of a chunk that startWriteIndex did not start");
  const uint32_t size = vm_.imageSize();
  std::vector<ImageRange> ranges;
  for (uint32_t at = 0; at < size; ++at) {
    const uint64_t word = changedBits_[at / 8];
    if (word == 0) {
      at = at / 8 * 8 + 7;
      continue;
    }
    if (((word >> (8 * (at % 8))) & 0xFF) == 0) continue;
    if (!ranges.empty() && ranges.back().offset + ranges.back().size == at)
      ++ranges.back().size;
    else
      ranges.push_back({at, 1});
  }
  bool anywhere = ranUnknown_ || writeSets_->unownedAnywhere();
  const std::span<const ImageRange> unowned = writeSets_->unowned();
  ranges.insert(ranges.end(), unowned.begin(), unowned.end());
  std::vector<uint8_t> ran = ranStatements_;
  ran.resize(writeSets_->statementCount(), 0);
  for (const std::vector<uint32_t>& path : chunk_.pathTable)
    for (uint32_t id : path)
      if (id < ran.size()) ran[id] = 1;
  for (uint32_t id = 0; id < ran.size() && !anywhere; ++id) {
    if (!ran[id]) continue;
    anywhere = writeSets_->anywhere(id);
    const std::span<const ImageRange> writes = writeSets_->of(id);
    ranges.insert(ranges.end(), writes.begin(), writes.end());
  }
  for (const std::vector<trace::ImageWriteData>* inputs : {&chunk_.inputChanges, &chunk_.writes})
    for (const trace::ImageWriteData& w : *inputs)
      ranges.push_back({w.offset, w.bit >= 0 ? 1u : static_cast<uint32_t>(w.bytes.size())});
  if (anywhere) ranges.assign(1, ImageRange{0, size});
  normalizeRanges(ranges, size, kMaxRanges);
  trace::WriteIndex index;
  for (const ImageRange& r : ranges) index.insert(index.end(), {r.offset, r.size});
  chunk_.writeIndex = std::move(index);
}

void Recorder::flushChunk() {
  if (!chunkOpen_ || chunk_.cycleCount() == 0) return;
  chunkOpen_ = false;
  finishWriteIndex();
  if (ringMode()) {
    keepChunk();
  } else {
    if (writer_ && writeError_.empty() && !writer_->writeChunk(chunk_)) writeError_ = writer_->lastError();
    publishSizes();
  }
  // Counted once it is in the file (or kept): a reader of the .partial file may rely on it.
  chunks_.fetch_add(1, std::memory_order_release);
  chunk_ = trace::ChunkData{};
}

void Recorder::publishSizes() {
  if (!writer_) return;
  bytesWritten_.store(writer_->bytesWritten(), std::memory_order_relaxed);
  rawBytes_.store(writer_->rawBytes(), std::memory_order_relaxed);
}

void Recorder::keepChunk() {
  // Flight recorder: keep the chunk as the block the file will hold, and forget the oldest beyond
  // the limits (the newest always stays).
  RingChunk kept;
  kept.lastStartNs = chunk_.startTimes.back();
  std::string why;
  auto block = std::make_shared<trace::EncodedChunk>();
  if (!encoder_->encodeChunk(chunk_, limits_, *block, why)) {
    if (writeError_.empty()) writeError_ = fmt::format("flight recorder: {}", why);
    return;
  }
  kept.block = std::move(block);
  std::lock_guard lock(historyMutex_);
  for (const auto& sink : sinks_) sink->chunk(kept.block);
  ringChunkBytes_ += kept.block->size();
  ringChunks_.push_back(std::move(kept));
  auto tooMuch = [&] {
    if (ringChunks_.size() <= 1) return false;
    if (options_.ringBytes && ringChunkBytes_ > options_.ringBytes) return true;
    // The oldest chunk goes once even its last cycle is older than the limit.
    return options_.ringDurationNs &&
           ringChunks_.back().lastStartNs - ringChunks_.front().lastStartNs > options_.ringDurationNs;
  };
  bool forgot = false;
  while (tooMuch()) {
    ringChunkBytes_ -= ringChunks_.front().block->size();
    ringChunks_.pop_front();
    forgot = true;
  }
  if (forgot) {
    // Gaps before the oldest kept chunk are no longer part of the history.
    const uint64_t first = ringChunks_.front().block->firstCycle();
    while (!ringGaps_.empty() && ringGaps_.front().firstCycle + ringGaps_.front().cycleCount <= first)
      ringGaps_.pop_front();
  }
  heldBytes_.store(ringChunkBytes_, std::memory_order_relaxed);
}

bool Recorder::writeHistory(trace::TraceWriter& w, bool withOpenChunk) {
  // The kept chunks in cycle order, each after the gaps that precede it; gaps that fall inside the
  // kept history stay in it.
  size_t g = 0;
  auto gapsUpTo = [&](uint64_t cycle) {
    for (; g < ringGaps_.size() && ringGaps_[g].firstCycle + ringGaps_[g].cycleCount <= cycle; ++g)
      if (!w.writeGap(ringGaps_[g])) return false;
    return true;
  };
  for (const RingChunk& c : ringChunks_)
    if (!gapsUpTo(c.block->firstCycle()) || !w.writeEncodedChunk(*c.block)) return false;
  // The chunk being filled holds whole cycles and starts with its keyframe: a valid chunk too.
  const bool open = withOpenChunk && chunkOpen_ && chunk_.cycleCount() > 0;
  if (!gapsUpTo(open ? chunk_.firstCycle : UINT64_MAX)) return false;
  if (open) finishWriteIndex();
  if (open && !w.writeChunk(chunk_)) return false;
  return !fault_ || w.writeFault(*fault_);
}

void Recorder::writeFinalRing() {
  if (!writer_ || !writeError_.empty()) return;
  if (!writeHistory(*writer_, false)) writeError_ = writer_->lastError();
}

std::future<SnapshotResult> Recorder::requestSnapshot(std::string path) {
  auto request = std::make_unique<SnapshotRequest>();
  request->path = std::move(path);
  std::future<SnapshotResult> result = request->done.get_future();
  auto refuse = [&](std::string why) {
    SnapshotResult r;
    r.path = request->path;
    r.error = std::move(why);
    request->done.set_value(std::move(r));
    return std::move(result);
  };
  if (!ringMode()) {
    return refuse(
        fmt::format("cannot write a snapshot to {}: the recording is no flight recorder (--ring); its "
                    "history is in {}.partial already",
                    request->path, options_.path));
  }
  request->ticket = snapshotTickets_.fetch_add(1, std::memory_order_relaxed);
  SnapshotRequest* head = snapshotRequests_.load(std::memory_order_relaxed);
  do {
    if (head == &closedStack_)
      return refuse(fmt::format("cannot write a snapshot to {}: the recording has finished", request->path));
    request->next = head;
  } while (!snapshotRequests_.compare_exchange_weak(head, request.get(), std::memory_order_release,
                                                    std::memory_order_relaxed));
  request.release();  // the writer owns it now
  return result;
}

void Recorder::serveSnapshots(bool all) {
  if (all || snapshotRequests_.load(std::memory_order_relaxed) != nullptr) {
    SnapshotRequest* taken = snapshotRequests_.exchange(all ? &closedStack_ : nullptr, std::memory_order_acquire);
    const size_t at = waitingSnapshots_.size();
    while (taken) {
      SnapshotRequest* next = taken->next;
      waitingSnapshots_.emplace_back(taken);
      taken = next;
    }
    std::reverse(waitingSnapshots_.begin() + static_cast<ptrdiff_t>(at), waitingSnapshots_.end());  // oldest first
  }
  std::erase_if(waitingSnapshots_, [&](const std::unique_ptr<SnapshotRequest>& r) {
    if (!all && r->ticket >= servableTickets_) return false;  // its mark has not come yet
    r->done.set_value(writeSnapshot(r->path));
    return true;
  });
}

SnapshotResult Recorder::writeSnapshot(const std::string& path) {
  SnapshotResult r;
  r.path = path;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::absolute(path, ec).lexically_normal() == fs::absolute(options_.path, ec).lexically_normal()) {
    r.error = fmt::format("cannot write a snapshot to {}: it is the recording's own trace", path);
    return r;
  }
  std::string error;
  std::unique_ptr<trace::TraceWriter> w = trace::TraceWriter::create(path, header_, error);
  if (!w) {
    r.error = fmt::format("cannot write a snapshot to {}: {}", path, error);
    return r;
  }
  if (!writeHistory(*w, true) || !w->close()) {
    r.error = fmt::format("cannot write a snapshot to {}: {}", path, w->lastError());
    const std::string partial = w->partialPath();
    w.reset();
    std::remove(partial.c_str());  // a failed snapshot leaves nothing behind
    return r;
  }
  r.ok = true;
  r.firstCycle = w->blocks().empty() ? 0 : w->blocks().front().firstCycle;
  r.endCycle = w->nextCycle();
  r.bytes = w->bytesWritten();
  return r;
}

bool Recorder::finish(std::string& error, const trace::OpenCycleData* open) {
  if (attached_) {
    runtime_.setHooks(nullptr);
    attached_ = false;
    flushStaged(true);  // the scan is over: waiting for room slows nothing down
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
    if (open && writeError_.empty() && !writer_->writeOpenCycle(*open)) writeError_ = writer_->lastError();
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
  s.chunks = chunks_.load(std::memory_order_acquire);
  s.bytesWritten = bytesWritten_.load(std::memory_order_relaxed);
  s.rawBytes = rawBytes_.load(std::memory_order_relaxed);
  s.divergences = divergences_.load(std::memory_order_relaxed);
  s.heldBytes = heldBytes_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace scanback::recorder
