// Writes a seed corpus for tests/traces/fuzz_trace_reader.cpp when SCANBACK_FUZZ_SEEDS names a
// directory (skipped otherwise): small valid traces (closed, never closed, cut off).
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/traces/trace_test_support.h"

namespace scanback::trace::testing {
namespace {

TEST(FuzzSeeds, WriteSeedCorpus) {
  const char* dir = std::getenv("SCANBACK_FUZZ_SEEDS");
  if (!dir || !*dir) GTEST_SKIP() << "set SCANBACK_FUZZ_SEEDS=DIR to write the fuzz seed corpus";
  fs::create_directories(dir);
  TempDir tmp;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    const SampleTrace closed = writeSampleTrace(tmp.file("c.trace"), seed, 3);
    const std::vector<uint8_t> bytes = readBytes(closed.path);
    writeBytes((fs::path(dir) / ("closed" + std::to_string(seed))).string(), bytes);
    writeBytes((fs::path(dir) / ("cut" + std::to_string(seed))).string(), bytes, bytes.size() * 2 / 3);
    const SampleTrace open = writeSampleTrace(tmp.file("o.trace"), seed + 100, 2, /*close=*/false);
    writeBytes((fs::path(dir) / ("partial" + std::to_string(seed))).string(), readBytes(open.path + ".partial"));
  }
}

}  // namespace
}  // namespace scanback::trace::testing
