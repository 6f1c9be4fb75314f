#include "compare/cycle_stream.h"

#include <fmt/format.h>

#include <algorithm>

namespace scanback::compare {

namespace {

// Batches in flight per stream, and the bytes of samples one batch holds at most: enough for the
// reader to stay ahead of the comparison, little enough for a large image.
constexpr size_t kQueuedBatches = 4;
constexpr size_t kBatchBytes = 4u << 20;

}  // namespace

CycleStream::CycleStream(replay::Replayer& replayer, const ComparedSet& set, Side side, uint64_t first, uint64_t last,
                         bool useWriteIndex, std::mutex* oneAtATime)
    : replayer_(replayer),
      set_(set),
      side_(side),
      first_(first),
      last_(last),
      useWriteIndex_(useWriteIndex),
      oneAtATime_(oneAtATime) {
  replayer_.setCancelFlag(&stopped_);
  thread_ = std::thread([this] { produce(); });
}

CycleStream::~CycleStream() {
  stop();
  thread_.join();
  replayer_.setCancelFlag(nullptr);
}

void CycleStream::stop() {
  stopped_.store(true, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  changed_.notify_all();
}

std::shared_ptr<const CycleBatch> CycleStream::next() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !queue_.empty() || done_ || stopped_.load(std::memory_order_relaxed); });
  if (queue_.empty()) return nullptr;
  std::shared_ptr<const CycleBatch> batch = std::move(queue_.front());
  queue_.pop_front();
  changed_.notify_all();
  return batch;
}

bool CycleStream::push(std::shared_ptr<CycleBatch> batch) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < kQueuedBatches || stopped_.load(std::memory_order_relaxed); });
  if (stopped_.load(std::memory_order_relaxed)) return false;
  queue_.push_back(std::move(batch));
  changed_.notify_all();
  return true;
}

void CycleStream::produce() {
  std::string error;
  replay::History& history = replayer_.history();
  const std::vector<Watch> watches = set_.watches(side_);
  const uint32_t width = set_.width;
  const uint32_t imageSize = replayer_.program().imageSize();
  const size_t perBatch = std::max<size_t>(1, kBatchBytes / std::max<uint32_t>(width, 1));
  bool ok = true;
  for (size_t n = 0; ok && n < history.chunkCount() && !stopped_.load(std::memory_order_relaxed); ++n) {
    const trace::BlockInfo& b = history.chunkBlock(n);
    if (b.firstCycle + b.cycleCount <= first_) continue;
    if (b.firstCycle > last_) break;
    const uint64_t from = std::max(first_, b.firstCycle);
    const uint64_t to = std::min(last_, b.firstCycle + b.cycleCount - 1);
    std::shared_ptr<const trace::ChunkData> chunk = history.chunk(n, error);
    if (!chunk) {
      ok = false;
      break;
    }
    // Ruled out by the write index: the keyframe's values are those at the end of every cycle.
    const trace::WriteIndex* written = useWriteIndex_ ? history.writeIndex(n) : nullptr;
    bool constant = written != nullptr;
    for (size_t i = 0; constant && i < watches.size(); ++i)
      constant = !trace::writeIndexTouches(*written, watches[i].offset,
                                           watches[i].bit >= 0 ? 1u : std::max<uint32_t>(watches[i].size, 1));
    if (constant && chunk->keyframe.size() == imageSize) {
      auto batch = std::make_shared<CycleBatch>();
      batch->chunk = chunk;
      batch->first = from;
      batch->count = static_cast<uint32_t>(to - from + 1);
      batch->constant = true;
      batch->width = width;
      batch->samples.resize(width);
      set_.gather(side_, chunk->keyframe.data(), batch->samples.data());
      skipped_.fetch_add(1, std::memory_order_relaxed);
      ok = push(std::move(batch));
      continue;
    }
    std::shared_ptr<CycleBatch> batch;
    // Taking turns, a stream's full batches wait until its turn ends: blocked on a full queue, it
    // would hold the turn the comparison needs the other stream to take.
    std::unique_lock<std::mutex> turn;
    if (oneAtATime_) turn = std::unique_lock(*oneAtATime_);
    std::vector<std::shared_ptr<CycleBatch>> held;
    auto hand = [&](std::shared_ptr<CycleBatch> full) {
      if (!turn.owns_lock()) return push(std::move(full));
      held.push_back(std::move(full));
      return true;
    };
    ok = replayer_.cycleEnds(
        watches, from, to,
        [&](uint64_t cycle, int64_t, const uint8_t* image) {
          if (!batch) {
            batch = std::make_shared<CycleBatch>();
            batch->chunk = chunk;
            batch->first = cycle;
            batch->width = width;
            // Sized once (gather() writes every byte of a sample; growing per cycle zeroed it first).
            batch->samples.resize(std::min<size_t>(perBatch, to - cycle + 1) * width);
          }
          set_.gather(side_, image, batch->samples.data() + size_t{batch->count} * width);
          ++batch->count;
          if (batch->count >= perBatch && !hand(std::move(batch))) return false;
          return true;
        },
        error);
    if (ok && batch && batch->count) {
      batch->samples.resize(size_t{batch->count} * width);  // a read cut short
      ok = hand(std::move(batch));
    }
    if (turn.owns_lock()) turn.unlock();
    for (size_t i = 0; ok && i < held.size(); ++i) ok = push(std::move(held[i]));
  }
  std::lock_guard lock(mutex_);
  if (!ok && !stopped_.load(std::memory_order_relaxed)) error_ = error.empty() ? "the trace could not be read" : error;
  done_ = true;
  changed_.notify_all();
}

}  // namespace scanback::compare
