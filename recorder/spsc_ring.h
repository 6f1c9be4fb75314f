// A bounded single-producer single-consumer byte queue of variable-size records. The producer
// (the scan thread) never blocks and never allocates: when a record does not fit, reserve() fails
// and the caller drops it. Records are contiguous; a record that would straddle the end of the
// buffer is preceded by a padding marker and placed at the start.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

namespace scanback::recorder {

class SpscRing {
 public:
  // capacity is rounded up to a power of two.
  explicit SpscRing(size_t capacity) {
    size_t c = 64;
    while (c < capacity) c <<= 1;
    capacity_ = c;
    buffer_.reset(new uint8_t[capacity_]);
    // Every page mapped now, not on the producer's first lap: a page fault there (one every 4 KiB
    // of records) cost the scan thread more than all its other recording work put together.
    std::memset(buffer_.get(), 0, capacity_);
  }

  size_t capacity() const { return capacity_; }
  // Largest record that can ever fit.
  size_t maxRecord() const { return capacity_ / 2 - kHeader; }

  // Producer: space for a record of `size` bytes, or null when the queue is too full.
  uint8_t* reserve(size_t size) {
    const size_t need = align(size + kHeader);
    if (need > capacity_ / 2) return nullptr;
    const uint64_t head = head_.load(std::memory_order_relaxed);
    const size_t at = static_cast<size_t>(head & (capacity_ - 1));
    const size_t toEnd = capacity_ - at;
    const size_t pad = toEnd < need ? toEnd : 0;
    if (capacity_ - (head - cachedTail_) < need + pad) {
      // Only now look at the consumer's index: reading it every time would pull its cache line
      // across cores on every record.
      cachedTail_ = tail_.load(std::memory_order_acquire);
      if (capacity_ - (head - cachedTail_) < need + pad) return nullptr;
    }
    if (pad) {
      // A zero length marks the rest of the buffer as padding.
      const uint32_t zero = 0;
      std::memcpy(buffer_.get() + at, &zero, sizeof zero);
      pendingPad_ = pad;
      reservedAt_ = 0;
    } else {
      pendingPad_ = 0;
      reservedAt_ = at;
    }
    reservedSize_ = size;
    return buffer_.get() + reservedAt_ + kHeader;
  }

  // Producer: publishes the record reserved last, shortened to `used` bytes when given.
  void commit(size_t used = SIZE_MAX) {
    if (used < reservedSize_) reservedSize_ = used;
    const uint32_t size = static_cast<uint32_t>(reservedSize_);
    std::memcpy(buffer_.get() + reservedAt_, &size, sizeof size);
    const uint64_t head = head_.load(std::memory_order_relaxed);
    head_.store(head + pendingPad_ + align(reservedSize_ + kHeader), std::memory_order_release);
  }

  // Producer: fetches the cache lines of the next `bytes` to be reserved, for writing, so that the
  // copy into them does not wait for them (the consumer's core read them on the last lap).
  void prefetchNext(size_t bytes) const {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < bytes; i += 64) __builtin_prefetch(buffer_.get() + ((head + i) & (capacity_ - 1)), 1);
  }

  // Consumer: the oldest record, or an empty span.
  std::span<const uint8_t> front() {
    for (;;) {
      const uint64_t tail = tail_.load(std::memory_order_relaxed);
      if (tail == cachedHead_) {
        cachedHead_ = head_.load(std::memory_order_acquire);
        if (tail == cachedHead_) return {};
      }
      const size_t at = static_cast<size_t>(tail & (capacity_ - 1));
      uint32_t size;
      std::memcpy(&size, buffer_.get() + at, sizeof size);
      if (size == 0) {  // padding to the end of the buffer
        tail_.store(tail + (capacity_ - at), std::memory_order_release);
        continue;
      }
      frontSize_ = align(size + kHeader);
      return {buffer_.get() + at + kHeader, size};
    }
  }

  // Consumer: frees the record returned by front().
  void pop() {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    tail_.store(tail + frontSize_, std::memory_order_release);
  }

  size_t used() const {
    return static_cast<size_t>(head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire));
  }

 private:
  static constexpr size_t kHeader = 8;
  static size_t align(size_t n) { return (n + 7) & ~size_t{7}; }

  size_t capacity_ = 0;
  std::unique_ptr<uint8_t[]> buffer_;
  // Each side's index shares a cache line only with that side's own fields (alignas makes the
  // object's size a multiple of 64, so the last line is not shared with a neighbour either).
  alignas(64) std::atomic<uint64_t> head_{0};  // written by the producer
  uint64_t cachedTail_ = 0;                    // producer's last view of tail_
  size_t reservedAt_ = 0;
  size_t reservedSize_ = 0;
  size_t pendingPad_ = 0;
  alignas(64) std::atomic<uint64_t> tail_{0};  // written by the consumer
  uint64_t cachedHead_ = 0;                    // consumer's last view of head_
  size_t frontSize_ = 0;
};

}  // namespace scanback::recorder
