// One trace's cycles as a comparison reads them: per recorded cycle its task, start time, statement
// path (from the chunk) and the sample of the compared values at its end, produced on a thread of
// its own (one per trace: a diff keeps both cores busy) and handed over in batches through a small
// bounded queue.
//
// Values come from Replayer::cycleEnds: a chunk whose write index rules out every compared value
// (docs/replayer.md, the write index) is not re-executed; its batch holds one sample, its keyframe's,
// which is every one of its cycles' (no statement and no scan input of the chunk wrote those bytes).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "compare/compared_set.h"
#include "replayer/replayer.h"

namespace scanback::compare {

struct CycleBatch {
  std::shared_ptr<const trace::ChunkData> chunk;  // the chunk its cycles are in (tasks, times, paths)
  uint64_t first = 0;                             // cycles first .. first + count - 1
  uint32_t count = 0;
  bool constant = false;         // one sample stands for every cycle (the write index ruled the chunk out)
  std::vector<uint8_t> samples;  // count samples (one when constant)
  uint32_t width = 0;

  const uint8_t* sample(uint32_t i) const { return samples.data() + (constant ? 0 : size_t{i} * width); }
  uint32_t index(uint64_t cycle) const { return static_cast<uint32_t>(cycle - chunk->firstCycle); }
};

class CycleStream {
 public:
  // Reads the cycles first..last of `replayer` (which the stream's thread uses until it is
  // destroyed or has ended) on its own thread. With `oneAtATime`, shared by the streams of a diff,
  // the streams take turns, a chunk each (the benchmark of one reader against two).
  // `useWriteIndex` off: every chunk re-executed (benchmarks compare both).
  CycleStream(replay::Replayer& replayer, const ComparedSet& set, Side side, uint64_t first, uint64_t last,
              bool useWriteIndex = true, std::mutex* oneAtATime = nullptr);
  ~CycleStream();
  CycleStream(const CycleStream&) = delete;
  CycleStream& operator=(const CycleStream&) = delete;

  // The next batch in cycle order; null at the end, or when the trace could not be read (error()).
  std::shared_ptr<const CycleBatch> next();
  // Why the stream ended early (empty when it read every cycle).
  const std::string& error() const { return error_; }
  // Chunks the write index ruled out (read from one keyframe, not re-executed) so far.
  uint64_t chunksSkipped() const { return skipped_.load(std::memory_order_relaxed); }
  // Ends the thread (it stops at its next cycle); next() then returns null.
  void stop();

 private:
  void produce();
  bool push(std::shared_ptr<CycleBatch> batch);

  replay::Replayer& replayer_;
  const ComparedSet& set_;
  Side side_;
  uint64_t first_, last_;
  bool useWriteIndex_;
  std::mutex* oneAtATime_;
  std::atomic<uint64_t> skipped_{0};
  std::atomic<bool> stopped_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<const CycleBatch>> queue_;
  bool done_ = false;
  std::string error_;  // written by the thread before done_
  std::thread thread_;
};

}  // namespace scanback::compare
