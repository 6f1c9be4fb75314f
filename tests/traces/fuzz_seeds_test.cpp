// More seeds for the trace reader fuzzer: small traces of random contents (closed, never closed, cut
// off) with every block kind. Written into SCANBACK_FUZZ_SEEDS when that names a directory (to seed
// tests/fuzz/fuzz_trace_reader.cpp beyond its committed corpus), otherwise into a temporary one;
// either way each seed must open as the kind of trace it is.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/traces/trace_test_support.h"

namespace scanback::trace::testing {
namespace {

TEST(FuzzSeeds, WriteSeedCorpus) {
  TempDir tmp;
  const char* env = std::getenv("SCANBACK_FUZZ_SEEDS");
  const std::string dir = env && *env ? std::string(env) : tmp.file("seeds");
  fs::create_directories(dir);
  for (uint64_t seed = 0; seed < 4; ++seed) {
    const SampleTrace closed = writeSampleTrace(tmp.file("c.trace"), seed, 3);
    const std::vector<uint8_t> bytes = readBytes(closed.path);
    writeBytes((fs::path(dir) / ("closed" + std::to_string(seed))).string(), bytes);
    writeBytes((fs::path(dir) / ("cut" + std::to_string(seed))).string(), bytes, bytes.size() * 2 / 3);
    const SampleTrace open = writeSampleTrace(tmp.file("o.trace"), seed + 100, 2, /*close=*/false);
    writeBytes((fs::path(dir) / ("partial" + std::to_string(seed))).string(), readBytes(open.path + ".partial"));
  }
  for (uint64_t seed = 0; seed < 4; ++seed) {
    std::string error;
    auto closed = TraceReader::open((fs::path(dir) / ("closed" + std::to_string(seed))).string(), error);
    ASSERT_TRUE(closed) << error;
    EXPECT_TRUE(closed->complete());
    EXPECT_TRUE(closed->warnings().empty());
    auto cut = TraceReader::open((fs::path(dir) / ("cut" + std::to_string(seed))).string(), error);
    ASSERT_TRUE(cut) << error;
    EXPECT_FALSE(cut->complete());
    EXPECT_LT(cut->blocks().size(), closed->blocks().size());
    auto partial = TraceReader::open((fs::path(dir) / ("partial" + std::to_string(seed))).string(), error);
    ASSERT_TRUE(partial) << error;
    EXPECT_FALSE(partial->complete());
  }
}

}  // namespace
}  // namespace scanback::trace::testing
