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
