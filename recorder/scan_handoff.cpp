#include "recorder/scan_handoff.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <thread>

#include "recorder/recording.h"

namespace scanback::recorder {

namespace {

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

// The bytes of the field inputs `now` that differ from `before`, as runs (offset u32, author u8,
// length u16, bytes); `base` is the image offset of both. A run holds bytes of one author (who
// changed them, when the runtime was told: Runtime::noteInputAuthor), so that two authors' bytes
// stay two records.
void encodeChanges(const uint8_t* now, const uint8_t* before, uint32_t size, uint32_t base, const Runtime& rt,
                   std::vector<uint8_t>& out) {
  const bool noted = rt.inputAuthorsNoted();
  for (uint32_t i = 0; i < size;) {
    if (now[i] == before[i]) {
      ++i;
      continue;
    }
    const WriteAuthor author = noted ? rt.inputAuthor(i) : WriteAuthor::Unknown;
    uint32_t j = i;
    while (j < size && now[j] != before[j] && j - i < 0xFFFF && (!noted || rt.inputAuthor(j) == author)) ++j;
    const uint32_t offset = base + i;
    const uint16_t len = static_cast<uint16_t>(j - i);
    putRaw(out, offset);
    putRaw(out, author);
    putRaw(out, len);
    out.insert(out.end(), now + i, now + j);
    i = j;
  }
}

}  // namespace

ScanHandoff::ScanHandoff(uint32_t imageSize, size_t inputBytes, uint32_t keyframeEvery, size_t queueBytes)
    : keyframeEvery_(keyframeEvery), queue_(queueBytesFor(queueBytes)) {
  // Everything the scan thread touches per cycle is allocated here, once.
  // (The other keyframe slots only once the ones before are still in use when a chunk starts: for a
  // large image, each is another image's worth of memory.)
  keyframeSlots_ = static_cast<uint8_t>(
      std::clamp<uint64_t>((uint64_t{4} << 20) / std::max<uint32_t>(imageSize, 1), 2, kMaxKeyframeSlots));
  keyframes_[0].reset(new uint8_t[std::max<uint32_t>(imageSize, 1)]);
  // (At most a run per byte: 7 bytes of offset, author and length, and the byte.)
  inputChanges_.reserve(inputBytes * 8 + 16);
  writes_.reserve(4096);
  staging_.reset(new uint8_t[2 * kBatchBytes]);  // below kBatchBytes + one record of at most that
}

void ScanHandoff::beforeCycle(const Runtime& rt) {
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
    encodeChanges(field.data(), image + p.input.offset, p.input.size, p.input.offset, rt, inputChanges_);
  writes_.clear();
  for (const ExternalWrite& w : rt.pendingWrites()) encodeWrite(w, trace::ImageWriteData::kAtCycleStart);
  // Forces: once, at the cycle they are set or released, and restated at a chunk's start, so that
  // the chunk replays on its own (never per cycle: a force held a million cycles costs nothing
  // more per cycle).
  forces_.clear();
  if (needKeyframe_ && haveKeyframe_ && !rt.forceTable().empty()) [[unlikely]]
    for (const Force& f : rt.forceTable().forces()) encodeForce(f, kForceRestated);
  for (const ForceChange& c : rt.forceChanges()) encodeForce(c.force, c.release ? kForceReleased : kForceSet);
}

void ScanHandoff::encodeForce(const Force& f, uint8_t kind) {
  forces_.push_back(kind);
  putRaw(forces_, f.offset);
  putRaw(forces_, f.bit);
  putRaw(forces_, f.sinceCycle);
  const uint16_t len = kind == kForceReleased ? 0 : static_cast<uint16_t>(std::min<size_t>(f.bytes.size(), 0xFFFF));
  putRaw(forces_, len);
  forces_.insert(forces_.end(), f.bytes.begin(), f.bytes.begin() + len);
  const uint16_t targetLen = static_cast<uint16_t>(std::min<size_t>(f.target.size(), 0xFFFF));
  putRaw(forces_, targetLen);
  forces_.insert(forces_.end(), f.target.begin(), f.target.begin() + targetLen);
}

void ScanHandoff::encodeWrite(const ExternalWrite& w, int64_t atStep) {
  putRaw(writes_, w.offset);
  putRaw(writes_, w.bit);
  putRaw(writes_, atStep);
  putRaw(writes_, w.author);
  const uint16_t len = static_cast<uint16_t>(std::min<size_t>(w.bytes.size(), 0xFFFF));
  putRaw(writes_, len);
  writes_.insert(writes_.end(), w.bytes.begin(), w.bytes.begin() + len);
}

void ScanHandoff::afterCycle(const Runtime& rt, RunStatus status) {
  const Vm& vm = rt.vm();
  const CycleStart& c = rt.currentCycle();
  const bool startsChunk = needKeyframe_ && haveKeyframe_;
  const uint64_t sincePrevious = static_cast<uint64_t>(c.startNs) - static_cast<uint64_t>(queuedStartNs_);
  if (status == RunStatus::CycleDone && !startsChunk && writes_.empty() && forces_.empty() &&
      inputChanges_.size() <= kBatchBytes / 2 && c.cycle == queuedCycle_ + 1 && c.startNs >= queuedStartNs_ &&
      sincePrevious <= UINT32_MAX) {
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
    if (++cyclesInChunk_ >= keyframeEvery_) needKeyframe_ = true;
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
  h.forceBytes = static_cast<uint32_t>(forces_.size());
  const size_t size = sizeof h + h.inputBytes + h.writeBytes + h.faultMessageBytes + h.forceBytes;
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
    out += h.faultMessageBytes;
    if (h.forceBytes) std::memcpy(out, forces_.data(), h.forceBytes);
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
    queue_.commit();
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
  if (++cyclesInChunk_ >= keyframeEvery_ || faulted) needKeyframe_ = true;
}

void ScanHandoff::markSnapshot(uint64_t tickets) {
  // Everything before this cycle goes to the writer now, then the mark. When the queue is full the
  // staged cycles are dropped as usual (a snapshot cannot hold them anyway) and the mark waits for
  // the next cycle.
  flushStaged(false);
  RecordHeader h{};
  h.flags = kSnapshotMark;
  h.cycle = tickets;
  if (uint8_t* out = queue_.reserve(sizeof h)) {
    std::memcpy(out, &h, sizeof h);
    queue_.commit();
    markedTickets_ = tickets;
  }
}

bool ScanHandoff::handOverSyncMark(uint64_t cycle, bool inCycle, bool& ownKeyframe) {
  // The task is not scanning, so waiting for room in the queue slows nothing down.
  flushStaged(true);
  RecordHeader h{};
  h.flags = kSyncMark;
  h.cycle = cycle;
  h.droppedBefore = droppedRun_;
  uint8_t* out = reserve(sizeof h, true);
  if (!out) return false;
  // A cycle under way that starts a chunk has its keyframe here already: the image before it,
  // even when the writer has nothing to re-execute (the first cycle, or after dropped ones).
  ownKeyframe = inCycle && needKeyframe_ && haveKeyframe_;
  std::memcpy(out, &h, sizeof h);
  queue_.commit();
  if (droppedRun_) {
    // The writer writes their gap: the next recorded cycle starts a chunk of its own.
    bump(gaps_);
    droppedRun_ = 0;
    needKeyframe_ = true;
  }
  return true;
}

std::vector<uint8_t> ScanHandoff::keyframeOfCycleUnderWay(uint32_t imageSize) const {
  const uint8_t* image = keyframes_[keyframeSlot_].get();
  return std::vector<uint8_t>(image, image + imageSize);
}

void ScanHandoff::idle() {
  flushStaged(false);
  if (const uint64_t tickets = snapshotTickets_.load(std::memory_order_relaxed); tickets != markedTickets_)
    markSnapshot(tickets);
}

void ScanHandoff::finishScan(uint64_t cycle) {
  flushStaged(true);  // the scan is over: waiting for room slows nothing down
  if (!droppedRun_) return;
  // Cycles dropped at the very end still get their gap record. The scan is over, so waiting for
  // room in the queue slows nothing down.
  RecordHeader h{};
  h.cycle = cycle;
  h.droppedBefore = droppedRun_;
  h.flags = kGapOnly;
  uint8_t* out = nullptr;
  for (int i = 0; i < 100000 && !(out = queue_.reserve(sizeof h)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (out) {
    std::memcpy(out, &h, sizeof h);
    queue_.commit();
    gaps_.fetch_add(1, std::memory_order_relaxed);
    droppedRun_ = 0;
  }
}

void ScanHandoff::currentInputs(CycleInputs& out) const {
  decodeWrites(inputChanges_.data(), inputChanges_.size(), false, 0, out.inputChanges);
  decodeWrites(writes_.data(), writes_.size(), true, 0, out.writes);
}

bool ScanHandoff::waitForWriter(size_t bytes, std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(drainMutex_);
  drainBelow_.store(std::max(drainBelow_.load(std::memory_order_relaxed), bytes), std::memory_order_relaxed);
  drainWaiters_.fetch_add(1, std::memory_order_acq_rel);
  const bool done = drained_.wait_for(lock, timeout, [&] { return queue_.used() <= bytes; });
  if (drainWaiters_.fetch_sub(1, std::memory_order_acq_rel) == 1) drainBelow_.store(0, std::memory_order_relaxed);
  return done;
}

void ScanHandoff::pop() {
  queue_.pop();
  // Anyone in waitForWriter() looks at the queue again. (Both sides read-modify-write the count of
  // waiters after their own step, the pop here, the registration there: whichever comes second
  // sees the other's. A read-modify-write, not a fence: ThreadSanitizer follows those.)
  if (drainWaiters_.fetch_add(0, std::memory_order_acq_rel) &&
      queue_.used() <= drainBelow_.load(std::memory_order_relaxed)) {
    std::lock_guard lock(drainMutex_);
    drained_.notify_all();
  }
}

uint8_t* ScanHandoff::reserve(size_t size, bool mayWait) {
  uint8_t* out = queue_.reserve(size);
  // When the task has stopped (a fault, the end), waiting for the writer cannot slow a scan any
  // more, and what is left must not be lost.
  for (int i = 0; mayWait && !out && i < 5000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    out = queue_.reserve(size);
  }
  return out;
}

void ScanHandoff::dropCycles(uint64_t count) {
  droppedRun_ += count;
  dropped_.store(dropped_.load(std::memory_order_relaxed) + count, std::memory_order_relaxed);
  needKeyframe_ = true;
  haveKeyframe_ = false;
}

bool ScanHandoff::flushStaged(bool mayWait) {
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
  queue_.commit();
  queue_.prefetchNext(kBatchBytes);
  recorded_.store(recorded_.load(std::memory_order_relaxed) + cycles, std::memory_order_relaxed);
  return true;
}

}  // namespace scanback::recorder
