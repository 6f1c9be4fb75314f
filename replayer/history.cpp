#include "replayer/history.h"

#include <fmt/format.h>

#include <algorithm>

#include "replayer/read_ahead.h"
#include "vm/base/assert.h"

namespace scanback::replay {

namespace {
constexpr size_t kCachedChunks = 4;
}

History::History(std::unique_ptr<trace::TraceReader> reader) : reader_(std::move(reader)) {
  index();
  appendOpenChunk();
}

History::~History() = default;

void History::index() {
  cursor_ = Cursor{};
  chunks_.clear();
  writeIndexes_.clear();
  gaps_.clear();
  fault_.reset();
  for (const trace::BlockInfo& b : reader_->blocks()) {
    std::string error;
    switch (b.kind) {
      case trace::BlockKind::Chunk:
        // The reader lists chunks in cycle order, none overlapping the one before (a copy or a
        // block out of place is damage, left out): chunkOf()'s binary search depends on it.
        SB_ASSERT(chunks_.empty() || b.firstCycle >= chunks_.back().firstCycle + chunks_.back().cycleCount,
                  "the chunk at byte offset {} (cycles {}+{}) overlaps the one before it (cycles {}+{})", b.offset,
                  b.firstCycle, b.cycleCount, chunks_.back().firstCycle, chunks_.back().cycleCount);
        chunks_.push_back(b);
        break;
      case trace::BlockKind::Gap: {
        trace::GapData g;
        if (reader_->readGap(b, g, error)) gaps_.push_back(g);
        break;
      }
      case trace::BlockKind::Fault: {
        trace::FaultData f;
        if (reader_->readFault(b, f, error)) fault_ = f;
        break;
      }
      case trace::BlockKind::OpenCycle: {
        // The recording finished while the task was paused inside this cycle.
        trace::OpenCycleData o;
        if (reader_->readOpenCycle(b, o, error)) open_ = openChunk(o);
        break;
      }
      default: break;
    }
  }
}

bool History::refresh() {
  // The reader's refresh() may not run beside its reads (traces/trace_reader.h), and the chunk
  // asked for ahead may be listed anew.
  if (readAhead_) readAhead_->drop();
  const size_t before = reader_->blocks().size();
  if (!reader_->refresh() && reader_->blocks().size() == before) return false;
  index();
  appendOpenChunk();
  return true;
}

std::shared_ptr<const trace::ChunkData> History::openChunk(const trace::OpenCycleData& open) {
  auto chunk = std::make_shared<trace::ChunkData>();
  chunk->firstCycle = open.cycle;
  chunk->keyframe = open.keyframe;
  chunk->tasks.push_back(static_cast<uint16_t>(open.task));
  chunk->startTimes.push_back(open.startNs);
  chunk->stepCounts.push_back(static_cast<uint32_t>(open.untilStep + 1));  // positions 0 .. untilStep
  chunk->imageHashes.push_back(0);
  chunk->inputChanges = open.inputChanges;
  chunk->writes = open.writes;
  for (trace::ImageWriteData& w : chunk->inputChanges) w.cycleIndex = 0;
  for (trace::ImageWriteData& w : chunk->writes) w.cycleIndex = 0;
  chunk->forces = open.forces;
  for (trace::ForceData& f : chunk->forces) f.cycleIndex = 0;
  return chunk;
}

void History::setOpenChunk(std::shared_ptr<const trace::ChunkData> chunk) {
  cursor_ = Cursor{};
  if (open_) chunks_.pop_back();
  open_ = std::move(chunk);
  appendOpenChunk();
}

void History::appendOpenChunk() {
  if (!open_) return;
  if (open_->cycleCount() != 1 || (!chunks_.empty() && open_->firstCycle != endCycle())) {
    open_.reset();  // the recording has moved past it
    return;
  }
  trace::BlockInfo b;
  b.offset = UINT64_MAX;  // in memory only
  b.firstCycle = open_->firstCycle;
  b.cycleCount = 1;
  chunks_.push_back(b);
}

std::optional<size_t> History::chunkOf(uint64_t cycle, std::string& error) const {
  auto it = std::upper_bound(chunks_.begin(), chunks_.end(), cycle,
                             [](uint64_t c, const trace::BlockInfo& b) { return c < b.firstCycle; });
  if (it != chunks_.begin()) {
    const trace::BlockInfo& b = *(it - 1);
    if (cycle < b.firstCycle + b.cycleCount) return static_cast<size_t>(it - 1 - chunks_.begin());
  }
  for (const trace::GapData& g : gaps_) {
    if (cycle >= g.firstCycle && cycle < g.firstCycle + g.cycleCount) {
      error = fmt::format("cycle {} is in a gap of the recording: cycles {}..{} were dropped", cycle, g.firstCycle,
                          g.firstCycle + g.cycleCount - 1);
      return std::nullopt;
    }
  }
  for (const trace::DamageData& d : reader_->damage()) {
    if (cycle >= d.firstCycle && cycle - d.firstCycle < d.cycleCount) {
      error = fmt::format("cycle {} is in a damaged part of the trace: {}", cycle, d.what);
      return std::nullopt;
    }
  }
  if (chunks_.empty()) {
    error = reader_->corruptOffset() ? fmt::format("the trace has no readable cycle: {}", reader_->corruptError())
                                     : std::string("the trace has no recorded cycle");
    return std::nullopt;
  }
  if (cycle < firstCycle()) {
    error = fmt::format("cycle {} is before the recording, which starts at cycle {}", cycle, firstCycle());
  } else if (reader_->corruptOffset()) {
    error = fmt::format("cycle {} is unreachable: the trace is corrupt at byte offset {} ({}); cycles up to {} replay",
                        cycle, *reader_->corruptOffset(), reader_->corruptError(), endCycle() - 1);
  } else {
    error = fmt::format("cycle {} is after the end of the recording (last cycle {})", cycle, endCycle() - 1);
  }
  return std::nullopt;
}

bool History::contiguous(size_t index) const {
  return index + 1 < chunks_.size() &&
         chunks_[index].firstCycle + chunks_[index].cycleCount == chunks_[index + 1].firstCycle;
}

std::shared_ptr<const trace::ChunkData> History::chunk(size_t index, std::string& error) {
  SB_ASSERT(index < chunks_.size(), "chunk {} of {}", index, chunks_.size());
  if (open_ && index + 1 == chunks_.size()) return open_;
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->first != index) continue;
    // A chunk of a trace being recorded grows by its continuations: decoded before, it is read again.
    if (it->second->cycleCount() != chunks_[index].cycleCount) {
      cache_.erase(it);
      break;
    }
    cache_.splice(cache_.begin(), cache_, it);
    askAhead(index);
    return cache_.front().second;
  }
  std::shared_ptr<trace::ChunkData> data = readAhead_ ? readAhead_->take(index, chunks_[index]) : nullptr;
  if (!data) {
    data = std::make_shared<trace::ChunkData>();
    bool read = false;
    try {
      read = reader_->readChunk(chunks_[index], *data, error);
    } catch (const std::bad_alloc&) {
      // The chunks held only save decoding: without the memory for this one they go (a chunk still
      // in use stays alive where it is used), and it is decoded once more. Out of memory again, it
      // is the caller's (an OutOfMemory that names the block).
      cache_.clear();
      cursor_ = Cursor{};
      if (readAhead_) readAhead_->drop();
      *data = trace::ChunkData{};
      read = reader_->readChunk(chunks_[index], *data, error);
    }
    if (!read) {
      error = fmt::format("cycles {} and later are unreachable: the chunk at byte offset {} cannot be read: {}",
                          chunks_[index].firstCycle, chunks_[index].offset, error);
      return nullptr;
    }
  }
  cache_.emplace_front(index, data);
  if (cache_.size() > kCachedChunks) cache_.pop_back();
  askAhead(index);
  return data;
}

