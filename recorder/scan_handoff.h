// The recorder's scan side (docs/architecture.md: the live task never waits): what the scan thread
// does each cycle. It records what the determinism contract says a cycle depends on — the task,
// the start time, the %I bytes that changed, the external writes, plus the live statement count
// and any fault — stages the records in a small buffer and hands them to a bounded lock-free queue
// in batches. At a chunk's start it copies the image into a keyframe slot (keyframes never cross
// the queue). When the queue is full the batch is dropped and counted, and the next recorded cycle
// starts a new chunk, with a keyframe, after the dropped cycles' gap.
//
// The scan thread reads one flag per cycle (the writer's "hand your staged cycles over now") and
// one counter (snapshot requests); it never waits, except where the task is not scanning (sync(),
// the recording's end). The writer thread (recorder/block_writer.h) takes the records from the
// other end of the queue and the keyframes from their slots.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "recorder/records.h"
#include "recorder/spsc_ring.h"
#include "vm/runtime/runtime.h"

namespace scanback::recorder {

struct CycleInputs;

class ScanHandoff {
 public:
  // For `imageSize` bytes of image, a chunk every `keyframeEvery` cycles, a queue of `queueBytes`
  // (0: 256 KiB).
  ScanHandoff(uint32_t imageSize, size_t inputBytes, uint32_t keyframeEvery, size_t queueBytes);

  // ---- the scan thread
  void beforeCycle(const Runtime& runtime);
  void afterCycle(const Runtime& runtime, RunStatus status);
  // A debugger's write made inside the cycle under way, at statement boundary `step`.
  void noteWrite(const ExternalWrite& write, uint64_t step) { encodeWrite(write, static_cast<int64_t>(step)); }
  // A task that runs no cycle for now: the snapshot requests made so far are marked, the staged
  // cycles handed over (Recorder::idle).
  void idle();
  // The scan inputs of the cycle under way.
  void currentInputs(CycleInputs& out) const;
  // Recorder::sync(), the task not scanning: the staged cycles and a sync mark for `cycle` are
  // handed over (waiting for room). False when the writer took nothing for 5 seconds.
  // `ownKeyframe`: the cycle under way (`inCycle`) starts a chunk and its keyframe is in its slot
  // (keyframe()).
  bool handOverSyncMark(uint64_t cycle, bool inCycle, bool& ownKeyframe);
  // The image (of `imageSize` bytes) before the cycle under way, when handOverSyncMark said
  // `ownKeyframe`.
  std::vector<uint8_t> keyframeOfCycleUnderWay(uint32_t imageSize) const;
  // The recording's end, the scan over: the staged cycles, and the gap of cycles dropped at the
  // very end (before `cycle`), are handed over, waiting for room.
  void finishScan(uint64_t cycle);

