// The replayer end to end through the real `scanback` command: record with `run --record`, then
// `replay --print-state` equals what `run --print-state` prints for the same cycles;
// `trace verify` and `trace why` on good and damaged traces; cut-off, corrupt and gapped traces
// through the library and the command alike.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "replayer/replayer.h"
#include "tests/support/shell.h"
#include "tests/support/trace_support.h"
#include "tests/traces/trace_test_support.h"
#include "traces/framing.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/values.h"

namespace fs = std::filesystem;
using namespace scanback;
using replay::Position;

namespace {

using test::mustCompile;
using test::plantDirectory;
using test::stFilesIn;
using trace::testing::TempDir;

// ---------------------------------------------------------------- helpers

using test::readText;

using test::shellQuote;
using CliResult = test::ShellResult;

using test::runScanback;

std::string q(const std::string& s) { return shellQuote(s); }

std::string joinQuoted(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& f : files) out += " " + q(f);
  return out;
}

std::string describe(const CliResult& r) {
  return "exit " + std::to_string(r.exitCode) + "\nstdout:\n" + r.out.substr(0, 2000) + "\nstderr:\n" + r.err;
}

// The first line where two texts differ, for readable failures of long JSON comparisons.
std::string firstDifference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(sa, la)), hb = static_cast<bool>(std::getline(sb, lb));
    if (!ha && !hb) return "equal";
    if (!ha || !hb || la != lb)
      return "line " + std::to_string(line) + ": run: " + (ha ? la : "<end>") + " | replay: " + (hb ? lb : "<end>");
  }
}

