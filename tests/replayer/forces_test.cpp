// Forces recorded as scan inputs (issue 31): each force and release is recorded once, at its cycle
// (and restated at each chunk's start), never per cycle; replay, seek, `trace verify` and the
// trace's own checks see them; `trace why` names a force as the origin of the values it held.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "replayer/replayer.h"
#include "tests/support/shell.h"
#include "tests/support/trace_support.h"
#include "vm/runtime/forces.h"

namespace scanback {
namespace {

using test::mustCompile;
using test::TempTrace;

const char* kForcedPlant =
    "PROGRAM Main\n"
    "VAR\n"
    "  sensor AT %IX0.2 : BOOL;\n"
    "  lamp AT %QX0.1 : BOOL;\n"
    "  speed : INT;\n"
    "  seen : INT;\n"
    "  count : DINT;\n"
    "END_VAR\n"
    "seen := speed;\n"
    "speed := speed + 1;\n"
    "IF sensor THEN count := count + 1; END_IF;\n"
    "lamp := NOT lamp;\n"
    "END_PROGRAM\n";

Force forceOf(const Program& p, const char* target, const char* value) {
  std::string error;
  std::optional<Force> f = resolveForce(p, target, value, error);
  EXPECT_TRUE(f) << error;
  return f ? *f : Force{};
}

// Records `cycles` cycles, forcing and releasing as `script` says at cycle starts, and returns the
// live image after every cycle's start (its scan inputs applied: position (cycle, 0)).
std::vector<std::vector<uint8_t>> recordWithForces(std::shared_ptr<const Program> p, const TempTrace& path,
                                                   uint64_t cycles, uint32_t keyframeEvery,
                                                   const std::function<void(uint64_t, Runtime&)>& script) {
  Runtime rt(p);
  auto rec = test::startRecording(rt, test::recordingTo(path, keyframeEvery));
  std::vector<std::vector<uint8_t>> starts;
  if (!rec) return starts;
  for (uint64_t c = 0; c < cycles; ++c) {
    script(c, rt);
    rt.inputs()[0] = static_cast<uint8_t>(c % 3 == 0 ? 0 : 0x04);  // the field toggles %IX0.2
    rt.startCycle();
    starts.emplace_back(rt.vm().image(), rt.vm().image() + rt.vm().imageSize());
    EXPECT_EQ(rt.run(), RunStatus::CycleDone);
    while (rec->backlogged())
      static_cast<void>(rec->waitUntilNotBacklogged(std::chrono::seconds(1)));  // (waited again)
  }
  EXPECT_TRUE(test::finishRecording(*rec));
  EXPECT_EQ(rec->stats().cyclesDropped, 0u);
  return starts;
}

TEST(ForceRecording, ReplayAndVerifyAreExactAndEveryChunkRestatesTheForcesHeld) {
  auto p = mustCompile(kForcedPlant);
  ASSERT_TRUE(p);
  const TempTrace path("forces_exact");
  const auto starts = recordWithForces(p, path, 60, 8, [&](uint64_t c, Runtime& rt) {
    if (c == 5) rt.requestForce({false, forceOf(*p, "Main.speed", "500")});
    if (c == 9) rt.requestForce({false, forceOf(*p, "%IX0.2", "TRUE")});
    if (c == 12) rt.requestForce({false, forceOf(*p, "%QX0.1", "FALSE")});
    if (c == 30) rt.requestForce({true, forceOf(*p, "Main.speed", "0")});
    if (c == 41) rt.requestForce({false, forceOf(*p, "Main.speed", "-7")});
  });
  ASSERT_EQ(starts.size(), 60u);
  std::string error;
  std::unique_ptr<replay::Replayer> r = replay::Replayer::open(path.string(), {}, error);
  ASSERT_TRUE(r) << error;
  const std::vector<replay::Divergence> divergences = r->verify(nullptr, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_TRUE(divergences.empty()) << divergences.front().what;
  EXPECT_EQ(r->verifiedCycles(), 60u);
  // Every position (c, 0) equals the live image there, from any direction.
  for (uint64_t c : {59u, 6u, 31u, 12u, 40u, 0u, 45u}) {
    ASSERT_TRUE(r->seek({c, 0}, error)) << error;
    EXPECT_TRUE(std::equal(starts[c].begin(), starts[c].end(), r->vm().image())) << "cycle " << c;
  }
  ASSERT_TRUE(r->seek({20, 0}, error)) << error;
  EXPECT_EQ(test::valueAt(*p, r->vm().image(), "Main.speed"), "500");
  // The chunks hold the five changes once each, plus the restatements at each chunk's start.
  std::unique_ptr<trace::TraceReader> reader = test::openTrace(path);
  ASSERT_TRUE(reader);
  size_t set = 0, released = 0, restated = 0;
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (b.kind != trace::BlockKind::Chunk) continue;
    trace::ChunkData chunk;
    ASSERT_TRUE(reader->readChunk(b, chunk, error)) << error;
    const size_t held = replay::forcesHeld(chunk, 0).size();
    size_t restatedHere = 0;
    for (const trace::ForceData& f : chunk.forces) {
      restatedHere += f.restated;
      set += !f.restated && !f.release;
      released += f.release;
      if (f.restated) {
        EXPECT_EQ(f.cycleIndex, 0u);
      }
      if (f.target == "Main.speed" && f.restated && chunk.firstCycle <= 30) {
        EXPECT_EQ(f.sinceCycle, 5u);
      }
    }
    // What a chunk restates is what was held before its first cycle.
    const uint64_t first = chunk.firstCycle;
    const size_t expected = (first > 5 && first <= 30) + (first > 9) + (first > 12) + (first > 41);
    EXPECT_EQ(restatedHere, expected) << "chunk at cycle " << first;
    EXPECT_GE(held, restatedHere);
    restated += restatedHere;
  }
  EXPECT_EQ(set, 4u);
  EXPECT_EQ(released, 1u);
  EXPECT_GT(restated, 0u);
}

TEST(ForceRecording, AForceHeldForManyCyclesDoesNotGrowTheTracePerCycle) {
  auto p = mustCompile(kForcedPlant);
  ASSERT_TRUE(p);
  const TempTrace plain("forces_plain");
  const TempTrace forced("forces_held");
  constexpr uint64_t kCycles = 5000;
  recordWithForces(p, plain, kCycles, 1000, [](uint64_t, Runtime&) {});
  recordWithForces(p, forced, kCycles, 1000, [&](uint64_t c, Runtime& rt) {
    if (c == 0) rt.requestForce({false, forceOf(*p, "Main.speed", "3")});
  });
  // The forced run's speed stays 3 at each cycle start, the plain one's counts: compare the
  // forced trace with itself held vs what a per-cycle write would cost (5000 writes of 2 bytes,
  // at least 10 bytes each before compression): the difference must stay far below that.
  const auto sizeOf = [](const TempTrace& t) { return std::filesystem::file_size(t.string()); };
  const auto withForce = static_cast<int64_t>(sizeOf(forced));
  const auto without = static_cast<int64_t>(sizeOf(plain));
  EXPECT_LT(withForce - without, 5 * 200) << withForce << " vs " << without;  // five chunks' restatements
  std::string error;
  std::unique_ptr<trace::TraceReader> reader = test::openTrace(forced);
  ASSERT_TRUE(reader);
  size_t entries = 0;
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (b.kind != trace::BlockKind::Chunk) continue;
    trace::ChunkData chunk;
    ASSERT_TRUE(reader->readChunk(b, chunk, error)) << error;
    entries += chunk.forces.size();
  }
  EXPECT_EQ(entries, 5u);  // set once in the first chunk, restated by the four others
}

TEST(ForceRecording, TraceWhyNamesTheForceAsTheOrigin) {
  auto p = mustCompile(kForcedPlant);
  ASSERT_TRUE(p);
  const TempTrace path("forces_why");
  recordWithForces(p, path, 20, 8, [&](uint64_t c, Runtime& rt) {
    if (c == 11) rt.requestForce({false, forceOf(*p, "Main.speed", "77")});
  });
  const test::ShellResult r =
      test::runScanback("trace why " + test::shellQuote(path.string()) + " Main.speed --at 15:0");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Main.speed forced at cycle 11"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-> 77"), std::string::npos) << r.out;
}

