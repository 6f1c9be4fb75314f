#include "traces/trace_model.h"

#include <algorithm>

namespace scanback::trace {

std::vector<std::pair<uint64_t, uint32_t>> cyclesExecuting(const ChunkData& chunk, uint32_t statementId) {
  return cyclesExecuting(chunk, std::span<const uint32_t>(&statementId, 1));
}

std::vector<std::pair<uint64_t, uint32_t>> cyclesExecuting(const ChunkData& chunk,
                                                           std::span<const uint32_t> statementIds) {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  if (statementIds.empty() || chunk.paths.empty()) return out;
  std::vector<uint32_t> ids(statementIds.begin(), statementIds.end());
  std::sort(ids.begin(), ids.end());
  std::vector<uint32_t> perPath(chunk.pathTable.size(), 0);
  for (size_t p = 0; p < chunk.pathTable.size(); ++p) {
    for (uint32_t id : chunk.pathTable[p]) perPath[p] += std::binary_search(ids.begin(), ids.end(), id);
  }
  for (size_t i = 0; i < chunk.paths.size(); ++i) {
    const uint32_t p = chunk.paths[i];
    if (p != kNoPath && p < perPath.size() && perPath[p] > 0) out.emplace_back(chunk.firstCycle + i, perPath[p]);
  }
  return out;
}

}  // namespace scanback::trace

namespace scanback::trace {

bool writeIndexTouches(const WriteIndex& index, uint32_t offset, uint32_t size) {
  // The first range that ends after `offset`, by binary search over the pairs.
  size_t lo = 0, hi = index.size() / 2;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (uint64_t{index[2 * mid]} + index[2 * mid + 1] <= offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < index.size() / 2 && index[2 * lo] < uint64_t{offset} + size;
}

}  // namespace scanback::trace

#include <fmt/format.h>

namespace scanback::trace {

WriteIndex mergeWriteIndexes(const WriteIndex& a, const WriteIndex& b) {
  // Both sorted by offset: merge them, joining ranges that overlap or touch.
  WriteIndex out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const bool fromA = j >= b.size() || (i < a.size() && a[i] <= b[j]);
    const uint32_t offset = fromA ? a[i] : b[j];
    const uint32_t size = fromA ? a[i + 1] : b[j + 1];
    (fromA ? i : j) += 2;
    if (!out.empty() && uint64_t{out[out.size() - 2]} + out.back() >= offset) {
      const uint64_t end = std::max<uint64_t>(uint64_t{out[out.size() - 2]} + out.back(), uint64_t{offset} + size);
      out.back() = static_cast<uint32_t>(end - out[out.size() - 2]);
    } else {
      out.insert(out.end(), {offset, size});
    }
  }
  return out;
}

bool appendContinuation(ChunkData& chunk, const ChunkData& part, std::string& error) {
  const uint64_t end = chunk.firstCycle + chunk.cycleCount();
  if (!part.continuation || part.firstCycle != end) {
    error = fmt::format("continuation at cycle {} does not follow on from the chunk's cycles {}..{}", part.firstCycle,
                        chunk.firstCycle, end - 1);
    return false;
  }
  if (part.pathBase != chunk.pathTable.size()) {
    error = fmt::format("continuation at cycle {} numbers its paths from {}, the chunk has {}", part.firstCycle,
                        part.pathBase, chunk.pathTable.size());
    return false;
  }
  if (chunk.paths.empty() != part.paths.empty() && chunk.cycleCount() > 0) {
    error = fmt::format("continuation at cycle {} {} statement paths, the chunk {}", part.firstCycle,
                        part.paths.empty() ? "has no" : "has", chunk.paths.empty() ? "none" : "has them");
    return false;
  }
  const uint32_t base = chunk.cycleCount();
  chunk.tasks.insert(chunk.tasks.end(), part.tasks.begin(), part.tasks.end());
  chunk.startTimes.insert(chunk.startTimes.end(), part.startTimes.begin(), part.startTimes.end());
  chunk.stepCounts.insert(chunk.stepCounts.end(), part.stepCounts.begin(), part.stepCounts.end());
  chunk.imageHashes.insert(chunk.imageHashes.end(), part.imageHashes.begin(), part.imageHashes.end());
  chunk.paths.insert(chunk.paths.end(), part.paths.begin(), part.paths.end());
  chunk.pathTable.insert(chunk.pathTable.end(), part.pathTable.begin(), part.pathTable.end());
  for (const ImageWriteData& w : part.inputChanges) {
    chunk.inputChanges.push_back(w);
    chunk.inputChanges.back().cycleIndex += base;
  }
  for (const ImageWriteData& w : part.writes) {
    chunk.writes.push_back(w);
    chunk.writes.back().cycleIndex += base;
  }
  for (const ForceData& f : part.forces) {
    chunk.forces.push_back(f);
    chunk.forces.back().cycleIndex += base;
  }
  if (chunk.writeIndex && part.writeIndex)
    chunk.writeIndex = mergeWriteIndexes(*chunk.writeIndex, *part.writeIndex);
  else
    chunk.writeIndex.reset();
  return true;
}

}  // namespace scanback::trace