// The state JSON of a fresh run of `cycles` cycles (no stimulus), as `run --print-state` prints it.
std::string liveState(std::shared_ptr<const Program> program, uint64_t cycles) {
  Runtime rt(program);
  for (uint64_t c = 0; c < cycles; ++c)
    if (rt.runCycle() != RunStatus::CycleDone) break;
  return stateToJson(*program, rt.vm().image()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string replayedState(const replay::Replayer& r) {
  return stateToJson(r.program(), r.vm().image()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One data block of a trace, for rewriting traces with TraceWriter.
using Block = std::variant<trace::ChunkData, trace::GapData, trace::FaultData>;

struct TraceContents {
  trace::HeaderData header;
  std::vector<Block> blocks;
  std::vector<trace::BlockInfo> infos;
};

TraceContents readTrace(const std::string& path) {
  TraceContents t;
  std::string error;
  auto reader = trace::TraceReader::open(path, error);
  EXPECT_TRUE(reader) << error;
  if (!reader) return t;
  t.header = reader->header();
  for (const trace::BlockInfo& b : reader->blocks()) {
    t.infos.push_back(b);
    if (b.kind == trace::BlockKind::Chunk) {
      trace::ChunkData c;
      EXPECT_TRUE(reader->readChunk(b, c, error)) << error;
      t.blocks.emplace_back(std::move(c));
    } else if (b.kind == trace::BlockKind::Gap) {
      trace::GapData g;
      EXPECT_TRUE(reader->readGap(b, g, error)) << error;
      t.blocks.emplace_back(g);
    } else if (b.kind == trace::BlockKind::Fault) {
      trace::FaultData f;
      EXPECT_TRUE(reader->readFault(b, f, error)) << error;
      t.blocks.emplace_back(f);
    } else {
      ADD_FAILURE() << "unexpected block kind " << static_cast<int>(b.kind);
    }
  }
  return t;
}

void writeTrace(const std::string& path, const TraceContents& t) {
  std::string error;
  auto writer = trace::TraceWriter::create(path, t.header, error);
  ASSERT_TRUE(writer) << error;
  for (const Block& b : t.blocks) {
    if (const auto* c = std::get_if<trace::ChunkData>(&b)) {
      ASSERT_TRUE(writer->writeChunk(*c)) << writer->lastError();
    } else if (const auto* g = std::get_if<trace::GapData>(&b)) {
      ASSERT_TRUE(writer->writeGap(*g)) << writer->lastError();
    } else {
      ASSERT_TRUE(writer->writeFault(std::get<trace::FaultData>(b))) << writer->lastError();
    }
  }
  ASSERT_TRUE(writer->close()) << writer->lastError();
}

// A program whose state changes every cycle, with calls, for the damaged-trace tests.
const char* kCounter = R"(PROGRAM Main
VAR
  n : INT;
  sum : DINT;
  hist : ARRAY[0..7] OF INT;
END_VAR
n := n + 1;
sum := sum + n * n;
hist[n MOD 8] := n;
END_PROGRAM
)";

// Records `cycles` cycles of the ST text with `scanback run --record`, `keyframeEvery` cycles per
// chunk; returns the trace path and leaves the source at dir/name.st.
std::string recordText(const TempDir& dir, const std::string& name, const std::string& text, uint64_t cycles,
                       uint32_t keyframeEvery, const std::string& extra = "") {
  const std::string st = dir.file(name + ".st");
  std::ofstream(st) << text;
  const std::string tracePath = dir.file(name + ".trace");
  const CliResult r =
      runScanback("run --quiet " + q(st) + " --cycles " + std::to_string(cycles) + " --keyframe-every " +
                  std::to_string(keyframeEvery) + " --record " + q(tracePath) + extra);
  EXPECT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_TRUE(fs::exists(tracePath)) << describe(r);
  return tracePath;
}

// ---------------------------------------------------------------- golden programs

// One project to record and replay: a golden program (tests/golden/README.md) or the plant example.
struct Project {
  std::string name;
  std::vector<std::string> files;
  std::string runLength;  // "--cycles N" or "--for T"
  std::string inputs;     // stimulus CSV or ""
  std::string dialect;    // "--dialect X" or "" (the replay compiles in every dialect)
  int expectExit = 0;
  uint32_t keyframeEvery = 2;
};

void PrintTo(const Project& p, std::ostream* os) { *os << p.name; }

Project readDirectives(Project p) {
  std::istringstream in(readText(p.files.front()));
  std::string line, cycles = "1", forText;
  while (std::getline(in, line)) {
    if (line.rfind("// @", 0) != 0) break;
    std::istringstream words(line.substr(4));
    std::string key, rest;
    words >> key;
    std::getline(words, rest);
    rest.erase(0, rest.find_first_not_of(' '));
    while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' ')) rest.pop_back();
    if (key == "cycles")
      cycles = rest;
    else if (key == "for")
      forText = rest;
    else if (key == "inputs")
      p.inputs = (fs::path(p.files.front()).parent_path() / rest).string();
    else if (key == "expect-exit")
      p.expectExit = std::stoi(rest);
    else if (key == "dialect")
      p.dialect = " --dialect " + rest;
  }
  p.runLength = forText.empty() ? "--cycles " + cycles : "--for " + forText;
  return p;
}

std::vector<Project> projects() {
  std::vector<Project> out;
  const fs::path golden = fs::path(SCANBACK_SOURCE_DIR) / "tests" / "golden";
  for (const auto& entry : fs::directory_iterator(golden)) {
    Project p;
    if (entry.is_directory()) {
      p.name = entry.path().filename().string();
      p.files = stFilesIn(entry.path());
    } else if (entry.path().extension() == ".st") {
      p.name = entry.path().stem().string();
      p.files.push_back(entry.path().string());
    }
    if (p.files.empty()) continue;
    p = readDirectives(p);
    // Compile errors (1) and rejected stimulus files (2) stop `run` before anything is recorded.
    if (p.expectExit == 1 || p.expectExit == 2) continue;
    out.push_back(p);
  }
  std::sort(out.begin(), out.end(), [](const Project& a, const Project& b) { return a.name < b.name; });
  Project plant;
  plant.name = "examples_plant";
  const fs::path dir = plantDirectory();
  plant.files = stFilesIn(dir);
  plant.runLength = "--cycles 300";  // several chunks, alarms and stimulus changes, a few seconds in Debug
  plant.inputs = (dir / "stimulus.csv").string();
  plant.keyframeEvery = 64;
  out.push_back(plant);
  return out;
}

class ReplayEqualsRun : public ::testing::TestWithParam<Project> {};

// `trace verify` finds the trace faithful, `replay --to end --print-state` prints what the
// recording run printed, and `replay --to K --print-state` what `run --cycles K+1 --print-state`
// prints. For a program that faults, both
// the run and `--to end` show the state at the faulting statement: before it ran (the replay
// pauses there) on one side, after it faulted on the other. A statement that faults writes
// nothing before the fault in every golden program, so the two are compared as equal too.
TEST_P(ReplayEqualsRun, AtTheEndAndAfterEarlierCycles) {
  const Project& p = GetParam();
  TempDir dir;
  const std::string tracePath = dir.file("t.trace");
  const std::string inputs = p.inputs.empty() ? "" : " --inputs " + q(p.inputs);
  const CliResult recorded =
      runScanback("run --quiet --print-state" + joinQuoted(p.files) + " " + p.runLength + inputs + p.dialect +
                  " --keyframe-every " + std::to_string(p.keyframeEvery) + " --record " + q(tracePath));
  ASSERT_EQ(recorded.exitCode, p.expectExit) << describe(recorded);
  ASSERT_TRUE(fs::exists(tracePath)) << describe(recorded);

  const CliResult end = runScanback("replay " + q(tracePath) + " --to end --print-state");
  ASSERT_EQ(end.exitCode, 0) << describe(end);
  EXPECT_EQ(end.out, recorded.out) << firstDifference(recorded.out, end.out);
  EXPECT_EQ(end.err.find("diverge"), std::string::npos) << end.err;

  // Every cycle re-executes to its recorded digest, and every keyframe to its image.
  const CliResult verified = runScanback("trace verify " + q(tracePath));
  EXPECT_EQ(verified.exitCode, 0) << describe(verified);
  EXPECT_NE(verified.out.find("result              faithful"), std::string::npos) << verified.out;

  uint64_t cycles = 0;
  {
    std::string error;
    auto r = replay::Replayer::open(tracePath, {}, error);
    ASSERT_TRUE(r) << error;
    cycles = r->history().endCycle();
    EXPECT_EQ(r->history().fault().has_value(), p.expectExit == 3);
  }
  ASSERT_GT(cycles, 0u);
  // The first cycle, one in the middle and the one before the last (few: every one is two runs).
  std::vector<uint64_t> ks = {0, cycles / 2, cycles >= 2 ? cycles - 2 : 0};
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  for (uint64_t k : ks) {
    if (k + 1 == cycles) continue;  // that is the end, compared above
    SCOPED_TRACE("K = " + std::to_string(k));
    const CliResult run = runScanback("run --quiet --print-state" + joinQuoted(p.files) + " --cycles " +
                                      std::to_string(k + 1) + inputs + p.dialect);
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    const CliResult replayed = runScanback("replay " + q(tracePath) + " --to " + std::to_string(k) + " --print-state");
    ASSERT_EQ(replayed.exitCode, 0) << describe(replayed);
    EXPECT_EQ(replayed.out, run.out) << firstDifference(run.out, replayed.out);
  }

  // The summary at the end names the faulting statement for a trace that ends in a fault.
  const CliResult summary = runScanback("replay " + q(tracePath));
  ASSERT_EQ(summary.exitCode, 0) << describe(summary);
  EXPECT_NE(summary.out.find("position"), std::string::npos) << summary.out;
  if (p.expectExit == 3) {
    EXPECT_NE(summary.out.find("fault "), std::string::npos) << summary.out;
    EXPECT_NE(summary.out.find("statement"), std::string::npos) << summary.out;
  } else {
    EXPECT_NE(summary.out.find("end of cycle " + std::to_string(cycles - 1)), std::string::npos) << summary.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Projects, ReplayEqualsRun, ::testing::ValuesIn(projects()),
                         [](const ::testing::TestParamInfo<Project>& testInfo) { return testInfo.param.name; });

// ---------------------------------------------------------------- replay: positions and summary

const char* kWhy = R"(FUNCTION_BLOCK Acc
VAR_INPUT d : INT; END_VAR
VAR total : INT; END_VAR
total := total + d;
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  n : INT;
  x : INT;
  b AT %IX0.1 : BOOL;
  acc : Acc;
END_VAR
n := n + 1;
IF n MOD 3 = 0 THEN
  x := x + 10;
END_IF
IF n = 4 THEN
  x := x;
END_IF
acc(d := 1);
END_PROGRAM
)";
// Source lines of kWhy's statements.
constexpr int kLineTotal = 4, kLineN = 14, kLineX = 16, kLineAccCall = 21;

// Statement boundaries of cycle c (n = c + 1 after step 0):
//   0 n := n + 1;  1 IF n MOD 3 = 0  [2 x := x + 10]  IF n = 4  [x := x]  acc(d := 1)  total := total + d
// so x changes at (c, 3) when n MOD 3 = 0, and acc.total at the cycle's end.
const char* kWhyStimulus =
    "cycle,Main.x,%IX0.1\n"
    "0,0,0\n"
    "4,,1\n"
    "6,100,\n"
    "7,,0\n";

struct WhyTrace {
  TempDir dir;
  std::string trace, source;
};

// 10 cycles, 4 per chunk: chunks hold cycles 0-3, 4-7 and 8-9.
// Recorded once for the tests that read it; removed at exit with its directory.
const WhyTrace& whyTrace() {
  static std::unique_ptr<WhyTrace> t = [] {
    auto w = std::make_unique<WhyTrace>();
    std::ofstream(w->dir.file("why.csv")) << kWhyStimulus;
    w->trace = recordText(w->dir, "why", kWhy, 10, 4, " --inputs " + q(w->dir.file("why.csv")));
    w->source = w->dir.file("why.st");
    return w;
  }();
  return *t;
}

TEST(ReplayCli, SummaryShowsPositionStatementAndCallStack) {
  const WhyTrace& w = whyTrace();
  // Cycle 0, step 4: inside Acc, called from Main's line 21.
  CliResult r = runScanback("replay " + q(w.trace) + " --to 0:4");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.out.find("cycle 0, step 4 of 5 (0:4)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("task       Main"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time       T#0s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("statement  " + w.source + ":" + std::to_string(kLineTotal) + ":1  total := total + d;"),
            std::string::npos)
      << r.out;
  const size_t inner = r.out.find("#0   Main.acc (Acc)"), outer = r.out.find("#1   Main ");
  ASSERT_NE(inner, std::string::npos) << r.out;
  ASSERT_NE(outer, std::string::npos) << r.out;
  EXPECT_LT(inner, outer);
  EXPECT_NE(r.out.find(w.source + ":" + std::to_string(kLineAccCall) + ":1", outer), std::string::npos) << r.out;

  // The end of a cycle: no statement, no frames; the virtual time of cycle 3 is 30 ms.
  r = runScanback("replay " + q(w.trace) + " --to 3");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.out.find("end of cycle 3 (after its 6 steps)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time       T#30ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("call stack empty"), std::string::npos) << r.out;

  r = runScanback("replay " + q(w.trace) + " --to 5:0");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.out.find(w.source + ":" + std::to_string(kLineN) + ":1  n := n + 1;"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(ReplayCli, BadPositionsAreUsageErrors) {
  const WhyTrace& w = whyTrace();
  for (const char* to : {"10", "99:0", "0:6", "x", "1:", ":3", "-1", "end:2"}) {
    SCOPED_TRACE(to);
    const CliResult r = runScanback("replay " + q(w.trace) + " --to " + q(to) + " --print-state");
    EXPECT_EQ(r.exitCode, 2) << describe(r);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("scanback: "), std::string::npos) << r.err;
  }
  CliResult r = runScanback("replay " + q(w.trace) + " --to 10");
  EXPECT_NE(r.err.find("cycle 10 is after the end of the recording (last cycle 9)"), std::string::npos) << r.err;
  r = runScanback("replay " + q(w.trace) + " --to 0:6");
  EXPECT_NE(r.err.find("cycle 0 has 5 steps"), std::string::npos) << r.err;
  r = runScanback("replay " + q(w.trace) + " --to x");
  EXPECT_NE(r.err.find("--to x: expected CYCLE, CYCLE:STEP or end"), std::string::npos) << r.err;
  r = runScanback("replay " + q(w.trace + ".missing"));
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_NE(r.err.find(w.trace + ".missing"), std::string::npos) << r.err;
  // Every position of a cycle, its end included, is reachable; the one after it is not.
  r = runScanback("replay " + q(w.trace) + " --to 0:5 --print-state");
  EXPECT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_EQ(r.out, runScanback("replay " + q(w.trace) + " --to 0 --print-state").out);
}

// A dialect is named in any case; an unknown one is a usage error that lists the three (not
// CLI11's rendering of the map, whose values have no text).
TEST(ReplayCli, ADialectIsNamedInAnyCaseAndAnUnknownOneIsAUsageError) {
  const std::string program =
      q((fs::path(SCANBACK_SOURCE_DIR) / "tests" / "golden" / "cerr_ref_arithmetic_codesys.st").string());
  CliResult r = runScanback("check --dialect RUSTY " + program);
  EXPECT_EQ(r.exitCode, 0) << describe(r);
  r = runScanback("check --dialect codesys " + program);
  EXPECT_EQ(r.exitCode, 1) << describe(r);  // REF_TO arithmetic is ruSTy's only
  r = runScanback("check --dialect siemens " + program);
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_NE(r.err.find("unknown dialect 'siemens': codesys, iec or rusty"), std::string::npos) << r.err;
  r = runScanback("check --help");
  EXPECT_NE(r.out.find("--dialect codesys|iec|rusty"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------- trace why

// Parses the change lines of `trace why`: "  POSITION  LOCATION  OLD -> NEW[    TEXT]".
struct WhyLine {
  std::string position, location, before, after;
};

std::vector<WhyLine> whyLines(const std::string& out) {
  std::vector<WhyLine> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  ", 0) != 0) continue;
    std::istringstream words(line);
    WhyLine w;
    std::string location, arrow;
    words >> w.position;
    // "scan inputs" is two words.
    words >> w.location;
    if (w.location == "scan") {
      words >> location;
      w.location += " " + location;
    }
    words >> w.before >> arrow >> w.after;
    EXPECT_EQ(arrow, "->") << line;
    lines.push_back(w);
  }
  return lines;
}

TEST(TraceWhy, ChangesOfAVariableWithPositionsStatementsAndValues) {
  const WhyTrace& w = whyTrace();
  const std::string xLine = w.source + ":" + std::to_string(kLineX) + ":3";
  CliResult r = runScanback("trace why " + q(w.trace) + " Main.x");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.out.find("Main.x = 110 at 9:5 (the end of the recording)"), std::string::npos) << r.out;
  std::vector<WhyLine> lines = whyLines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  // x := x + 10 in cycles 2, 5 and 8 (n = 3, 6, 9), the stimulus's 100 at the start of cycle 6;
  // the x := x of cycle 3 writes the same value and is no change.
  EXPECT_EQ(lines[0].position, "8:3");
  EXPECT_EQ(lines[0].location, xLine);
  EXPECT_EQ(lines[0].before, "100");
  EXPECT_EQ(lines[0].after, "110");
  EXPECT_EQ(lines[1].position, "6:0");
  EXPECT_EQ(lines[1].location, "scan inputs");
  EXPECT_EQ(lines[1].before, "20");
  EXPECT_EQ(lines[1].after, "100");
  EXPECT_EQ(lines[2].position, "5:3");
  EXPECT_EQ(lines[2].location, xLine);
  EXPECT_EQ(lines[2].before, "10");
  EXPECT_EQ(lines[2].after, "20");
  EXPECT_EQ(lines[3].position, "2:3");
  EXPECT_EQ(lines[3].location, xLine);
  EXPECT_EQ(lines[3].before, "0");
  EXPECT_EQ(lines[3].after, "10");
  EXPECT_NE(r.out.find("x := x + 10;"), std::string::npos) << r.out;

  // --count, and --at: a change at the position itself is part of the value there.
  r = runScanback("trace why " + q(w.trace) + " Main.x --count 2");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  lines = whyLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[1].position, "6:0");
  r = runScanback("trace why " + q(w.trace) + " Main.x --at 5:3");
  lines = whyLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].position, "5:3");
  EXPECT_NE(r.out.find("Main.x = 20 at 5:3\n"), std::string::npos) << r.out;
  r = runScanback("trace why " + q(w.trace) + " Main.x --at 5:2");
  lines = whyLines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_EQ(lines[0].position, "2:3");
  r = runScanback("trace why " + q(w.trace) + " Main.x --at 6");
  lines = whyLines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0].position, "6:0");
  r = runScanback("trace why " + q(w.trace) + " Main.x --at 2:2");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_TRUE(whyLines(r.out).empty()) << r.out;
  EXPECT_NE(r.out.find("no change recorded"), std::string::npos) << r.out;
}

