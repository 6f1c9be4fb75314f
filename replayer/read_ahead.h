// A trace's next chunk decoded on a thread of its own while the caller works through the one it has
// (History::readAhead): a caller that reads the chunks in order, as a rerun does (docs/compare.md),
// finds each one decoded when it gets there, decompressed and decoded on the second core instead of
// between two of its cycles.
//
// Bounded: one chunk under way or held, and at most one more asked for behind it. It only saves
// time: a chunk it could not read (a corrupt block, no memory for it) is not kept, and the caller
// reads it itself, with the error that says why, exactly as without it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "traces/trace_reader.h"

namespace scanback::replay {

class ChunkReadAhead {
 public:
  // The thread uses `reader`'s read functions, which may run beside the caller's (traces/
  // trace_reader.h); `reader` must outlive this, and must not be refreshed while a chunk is under
  // way: drop() first.
  explicit ChunkReadAhead(const trace::TraceReader& reader);
  ~ChunkReadAhead();  // waits for the chunk under way, if any
  ChunkReadAhead(const ChunkReadAhead&) = delete;
  ChunkReadAhead& operator=(const ChunkReadAhead&) = delete;

  // Starts decoding chunk `index`, listed as `block`, unless it is already asked for, under way or
  // held. Whatever else is held or asked for and not taken is dropped.
  void request(size_t index, const trace::BlockInfo& block);
  // Chunk `index` as listed by `block`, when it was asked for: waits while it is under way. Null
  // when it was not asked for (or under another listing: a chunk that has grown since), not begun
  // yet (withdrawn: the caller is as quick reading it itself), or could not be read.
  [[nodiscard]] std::shared_ptr<trace::ChunkData> take(size_t index, const trace::BlockInfo& block);
  // Waits for the chunk under way, then drops what is held or asked for.
  void drop();
  // Waits until what was asked for is decoded (tests: the thread's work is then done, so what
  // take() returns does not depend on how the two threads were scheduled).
  void waitUntilDecoded();
  // Chunks take() has handed over decoded.
  uint64_t taken() const;

 private:
  struct Job {
    size_t index = 0;
    trace::BlockInfo block;  // without its write index (reading does not need it)
  };
  enum class State { Empty, Asked, Reading, Read };

  static bool sameListing(const trace::BlockInfo& a, const trace::BlockInfo& b);
  static Job jobOf(size_t index, const trace::BlockInfo& block);
  void loop();

  const trace::TraceReader& reader_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  State state_ = State::Empty;
  Job job_;                  // Asked, Reading, Read: the chunk (the thread reads it unlocked while Reading)
  std::optional<Job> next_;  // asked for while another was Reading
  std::shared_ptr<trace::ChunkData> read_;  // Read: the chunk, null when it could not be read
  uint64_t taken_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the rest is built
};

}  // namespace scanback::replay
