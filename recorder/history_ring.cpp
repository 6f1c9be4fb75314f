#include "recorder/history_ring.h"

#include <cstdio>

#include "recorder/recording.h"
#include "traces/trace_writer.h"

namespace scanback::recorder {

void HistoryRing::keep(std::shared_ptr<const trace::EncodedChunk> block, std::optional<int64_t> lastStartNs) {
  // The block as the file holds it; the oldest chunks go beyond the limits (the newest, being
  // filled, always stays).
  std::lock_guard lock(mutex_);
  for (const auto& sink : sinks_) sink->chunk(block);
  if (!block->continuation() || chunks_.empty()) chunks_.emplace_back();
  HeldChunk& kept = chunks_.back();
  if (lastStartNs) kept.lastStartNs = *lastStartNs;
  kept.bytes += block->size();
  chunkBytes_ += block->size();
  kept.blocks.push_back(std::move(block));
  auto tooMuch = [&] {
    if (chunks_.size() <= 1) return false;
    if (limitBytes_ && chunkBytes_ > limitBytes_) return true;
    // The oldest chunk goes once even its last cycle is older than the limit.
    return durationNs_ && chunks_.back().lastStartNs - chunks_.front().lastStartNs > durationNs_;
  };
  bool forgot = false;
  while (tooMuch()) {
    chunkBytes_ -= chunks_.front().bytes;
    chunks_.pop_front();
    forgot = true;
  }
  if (forgot) {
    // Gaps before the oldest kept chunk are no longer part of the history.
    const uint64_t first = chunks_.front().firstCycle();
    while (!gaps_.empty() && gaps_.front().firstCycle + gaps_.front().cycleCount <= first) gaps_.pop_front();
  }
  heldBytes_.store(chunkBytes_, std::memory_order_relaxed);
}

void HistoryRing::keepGap(const trace::GapData& gap) {
  std::lock_guard lock(mutex_);
  gaps_.push_back(gap);
  for (const auto& sink : sinks_) sink->gap(gap);
}

void HistoryRing::keepFault(const trace::FaultData& fault) {
  std::lock_guard lock(mutex_);
  fault_ = fault;
  for (const auto& sink : sinks_) sink->fault(fault);
}

bool HistoryRing::addSink(std::shared_ptr<HistorySink> sink, uint64_t fromCycle, uint64_t maxBytes) {
  std::lock_guard lock(mutex_);
  // The newest chunks that fit, back to the one that holds fromCycle.
  size_t first = chunks_.size();
  uint64_t bytes = 0;
  while (first > 0) {
    const HeldChunk& c = chunks_[first - 1];
    if (c.endCycle() <= fromCycle) break;
    if (first < chunks_.size() && bytes + c.bytes > maxBytes) break;
    bytes += c.bytes;
    --first;
  }
  const uint64_t from = first < chunks_.size() ? chunks_[first].firstCycle() : fromCycle;
  size_t g = 0;
  auto gapsUpTo = [&](uint64_t cycle) {
    for (; g < gaps_.size() && gaps_[g].firstCycle + gaps_[g].cycleCount <= cycle; ++g)
      if (gaps_[g].firstCycle >= from) sink->gap(gaps_[g]);
  };
  for (size_t i = first; i < chunks_.size(); ++i) {
    gapsUpTo(chunks_[i].firstCycle());
    for (const auto& block : chunks_[i].blocks) sink->chunk(block);
  }
  gapsUpTo(UINT64_MAX);
  if (fault_) sink->fault(*fault_);
  sinks_.push_back(std::move(sink));
  sinkCount_.store(sinks_.size(), std::memory_order_relaxed);
  return true;
}

void HistoryRing::removeSink(const HistorySink* sink) {
  std::lock_guard lock(mutex_);
  std::erase_if(sinks_, [&](const std::shared_ptr<HistorySink>& s) { return s.get() == sink; });
  sinkCount_.store(sinks_.size(), std::memory_order_relaxed);
}

HeldHistory HistoryRing::held() const {
  HeldHistory h;
  std::lock_guard lock(mutex_);
  if (chunks_.empty()) return h;
  h.chunks = chunks_.size();
  h.firstCycle = chunks_.front().firstCycle();
  h.endCycle = chunks_.back().endCycle();
  h.bytes = chunkBytes_;
  return h;
}

bool HistoryRing::writeTo(trace::TraceWriter& w) const {
  // The held chunks' blocks in cycle order, each chunk after the gaps that precede it; gaps that
  // fall inside the held history stay in it.
  size_t g = 0;
  auto gapsUpTo = [&](uint64_t cycle) {
    for (; g < gaps_.size() && gaps_[g].firstCycle + gaps_[g].cycleCount <= cycle; ++g)
      if (!w.writeGap(gaps_[g])) return false;
    return true;
  };
  for (const HeldChunk& c : chunks_) {
    if (!gapsUpTo(c.firstCycle())) return false;
    for (const auto& block : c.blocks)
      if (!w.writeEncodedChunk(*block)) return false;
  }
  if (!gapsUpTo(UINT64_MAX)) return false;
  return !fault_ || w.writeFault(*fault_);
}

std::unique_ptr<trace::TraceWriter> HistoryRing::rewrite(const std::string& path, const trace::HeaderData& header,
                                                         std::string& error) const {
  // Written beside the file, then renamed over it: a crash at any moment leaves one of the two.
  const std::string beside = path + ".rewrite";
  std::unique_ptr<trace::TraceWriter> w = trace::TraceWriter::create(beside, header, error);
  if (!w) return nullptr;
  if (!writeTo(*w) || !w->replacePartial(path)) {
    error = w->lastError();
    const std::string partial = w->partialPath();
    w.reset();
    std::remove(partial.c_str());
    return nullptr;
  }
  return w;
}

}  // namespace scanback::recorder