// Issue 27: a value a cycle changes and restores is changed twice in that cycle, wherever the
// chunk's write index or a comparison at cycle ends would not see it (every cycle ends with x = 0).
TEST(TraceWhy, AWriteUndoneWithinItsCycleIsAChange) {
  TempDir dir;
  const std::string trace = recordText(dir, "blind", R"(PROGRAM P
VAR
  x : INT;
  n : INT;
END_VAR
n := n + 1;
x := 5;
x := 0;
END_PROGRAM
)",
                                       20, 4);
  const std::string source = dir.file("blind.st");
  const CliResult r = runScanback("trace why " + q(trace) + " P.x --at 5:2");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.out.find("P.x = 5 at 5:2\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no change recorded"), std::string::npos) << r.out;
  const std::vector<WhyLine> lines = whyLines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  // The boundary after x := 5 (line 7) is 5:2; the cycle before ended with x := 0 (line 8).
  EXPECT_EQ(lines[0].position, "5:2");
  EXPECT_EQ(lines[0].location, source + ":7:1");
  EXPECT_EQ(lines[0].before, "0");
  EXPECT_EQ(lines[0].after, "5");
  EXPECT_EQ(lines[1].position, "4:3");
  EXPECT_EQ(lines[1].location, source + ":8:1");
  EXPECT_EQ(lines[1].before, "5");
  EXPECT_EQ(lines[1].after, "0");
  EXPECT_EQ(lines[2].position, "4:2");
  // At the end of the recording too, 16 cycles and three chunks later.
  const CliResult atEnd = runScanback("trace why " + q(trace) + " P.x --count 2");
  ASSERT_EQ(atEnd.exitCode, 0) << describe(atEnd);
  const std::vector<WhyLine> last = whyLines(atEnd.out);
  ASSERT_EQ(last.size(), 2u) << atEnd.out;
  EXPECT_EQ(last[0].position, "19:3");
  EXPECT_EQ(last[1].position, "19:2");
}

