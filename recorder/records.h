// The records that cross the recorder's queue from the scan thread (recorder/scan_handoff.h) to
// the writer thread (recorder/block_writer.h): their layout and flags, and how their scan inputs
// are encoded. Internal to recorder/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "traces/trace_model.h"

namespace scanback::recorder {

// One cycle as it crosses the queue. Followed by: encoded input changes, encoded writes, fault
// message, encoded forces. (A snapshot mark is one too, with no cycle: see kSnapshotMark.)
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
  uint32_t forceBytes;
};

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

inline constexpr uint8_t kShort = 8;
inline constexpr uint8_t kFaulted = 2;
// Records are staged on the scan thread and handed to the writer in batches of about this size or
// this many cycles (a 10 ms task's history reaches the writer at most a third of a second late).
inline constexpr size_t kBatchBytes = 2048;
inline constexpr uint32_t kBatchCycles = 32;
inline constexpr uint8_t kGapOnly = 4;  // no cycle: cycles dropped at the end of the recording
// No cycle: every cycle before it has been handed over; `cycle` holds the number of snapshot
// requests made when the scan thread placed it (they may all be served from here on).
inline constexpr uint8_t kSnapshotMark = 16;
// No cycle: every cycle before `cycle` has been handed over or dropped (`droppedBefore` of them
// right before it); the writer closes its chunk and fulfils the sync() waiting for it.
inline constexpr uint8_t kSyncMark = 32;
inline constexpr uint8_t kNoCycle = kGapOnly | kSnapshotMark | kSyncMark;

// Decodes scan inputs as the scan thread encodes them (offset u32, [bit i8, step i64, author u8,] length u16,
// bytes) and appends them to `out`, for the cycle at `cycleIndex` of its chunk.
inline void decodeWrites(const uint8_t* q, size_t bytes, bool withBit, uint32_t cycleIndex,
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
    std::memcpy(&w.author, q, 1);
    q += 1;
    uint16_t len;
    std::memcpy(&len, q, 2);
    q += 2;
    w.bytes.assign(q, q + len);
    q += len;
    out.push_back(std::move(w));
  }
}

// Forces as the scan thread encodes them (ScanHandoff::beforeCycle): kind u8 (kForceSet,
// kForceReleased, kForceRestated), offset u32, bit i8, since-cycle u64, value length u16, value,
// target length u16, target.
inline constexpr uint8_t kForceSet = 0;
inline constexpr uint8_t kForceReleased = 1;
inline constexpr uint8_t kForceRestated = 2;

inline void decodeForces(const uint8_t* q, size_t bytes, uint32_t cycleIndex, std::vector<trace::ForceData>& out) {
  for (const uint8_t* end = q + bytes; q < end;) {
    trace::ForceData f;
    f.cycleIndex = cycleIndex;
    const uint8_t kind = *q++;
    f.release = kind == kForceReleased;
    f.restated = kind == kForceRestated;
    std::memcpy(&f.offset, q, 4);
    q += 4;
    std::memcpy(&f.bit, q, 1);
    q += 1;
    std::memcpy(&f.sinceCycle, q, 8);
    q += 8;
    uint16_t len;
    std::memcpy(&len, q, 2);
    q += 2;
    f.bytes.assign(q, q + len);
    q += len;
    std::memcpy(&len, q, 2);
    q += 2;
    f.target.assign(reinterpret_cast<const char*>(q), len);
    q += len;
    out.push_back(std::move(f));
  }
}

}  // namespace scanback::recorder