void History::askAhead(size_t index) {
  if (!readAhead_) return;
  const size_t next = index + 1;
  if (next >= chunks_.size() || (open_ && next + 1 == chunks_.size())) return;  // none, or in memory
  for (const auto& [cached, data] : cache_)
    if (cached == next && data->cycleCount() == chunks_[next].cycleCount) return;
  readAhead_->request(next, chunks_[next]);
}

void History::readAhead(bool on) {
  if (!on) {
    readAhead_.reset();
  } else if (!readAhead_) {
    readAhead_ = std::make_unique<ChunkReadAhead>(*reader_);
  }
}

void History::waitForReadAhead() {
  if (readAhead_) readAhead_->waitUntilDecoded();
}

uint64_t History::readAheadTaken() const { return readAhead_ ? readAhead_->taken() : 0; }

const trace::WriteIndex* History::writeIndex(size_t index) {
  if (index >= chunks_.size() || (open_ && index + 1 == chunks_.size())) return nullptr;
  // An index that holds only the bytes that differed at cycle boundaries misses a value changed
  // and restored within a cycle: searching by it would skip that write.
  if (!reader_->header().writeIndexComplete) return nullptr;
  if (chunks_[index].writeIndex) return &*chunks_[index].writeIndex;
  auto known = writeIndexes_.find(index);
  if (known == writeIndexes_.end()) {
    std::string ignored;  // an unreadable chunk is reported by the replay that needs it
    const std::shared_ptr<const trace::ChunkData> data = chunk(index, ignored);
    known = writeIndexes_.emplace(index, data ? data->writeIndex : std::nullopt).first;
  }
  return known->second ? &*known->second : nullptr;
}

