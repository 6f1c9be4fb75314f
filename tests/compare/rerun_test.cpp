// `scanback rerun` (compare/rerun.h): the same program reproduces a recording exactly, cycle for
// cycle and digest for digest, on every golden program; a changed one gets the recorded scan inputs
// where it has their variables, says once what it no longer has, and carries state over by name.
#include "compare/rerun.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "compare/trace_diff.h"
#include "replayer/replayer.h"
#include "tests/support/golden_cases.h"
#include "tests/support/shell.h"
#include "tests/support/trace_support.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/stimulus.h"

namespace fs = std::filesystem;
using namespace scanback;

namespace {

using test::mustCompileSourceFiles;
using test::recordCycles;
using test::TempTrace;

// What a trace recorded of one cycle: everything a rerun of the same program must reproduce.
struct RecordedCycle {
  uint64_t cycle = 0;
  uint32_t task = 0;
  int64_t startNs = 0;
  uint32_t stepCount = 0, imageHash = 0;
  std::vector<uint32_t> path;
  std::vector<trace::ImageWriteData> inputChanges, writes;
  bool operator==(const RecordedCycle&) const = default;
};

std::vector<RecordedCycle> recordedCycles(const std::string& path, std::optional<trace::FaultData>* fault = nullptr) {
  std::string error;
  auto r = replay::Replayer::open(path, {}, error);
  EXPECT_TRUE(r) << error;
  std::vector<RecordedCycle> out;
  if (!r) return out;
  replay::History& h = r->history();
  if (fault) *fault = h.fault();
  for (uint64_t c = h.firstCycle(); c < h.endCycle(); ++c) {
    std::shared_ptr<const trace::ChunkData> held;
    replay::CycleRecord record;
    if (!h.cycle(c, held, record, error)) continue;  // a gap
    RecordedCycle rc{c, record.task, record.startNs, record.stepCount, record.imageHash, {}, {}, {}};
    if (record.path) rc.path = *record.path;
    for (const trace::ImageWriteData* w : record.inputChanges) {
      rc.inputChanges.push_back(*w);
      rc.inputChanges.back().cycleIndex = 0;
    }
    for (const trace::ImageWriteData* w : record.writes) {
      rc.writes.push_back(*w);
      rc.writes.back().cycleIndex = 0;
    }
    out.push_back(std::move(rc));
  }
  return out;
}

// `trace verify` in-process: every cycle re-executes to its digest, every keyframe to its image.
void expectFaithful(const std::string& path) {
  std::string error;
  auto r = replay::Replayer::open(path, {}, error);
  ASSERT_TRUE(r) << error;
  const std::vector<replay::Divergence> d = r->verify({}, error);
  EXPECT_TRUE(error.empty()) << error;
  for (const replay::Divergence& x : d) ADD_FAILURE() << "cycle " << x.position.cycle << ": " << x.what;
  uint64_t cycles = 0;
  for (size_t i = 0; i < r->history().chunkCount(); ++i) cycles += r->history().chunkBlock(i).cycleCount;
  EXPECT_EQ(r->verifiedCycles(), cycles);
}

// The program of `files` with a comment appended to its last file: another program (another hash,
// other source texts) whose code and image layout are those of the original.
std::shared_ptr<const Program> withComment(const std::vector<std::string>& files, const CompileOptions& options) {
  Diagnostics diagnostics;
  SourceSet loaded = loadSourceFiles(files, diagnostics);
  SourceSet sources;
  for (size_t i = 0; i < loaded.size(); ++i) {
    const SourceFile& f = loaded.file(static_cast<FileId>(i));
    sources.add(f.path, i + 1 == loaded.size() ? f.text + "\n(* changed *)\n" : f.text);
  }
  auto program = compileProject(sources, diagnostics, options);
  EXPECT_TRUE(program) << diagnostics.format(sources);
  return program;
}

}  // namespace

