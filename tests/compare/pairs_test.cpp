// The golden pairs (tests/compare/pairs/README.md) through the real command: `run --record` of the
// program, `rerun` with the changed one, `trace diff` of the two recordings against the diff worked
// out by hand; and a corrupt or cut-off trace on either side (a clear error, exit 2, nothing written).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "compare/trace_diff.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"
#include "tests/support/xml_check.h"
#include "tests/traces/trace_test_support.h"
#include "traces/trace_reader.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using scanback::test::readText;
using scanback::test::runScanback;
using scanback::test::shellQuote;
using scanback::test::ShellResult;
using scanback::trace::testing::TempDir;

namespace {

fs::path pairsDirectory() { return fs::path(SCANBACK_SOURCE_DIR) / "tests" / "compare" / "pairs"; }

std::string describe(const ShellResult& r) {
  return "exit " + std::to_string(r.exitCode) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// Whether `actual` holds `expected`: objects key by key (null: the key is absent or null), each
// element of an expected list found in the actual list, a string "*tail" matched by its end, other
// values equal. `where` names the first mismatch.
bool holds(const json& actual, const json& expected, const std::string& at, std::string& where) {
  if (expected.is_object()) {
    if (!actual.is_object()) {
      where = at + ": not an object";
      return false;
    }
    for (const auto& [key, value] : expected.items()) {
      if (value.is_null()) {
        if (actual.contains(key) && !actual[key].is_null()) {
          where = at + "." + key + ": present, expected absent: " + actual[key].dump();
          return false;
        }
        continue;
      }
      if (!actual.contains(key)) {
        where = at + "." + key + ": missing";
        return false;
      }
      if (!holds(actual[key], value, at + "." + key, where)) return false;
    }
    return true;
  }
  if (expected.is_array()) {
    if (!actual.is_array()) {
      where = at + ": not a list";
      return false;
    }
    if (expected.empty() && !actual.empty()) {
      where = at + ": expected empty, is " + actual.dump();
      return false;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      bool found = false;
      std::string ignored;
      for (const json& a : actual) found = found || holds(a, expected[i], at, ignored);
      if (!found) {
        where = at + "[" + std::to_string(i) + "]: " + expected[i].dump() + " is not in " + actual.dump();
        return false;
      }
    }
    return true;
  }
  if (expected.is_string() && expected.get<std::string>().starts_with("*")) {
    const std::string tail = expected.get<std::string>().substr(1);
    if (actual.is_string() && actual.get<std::string>().ends_with(tail)) return true;
    where = at + ": " + actual.dump() + " does not end with " + tail;
    return false;
  }
  if (actual != expected) {
    where = at + ": " + actual.dump() + ", expected " + expected.dump();
    return false;
  }
  return true;
}

// The directives of a pair's a.st (tests/golden's): its cycles and stimulus file.
std::string runArguments(const fs::path& dir) {
  std::istringstream in(readText(dir / "a.st"));
  std::string line, cycles = "1", inputs;
  while (std::getline(in, line) && line.rfind("// @", 0) == 0) {
    std::istringstream words(line.substr(4));
    std::string key, value;
    words >> key >> value;
    if (key == "cycles") cycles = value;
    if (key == "inputs") inputs = " --inputs " + shellQuote((dir / value).string());
  }
  return " --cycles " + cycles + inputs;
}

// Records the pair's program (with `recordOptions` for `run`) and reruns the recording with its
// changed version.
void recordPair(const fs::path& dir, const std::string& a, const std::string& b, ShellResult* rerun = nullptr,
                const std::string& recordOptions = "") {
  const ShellResult recorded = runScanback("run --quiet " + shellQuote((dir / "a.st").string()) + runArguments(dir) +
                                           " --record " + shellQuote(a) + recordOptions);
  ASSERT_EQ(recorded.exitCode, 0) << describe(recorded);
  const ShellResult again =
      runScanback("rerun " + shellQuote(a) + " " + shellQuote((dir / "b.st").string()) + " --record " + shellQuote(b));
  ASSERT_EQ(again.exitCode, 0) << describe(again);
  if (rerun) *rerun = again;
}

class Pairs : public ::testing::TestWithParam<std::string> {};

TEST_P(Pairs, TheDiffIsTheOneWorkedOutByHand) {
  const fs::path dir = pairsDirectory() / GetParam();
  const json expect = json::parse(readText(dir / "expect.json"));
  TempDir tmp;
  const std::string a = tmp.file("a.trace"), b = tmp.file("b.trace"), junit = tmp.file("diff.xml");
  ShellResult rerun;
  recordPair(dir, a, b, &rerun);
  for (const json& text : expect["rerun"])
    EXPECT_NE(rerun.err.find(text.get<std::string>()), std::string::npos) << text << "\n" << rerun.err;

  const ShellResult diff =
      runScanback("trace diff " + shellQuote(a) + " " + shellQuote(b) + " --json --junit " + shellQuote(junit));
  EXPECT_EQ(diff.exitCode, expect["exit"].get<int>()) << describe(diff);
  json report;
  ASSERT_NO_THROW(report = json::parse(diff.out)) << diff.out;
  std::string where;
  EXPECT_TRUE(holds(report, expect["diff"], "diff", where)) << where << "\n" << report.dump(2);

  // The JUnit file: one test case for the schedule, one for faults, one per compared value; a
  // failure for each that differs.
  const std::string xml = readText(junit);
  std::string notWellFormed;
  EXPECT_TRUE(scanback::test::wellFormedXml(xml, notWellFormed)) << notWellFormed << "\n" << xml;
  const size_t failures =
      report["differing"].get<size_t>() + (report.contains("schedule") ? 1 : 0) + (report.contains("fault") ? 1 : 0);
  EXPECT_NE(xml.find("tests=\"" + std::to_string(report["values"].size() + 2) + "\" failures=\"" +
                     std::to_string(failures) + "\""),
            std::string::npos)
      << xml;
  size_t count = 0;
  for (size_t at = xml.find("<failure "); at != std::string::npos; at = xml.find("<failure ", at + 1)) ++count;
  EXPECT_EQ(count, failures) << xml;

  // The text report says the same: the result line and, when there is one, the first divergence.
  const ShellResult text = runScanback("trace diff " + shellQuote(a) + " " + shellQuote(b));
  EXPECT_EQ(text.exitCode, expect["exit"].get<int>()) << describe(text);
  EXPECT_NE(text.out.find(report["equal"].get<bool>() ? "result     EQUAL" : "result     DIFFERENT"), std::string::npos)
      << text.out;
  if (report.contains("firstDivergence")) {
    EXPECT_NE(text.out.find("first divergence  cycle " + std::to_string(report["firstDivergence"]["cycle"].get<int>())),
              std::string::npos)
        << text.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, Pairs,
                         ::testing::Values("changed_branch", "changed_constant", "removed_variable", "changed_task"));

// A trace compared with itself is equal, and `--vars` narrows the comparison to what it names.
TEST(Diff, ATraceEqualsItselfAndVarsNarrowTheComparison) {
  const fs::path dir = pairsDirectory() / "changed_branch";
  TempDir tmp;
  const std::string a = tmp.file("a.trace"), b = tmp.file("b.trace");
  recordPair(dir, a, b);
  const ShellResult same = runScanback("trace diff " + shellQuote(a) + " " + shellQuote(a));
  EXPECT_EQ(same.exitCode, 0) << describe(same);
  EXPECT_NE(same.out.find("result     EQUAL: the 4 compared values are the same at the end of all 40 cycles"),
            std::string::npos)
      << same.out;
  // The pump output does not differ; the trip count does.
  const ShellResult pump = runScanback("trace diff " + shellQuote(a) + " " + shellQuote(b) + " --outputs --json");
  EXPECT_EQ(pump.exitCode, 0) << describe(pump);
  EXPECT_EQ(json::parse(pump.out)["values"].size(), 1u) << pump.out;
  const ShellResult trips = runScanback("trace diff " + shellQuote(a) + " " + shellQuote(b) + " --vars 'Main.t*'");
  EXPECT_EQ(trips.exitCode, 1) << describe(trips);
  EXPECT_NE(trips.out.find("Main.trips  in 30 cycles (10..39); first: A 1, B 0"), std::string::npos) << trips.out;
  const ShellResult unknown = runScanback("trace diff " + shellQuote(a) + " " + shellQuote(b) + " --vars Main.nope");
  EXPECT_EQ(unknown.exitCode, 2) << describe(unknown);
  EXPECT_NE(unknown.err.find("Main.nope"), std::string::npos) << unknown.err;
}

// A corrupt or cut-off trace on either side: a clear error naming the trace, exit 2, nothing on
// stdout and no JUnit file.
TEST(Diff, ACorruptOrCutOffTraceOnEitherSideIsAnErrorAndNothingIsWritten) {
  const fs::path dir = pairsDirectory() / "changed_branch";
  TempDir tmp;
  const std::string a = tmp.file("a.trace"), b = tmp.file("b.trace");
  recordPair(dir, a, b);
  namespace tt = scanback::trace::testing;
  const std::vector<uint8_t> bytes[2] = {tt::readBytes(a), tt::readBytes(b)};
  const std::string good[2] = {a, b};
  struct Damage {
    const char* name;
    const char* says;
  };
  for (size_t side = 0; side < 2; ++side) {
    for (const Damage& damage : {Damage{"corrupt", "corrupt"}, Damage{"cut", "cut off"}}) {
      SCOPED_TRACE(std::string(damage.name) + (side == 0 ? " A" : " B"));
      const std::string bad = tmp.file(std::string(damage.name) + (side == 0 ? "_a.trace" : "_b.trace"));
      std::vector<uint8_t> copy = bytes[side];
      if (damage.name == std::string("corrupt")) {
        copy[copy.size() / 2] ^= 0x5A;  // inside the chunk's compressed payload: its hash fails
        tt::writeBytes(bad, copy);
      } else {
        tt::writeBytes(bad, copy, copy.size() - 40);  // the trailer and part of the index gone
      }
      const std::string junit = tmp.file("diff.xml");
      const std::string first = side == 0 ? bad : good[0], second = side == 0 ? good[1] : bad;
      const ShellResult r =
          runScanback("trace diff " + shellQuote(first) + " " + shellQuote(second) + " --junit " + shellQuote(junit));
      EXPECT_EQ(r.exitCode, 2) << describe(r);
      EXPECT_TRUE(r.out.empty()) << r.out;
      EXPECT_FALSE(fs::exists(junit));
      EXPECT_NE(r.err.find(std::string("trace ") + (side == 0 ? "A" : "B") + " (" + bad + ")"), std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find(damage.says), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    }
  }
}

// A recording whose chunks come in several blocks (a block every 3 cycles, a keyframe every 16:
// continuations after each chunk's first block) gives the diff one stored in whole chunks gives, and
// reruns the same way.
TEST(Diff, ARecordingInContinuationBlocksGivesTheSameDiff) {
  const fs::path dir = pairsDirectory() / "changed_branch";
  TempDir tmp;
  const std::string a = tmp.file("a.trace"), b = tmp.file("b.trace");
  const std::string pieces = tmp.file("pieces.trace"), piecesRerun = tmp.file("pieces_b.trace");
  recordPair(dir, a, b);
  recordPair(dir, pieces, piecesRerun, nullptr, " --keyframe-every 16 --flush-cycles 3");
  std::string error;
  const std::unique_ptr<scanback::trace::TraceReader> reader = scanback::trace::TraceReader::open(pieces, error);
  ASSERT_TRUE(reader) << error;
  size_t continuations = 0, chunks = 0;
  for (const scanback::trace::BlockInfo& block : reader->blocks()) {
    if (block.kind != scanback::trace::BlockKind::Chunk) continue;
    ++chunks;
    continuations += block.continuations.size();
  }
  EXPECT_EQ(chunks, 3u);             // cycles 0..15, 16..31, 32..39
  EXPECT_GE(continuations, chunks);  // every chunk of more than 3 cycles is in several blocks

  const ShellResult whole = runScanback("trace diff " + shellQuote(a) + " " + shellQuote(b) + " --json");
  const ShellResult inPieces =
      runScanback("trace diff " + shellQuote(pieces) + " " + shellQuote(piecesRerun) + " --json");
  ASSERT_EQ(whole.exitCode, 1) << describe(whole);
  ASSERT_EQ(inPieces.exitCode, 1) << describe(inPieces);
  const json x = json::parse(whole.out), y = json::parse(inPieces.out);
  for (const char* key : {"equal", "compared", "firstDivergence", "pathsSplit", "values", "differing"})
    EXPECT_EQ(x[key], y[key]) << key;
  // Each side against the other's recording: the same cycles, statements and values.
  const ShellResult across = runScanback("trace diff " + shellQuote(a) + " " + shellQuote(pieces));
  EXPECT_EQ(across.exitCode, 0) << describe(across);
}

// Bad input is a usage error (exit 2) that says what and where: a missing trace on either side, a
// missing argument; for rerun a missing trace, a range not in the recording, a bad range, and a
// corrupt chunk inside the cycles rerun (no output left then). A trace cut off at its end (what a
// crash leaves) reruns as far as it was recorded, with a warning.
TEST(Diff, BadInputIsAUsageErrorThatSaysWhatAndWhere) {
  const fs::path dir = pairsDirectory() / "changed_branch";
  TempDir tmp;
  const std::string a = tmp.file("a.trace"), b = tmp.file("b.trace"), missing = tmp.file("missing.trace");
  recordPair(dir, a, b, nullptr, " --keyframe-every 16");
  const std::string changed = shellQuote((dir / "b.st").string());

  const ShellResult noA = runScanback("trace diff " + shellQuote(missing) + " " + shellQuote(b));
  EXPECT_EQ(noA.exitCode, 2) << describe(noA);
  EXPECT_NE(noA.err.find("trace A (" + missing + "): cannot open"), std::string::npos) << noA.err;
  const ShellResult noB = runScanback("trace diff " + shellQuote(a) + " " + shellQuote(missing) + " --json");
  EXPECT_EQ(noB.exitCode, 2) << describe(noB);
  EXPECT_NE(noB.err.find("trace B (" + missing + "): cannot open"), std::string::npos) << noB.err;
  EXPECT_TRUE(noB.out.empty()) << noB.out;
  const ShellResult oneTrace = runScanback("trace diff " + shellQuote(a));
  EXPECT_EQ(oneTrace.exitCode, 2) << describe(oneTrace);

  const std::string out = tmp.file("out.trace");
  const ShellResult rerunMissing = runScanback("rerun " + shellQuote(missing) + " " + changed);
  EXPECT_EQ(rerunMissing.exitCode, 2) << describe(rerunMissing);
  EXPECT_NE(rerunMissing.err.find(missing + ": cannot open"), std::string::npos) << rerunMissing.err;
  const ShellResult outside = runScanback("rerun " + shellQuote(a) + " " + changed + " --cycles 100..200");
  EXPECT_EQ(outside.exitCode, 2) << describe(outside);
  EXPECT_NE(outside.err.find("cycles 100..200 are not in the recording (it holds cycles 0..39)"), std::string::npos)
      << outside.err;
  const ShellResult badRange = runScanback("rerun " + shellQuote(a) + " " + changed + " --cycles 5..x");
  EXPECT_EQ(badRange.exitCode, 2) << describe(badRange);
  EXPECT_NE(badRange.err.find("--cycles: bad cycle range '5..x'"), std::string::npos) << badRange.err;

  // The second chunk's payload damaged (a keyframe every 16 cycles: cycles 16..31).
  namespace tt = scanback::trace::testing;
  std::string error;
  const std::unique_ptr<scanback::trace::TraceReader> reader = scanback::trace::TraceReader::open(a, error);
  ASSERT_TRUE(reader) << error;
  std::vector<const scanback::trace::BlockInfo*> chunks;
  for (const scanback::trace::BlockInfo& block : reader->blocks())
    if (block.kind == scanback::trace::BlockKind::Chunk) chunks.push_back(&block);
  ASSERT_EQ(chunks.size(), 3u);
  std::vector<uint8_t> bytes = tt::readBytes(a);
  const uint64_t second = chunks[1]->offset;
  bytes[second + bytes.size() / 1000 + 40] ^= 0x5A;  // past the frame header, inside the payload
  const std::string corrupt = tmp.file("corrupt.trace");
  tt::writeBytes(corrupt, bytes);
  const ShellResult broken =
      runScanback("rerun " + shellQuote(corrupt) + " " + changed + " --record " + shellQuote(out));
  EXPECT_EQ(broken.exitCode, 2) << describe(broken);
  EXPECT_NE(broken.err.find("cycle 16 of the recording cannot be read"), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find("offset " + std::to_string(second)), std::string::npos) << broken.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  // A range before the damage reruns.
  const ShellResult before = runScanback("rerun " + shellQuote(corrupt) + " " + changed + " --cycles 0..15");
  EXPECT_EQ(before.exitCode, 0) << describe(before);

  // Cut off in its last chunk, as a crash leaves a recording: rerun up to there, with a warning.
  const std::string cut = tmp.file("cut.trace");
  tt::writeBytes(cut, tt::readBytes(a), chunks[2]->offset + 20);
  const ShellResult partial = runScanback("rerun " + shellQuote(cut) + " " + changed + " --record " + shellQuote(out));
  EXPECT_EQ(partial.exitCode, 0) << describe(partial);
  EXPECT_NE(partial.err.find("warning: the recording:"), std::string::npos) << partial.err;
  EXPECT_NE(partial.err.find("(cycles 0..31)"), std::string::npos) << partial.err;
  EXPECT_TRUE(fs::exists(out));
}

// --stop-on-divergence ends the rerun at the end of the first cycle that differs from the
// recording (exit 4), and says how; a rerun from a later cycle starts from the recorded state
// there, and the diff compares the cycles both have.
TEST(Rerun, StopsAtTheFirstDivergenceAndStartsFromALaterCycle) {
  const fs::path dir = pairsDirectory() / "changed_branch";
  TempDir tmp;
  const std::string a = tmp.file("a.trace"), b = tmp.file("b.trace"), part = tmp.file("part.trace");
  recordPair(dir, a, b);
  const std::string changed = shellQuote((dir / "b.st").string());
  const ShellResult stopped = runScanback("rerun " + shellQuote(a) + " " + changed + " --stop-on-divergence");
  EXPECT_EQ(stopped.exitCode, 4) << describe(stopped);
  EXPECT_NE(stopped.err.find("first divergence from the recording: cycle 10: values differ at its end: Main.alarm "
                             "(recorded TRUE, now FALSE), Main.trips (recorded 1, now 0)"),
            std::string::npos)
      << stopped.err;
  EXPECT_NE(stopped.err.find("11 cycles in"), std::string::npos) << stopped.err;
  const ShellResult same =
      runScanback("rerun " + shellQuote(a) + " " + shellQuote((dir / "a.st").string()) + " --stop-on-divergence");
  EXPECT_EQ(same.exitCode, 0) << describe(same);

  // From cycle 15 (trips 6 recorded there), with level 85: the new limit's branch at once.
  const ShellResult later =
      runScanback("rerun " + shellQuote(a) + " " + changed + " --cycles 15..25 --record " + shellQuote(part));
  ASSERT_EQ(later.exitCode, 0) << describe(later);
  EXPECT_NE(later.err.find("start: cycle 15, from the recorded state: 4 values kept by name and type"),
            std::string::npos)
      << later.err;
  const ShellResult diff = runScanback("trace diff " + shellQuote(a) + " " + shellQuote(part) + " --json");
  EXPECT_EQ(diff.exitCode, 1) << describe(diff);
  const json report = json::parse(diff.out);
  EXPECT_EQ(
      report["compared"],
      (json{{"firstCycle", 15}, {"lastCycle", 25}, {"cycles", 11}, {"notComparedInA", 29}, {"notComparedInB", 0}}));
  EXPECT_EQ(report["firstDivergence"]["cycle"], 15);
  EXPECT_EQ(report["firstDivergence"]["kind"], "pathsSplit");
  std::string where;
  EXPECT_TRUE(holds(report["values"],
                    json::parse(R"([{"name": "Main.trips", "equal": false, "firstCycle": 15, "lastCycle": 25,
                                     "cycles": 11, "first": {"a": "6", "b": "5"}}])"),
                    "values", where))
      << where << "\n"
      << report.dump(2);
}

// The readers taking turns and every cycle re-executed (what the benchmark compares with) give the
// report two reader threads with the write index give, chunks skipped aside. With a keyframe every
// 8 cycles, the chunks in which no cycle counts a trip (level <= 80 in A, <= 90 in B) are ruled
// out for Main.trips: A's 0..7 and 32..39, B's 0..7, 8..15 and 32..39.
TEST(Diff, ReadersTakingTurnsAndEveryCycleReexecutedGiveTheSameReport) {
  const fs::path dir = pairsDirectory() / "changed_branch";
  TempDir tmp;
  const std::string a = tmp.file("a.trace"), b = tmp.file("b.trace");
  recordPair(dir, a, b, nullptr, " --keyframe-every 8");
  namespace compare = scanback::compare;
  auto diff = [&](bool parallel, bool index, compare::DiffReport& report) {
    compare::DiffOptions options;
    options.choice.vars = "Main.trips";
    options.parallelReaders = parallel;
    options.useWriteIndex = index;
    std::string error;
    EXPECT_TRUE(compare::diffTraces(a, b, options, report, error)) << error;
    json j = compare::diffToJson(report);
    j.erase("chunksSkipped");
    return j;
  };
  compare::DiffReport fast, turns, slow;
  const json expected = diff(true, true, fast);
  EXPECT_EQ(diff(false, true, turns), expected);
  EXPECT_EQ(diff(false, false, slow), expected);
  EXPECT_EQ(fast.chunksSkipped[0], 2u) << expected.dump(2);
  EXPECT_EQ(fast.chunksSkipped[1], 3u) << expected.dump(2);
  EXPECT_EQ(slow.chunksSkipped[0] + slow.chunksSkipped[1], 0u);
  EXPECT_EQ(expected["values"][0]["firstCycle"], 10);
}

}  // namespace