  // ---- any thread
  bool backlogged() const {
    return queue_.used() > queue_.capacity() / 4 * 3 || (needKeyframe_ && !keyframeSlotFree());
  }
  size_t queuedBytes() const { return queue_.used(); }
  bool waitForWriter(size_t bytes, std::chrono::nanoseconds timeout) const;
  bool waitUntilNotBacklogged(std::chrono::nanoseconds timeout) const {
    if (needKeyframe_ && !keyframeSlotFree()) return waitForWriter(0, timeout);  // (the writer frees it as it goes)
    return waitForWriter(queue_.capacity() / 2, timeout);
  }
  // A snapshot was requested: its ticket (the scan thread marks the requests at its next cycle).
  uint64_t requestSnapshot() { return snapshotTickets_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t recorded() const { return recorded_.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t gaps() const { return gaps_.load(std::memory_order_relaxed); }

  // ---- the writer thread
  // The queue's oldest entry (records back to back), empty when there is none; pop() when done
  // with it, which wakes those waiting in waitForWriter().
  std::span<const uint8_t> front() { return queue_.front(); }
  void pop();
  // A record's keyframe (RecordHeader::keyframeSlot, 1-based), and its slot freed for the scan
  // thread once copied out.
  const uint8_t* keyframe(uint8_t slot) const { return keyframes_[slot - 1].get(); }
  void releaseKeyframe(uint8_t slot) { keyframeBusy_[slot - 1].store(false, std::memory_order_release); }
  // The scan thread hands its staged cycles over at the end of its next cycle.
  void askHandOver() { handOverWanted_.store(true, std::memory_order_relaxed); }

 private:
  bool keyframeSlotFree() const {
    for (uint8_t slot = 0; slot < keyframeSlots_; ++slot)
      if (!keyframeBusy_[slot].load(std::memory_order_acquire)) return true;
    return false;
  }
  void markSnapshot(uint64_t tickets);
  uint8_t* reserve(size_t size, bool mayWait);
  void dropCycles(uint64_t count);
  bool flushStaged(bool mayWait);
  void encodeWrite(const ExternalWrite& write, int64_t atStep);
  void encodeForce(const Force& force, uint8_t kind);

  const uint32_t keyframeEvery_;
  SpscRing queue_;

  // ---- keyframes: the scan thread copies the image before a chunk's first cycle into a free slot,
  // the writer copies it out of there and frees the slot
  // As many slots as fit in 4 MiB, from 2 to 16: a small image's chunks may start while the writer
  // is several chunks behind (a fast simulation), a large image's never take more than two images.
  static constexpr uint8_t kMaxKeyframeSlots = 16;
  uint8_t keyframeSlots_ = 2;
  std::unique_ptr<uint8_t[]> keyframes_[kMaxKeyframeSlots];
  std::atomic<bool> keyframeBusy_[kMaxKeyframeSlots] = {};
  // ---- scan thread
  uint8_t keyframeSlot_ = 0;            // where the keyframe of the cycle under way is (haveKeyframe_)
  std::vector<uint8_t> inputChanges_;   // encoded (offset u32, author u8, length u16, bytes)
  std::vector<uint8_t> writes_;         // encoded (offset u32, bit i8, step i64, author u8, length u16, bytes)
  std::vector<uint8_t> forces_;         // encoded as decodeForces reads them
  std::unique_ptr<uint8_t[]> staging_;  // records not yet handed to the writer (stays in L1)
  size_t stagedBytes_ = 0;
  uint32_t stagedCycles_ = 0;
  bool needKeyframe_ = true;
  bool haveKeyframe_ = false;  // keyframes_[keyframeSlot_] holds the image before the current cycle
  uint32_t cyclesInChunk_ = 0;
  uint64_t droppedRun_ = 0;  // cycles dropped since the last recorded one
  // The cycle of the last record staged or queued, and its start: a ShortRecord follows it. (The
  // first cycle recorded starts a chunk, a full record, whatever these say.)
  uint64_t queuedCycle_ = UINT64_MAX;
  int64_t queuedStartNs_ = 0;
  std::atomic<uint64_t> recorded_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> gaps_{0};
  uint64_t markedTickets_ = 0;  // snapshot requests covered by the last mark handed over

  // ---- writer -> scan thread: hand the staged cycles over now (the writer sets it twice per
  // flush window; the scan thread reads it once per cycle, on a line of its own that stays shared)
  alignas(64) std::atomic<bool> handOverWanted_{false};

  // ---- any thread: snapshot requests made so far; the scan thread reads it once per cycle (its
  // own cache line: requests are rare, so the line stays shared and the read stays cheap).
  alignas(64) std::atomic<uint64_t> snapshotTickets_{0};

  // ---- waitForWriter(): the waiters, woken by the writer as it takes records
  mutable std::mutex drainMutex_;
  mutable std::condition_variable drained_;
  mutable std::atomic<uint32_t> drainWaiters_{0};
  // The largest queue size a waiter waits for (set under drainMutex_ before it registers): the
  // writer wakes waiters only once the queue is that small.
  mutable std::atomic<size_t> drainBelow_{0};
};

}  // namespace scanback::recorder