// A force named as the origin deep in a why-chain: `out` is made from `scaled`, made from
// `setpoint`, which only a force ever set (at cycle 4, released at 8: the value stays); and `limit`,
// forced at cycle 6 to the value it already had (the force's start changed nothing, yet the force
// holds it).
const char* kScaled =
    "PROGRAM Main\n"
    "VAR\n"
    "  setpoint : INT;\n"
    "  scaled : INT;\n"
    "  out : INT;\n"
    "  limit : INT := 5;\n"
    "  field AT %IX0.2 : BOOL;\n"  // (recordWithForces drives the input image)
    "END_VAR\n"
    "scaled := setpoint * 2;\n"
    "out := scaled + 1;\n"
    "END_PROGRAM\n";

TEST(ForceRecording, TraceWhyNamesAForceAsTheOriginDeepInTheChain) {
  auto p = mustCompile(kScaled);
  ASSERT_TRUE(p);
  const TempTrace path("forces_why_deep");
  recordWithForces(p, path, 12, 4, [&](uint64_t c, Runtime& rt) {
    if (c == 4) rt.requestForce({false, forceOf(*p, "Main.setpoint", "21")});
    if (c == 6) rt.requestForce({false, forceOf(*p, "Main.limit", "5")});
    if (c == 8) rt.requestForce({true, forceOf(*p, "Main.setpoint", "0")});
  });
  const std::string trace = test::shellQuote(path.string());
  test::ShellResult r = test::runScanback("trace why " + trace + " Main.out --at 10:2 --depth 3 --json");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  nlohmann::json root = nlohmann::json::parse(r.out);
  EXPECT_EQ(root["value"], "43");
  EXPECT_EQ(root["origin"], "statement");
  ASSERT_EQ(root["reads"].size(), 1u) << r.out;
  const nlohmann::json& scaled = root["reads"][0];
  EXPECT_EQ(scaled["variable"], "Main.scaled");
  EXPECT_EQ(scaled["value"], "42");
  EXPECT_EQ(scaled["origin"], "statement");
  ASSERT_EQ(scaled["reads"].size(), 1u) << r.out;
  // Depth 3: the force that set it at the start of cycle 4 (released since, the value stayed).
  const nlohmann::json& setpoint = scaled["reads"][0];
  EXPECT_EQ(setpoint["variable"], "Main.setpoint");
  EXPECT_EQ(setpoint["value"], "21");
  EXPECT_EQ(setpoint["origin"], "force") << r.out;
  EXPECT_EQ(setpoint["cycle"], 4);
  EXPECT_EQ(setpoint["step"], 0);
  EXPECT_EQ(setpoint["reads"], nlohmann::json::array());

  // Forced to the value it had: no change at the force's start, still the force's.
  r = test::runScanback("trace why " + trace + " Main.limit --at 10:2 --json");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  root = nlohmann::json::parse(r.out);
  EXPECT_EQ(root["value"], "5");
  EXPECT_EQ(root["origin"], "force") << r.out;
  EXPECT_EQ(root["cycle"], 6);
  // Before the force, the same value is the initial one.
  r = test::runScanback("trace why " + trace + " Main.limit --at 5:0 --json");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["origin"], "initial") << r.out;
  // The tree in words names it too.
  r = test::runScanback("trace why " + trace + " Main.out --at 10:2 --depth 3");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Main.setpoint = 21  <- forced  at 4:0"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace scanback