// Issue 27: `trace hits` answers for the recorded sources; when FILE on disk has changed since,
// one line on stderr says so and how to see the recorded version; a line past the recorded file's
// end is an error that says so.
TEST(TraceHits, AnEditedSourceIsNamedAndTheRecordedVersionAnswers) {
  TempDir dir;
  const std::string trace = recordText(dir, "edited", R"(PROGRAM P
VAR
  x : INT;
  n : INT;
END_VAR
n := n + 1;
IF n MOD 2 = 0 THEN
  x := x + 1;
END_IF
END_PROGRAM
)",
                                       6, 4);
  const std::string source = dir.file("edited.st");
  const std::string recorded = readText(source);
  // As recorded: no notice.
  CliResult r = runScanback("trace hits " + q(trace) + " " + q(source + ":8"));
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_EQ(r.err, "") << r.err;
  EXPECT_NE(r.out.find(":8 (statement 2): executed 3 times in 3 of 6 cycles"), std::string::npos) << r.out;
  const std::string answer = r.out;

  // Two lines added at the top: line 8 of the recorded version is line 10 on disk now.
  std::ofstream(source) << "// edited\n// since\n" << recorded;
  r = runScanback("trace hits " + q(trace) + " " + q(source + ":8"));
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_EQ(r.out, answer);  // still the recorded version's line 8
  EXPECT_NE(r.err.find("scanback: warning: " + source + " on disk differs from the version recorded in the trace"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("line numbers are the recorded version's"), std::string::npos) << r.err;
  const std::string how = "scanback trace dump " + trace + " --source ";
  ASSERT_NE(r.err.find(how), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // What it names shows the recorded text.
  const CliResult shown = runScanback("trace dump " + q(trace) + " --source edited.st");
  ASSERT_EQ(shown.exitCode, 0) << describe(shown);
  EXPECT_EQ(shown.out, recorded);

  // Line 11 exists on disk, not in the recording's version (10 lines).
  r = runScanback("trace hits " + q(trace) + " " + q(source + ":11"));
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_NE(r.err.find("on disk differs from the version recorded"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 11 is past the end of " + source + " as recorded (it has 10 lines)"), std::string::npos)
      << r.err;
  const CliResult unknown = runScanback("trace dump " + q(trace) + " --source other.st");
  EXPECT_EQ(unknown.exitCode, 2) << describe(unknown);
  EXPECT_NE(unknown.err.find("no file 'other.st'"), std::string::npos) << unknown.err;
}

TEST(TraceWhy, BitsAddressesAndFunctionBlockMembers) {
  const WhyTrace& w = whyTrace();
  // An input bit set by the stimulus at cycle 4 (the first cycle of the second chunk: the change is
  // against its keyframe) and cleared at cycle 7; the address and the variable are one range.
  for (const char* name : {"%IX0.1", "Main.b"}) {
    SCOPED_TRACE(name);
    const CliResult r = runScanback("trace why " + q(w.trace) + " " + q(name));
    ASSERT_EQ(r.exitCode, 0) << describe(r);
    const std::vector<WhyLine> lines = whyLines(r.out);
    ASSERT_EQ(lines.size(), 2u) << r.out;
    EXPECT_EQ(lines[0].position, "7:0");
    EXPECT_EQ(lines[0].location, "scan inputs");
    EXPECT_EQ(lines[0].before, "true");
    EXPECT_EQ(lines[0].after, "false");
    EXPECT_EQ(lines[1].position, "4:0");
    EXPECT_EQ(lines[1].before, "false");
    EXPECT_EQ(lines[1].after, "true");
  }
  // acc.total is written by the FB body, the last statement of each cycle: the change is at the
  // cycle's end (6 steps in cycles where an IF body runs, 5 otherwise).
  const CliResult r = runScanback("trace why " + q(w.trace) + " Main.acc.total --count 3");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  const std::vector<WhyLine> lines = whyLines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  const std::string totalLine = w.source + ":" + std::to_string(kLineTotal) + ":1";
  EXPECT_EQ(lines[0].position, "9:5");  // cycle 9 (n = 10): no x change
  EXPECT_EQ(lines[0].before, "9");
  EXPECT_EQ(lines[0].after, "10");
  EXPECT_EQ(lines[1].position, "8:6");  // cycle 8 (n = 9): x changes
  EXPECT_EQ(lines[1].before, "8");
  EXPECT_EQ(lines[1].after, "9");
  EXPECT_EQ(lines[2].position, "7:5");
  for (const WhyLine& l : lines) EXPECT_EQ(l.location, totalLine);
}

TEST(TraceWhy, UnknownVariablesAndBadOptionsAreUsageErrors) {
  const WhyTrace& w = whyTrace();
  CliResult r = runScanback("trace why " + q(w.trace) + " Main.nope");
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_NE(r.err.find("unknown variable Main.nope"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = runScanback("trace why " + q(w.trace) + " %QX9.9");
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_NE(r.err.find("%QX9.9"), std::string::npos) << r.err;
  r = runScanback("trace why " + q(w.trace) + " Main.x --at 42");
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_NE(r.err.find("cycle 42"), std::string::npos) << r.err;
  r = runScanback("trace why " + q(w.trace) + " Main.x --count 0");
  EXPECT_EQ(r.exitCode, 2) << describe(r);
}

// ---------------------------------------------------------------- trace verify

TEST(TraceVerify, AGoodTraceIsFaithful) {
  TempDir dir;
  const std::string tracePath = recordText(dir, "good", kCounter, 20, 5);
  const CliResult r = runScanback("trace verify " + q(tracePath));
  EXPECT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.out.find("20 checked of the 20 recorded in cycles 0..19, in 4 chunks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result              faithful: every cycle replays as recorded"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;  // no progress output when stderr is no terminal
}

TEST(TraceVerify, AnAlteredImageHashIsADivergenceNamingItsCycle) {
  TempDir dir;
  const std::string good = recordText(dir, "good", kCounter, 20, 5);
  TraceContents t = readTrace(good);
  ASSERT_EQ(t.blocks.size(), 4u);
  std::get<trace::ChunkData>(t.blocks[1]).imageHashes[2] ^= 0x5a5a5a5au;  // cycle 7
  const std::string bad = dir.file("bad.trace");
  writeTrace(bad, t);

  const CliResult r = runScanback("trace verify " + q(bad));
  EXPECT_EQ(r.exitCode, 4) << describe(r);
  EXPECT_NE(r.out.find("divergences         1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cycle 7 (at 7:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("image hash: recorded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DIVERGES"), std::string::npos) << r.out;

  // The library says the same.
  std::string error;
  auto replayer = replay::Replayer::open(bad, {}, error);
  ASSERT_TRUE(replayer) << error;
  const std::vector<replay::Divergence> found = replayer->verify(nullptr, error);
  EXPECT_TRUE(error.empty()) << error;
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].position.cycle, 7u);

  // Replaying over the altered cycle warns but still shows the state.
  const CliResult replayed = runScanback("replay " + q(bad) + " --to 9 --print-state");
  EXPECT_EQ(replayed.exitCode, 0) << describe(replayed);
  EXPECT_NE(replayed.err.find("diverges from the recording at cycle 7"), std::string::npos) << replayed.err;
}

TEST(TraceVerify, AnAlteredKeyframeIsAKeyframeMismatch) {
  TempDir dir;
  const std::string good = recordText(dir, "good", kCounter, 20, 5);
  TraceContents t = readTrace(good);
  ASSERT_EQ(t.blocks.size(), 4u);
  auto program = mustCompile(kCounter, "x.st");
  std::string error;
  const auto n = findVariable(*program, "Main.n", error);
  ASSERT_TRUE(n) << error;
  std::get<trace::ChunkData>(t.blocks[2]).keyframe[n->offset] ^= 0x40;  // before cycle 10
  const std::string bad = dir.file("bad.trace");
  writeTrace(bad, t);
  const CliResult r = runScanback("trace verify " + q(bad));
  EXPECT_EQ(r.exitCode, 4) << describe(r);
  // Chunk 2's cycles replay from the altered image, so they diverge too and so does the end of the
  // chunk from chunk 3's keyframe.
  EXPECT_NE(r.out.find("keyframe mismatches 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the keyframe of cycle 10 differs from the replayed image"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cycle 10 (at 10:3): image hash"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the keyframe of cycle 15 differs"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------- damaged traces

// 20 cycles of kCounter in 4 chunks of 5.
struct DamageFixture : ::testing::Test {
  void SetUp() override {
    program = mustCompile(kCounter, dir.file("counter.st"));
    good = recordText(dir, "counter", kCounter, 20, 5);
    contents = readTrace(good);
    ASSERT_EQ(contents.infos.size(), 4u);
  }
  TempDir dir;
  std::shared_ptr<const Program> program;
  std::string good;
  TraceContents contents;
};

TEST_F(DamageFixture, ACutOffTraceReplaysUpToItsLastCompleteChunk) {
  // Cut in the middle of the last chunk (the index and trailer after it are gone too).
  std::vector<uint8_t> bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const trace::BlockInfo& last = contents.infos.back();
  const size_t cut = static_cast<size_t>(last.offset + trace::kFrameHeaderBytes + last.storedSize / 2);
  ASSERT_LT(cut, bytes.size());
  const std::string cutPath = dir.file("cut.trace");
  std::ofstream(cutPath, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(cut));

  std::string error;
  auto r = replay::Replayer::open(cutPath, {}, error);
  ASSERT_TRUE(r) << error;
  EXPECT_FALSE(r->history().warnings().empty());
  EXPECT_EQ(r->history().endCycle(), 15u);
  ASSERT_TRUE(r->seek({14, 2}, error)) << error;
  ASSERT_TRUE(r->seek({14, 3}, error)) << error;  // the end of cycle 14 (3 statements per cycle)
  EXPECT_EQ(replayedState(*r), liveState(program, 15));
  EXPECT_FALSE(r->seek({15, 0}, error));
  EXPECT_NE(error.find("cycle 15 is after the end of the recording (last cycle 14)"), std::string::npos) << error;

  const CliResult end = runScanback("replay " + q(cutPath) + " --print-state");
  EXPECT_EQ(end.exitCode, 0) << describe(end);
  EXPECT_EQ(end.out, liveState(program, 15) + "\n");
  EXPECT_NE(end.err.find("warning"), std::string::npos) << end.err;
  const CliResult run = runScanback("run --quiet --print-state " + q(dir.file("counter.st")) + " --cycles 15");
  EXPECT_EQ(end.out, run.out);
  const CliResult verify = runScanback("trace verify " + q(cutPath));
  // Every complete chunk checks out, and the result says the trace was not closed.
  EXPECT_EQ(verify.exitCode, 0) << describe(verify);
  EXPECT_NE(verify.out.find("15 checked of the 15 recorded in cycles 0..14, in 3 chunks"), std::string::npos)
      << verify.out;
  EXPECT_NE(verify.out.find("faithful as far as it goes: the 15 cycles checked replay as recorded; the trace was "
                            "not closed"),
            std::string::npos)
      << verify.out;
}

TEST_F(DamageFixture, ACorruptMiddleChunkFailsNamingItsOffsetWhileEarlierPositionsReplay) {
  std::vector<uint8_t> bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const trace::BlockInfo& middle = contents.infos[1];  // cycles 5..9
  bytes[static_cast<size_t>(middle.offset + trace::kFrameHeaderBytes + middle.storedSize / 2)] ^= 0xff;
  const std::string badPath = dir.file("corrupt.trace");
  std::ofstream(badPath, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const std::string offset = "byte offset " + std::to_string(middle.offset);

  std::string error;
  auto r = replay::Replayer::open(badPath, {}, error);
  ASSERT_TRUE(r) << error;
  ASSERT_TRUE(r->seek({4, 3}, error)) << error;  // the end of cycle 4, before the corrupt chunk
  EXPECT_EQ(replayedState(*r), liveState(program, 5));
  EXPECT_FALSE(r->seek({7, 1}, error));
  EXPECT_NE(error.find(offset), std::string::npos) << error;
  // The chunks after it start with their own keyframes (the index lists them): they replay.
  error.clear();
  ASSERT_TRUE(r->seek({12, 3}, error)) << error;
  EXPECT_EQ(replayedState(*r), liveState(program, 13));

  CliResult c = runScanback("replay " + q(badPath) + " --to 7:1 --print-state");
  EXPECT_EQ(c.exitCode, 2) << describe(c);
  EXPECT_TRUE(c.out.empty()) << c.out;
  EXPECT_NE(c.err.find(offset), std::string::npos) << c.err;
  c = runScanback("replay " + q(badPath) + " --to 3 --print-state");
  EXPECT_EQ(c.exitCode, 0) << describe(c);
  EXPECT_EQ(c.out, liveState(program, 4) + "\n");
  c = runScanback("trace why " + q(badPath) + " Main.n --at 8");
  EXPECT_EQ(c.exitCode, 2) << describe(c);
  EXPECT_NE(c.err.find(offset), std::string::npos) << c.err;
  // verify cannot get past it: not faithful, not a divergence either, but a damaged trace.
  c = runScanback("trace verify " + q(badPath));
  EXPECT_EQ(c.exitCode, 5) << describe(c);
  EXPECT_NE(c.err.find(offset), std::string::npos) << c.err;
  EXPECT_NE(c.out.find("DAMAGED: not verified to the end; the 5 cycles checked replay as recorded"), std::string::npos)
      << c.out;

  // Without its index (the end cut off as by a crash) the reader scans block by block and stops
  // at the corrupt chunk: what follows it is unreachable, what precedes it replays.
  const std::string scannedPath = dir.file("corrupt_scanned.trace");
  std::ofstream(scannedPath, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size() - 8));
  c = runScanback("replay " + q(scannedPath) + " --to 12");
  EXPECT_EQ(c.exitCode, 2) << describe(c);
  EXPECT_NE(c.err.find("cycle 12 is unreachable: the trace is corrupt at " + offset), std::string::npos) << c.err;
  c = runScanback("replay " + q(scannedPath) + " --print-state");
  EXPECT_EQ(c.exitCode, 0) << describe(c);
  EXPECT_EQ(c.out, liveState(program, 5) + "\n");
  EXPECT_NE(c.err.find("warning"), std::string::npos) << c.err;
  // verify checks the 5 cycles before it and says that the rest could not be read.
  c = runScanback("trace verify " + q(scannedPath));
  EXPECT_EQ(c.exitCode, 5) << describe(c);
  EXPECT_NE(c.out.find("DAMAGED: what follows the corrupt block is unreadable; the 5 cycles checked replay as "
                       "recorded"),
            std::string::npos)
      << c.out;
}

// Issue 27: `trace info` said "damage none" for a corrupt index block that `trace verify` called
// DAMAGED. Both name the index block, its offset and what the reader fell back to (a scan, which
// finds every block before it); the trace replays whole.
TEST_F(DamageFixture, ACorruptIndexBlockIsDamageForInfoAndVerifyAlike) {
  std::vector<uint8_t> bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string error;
  const auto reader = trace::TraceReader::open(good, error);
  ASSERT_TRUE(reader) << error;
  ASSERT_TRUE(reader->indexBlock());
  const trace::BlockInfo index = *reader->indexBlock();
  bytes[static_cast<size_t>(index.offset + trace::kFrameHeaderBytes + index.storedSize / 2)] ^= 0xff;
  const std::string badPath = dir.file("corrupt_index.trace");
  std::ofstream(badPath, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const std::string named = "the index block at offset " + std::to_string(index.offset) + " is unusable";

  const CliResult info = runScanback("trace info " + q(badPath));
  EXPECT_EQ(info.exitCode, 0) << describe(info);
  EXPECT_EQ(info.out.find("damage            none"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("damage            " + named), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("the blocks were found by scanning the file, every one before it"), std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("cycles            20 recorded"), std::string::npos) << info.out;
  const CliResult json = runScanback("trace info --json " + q(badPath));
  ASSERT_EQ(json.exitCode, 0) << describe(json);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["corruptBlock"]["offset"], index.offset);
  EXPECT_EQ(j["corruptBlock"]["index"], true);
  EXPECT_EQ(j["unusableIndex"]["offset"], index.offset);
  EXPECT_EQ(j["unusableIndex"]["fallback"], "scan");

  const CliResult verify = runScanback("trace verify " + q(badPath));
  EXPECT_EQ(verify.exitCode, 5) << describe(verify);
  EXPECT_NE(verify.out.find("damage              " + named), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("DAMAGED: the index block is corrupt (the blocks were found by scanning); the 20 cycles "
                            "checked replay as recorded"),
            std::string::npos)
      << verify.out;

  // The undamaged trace: none for both.
  EXPECT_NE(runScanback("trace info " + q(good)).out.find("damage            none"), std::string::npos);
  const CliResult clean = runScanback("trace verify " + q(good));
  EXPECT_EQ(clean.exitCode, 0) << describe(clean);
  EXPECT_EQ(clean.out.find("damage"), std::string::npos) << clean.out;
}

// The issue's reproducer: chunk 1000..1999 cut out of a 4000-cycle trace (its index and trailer,
// which no longer match, with it). info, verify and replay all name the missing cycles.
TEST(TraceDamage, AMissingMiddleChunkIsReportedByInfoVerifyAndReplay) {
  TempDir dir;
  const std::string good = recordText(dir, "counter", kCounter, 4000, 1000);
  const std::vector<uint8_t> bytes = trace::testing::readBytes(good);
  std::string error;
  auto reader = trace::TraceReader::open(good, error);
  ASSERT_TRUE(reader) << error;
  ASSERT_EQ(reader->blocks().size(), 4u);
  const trace::BlockInfo& cut = reader->blocks()[1];
  ASSERT_EQ(cut.firstCycle, 1000u);
  const size_t from = static_cast<size_t>(cut.offset);
  const size_t to = static_cast<size_t>(cut.offset + trace::kFrameHeaderBytes + cut.storedSize);
  std::vector<uint8_t> damaged(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(from));
  damaged.insert(damaged.end(), bytes.begin() + static_cast<ptrdiff_t>(to),
                 bytes.begin() + static_cast<ptrdiff_t>(reader->indexBlock()->offset));
  const std::string path = dir.file("cut.trace");
  trace::testing::writeBytes(path, damaged);
  const std::string missing = "cycles 1000..1999 are missing before offset " + std::to_string(from);

  CliResult c = runScanback("trace info " + q(path));
  EXPECT_EQ(c.exitCode, 0) << describe(c);
  EXPECT_NE(c.out.find("3000 recorded (cycles 0..3999, 1000 of them missing)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("damage            1 part missing or repeated, 1000 cycles lost"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find(missing), std::string::npos) << c.out;

  c = runScanback("trace verify " + q(path));
  EXPECT_EQ(c.exitCode, 5) << describe(c);
  EXPECT_EQ(c.out.find("faithful"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("damage              " + missing), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("DAMAGED: 1000 cycles are missing; the 3000 cycles checked replay as recorded"),
            std::string::npos)
      << c.out;

  c = runScanback("replay " + q(path) + " --to 1500");
  EXPECT_EQ(c.exitCode, 2) << describe(c);
  EXPECT_NE(c.err.find("cycle 1500 is in a damaged part of the trace: " + missing), std::string::npos) << c.err;
  EXPECT_EQ(c.err.find("after the end"), std::string::npos) << c.err;
  // The cycles on both sides of the hole replay.
  c = runScanback("replay " + q(path) + " --to 2500 --print-state");
  EXPECT_EQ(c.exitCode, 0) << describe(c);
  const CliResult run = runScanback("run --quiet --print-state " + q(dir.file("counter.st")) + " --cycles 2501");
  EXPECT_EQ(c.out, run.out);
}

// A trace cut so that no chunk remains: nothing was checked, and verify says so.
TEST(TraceDamage, ATraceWithoutCyclesIsNotFaithful) {
  TempDir dir;
  const std::string good = recordText(dir, "counter", kCounter, 20, 5);
  std::string error;
  auto reader = trace::TraceReader::open(good, error);
  ASSERT_TRUE(reader) << error;
  const trace::BlockInfo& header = reader->headerBlock();
  const std::string path = dir.file("header-only.trace");
  trace::testing::writeBytes(path, trace::testing::readBytes(good),
                             static_cast<size_t>(header.offset + trace::kFrameHeaderBytes + header.storedSize + 20));
  const CliResult c = runScanback("trace verify " + q(path));
  EXPECT_EQ(c.exitCode, 5) << describe(c);
  EXPECT_NE(c.out.find("cycles              none recorded"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("NOTHING CHECKED: the trace holds no complete chunk"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("faithful"), std::string::npos) << c.out;
}

// `run --record` replaces an older trace, never any other file (nor writes through its .partial).
TEST(RunRecord, NeverOverwritesAFileThatIsNoTrace) {
  TempDir dir;
  const std::string st = dir.file("counter.st");
  std::ofstream(st) << kCounter;
  const std::string notes = dir.file("notes.txt");
  std::ofstream(notes) << "my notes";
  CliResult r = runScanback("run --quiet " + q(st) + " --cycles 5 --record " + q(notes));
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_EQ(r.err, "scanback: cannot record to " + notes +
                       ": the file exists and is not a scanback trace: a recording only ever replaces a trace\n");
  EXPECT_EQ(readText(notes), "my notes");
  EXPECT_FALSE(fs::exists(notes + ".partial"));
  // A trace is replaced.
  const std::string trace = dir.file("run.trace");
  r = runScanback("run --quiet " + q(st) + " --cycles 5 --record " + q(trace));
  EXPECT_EQ(r.exitCode, 0) << describe(r);
  r = runScanback("run --quiet " + q(st) + " --cycles 7 --record " + q(trace));
  EXPECT_EQ(r.exitCode, 0) << describe(r);
  r = runScanback("trace info " + q(trace));
  EXPECT_NE(r.out.find("7 recorded"), std::string::npos) << r.out;
  // Errors name the trace once.
  r = runScanback("trace info " + q(dir.file("missing.trace")));
  EXPECT_EQ(r.err, "scanback: " + dir.file("missing.trace") + ": cannot open: No such file or directory\n");
  r = runScanback("replay " + q(notes));
  EXPECT_EQ(r.err, "scanback: " + notes + ": not a scanback trace (no SCANBACK magic at the start)\n");
}

// Hundreds of divergences: the first few are listed, with the total.
TEST(TraceVerify, ManyDivergencesShowTheFirstFewAndTheTotal) {
  TempDir dir;
  const std::string good = recordText(dir, "good", kCounter, 40, 40);
  TraceContents t = readTrace(good);
  ASSERT_EQ(t.blocks.size(), 1u);
  for (uint32_t& hash : std::get<trace::ChunkData>(t.blocks[0]).imageHashes) hash ^= 1;
  const std::string bad = dir.file("bad.trace");
  writeTrace(bad, t);
  const CliResult r = runScanback("trace verify " + q(bad));
  EXPECT_EQ(r.exitCode, 4) << describe(r);
  EXPECT_NE(r.out.find("divergences         40"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  cycle 9 (at 9:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("  cycle 10 (at 10:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  ... and 30 more (the first 10 of 40 are shown)"), std::string::npos) << r.out;
}

TEST_F(DamageFixture, AGapFailsToSeekIntoAndTheCycleAfterItReplaysFromItsKeyframe) {
  // Chunk 2 (cycles 10..14) dropped and marked as a gap, as the recorder does when it falls behind.
  TraceContents gapped = contents;
  gapped.blocks[2] = trace::GapData{10, 5};
  const std::string gapPath = dir.file("gap.trace");
  writeTrace(gapPath, gapped);

  std::string error;
  auto r = replay::Replayer::open(gapPath, {}, error);
  ASSERT_TRUE(r) << error;
  EXPECT_FALSE(r->seek({12, 0}, error));
  EXPECT_NE(error.find("cycle 12 is in a gap of the recording: cycles 10..14 were dropped"), std::string::npos)
      << error;
  error.clear();
  ASSERT_TRUE(r->seek({15, 0}, error)) << error;
  ASSERT_TRUE(r->seek({15, 3}, error)) << error;
  EXPECT_EQ(replayedState(*r), liveState(program, 16));
  ASSERT_TRUE(r->seek({9, 3}, error)) << error;
  EXPECT_EQ(replayedState(*r), liveState(program, 10));

  CliResult c = runScanback("replay " + q(gapPath) + " --to 12");
  EXPECT_EQ(c.exitCode, 2) << describe(c);
  EXPECT_NE(c.err.find("gap"), std::string::npos) << c.err;
  c = runScanback("replay " + q(gapPath) + " --to 15 --print-state");
  EXPECT_EQ(c.exitCode, 0) << describe(c);
  const CliResult run = runScanback("run --quiet --print-state " + q(dir.file("counter.st")) + " --cycles 16");
  EXPECT_EQ(c.out, run.out);
  c = runScanback("trace verify " + q(gapPath));
  EXPECT_EQ(c.exitCode, 0) << describe(c);  // dropped cycles are no damage: the trace says where they were
  EXPECT_NE(c.out.find("gaps                1 (5 cycles were not recorded)"), std::string::npos) << c.out;
  // Changes inside the gap are unknown: before cycle 15's n := n + 1 (against its keyframe), the
  // last change known is cycle 9's.
  c = runScanback("trace why " + q(gapPath) + " Main.n --at 15 --count 2");
  EXPECT_EQ(c.exitCode, 0) << describe(c);
  const std::vector<WhyLine> lines = whyLines(c.out);
  ASSERT_EQ(lines.size(), 2u) << c.out;
  EXPECT_EQ(lines[0].position, "15:1");
  EXPECT_EQ(lines[0].before, "15");
  EXPECT_EQ(lines[0].after, "16");
  EXPECT_EQ(lines[1].position, "9:1");
  EXPECT_EQ(lines[1].after, "10");
}

TEST_F(DamageFixture, AnotherProgramFailsNamingBothHashes) {
  std::string text = kCounter;
  text.replace(text.find("n * n"), 5, "n * 2");
  replay::ReplayOptions options;
  options.program = mustCompile(text, dir.file("counter.st"));
  ASSERT_TRUE(options.program);
  std::string error;
  EXPECT_FALSE(replay::Replayer::open(good, options, error));
  EXPECT_NE(error.find(program->hash), std::string::npos) << error;
  EXPECT_NE(error.find(options.program->hash), std::string::npos) << error;
  EXPECT_NE(error.find("does not match"), std::string::npos) << error;
  // The same program compiled again is accepted.
  options.program = program;
  EXPECT_TRUE(replay::Replayer::open(good, options, error)) << error;
}

}  // namespace