// The same program, rerun from the start and from a cycle in the middle, reproduces every recorded
// cycle: task, start time, scan inputs (with their authors: the plant's stimulus writes variables
// and %I), statement path and digest; the rerun's trace verifies. A
// program with the same code and layout but other source texts (state carried over by name and
// type, inputs mapped through the reload plan) reproduces every digest too.
TEST(RerunGolden, TheSameProgramReproducesEveryGoldenRecording) {
  size_t programs = 0, cycles = 0;
  std::vector<test::GoldenCase> cases = test::goldenCases();
  // And the plant: two tasks, located I/O, stimulus on inputs and variables, several chunks.
  test::GoldenCase plant;
  plant.name = "examples_plant";
  plant.files = test::stFilesIn(test::plantDirectory());
  plant.cycles = 700;
  plant.inputs = (test::plantDirectory() / "stimulus.csv").string();
  cases.push_back(plant);
  for (const test::GoldenCase& g : cases) {
    if (g.expectExit == 1 || g.expectExit == 2) continue;  // nothing runs
    SCOPED_TRACE(g.name);
    auto program = mustCompileSourceFiles(g.files, g.options);
    ASSERT_TRUE(program);
    std::optional<Stimulus> stimulus;
    std::string error;
    if (!g.inputs.empty()) {
      auto s = Stimulus::load(g.inputs, *program, error);
      ASSERT_TRUE(s) << error;
      stimulus = *s;
    }
    const TempTrace original("rerun_golden_" + g.name);
    recordCycles(program, original, test::goldenCycles(g, program), 3, stimulus);
    std::optional<trace::FaultData> fault;
    const std::vector<RecordedCycle> recorded = recordedCycles(original.string(), &fault);
    ASSERT_FALSE(recorded.empty());
    EXPECT_EQ(fault.has_value(), g.expectExit == 3);

    const uint64_t middle = recorded.size() / 2;
    auto changed = withComment(g.files, g.options);
    ASSERT_TRUE(changed);
    ASSERT_NE(changed->hash, program->hash);
    struct Variant {
      const char* what;
      std::shared_ptr<const Program> program;
      uint64_t from;
    };
    for (const Variant& v :
         {Variant{"same program from the start", program, 0}, Variant{"same program from the middle", program, middle},
          Variant{"other sources from the start", changed, 0},
          Variant{"other sources from the middle", changed, middle}}) {
      SCOPED_TRACE(v.what);
      const TempTrace rerunTrace("rerun_golden_out_" + g.name);
      compare::RerunOptions options;
      options.program = v.program;
      options.record = rerunTrace.string();
      if (v.from) options.firstCycle = v.from;
      compare::RerunResult result;
      ASSERT_TRUE(compare::rerun(original.string(), options, result, error)) << error;
      EXPECT_EQ(result.firstCycle, v.from);
      EXPECT_EQ(result.cycles, recorded.size() - v.from);
      EXPECT_EQ(result.coldStart, v.from == 0);
      EXPECT_TRUE(result.dropped.empty()) << result.dropped.front().what << ": " << result.dropped.front().why;
      EXPECT_FALSE(result.scheduleSplit);
      EXPECT_EQ(result.fault.has_value(), fault.has_value());
      std::optional<trace::FaultData> rerunFault;
      const std::vector<RecordedCycle> again = recordedCycles(rerunTrace.string(), &rerunFault);
      ASSERT_EQ(again.size(), recorded.size() - v.from);
      for (size_t i = 0; i < again.size(); ++i) {
        const RecordedCycle& want = recorded[v.from + i];
        const RecordedCycle& got = again[i];
        if (v.program == program) {
          ASSERT_EQ(got, want) << "cycle " << want.cycle;
        } else {  // statement ids and inputs may be numbered alike, but only digests are promised
          ASSERT_EQ(got.cycle, want.cycle);
          ASSERT_EQ(got.startNs, want.startNs) << "cycle " << want.cycle;
          ASSERT_EQ(got.stepCount, want.stepCount) << "cycle " << want.cycle;
          ASSERT_EQ(got.imageHash, want.imageHash) << "cycle " << want.cycle;
        }
      }
      EXPECT_EQ(rerunFault.has_value(), fault.has_value());
      if (fault && rerunFault) {
        EXPECT_EQ(rerunFault->step, fault->step);
      }
      expectFaithful(rerunTrace.string());
    }
    cycles += recorded.size();
    ++programs;
  }
  EXPECT_GT(programs, 70u);
  EXPECT_GT(cycles, 900u);  // the golden programs' cycles and the plant's
}
