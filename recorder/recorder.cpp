#include "recorder/recorder.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>

#include "traces/trace_writer.h"
#include "vm/base/assert.h"
#include "vm/base/version.h"
#include "vm/bytecode/native_blocks.h"
#include "vm/runtime/step_writes.h"

namespace scanback::recorder {

// One cycle as it crosses the queue. Followed by: encoded input changes, encoded writes, fault
// message. (A snapshot mark is one too, with no cycle: see kSnapshotMark.)
struct RecordHeader {
  uint8_t flags;  // first in every record kind
  // The cycle starts a chunk: its keyframe is in this slot of the keyframe pool, plus one (0: none).
  // Keyframes never cross the queue: an image of hundreds of megabytes would need a queue of
  // several times that.
  uint8_t keyframeSlot;
  uint16_t task;
  uint32_t steps;  // the live task's statement count
  uint64_t cycle;
  int64_t startNs;
  uint64_t droppedBefore;  // cycles dropped right before this one
  uint32_t inputBytes;
  uint32_t writeBytes;
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
// A continuation is compressed against the block before it only for images up to this size: for
// larger ones, the keyframe in that block would be kept in memory all through the chunk.
constexpr uint32_t kLargestPrefix = 1u << 20;

// The queue's capacity (RecorderOptions::queueBytes): as asked, or 256 KiB, and room for at least
// four of the largest records that cross it on their own (keyframes do not: the keyframe pool).
size_t queueBytesFor(size_t requested) {
  const size_t record = sizeof(RecordHeader) + 2 * kBatchBytes;
  return std::max(requested ? requested : size_t{256} << 10, 4 * record);
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
    : runtime_(runtime), options_(options), ring_(queueBytesFor(options.queueBytes)), vm_(runtime.vm().programPtr()) {}

std::unique_ptr<Recorder> Recorder::start(Runtime& runtime, const RecorderOptions& options, std::string& error,
                                          EventHandler onEvent) {
  if (runtime.inCycle()) {
    error = "the recorder attaches between cycles";
    return nullptr;
  }
  std::unique_ptr<Recorder> r(new Recorder(runtime, options));
  r->onEvent_ = std::move(onEvent);
  if (r->options_.keyframeEvery == 0) r->options_.keyframeEvery = 1;
  if (r->options_.flushEveryNs < 0) r->options_.flushEveryNs = 0;
  if (r->options_.handOverEveryNs <= 0) r->options_.handOverEveryNs = r->options_.flushEveryNs / 4;
  if (r->options_.followedFlushEveryNs <= 0) r->options_.followedFlushEveryNs = r->options_.flushEveryNs;
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
  h.ioConfig = options.ioConfig;
  h.ioConfigPath = options.ioConfigPath;
  r->encoder_ = std::make_unique<trace::BlockEncoder>(options.zstdLevel);
  if (!r->encoder_->ok()) {
    error = "cannot create a zstd compression context";
    return nullptr;
  }
  r->limits_ = trace::ChunkLimits{h.imageSize, h.statementCount};
  if (!r->ringMode() || !options.path.empty()) {
    r->writer_ = trace::TraceWriter::create(options.path, h, error);
    if (!r->writer_) return nullptr;
  }
  r->header_ = std::move(h);

  // Everything the scan thread touches per cycle is allocated here, once.
  // (The other keyframe slots only once the ones before are still in use when a chunk starts: for a
  // large image, each is another image's worth of memory.)
  r->keyframeSlots_ = static_cast<uint8_t>(
      std::clamp<uint64_t>((uint64_t{4} << 20) / std::max<uint32_t>(p.imageSize(), 1), 2, kMaxKeyframeSlots));
  r->keyframes_[0].reset(new uint8_t[std::max<uint32_t>(p.imageSize(), 1)]);
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
    // Into a slot the writer is done with (it releases a keyframe as soon as it has copied it); when
    // both are still in use, this cycle starts no chunk (the next one will).
    haveKeyframe_ = false;
    for (uint8_t slot = 0; slot < keyframeSlots_; ++slot) {
      if (keyframeBusy_[slot].load(std::memory_order_acquire)) continue;
      if (!keyframes_[slot]) keyframes_[slot].reset(new (std::nothrow) uint8_t[std::max<uint32_t>(p.imageSize(), 1)]);
      if (!keyframes_[slot]) continue;
      std::memcpy(keyframes_[slot].get(), image, p.imageSize());
      keyframeSlot_ = slot;
      haveKeyframe_ = true;
      break;
    }
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
    ++stagedCycles_;
    if ((stagedBytes_ >= kBatchBytes || stagedCycles_ >= kBatchCycles ||
         handOverWanted_.load(std::memory_order_relaxed)) &&
        !flushStaged(false))
      return;
    if (++cyclesInChunk_ >= options_.keyframeEvery) needKeyframe_ = true;
    return;
  }
  if (droppedRun_ && !startsChunk) {
    // After dropped cycles the writer has nothing to re-execute this one from: dropped too.
    dropCycles(1);
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
  h.keyframeSlot = startsChunk ? static_cast<uint8_t>(keyframeSlot_ + 1) : 0;
  h.droppedBefore = droppedRun_;
  std::string faultMessage;
  if (faulted) {
    h.faultCode = static_cast<uint32_t>(vm.fault().code);
    h.faultStatement = vm.fault().statement;
    faultMessage = rt.faultMessage();
    h.faultMessageBytes = static_cast<uint32_t>(faultMessage.size());
  }
  const size_t size = sizeof h + h.inputBytes + h.writeBytes + h.faultMessageBytes;
  queuedCycle_ = c.cycle;
  queuedStartNs_ = c.startNs;
  auto put = [&](uint8_t* out) {
    std::memcpy(out, &h, sizeof h);
    out += sizeof h;
    if (h.inputBytes) std::memcpy(out, inputChanges_.data(), h.inputBytes);
    out += h.inputBytes;
    if (h.writeBytes) std::memcpy(out, writes_.data(), h.writeBytes);
    out += h.writeBytes;
    if (h.faultMessageBytes) std::memcpy(out, faultMessage.data(), h.faultMessageBytes);
  };
  if (!h.keyframeSlot && size <= kBatchBytes) {
    // Staged too (a record that follows dropped cycles always carries a keyframe, so staged
    // records never start after a gap).
    put(staging_.get() + stagedBytes_);  // (a vector's resize would zero-fill first: rep stos)
    stagedBytes_ += size;
    ++stagedCycles_;
    if ((stagedBytes_ >= kBatchBytes || stagedCycles_ >= kBatchCycles || faulted ||
         handOverWanted_.load(std::memory_order_relaxed)) &&
        !flushStaged(faulted))
      return;
  } else {
    // Keyframes and big records cross on their own, after the staged cycles that precede them.
    if (!flushStaged(faulted) && !h.keyframeSlot) {
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
    if (h.keyframeSlot)
      keyframeBusy_[keyframeSlot_].store(true, std::memory_order_relaxed);  // (the commit publishes it)
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
  if (synced.ok && ownKeyframe)
    synced.image.assign(keyframes_[keyframeSlot_].get(), keyframes_[keyframeSlot_].get() + runtime_.vm().imageSize());
  return synced;
}

void Recorder::idle() {
  flushStaged(false);
  if (const uint64_t tickets = snapshotTickets_.load(std::memory_order_relaxed); tickets != markedTickets_)
    markSnapshot(tickets);
}

bool Recorder::addHistorySink(std::shared_ptr<HistorySink> sink, uint64_t fromCycle, uint64_t maxBytes) {
  if (!keepsHistory()) return false;
  std::lock_guard lock(historyMutex_);
  // The newest chunks that fit, back to the one that holds fromCycle.
  size_t first = heldChunks_.size();
  uint64_t bytes = 0;
  while (first > 0) {
    const HeldChunk& c = heldChunks_[first - 1];
    if (c.endCycle() <= fromCycle) break;
    if (first < heldChunks_.size() && bytes + c.bytes > maxBytes) break;
    bytes += c.bytes;
    --first;
  }
  const uint64_t from = first < heldChunks_.size() ? heldChunks_[first].firstCycle() : fromCycle;
  size_t g = 0;
  auto gapsUpTo = [&](uint64_t cycle) {
    for (; g < heldGaps_.size() && heldGaps_[g].firstCycle + heldGaps_[g].cycleCount <= cycle; ++g)
      if (heldGaps_[g].firstCycle >= from) sink->gap(heldGaps_[g]);
  };
  for (size_t i = first; i < heldChunks_.size(); ++i) {
    gapsUpTo(heldChunks_[i].firstCycle());
    for (const auto& block : heldChunks_[i].blocks) sink->chunk(block);
  }
  gapsUpTo(UINT64_MAX);
  if (fault_) sink->fault(*fault_);
  sinks_.push_back(std::move(sink));
  sinkCount_.store(sinks_.size(), std::memory_order_relaxed);
  return true;
}

void Recorder::removeHistorySink(const HistorySink* sink) {
  std::lock_guard lock(historyMutex_);
  std::erase_if(sinks_, [&](const std::shared_ptr<HistorySink>& s) { return s.get() == sink; });
  sinkCount_.store(sinks_.size(), std::memory_order_relaxed);
}

HeldHistory Recorder::held() const {
  HeldHistory h;
  std::lock_guard lock(historyMutex_);
  if (heldChunks_.empty()) return h;
  h.chunks = heldChunks_.size();
  h.firstCycle = heldChunks_.front().firstCycle();
  h.endCycle = heldChunks_.back().endCycle();
  h.bytes = heldChunkBytes_;
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
  if (handOverWanted_.load(std::memory_order_relaxed)) handOverWanted_.store(false, std::memory_order_relaxed);
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
  lastHandOver_ = lastSync_ = lastRetry_ = std::chrono::steady_clock::now();
  for (;;) {
    std::span<const uint8_t> rec = ring_.front();
    if (rec.empty()) {
      if (stop_.load(std::memory_order_acquire)) {
        if (ring_.front().empty()) break;
        continue;
      }
      serveSnapshots(false);
      checkFlushWindow();
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
      at += size_t{h.inputBytes} + h.writeBytes + h.faultMessageBytes;
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
    checkFlushWindow();
  }
  closeChunk();
  // Every cycle has been handed over: the requests still waiting for a mark are served now, and
  // later ones refused.
  serveSnapshots(true);
  if (writer_ && fileLostFrom_) {
    // A last try, whatever the window: what was lost stays a gap, the fault (if any) follows.
    lastRetry_ = {};
    if (ringMode()) {
      std::string why;
      if (rewriteRingFile(why)) fileLostFrom_.reset();
    } else if (writer_->recover()) {
      const uint64_t end = std::max(takenCycle_ + 1, *fileLostFrom_);
      const uint64_t lost = end - *fileLostFrom_;
      if (lost == 0 || writer_->writeGap(trace::GapData{*fileLostFrom_, lost})) {
        fileLostFrom_.reset();
        std::lock_guard lock(healthMutex_);
        health_.failing = false;
        health_.lostCycles += lost;
      }
    }
  }
  if (writer_ && ringMode() && !fileLostFrom_) {
    // The file holds exactly the history held (it may hold up to twice as much while recording).
    std::string why;
    if (fileBlockBytes_ > heldChunkBytes_ && !rewriteRingFile(why) && writeError_.empty())
      writeError_ = fmt::format("cannot rewrite the flight recorder's file to the history held: {}", why);
  }
  if (fileLostFrom_ && writeError_.empty()) {
    std::lock_guard lock(healthMutex_);
    writeError_ = health_.error;
  }
}

void Recorder::checkFlushWindow() {
  if (flushWanted_.load(std::memory_order_relaxed)) {
    flushWanted_.store(false, std::memory_order_relaxed);
    flushPart(true);
  }
  if (!options_.flushEveryNs) return;
  const auto now = std::chrono::steady_clock::now();
  const bool followed = sinkCount_.load(std::memory_order_relaxed) > 0;
  const std::chrono::nanoseconds window(followed ? options_.followedFlushEveryNs : options_.flushEveryNs);
  const std::chrono::nanoseconds handOver(
      followed ? std::min(options_.handOverEveryNs, options_.followedFlushEveryNs / 4) : options_.handOverEveryNs);
  if (now - lastHandOver_ >= handOver) {
    // The scan thread hands over at the end of its next cycle (the run loop also does before it
    // waits for a release), so a cycle reaches the writer at most this long after it ended.
    handOverWanted_.store(true, std::memory_order_relaxed);
    lastHandOver_ = now;
  }
  // A cycle taken at partOpenedAt_ ended at most `handOver` before: in a block within the window.
  if (chunkOpen_ && chunk_.cycleCount() > flushedCycles_ && now - partOpenedAt_ >= window - handOver)
    flushPart(true);
  else if (unsynced_ && now - lastSync_ >= window)
    syncFile(true);
}

void Recorder::noteDivergence(std::string what) {
  if (divergences_.fetch_add(1, std::memory_order_relaxed) == 0) firstDivergence_ = std::move(what);
}

void Recorder::emit(RecordingEvent event) {
  if (onEvent_) onEvent_(event);
}

void Recorder::processRecord(const RecordHeader& h, const uint8_t* p) {
  if (h.flags & kSnapshotMark) {
    servableTickets_ = std::max(servableTickets_, h.cycle);
    return;
  }
  if (h.flags & kSyncMark) return serveSync(h);
  if (h.droppedBefore) {
    closeChunk();
    vmValid_ = false;  // the dropped cycles are not re-executed
    const trace::GapData gap{h.cycle - h.droppedBefore, h.droppedBefore};
    if (keepsHistory()) {
      std::lock_guard lock(historyMutex_);
      heldGaps_.push_back(gap);
      for (const auto& sink : sinks_) sink->gap(gap);
    }
    writeGapToFile(gap);
  }
  if (h.flags & kGapOnly) return;
  const uint32_t imageSize = vm_.imageSize();
  if (h.keyframeSlot) {
    closeChunk();
    const uint8_t* keyframe = keyframes_[h.keyframeSlot - 1].get();
    if (vmValid_ && std::memcmp(vm_.image(), keyframe, imageSize) != 0) {
      uint32_t at = 0;
      while (vm_.image()[at] == keyframe[at]) ++at;
      noteDivergence(
          fmt::format("the image before cycle {} differs from the re-executed one (first at byte {})", h.cycle, at));
    }
    std::memcpy(vm_.image(), keyframe, imageSize);  // the live image wins
    vmValid_ = true;
    startChunk(h.cycle, keyframe);
    keyframeBusy_[h.keyframeSlot - 1].store(false, std::memory_order_release);  // the scan thread may reuse it
    restartChunk_ = false;
  } else if (vmValid_ && (!chunkOpen_ || restartChunk_)) {
    // The chunk before ended early (the file lost one of its blocks): this one starts from the
    // re-executed image (the live image is checked against it again at the next keyframe).
    closeChunk();
    startChunk(h.cycle, vm_.image());
    restartChunk_ = false;
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
  if (index == flushedCycles_) partOpenedAt_ = std::chrono::steady_clock::now();
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
  if (options_.flushEveryCycles && chunk_.cycleCount() - flushedCycles_ >= options_.flushEveryCycles) flushPart(false);
  // A large image's keyframe goes into a block after the chunk's first cycle, so that it is not
  // held in memory all through the chunk (its later cycles are continuations).
  if (flushedCycles_ == 0 && imageSize > kLargestPrefix) flushPart(false);
  if (liveFaulted) {
    trace::FaultData f;
    f.cycle = h.cycle;
    f.step = h.steps;
    f.statement = h.faultStatement;
    f.code = h.faultCode;
    f.message.assign(reinterpret_cast<const char*>(p), h.faultMessageBytes);
    closeChunk();
    vmValid_ = false;
    if (keepsHistory()) {
      std::lock_guard lock(historyMutex_);
      fault_ = f;
      for (const auto& sink : sinks_) sink->fault(f);
    }
    writeFaultToFile(f);
  } else if (status == RunStatus::Faulted) {
    // Diverged: the live task goes on, so the re-execution does too, from its own image (the next
    // keyframe puts the live image back).
    std::vector<uint8_t> image(vm_.image(), vm_.image() + imageSize);
    vm_.reset();
    std::memcpy(vm_.image(), image.data(), imageSize);
  }
}

void Recorder::serveSync(const RecordHeader& mark) {
  // Every cycle taken goes into a block now (a reader may follow the file); the chunk stays open.
  flushPart(false);
  if (mark.droppedBefore) {
    closeChunk();
    vmValid_ = false;
    writeGapToFile(trace::GapData{mark.cycle - mark.droppedBefore, mark.droppedBefore});
  }
  SyncResult result;
  result.endCycle = mark.cycle;
  {
    std::lock_guard lock(healthMutex_);
    if (health_.failing) result.error = health_.error;
  }
  if (result.error.empty() && !writeError_.empty()) result.error = writeError_;
  if (result.error.empty()) {
    result.ok = true;
    if (vmValid_) result.image.assign(vm_.image(), vm_.image() + vm_.imageSize());
  }
  syncDone_.set_value(std::move(result));
}

// ---------------------------------------------------------------- writer thread: chunks and blocks

void Recorder::startChunk(uint64_t firstCycle, const uint8_t* keyframe) {
  chunk_ = trace::ChunkData{};
  chunk_.firstCycle = firstCycle;
  chunk_.keyframe.assign(keyframe, keyframe + vm_.imageSize());
  chunkOpen_ = true;
  flushedCycles_ = 0;
  flushedPaths_ = 0;
  flushedInputs_ = 0;
  flushedWrites_ = 0;
  pathHashes_.clear();
  startWriteIndex();
}

void Recorder::closeChunk() {
  if (!chunkOpen_) return;
  flushPart(false);
  chunkOpen_ = false;
  chunk_ = trace::ChunkData{};
  chunkMessage_.clear();
  pathHashes_.clear();
}

void Recorder::flushPart(bool onTime) {
  if (!chunkOpen_ || chunk_.cycleCount() == flushedCycles_) return;
  // The cycles not yet in a block: the chunk's first block (with its keyframe), or a continuation.
  const uint32_t from = flushedCycles_;
  const uint32_t to = chunk_.cycleCount();
  trace::ChunkData part;
  part.continuation = from > 0;
  part.firstCycle = chunk_.firstCycle + from;
  part.pathBase = part.continuation ? flushedPaths_ : 0;
  if (!part.continuation) part.keyframe = std::move(chunk_.keyframe);  // not needed once in a block
  auto tail = [&](const auto& column) { return std::vector(column.begin() + from, column.begin() + to); };
  part.tasks = tail(chunk_.tasks);
  part.startTimes = tail(chunk_.startTimes);
  part.stepCounts = tail(chunk_.stepCounts);
  part.imageHashes = tail(chunk_.imageHashes);
  if (!chunk_.paths.empty()) part.paths = tail(chunk_.paths);
  part.pathTable.assign(chunk_.pathTable.begin() + flushedPaths_, chunk_.pathTable.end());
  for (size_t i = flushedInputs_; i < chunk_.inputChanges.size(); ++i) {
    part.inputChanges.push_back(chunk_.inputChanges[i]);
    part.inputChanges.back().cycleIndex -= from;
  }
  for (size_t i = flushedWrites_; i < chunk_.writes.size(); ++i) {
    part.writes.push_back(chunk_.writes[i]);
    part.writes.back().cycleIndex -= from;
  }
  if (options_.writeIndex) part.writeIndex = takeWriteIndex(part);
  flushedCycles_ = to;
  flushedPaths_ = static_cast<uint32_t>(chunk_.pathTable.size());
  flushedInputs_ = chunk_.inputChanges.size();
  flushedWrites_ = chunk_.writes.size();

  auto block = std::make_shared<trace::EncodedChunk>();
  std::string why;
  std::vector<uint8_t> message;
  if (!encoder_->encodeChunk(part, limits_, *block, why, chunkMessage_,
                             vm_.imageSize() <= kLargestPrefix ? &message : nullptr)) {
    // Our own bug (every part is valid by construction): recorded as a failure, not a crash.
    fileFailed(part.firstCycle, fmt::format("cannot encode cycles {}..{}: {}", part.firstCycle,
                                            part.firstCycle + part.cycleCount() - 1, why));
    restartChunk_ = true;
    return;
  }
  chunkMessage_ = std::move(message);  // what the chunk's next block is compressed against
  if (!part.continuation) chunks_.fetch_add(1, std::memory_order_release);
  if (keepsHistory()) keepPart(block);
  if (writer_) {
    writePart(*block);
    syncFile(onTime);
  }
  publishSizes();
}

void Recorder::keepPart(std::shared_ptr<const trace::EncodedChunk> block) {
  // History held in memory: the block as the file holds it; the oldest chunks go beyond the limits
  // (the newest, being filled, always stays).
  std::lock_guard lock(historyMutex_);
  for (const auto& sink : sinks_) sink->chunk(block);
  if (!block->continuation() || heldChunks_.empty()) heldChunks_.emplace_back();
  HeldChunk& kept = heldChunks_.back();
  kept.lastStartNs = chunk_.startTimes.empty() ? kept.lastStartNs : chunk_.startTimes.back();
  kept.bytes += block->size();
  heldChunkBytes_ += block->size();
  kept.blocks.push_back(std::move(block));
  const uint64_t limit = ringMode() ? options_.ringBytes : options_.keepHistoryBytes;
  auto tooMuch = [&] {
    if (heldChunks_.size() <= 1) return false;
    if (limit && heldChunkBytes_ > limit) return true;
    // The oldest chunk goes once even its last cycle is older than the limit.
    return options_.ringDurationNs &&
           heldChunks_.back().lastStartNs - heldChunks_.front().lastStartNs > options_.ringDurationNs;
  };
  bool forgot = false;
  while (tooMuch()) {
    heldChunkBytes_ -= heldChunks_.front().bytes;
    heldChunks_.pop_front();
    forgot = true;
  }
  if (forgot) {
    // Gaps before the oldest kept chunk are no longer part of the history.
    const uint64_t first = heldChunks_.front().firstCycle();
    while (!heldGaps_.empty() && heldGaps_.front().firstCycle + heldGaps_.front().cycleCount <= first)
      heldGaps_.pop_front();
  }
  heldBytes_.store(heldChunkBytes_, std::memory_order_relaxed);
}

bool Recorder::fileUsable() {
  if (!fileLostFrom_) return true;
  // Failed earlier: tried again at most once per flush window (or second).
  const auto now = std::chrono::steady_clock::now();
  const std::chrono::nanoseconds every(options_.flushEveryNs ? options_.flushEveryNs : 1'000'000'000);
  if (now - lastRetry_ < every) return false;
  lastRetry_ = now;
  return writer_->recover() || ringMode();  // (a flight recorder rewrites its file instead)
}

void Recorder::writePart(const trace::EncodedChunk& block) {
  if (ringMode()) {
    if (fileLostFrom_) {
      // Writing failed before: the file is rewritten from the history held, this block included.
      if (!fileUsable()) return;
      std::string why;
      if (!rewriteRingFile(why)) {
        lastRetry_ = std::chrono::steady_clock::now();
        return;
      }
      const uint64_t lostFrom = *fileLostFrom_;
      fileLostFrom_.reset();
      {
        std::lock_guard lock(healthMutex_);
        health_.failing = false;
      }
      emit(RecordingEvent{RecordingEvent::Kind::Resumed, lostFrom, 0,
                          fmt::format("writing to {}.partial works again: rewritten from the history held in memory, "
                                      "nothing of it lost",
                                      options_.path)});
      return;
    }
    if (!writer_->writeEncodedChunk(block)) return fileFailed(block.firstCycle(), writer_->lastError());
    fileBlockBytes_ += block.size();
    // Bounded on disk: about twice the history held (rewriting costs a write of the history per
    // history's worth of new blocks: twice the bytes written, never more).
    const uint64_t limit = std::max<uint64_t>(options_.ringBytes ? options_.ringBytes : heldChunkBytes_, 64u << 10);
    std::string why;
    if (fileBlockBytes_ > 2 * limit && !rewriteRingFile(why)) fileFailed(block.firstCycle() + block.cycleCount(), why);
    return;
  }
  if (fileLostFrom_) {
    // A continuation of a chunk whose earlier block was lost cannot follow in the file: while
    // writing fails, each chunk ends at the next cycle, so that the next block that is tried is a
    // chunk's first block, with which the file resumes.
    if (block.continuation() || !fileUsable()) {
      restartChunk_ = true;
      return;
    }
    const uint64_t lostFrom = *fileLostFrom_;
    const uint64_t lost = block.firstCycle() - lostFrom;
    auto failedAgain = [&] {
      writer_->recover();  // (cut back again; the next retry starts from here)
      lastRetry_ = std::chrono::steady_clock::now();
      restartChunk_ = true;
    };
    if (lost) {
      if (!writer_->writeGap(trace::GapData{lostFrom, lost})) return failedAgain();
      // The gap is in the file, whatever happens to the block after it: the lost cycles go on from it.
      fileLostFrom_ = block.firstCycle();
      std::lock_guard lock(healthMutex_);
      health_.lostCycles += lost;
    }
    if (!writer_->writeEncodedChunk(block)) return failedAgain();
    fileLostFrom_.reset();
    uint64_t failedFrom = 0;
    {
      std::lock_guard lock(healthMutex_);
      health_.failing = false;
      failedFrom = health_.sinceCycle;
    }
    emit(RecordingEvent{RecordingEvent::Kind::Resumed, block.firstCycle(), block.firstCycle() - failedFrom,
                        fmt::format("writing to {}.partial works again from cycle {}: cycles {}..{} are a gap in it",
                                    options_.path, block.firstCycle(), failedFrom, block.firstCycle() - 1)});
    return;
  }
  if (!writer_->writeEncodedChunk(block)) fileFailed(block.firstCycle(), writer_->lastError());
}

void Recorder::writeGapToFile(const trace::GapData& gap) {
  if (!writer_ || ringMode() || fileLostFrom_) return;  // (a flight recorder's file gets its gaps when rewritten)
  if (!writer_->writeGap(gap)) fileFailed(gap.firstCycle, writer_->lastError());
}

void Recorder::writeFaultToFile(const trace::FaultData& fault) {
  if (!writer_) return;
  if (ringMode()) {
    // The fault ends the history: the file is rewritten with it (and is then exactly the history).
    std::string why;
    if (!rewriteRingFile(why)) fileFailed(fault.cycle, why);
    return;
  }
  if (fileLostFrom_ && writer_->recover()) {
    // The last chance to end the file properly: what was lost is a gap up to the fault's cycle.
    const uint64_t lost = fault.cycle + 1 - *fileLostFrom_;
    if (writer_->writeGap(trace::GapData{*fileLostFrom_, lost})) {
      std::lock_guard lock(healthMutex_);
      health_.failing = false;
      health_.lostCycles += lost;
      fileLostFrom_.reset();
    } else {
      writer_->recover();
    }
  }
  if (!fileLostFrom_ && !writer_->writeFault(fault)) fileFailed(fault.cycle, writer_->lastError());
  syncFile(true);
}

void Recorder::fileFailed(uint64_t fromCycle, const std::string& why) {
  if (!ringMode()) restartChunk_ = true;  // the chunk's later blocks cannot follow a lost one
  lastRetry_ = std::chrono::steady_clock::now();
  if (fileLostFrom_) return;  // failing still: said already
  fileLostFrom_ = fromCycle;
  {
    std::lock_guard lock(healthMutex_);
    health_.failing = true;
    health_.sinceCycle = fromCycle;
    health_.error = why;
    ++health_.failures;
  }
  emit(RecordingEvent{RecordingEvent::Kind::Failed, fromCycle, 0,
                      fmt::format("recording to {} failed at cycle {}: {}; the task goes on, and writing is tried "
                                  "again every {}",
                                  options_.path, fromCycle, why, ringMode() ? "block kept" : "flush window")});
}

void Recorder::syncFile(bool onTime) {
  if (!writer_ || fileLostFrom_) return;
  unsynced_ = true;
  if (!options_.fsync) return;
  const auto now = std::chrono::steady_clock::now();
  if (!onTime && now - lastSync_ < std::chrono::nanoseconds(options_.flushEveryNs)) return;
  lastSync_ = now;
  unsynced_ = false;
  if (!writer_->flush()) {
    {
      std::lock_guard lock(healthMutex_);
      ++health_.failures;
    }
    emit(RecordingEvent{RecordingEvent::Kind::Failed, takenCycle_, 0,
                        fmt::format("recording to {}: {} (the blocks written may not survive a power cut)",
                                    options_.path, writer_->lastError())});
  }
}

bool Recorder::rewriteRingFile(std::string& error) {
  // Written beside the file, then renamed over it: a crash at any moment leaves one of the two.
  const std::string beside = options_.path + ".rewrite";
  std::unique_ptr<trace::TraceWriter> w = trace::TraceWriter::create(beside, header_, error);
  if (!w) return false;
  if (!writeHistory(*w) || !w->replacePartial(options_.path)) {
    error = w->lastError();
    const std::string partial = w->partialPath();
    w.reset();
    std::remove(partial.c_str());
    return false;
  }
  writer_ = std::move(w);  // (the old writer's file is gone: replaced)
  fileBlockBytes_ = heldChunkBytes_;
  lastSync_ = std::chrono::steady_clock::now();
  unsynced_ = false;
  publishSizes();
  return true;
}

void Recorder::publishSizes() {
  if (!writer_) return;
  bytesWritten_.store(writer_->bytesWritten(), std::memory_order_relaxed);
  rawBytes_.store(writer_->rawBytes(), std::memory_order_relaxed);
}

void Recorder::startWriteIndex() {
  if (!options_.writeIndex) return;
  const uint32_t words = (vm_.imageSize() + 7) / 8;
  boundaryImage_.assign(words, 0);
  std::memcpy(boundaryImage_.data(), vm_.image(), vm_.imageSize());
  changedBytes_.assign(words, 0);
  ranStatements_.assign(writeSets_->statementCount(), 0);
  ranUnknown_ = false;
}

namespace {
// One bit per byte of `diff` that is not zero (bit i: byte i).
inline uint8_t nonZeroBytes(uint64_t diff) {
  diff |= diff >> 4;
  diff |= diff >> 2;
  diff |= diff >> 1;
  return static_cast<uint8_t>(((diff & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56);
}
}  // namespace

void Recorder::noteBoundary() {
  if (!options_.writeIndex) return;
  // One pass over the image per cycle, on the writer thread (the scan thread never pays for it):
  // what the scan inputs and anything else changed, one bit per byte changed (an eighth of the
  // image in memory). What statements wrote, also a value changed and restored within the cycle,
  // comes from their write sets (takeWriteIndex).
  const uint32_t size = vm_.imageSize();
  const uint32_t whole = size / 8;
  const uint8_t* image = vm_.image();
  uint64_t* last = boundaryImage_.data();
  uint8_t* changed = changedBytes_.data();
  for (uint32_t i = 0; i < whole; ++i) {
    uint64_t now;
    std::memcpy(&now, image + 8 * i, 8);
    if (const uint64_t diff = now ^ last[i]) {
      changed[i] |= nonZeroBytes(diff);
      last[i] = now;
    }
  }
  if (whole * 8 < size) {
    uint64_t now = 0;
    std::memcpy(&now, image + 8 * whole, size - whole * 8);
    changed[whole] |= nonZeroBytes(now ^ last[whole]);
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

trace::WriteIndex Recorder::takeWriteIndex(const trace::ChunkData& part) {
  // Once per block: the bytes that differed at its cycle boundaries (adjacent bytes form one
  // range), every byte the statements that ran in its cycles may write, every byte of its scan
  // inputs (a stimulus value the cycle overwrites leaves no trace at the boundary). Beyond
  // kMaxRanges the ranges nearest each other are merged (a superset is allowed), so the index stays
  // small. The changed bytes and statements start again from nothing for the next block.
  constexpr size_t kMaxRanges = 256;
  SB_ASSERT(writeSets_, "the write index of a chunk that startWriteIndex did not start");
  const uint32_t size = vm_.imageSize();
  std::vector<ImageRange> ranges;
  for (uint32_t at = 0; at < size; ++at) {
    const uint8_t bytes = changedBytes_[at / 8];
    if (bytes == 0) {
      at = at / 8 * 8 + 7;
      continue;
    }
    if (((bytes >> (at % 8)) & 1) == 0) continue;
    if (!ranges.empty() && ranges.back().offset + ranges.back().size == at)
      ++ranges.back().size;
    else
      ranges.push_back({at, 1});
  }
  std::fill(changedBytes_.begin(), changedBytes_.end(), 0);
  bool anywhere = ranUnknown_ || writeSets_->unownedAnywhere();
  const std::span<const ImageRange> unowned = writeSets_->unowned();
  ranges.insert(ranges.end(), unowned.begin(), unowned.end());
  // The statements that ran: the paths of the block's cycles (a continuation's cycles may run paths
  // of the chunk's earlier blocks), or, without statement paths, those noted from the log.
  std::vector<uint8_t> ran(writeSets_->statementCount(), 0);
  ran.swap(ranStatements_);
  std::vector<uint8_t> pathSeen(chunk_.pathTable.size(), 0);
  for (const uint32_t p : part.paths) {
    if (p == trace::kNoPath || p >= pathSeen.size() || pathSeen[p]) continue;
    pathSeen[p] = 1;
    for (const uint32_t id : chunk_.pathTable[p])
      if (id < ran.size()) ran[id] = 1;
  }
  for (uint32_t id = 0; id < ran.size() && !anywhere; ++id) {
    if (!ran[id]) continue;
    anywhere = writeSets_->anywhere(id);
    const std::span<const ImageRange> writes = writeSets_->of(id);
    ranges.insert(ranges.end(), writes.begin(), writes.end());
  }
  ranUnknown_ = false;
  for (const std::vector<trace::ImageWriteData>* inputs : {&part.inputChanges, &part.writes})
    for (const trace::ImageWriteData& w : *inputs)
      ranges.push_back({w.offset, w.bit >= 0 ? 1u : static_cast<uint32_t>(w.bytes.size())});
  if (anywhere) ranges.assign(1, ImageRange{0, size});
  normalizeRanges(ranges, size, kMaxRanges);
  trace::WriteIndex index;
  for (const ImageRange& r : ranges) index.insert(index.end(), {r.offset, r.size});
  return index;
}

bool Recorder::writeHistory(trace::TraceWriter& w) {
  // The held chunks' blocks in cycle order, each chunk after the gaps that precede it; gaps that
  // fall inside the held history stay in it.
  size_t g = 0;
  auto gapsUpTo = [&](uint64_t cycle) {
    for (; g < heldGaps_.size() && heldGaps_[g].firstCycle + heldGaps_[g].cycleCount <= cycle; ++g)
      if (!w.writeGap(heldGaps_[g])) return false;
    return true;
  };
  for (const HeldChunk& c : heldChunks_) {
    if (!gapsUpTo(c.firstCycle())) return false;
    for (const auto& block : c.blocks)
      if (!w.writeEncodedChunk(*block)) return false;
  }
  if (!gapsUpTo(UINT64_MAX)) return false;
  return !fault_ || w.writeFault(*fault_);
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
  if (!keepsHistory()) {
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
  if (!options_.path.empty() &&
      fs::absolute(path, ec).lexically_normal() == fs::absolute(options_.path, ec).lexically_normal()) {
    r.error = fmt::format("cannot write a snapshot to {}: it is the recording's own trace", path);
    return r;
  }
  // Every cycle taken so far into a block: the snapshot holds the chunk being filled too.
  flushPart(false);
  std::string error;
  std::unique_ptr<trace::TraceWriter> w = trace::TraceWriter::create(path, header_, error);
  if (!w) {
    r.error = fmt::format("cannot write a snapshot to {}: {}", path, error);
    return r;
  }
  if (!writeHistory(*w) || !w->close()) {
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

RecordingHealth Recorder::health() const {
  std::lock_guard lock(healthMutex_);
  return health_;
}

}  // namespace scanback::recorder
