// The cycle-time histogram: its quantiles are within its resolution of the exact ones.
#include "vm/runtime/cycle_times.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace scanback;

TEST(CycleTimes, QuantilesAreWithinTwoPercentOfTheExactOnes) {
  CycleTimes times;
  EXPECT_EQ(times.quantileNs(0.99), 0u);
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> spread(std::log(40'000.0), 0.3);  // ~40 us cycles, a long tail
  std::vector<uint64_t> all;
  for (int i = 0; i < 100'000; ++i) {
    const uint64_t ns = static_cast<uint64_t>(spread(random));
    all.push_back(ns);
    times.record(ns);
  }
  all.push_back(5);  // a tiny one, counted exactly
  times.record(5);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(times.count(), all.size());
  EXPECT_EQ(times.maxNs(), all.back());
  for (const double q : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    const uint64_t exact = all[static_cast<size_t>(q * static_cast<double>(all.size() - 1))];
    const uint64_t got = times.quantileNs(q);
    EXPECT_GE(got, exact) << q;  // the bucket's upper edge
    EXPECT_LE(static_cast<double>(got), static_cast<double>(exact) * 1.02 + 1) << q;
  }
}
