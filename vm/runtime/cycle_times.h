// The distribution of a task's scan cycle times (how long each cycle took to execute, start to
// end): what an automation engineer watches for jitter and overruns. One thread records, any
// thread reads: a log-linear histogram of relaxed counters (about 1.6% resolution), so recording
// costs an add and never blocks.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace scanback {

class CycleTimes {
 public:
  // The recording thread only.
  void record(uint64_t ns) {
    auto& bucket = buckets_[indexOf(ns)];
    bucket.store(bucket.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);
  }

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  uint64_t maxNs() const { return max_.load(std::memory_order_relaxed); }
  // The time that `q` (0..1) of the cycles took at most (the upper edge of its bucket); 0 when
  // none was recorded.
  uint64_t quantileNs(double q) const {
    const uint64_t total = count();
    if (total == 0) return 0;
    const uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(total - 1)) + 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < buckets_.size(); ++i) {
      seen += buckets_[i].load(std::memory_order_relaxed);
      if (seen >= rank) return std::min(upperEdge(i), maxNs());
    }
    return maxNs();
  }

 private:
  static constexpr unsigned kSubBits = 6;  // 64 buckets per power of two
  static constexpr size_t kBuckets = (64 - kSubBits + 1) << kSubBits;
  static size_t indexOf(uint64_t ns) {
    if (ns < (uint64_t{1} << kSubBits)) return static_cast<size_t>(ns);
    const unsigned high = 63 - static_cast<unsigned>(std::countl_zero(ns));  // >= kSubBits
    const unsigned shift = high - kSubBits;
    const uint64_t sub = (ns >> shift) & ((uint64_t{1} << kSubBits) - 1);
    return ((shift + 1) << kSubBits) + static_cast<size_t>(sub);
  }
  static uint64_t upperEdge(size_t index) {
    if (index < (size_t{1} << kSubBits)) return index;
    const unsigned shift = static_cast<unsigned>(index >> kSubBits) - 1;
    const uint64_t sub = index & ((size_t{1} << kSubBits) - 1);
    return (((uint64_t{1} << kSubBits) | sub) << shift) + ((uint64_t{1} << shift) - 1);
  }

  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> max_{0};
};

}  // namespace scanback