bool History::cycle(uint64_t cycle, std::shared_ptr<const trace::ChunkData>& chunkData, CycleRecord& out,
                    std::string& error) {
  // The chunk read last when the caller still holds it and it has the cycle (the cursor is reset
  // whenever the chunks are listed anew, so it is still what chunk() would return), else a lookup.
  const trace::ChunkData* held = chunkData.get();
  const bool inHeld =
      held && chunkData == cursor_.chunk && cycle >= held->firstCycle && cycle - held->firstCycle < held->cycleCount();
  if (!inHeld) {
    const std::optional<size_t> index = chunkOf(cycle, error);
    if (!index) return false;
    chunkData = chunk(*index, error);
    if (!chunkData) return false;
    // chunkOf() found the chunk listing `cycle`, and chunk() holds exactly the cycles listed.
    SB_ASSERT(cycle >= chunkData->firstCycle && cycle - chunkData->firstCycle < chunkData->cycleCount(),
              "cycle {} looked up in cycles {}+{}", cycle, chunkData->firstCycle, chunkData->cycleCount());
    if (chunkData != cursor_.chunk) {
      cursor_ = Cursor{};
      cursor_.chunk = chunkData;
    }
  }
  const trace::ChunkData& c = *chunkData;
  const uint32_t i = static_cast<uint32_t>(cycle - c.firstCycle);
  out.cycle = cycle;
  out.task = c.tasks[i];
  out.startNs = c.startTimes[i];
  out.stepCount = c.stepCounts[i];
  out.imageHash = c.imageHashes[i];
  out.open = chunkData == open_;
  out.path = i < c.paths.size() && c.paths[i] != trace::kNoPath && c.paths[i] < c.pathTable.size()
                 ? &c.pathTable[c.paths[i]]
                 : nullptr;
  // The lists are sorted by cycle: the cycle after the one served last starts where its ended.
  const bool following = cursor_.cycleIndex != UINT32_MAX && i == cursor_.cycleIndex + 1;
  auto collect = [&](const std::vector<trace::ImageWriteData>& all, size_t& end,
                     std::vector<const trace::ImageWriteData*>& to) {
    to.clear();
    auto it = following ? all.begin() + static_cast<std::ptrdiff_t>(end)
                        : std::lower_bound(all.begin(), all.end(), i,
                                           [](const trace::ImageWriteData& w, uint32_t v) { return w.cycleIndex < v; });
    for (; it != all.end() && it->cycleIndex == i; ++it) to.push_back(&*it);
    end = static_cast<size_t>(it - all.begin());
  };
  collect(c.inputChanges, cursor_.inputsEnd, out.inputChanges);
  collect(c.writes, cursor_.writesEnd, out.writes);
  cursor_.cycleIndex = i;
  if (c.forces.empty()) {
    out.forces.clear();
  } else {
    forcesHeld(c, i, out.forces);
  }
  return true;
}

std::vector<const trace::ForceData*> forcesHeld(const trace::ChunkData& chunk, uint32_t cycleIndex) {
  std::vector<const trace::ForceData*> held;
  forcesHeld(chunk, cycleIndex, held);
  return held;
}

void forcesHeld(const trace::ChunkData& chunk, uint32_t cycleIndex, std::vector<const trace::ForceData*>& held) {
  held.clear();
  for (const trace::ForceData& f : chunk.forces) {
    if (f.cycleIndex > cycleIndex) break;
    auto same = std::find_if(held.begin(), held.end(),
                             [&](const trace::ForceData* h) { return h->offset == f.offset && h->bit == f.bit; });
    if (f.release) {
      if (same != held.end()) held.erase(same);
    } else if (same != held.end()) {
      *same = &f;  // a re-force keeps its place
    } else {
      held.push_back(&f);
    }
  }
}

}  // namespace scanback::replay
