// What the trace model computes itself: which cycles of a chunk ran a statement, from its paths.
#include "traces/trace_model.h"

#include <gtest/gtest.h>

namespace scanback::trace::testing {
namespace {

TEST(TraceModel, CyclesExecutingCountsEachPathOnce) {
  ChunkData c;
  c.firstCycle = 100;
  c.pathTable = {{1, 2, 1, 3}, {2, 2}, {4}};
  c.paths = {0, 2, kNoPath, 1, 0};
  c.tasks.resize(5);
  EXPECT_EQ(cyclesExecuting(c, 1), (std::vector<std::pair<uint64_t, uint32_t>>{{100, 2}, {104, 2}}));
  EXPECT_EQ(cyclesExecuting(c, 2), (std::vector<std::pair<uint64_t, uint32_t>>{{100, 1}, {103, 2}, {104, 1}}));
  const uint32_t both[] = {1, 4};
  EXPECT_EQ(cyclesExecuting(c, both), (std::vector<std::pair<uint64_t, uint32_t>>{{100, 2}, {101, 1}, {104, 2}}));
  EXPECT_TRUE(cyclesExecuting(c, 9).empty());
}

TEST(TraceModel, CyclesExecutingOfAChunkWithoutPathsIsEmpty) {
  ChunkData c;
  c.firstCycle = 7;
  c.tasks.resize(3);
  EXPECT_TRUE(cyclesExecuting(c, 0).empty());
}

}  // namespace
}  // namespace scanback::trace::testing
