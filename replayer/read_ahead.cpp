#include "replayer/read_ahead.h"

#include <new>
#include <string>

namespace scanback::replay {

ChunkReadAhead::ChunkReadAhead(const trace::TraceReader& reader) : reader_(reader), thread_([this] { loop(); }) {}

ChunkReadAhead::~ChunkReadAhead() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

bool ChunkReadAhead::sameListing(const trace::BlockInfo& a, const trace::BlockInfo& b) {
  // A chunk of a trace still being recorded grows by continuations: the same first block, more cycles.
  return a.offset == b.offset && a.firstCycle == b.firstCycle && a.cycleCount == b.cycleCount &&
         a.continuations.size() == b.continuations.size();
}

ChunkReadAhead::Job ChunkReadAhead::jobOf(size_t index, const trace::BlockInfo& block) {
  Job job{index, {}};
  job.block.offset = block.offset;
  job.block.kind = block.kind;
  job.block.firstCycle = block.firstCycle;
  job.block.cycleCount = block.cycleCount;
  job.block.storedSize = block.storedSize;
  job.block.rawSize = block.rawSize;
  job.block.continuations = block.continuations;
  return job;
}

void ChunkReadAhead::request(size_t index, const trace::BlockInfo& block) {
  {
    std::lock_guard lock(mutex_);
    const bool known = state_ != State::Empty && job_.index == index && sameListing(job_.block, block);
    if (state_ == State::Reading) {
      // The thread reads job_ unlocked: this one waits behind it (or is not needed, when it is that one).
      if (known) {
        next_.reset();
      } else if (!next_ || next_->index != index || !sameListing(next_->block, block)) {
        next_ = jobOf(index, block);
      }
      return;
    }
    if (known) return;
    job_ = jobOf(index, block);
    read_.reset();
    state_ = State::Asked;
  }
  changed_.notify_all();
}

std::shared_ptr<trace::ChunkData> ChunkReadAhead::take(size_t index, const trace::BlockInfo& block) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (next_ && next_->index == index) {
      next_.reset();  // not begun: read by the caller now rather than after the chunk under way
      return nullptr;
    }
    if (state_ == State::Empty || job_.index != index || !sameListing(job_.block, block)) return nullptr;
    if (state_ == State::Asked) {
      state_ = State::Empty;  // not begun either
      return nullptr;
    }
    if (state_ == State::Read) {
      std::shared_ptr<trace::ChunkData> chunk = std::move(read_);
      state_ = State::Empty;
      if (chunk) ++taken_;
      return chunk;
    }
    changed_.wait(lock);  // Reading it
  }
}

void ChunkReadAhead::drop() {
  std::unique_lock lock(mutex_);
  next_.reset();
  changed_.wait(lock, [&] { return state_ != State::Reading; });
  state_ = State::Empty;
  read_.reset();
}

void ChunkReadAhead::waitUntilDecoded() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return state_ != State::Asked && state_ != State::Reading && !next_; });
}

uint64_t ChunkReadAhead::taken() const {
  std::lock_guard lock(mutex_);
  return taken_;
}

void ChunkReadAhead::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || state_ == State::Asked; });
    if (stop_) return;
    state_ = State::Reading;
    lock.unlock();
    auto chunk = std::make_shared<trace::ChunkData>();
    std::string error;  // the caller reads an unreadable chunk itself, and says why
    bool ok = false;
    try {
      ok = reader_.readChunk(job_.block, *chunk, error);
    } catch (const std::bad_alloc&) {
      ok = false;  // the caller tries again, with its own way out of memory (History::chunk)
    }
    lock.lock();
    if (next_) {
      job_ = std::move(*next_);
      next_.reset();
      read_.reset();
      state_ = State::Asked;
    } else {
      read_ = ok ? std::move(chunk) : nullptr;
      state_ = State::Read;
    }
    changed_.notify_all();
  }
}

}  // namespace scanback::replay
