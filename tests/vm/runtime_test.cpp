// The runtime: scheduling on the virtual clock, the I/O images, external writes, the stimulus
// reader, finding/encoding/formatting values, and the printed state (JSON).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/vm/test_support.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/stimulus.h"

namespace scanback {
namespace {

using test::mustCompile;
using test::valueOf;

constexpr int64_t kMs = 1'000'000;

// (task name, start in ms) of the next `n` cycles.
std::vector<std::pair<std::string, int64_t>> schedule(Runtime& rt, int n) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (int i = 0; i < n; ++i) {
    const CycleStart next = rt.nextCycle();
    EXPECT_EQ(next.cycle, static_cast<uint64_t>(i));
    rt.startCycle();
    EXPECT_EQ(rt.currentCycle().task, next.task);
    EXPECT_EQ(rt.currentCycle().startNs, next.startNs);
    EXPECT_EQ(rt.vm().cycleTime(), next.startNs);
    EXPECT_EQ(rt.run(), RunStatus::CycleDone) << rt.faultMessage();
    out.emplace_back(rt.program().tasks.at(next.task).name, next.startNs / kMs);
  }
  return out;
}

std::string config(const std::string& tasks, const std::string& programs) {
  return "PROGRAM Counter\nVAR n : DINT; END_VAR\nn := n + 1;\nEND_PROGRAM\n"
         "CONFIGURATION Plant\n" +
         tasks + programs + "END_CONFIGURATION\n";
}

// ------------------------------------------------------------------ scheduling

// A huge INTERVAL once made the release times overflow (UBSan: signed overflow in nextCycle) and
// the cycles run at negative times. It is refused when the program is loaded, located at the task;
// and whatever the interval, a release past the clock's end is never computed by wrapping around.
TEST(RuntimeSchedule, AnIntervalTooLongForTheClockIsRefusedWithItsLocation) {
  auto p = mustCompile(
      config("  TASK Slow (INTERVAL := T#106751d, PRIORITY := 1);\n", "  PROGRAM S WITH Slow : Counter;\n"));
  ASSERT_TRUE(p);
  Diagnostics diagnostics;
  EXPECT_FALSE(checkSchedule(*p, diagnostics));
  SourceSet sources;
  sources.add("main.st", "");
  const std::string text = diagnostics.format(sources);
  EXPECT_NE(text.find("main.st:6:"), std::string::npos) << text;
  EXPECT_NE(text.find("task 'Slow': INTERVAL T#106751d is too long: the virtual clock ends at "
                      "T#106751d23h47m16s854ms775us807ns"),
            std::string::npos)
      << text;

  // The runtime, given it anyway, stops the clock at its end instead of wrapping around.
  Runtime rt(p);
  for (int i = 0; i < 4; ++i) {
    const CycleStart next = rt.nextCycle();
    EXPECT_GE(next.startNs, 0) << "cycle " << i;
    EXPECT_EQ(rt.runCycle(), RunStatus::CycleDone);
    EXPECT_GE(rt.vm().cycleTime(), 0);
  }
  EXPECT_TRUE(rt.clockEnded());
  EXPECT_EQ(rt.nextCycle().startNs, kClockEndNs);

  // The longest interval allowed passes the check.
  auto ok = mustCompile(config("  TASK Slow (INTERVAL := T#106d18h2m52s36ms854us775ns, PRIORITY := 1);\n",
                               "  PROGRAM S WITH Slow : Counter;\n"));
  ASSERT_TRUE(ok);
  Diagnostics none;
  EXPECT_TRUE(checkSchedule(*ok, none)) << none.format(sources);
  EXPECT_EQ(ok->tasks[0].intervalNs, kMaxTaskIntervalNs);
}

// Found by fuzz_replayer: a recorded write without bytes reached memcpy with a null pointer (UBSan).
TEST(RuntimeWrites, AnEmptyWriteWritesNothing) {
  std::vector<uint8_t> image(8, 0x5a);
  applyWrite(image.data(), static_cast<uint32_t>(image.size()), ExternalWrite{0, -1, {}});
  applyWrite(image.data(), static_cast<uint32_t>(image.size()), ExternalWrite{8, -1, {}});
  applyWrite(image.data(), static_cast<uint32_t>(image.size()), ExternalWrite{3, 2, {}});  // a bit, no value: cleared
  EXPECT_EQ(image, (std::vector<uint8_t>{0x5a, 0x5a, 0x5a, 0x5a & ~4, 0x5a, 0x5a, 0x5a, 0x5a}));
}

// Every task releases normally until the clock's end, then none does; time never goes back.
TEST(RuntimeSchedule, TheClockEndsWithoutWrappingAround) {
  auto p = mustCompile(config("  TASK Slow (INTERVAL := T#106d18h2m52s36ms854us775ns, PRIORITY := 1);\n",
                              "  PROGRAM S WITH Slow : Counter;\n"));
  ASSERT_TRUE(p);
  Runtime rt(p);
  int64_t last = -1;
  uint64_t cycles = 0;
  while (!rt.clockEnded()) {
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    EXPECT_GT(rt.currentCycle().startNs, last);
    last = rt.currentCycle().startNs;
    ASSERT_LT(++cycles, 2000u);
  }
  EXPECT_EQ(cycles, 1001u);  // releases 0 .. 1000 fit, the 1001st would be past the end
}

TEST(RuntimeSchedule, TwoIntervalsGiveTheExactCycleSequence) {
  auto p = mustCompile(
      config("  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);\n  TASK Slow (INTERVAL := T#25ms, PRIORITY := 2);\n",
             "  PROGRAM F WITH Fast : Counter;\n  PROGRAM S WITH Slow : Counter;\n"));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->tasks.size(), 2u);
  EXPECT_EQ(p->tasks[0].intervalNs, 10 * kMs);
  EXPECT_EQ(p->tasks[1].intervalNs, 25 * kMs);
  EXPECT_EQ(p->tasks[0].priority, 1);
  EXPECT_EQ(p->tasks[1].priority, 2);
  Runtime rt(p);
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"Fast", 0},   {"Slow", 0},   {"Fast", 10},  {"Fast", 20},  {"Slow", 25},  {"Fast", 30},  {"Fast", 40},
      {"Fast", 50},  {"Slow", 50},  {"Fast", 60},  {"Fast", 70},  {"Slow", 75},  {"Fast", 80},  {"Fast", 90},
      {"Fast", 100}, {"Slow", 100}, {"Fast", 110}, {"Fast", 120}, {"Slow", 125}, {"Fast", 130},
  };
  EXPECT_EQ(schedule(rt, 20), expected);
  EXPECT_EQ(rt.cycle(), 20u);
  EXPECT_EQ(valueOf(rt, "F.n"), "14");
  EXPECT_EQ(valueOf(rt, "S.n"), "6");
  ASSERT_EQ(rt.statistics().size(), 2u);
  EXPECT_EQ(rt.statistics()[0].cycles, 14u);
  EXPECT_EQ(rt.statistics()[1].cycles, 6u);
  EXPECT_EQ(rt.statistics()[0].statements, 14u);
  EXPECT_EQ(rt.totalStatements(), 20u);
}

TEST(RuntimeSchedule, SameReleaseTimeRunsSmallerPriorityFirst) {
  // Declared Slow first, but Fast has the smaller PRIORITY.
  auto p = mustCompile(
      config("  TASK Slow (INTERVAL := T#20ms, PRIORITY := 5);\n  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);\n",
             "  PROGRAM S WITH Slow : Counter;\n  PROGRAM F WITH Fast : Counter;\n"));
  ASSERT_TRUE(p);
  Runtime rt(p);
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"Fast", 0}, {"Slow", 0}, {"Fast", 10}, {"Fast", 20}, {"Slow", 20}, {"Fast", 30}, {"Fast", 40}, {"Slow", 40},
  };
  EXPECT_EQ(schedule(rt, 8), expected);
}

TEST(RuntimeSchedule, TiesInPriorityGoByDeclarationOrder) {
  auto p = mustCompile(
      config("  TASK B (INTERVAL := T#10ms, PRIORITY := 3);\n"
             "  TASK A (INTERVAL := T#10ms, PRIORITY := 3);\n"
             "  TASK C (INTERVAL := T#5ms, PRIORITY := 3);\n",
             "  PROGRAM PB WITH B : Counter;\n  PROGRAM PA WITH A : Counter;\n  PROGRAM PC WITH C : Counter;\n"));
  ASSERT_TRUE(p);
  Runtime rt(p);
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"B", 0}, {"A", 0}, {"C", 0}, {"C", 5}, {"B", 10}, {"A", 10}, {"C", 10}, {"C", 15}, {"B", 20},
  };
  EXPECT_EQ(schedule(rt, 9), expected);
}

TEST(RuntimeSchedule, ATaskRunsItsProgramsInDeclarationOrder) {
  auto p = mustCompile(
      "VAR_GLOBAL order : DINT; END_VAR\n"
      "PROGRAM First\nVAR seen : DINT; END_VAR\norder := order * 10 + 1;\nseen := order;\nEND_PROGRAM\n"
      "PROGRAM Second\nVAR seen : DINT; END_VAR\norder := order * 10 + 2;\nseen := order;\nEND_PROGRAM\n"
      "CONFIGURATION C\n  TASK T (INTERVAL := T#10ms, PRIORITY := 1);\n"
      "  PROGRAM P2 WITH T : Second;\n  PROGRAM P1 WITH T : First;\nEND_CONFIGURATION\n");
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "order"), "21");
  EXPECT_EQ(valueOf(rt, "P2.seen"), "2");
  EXPECT_EQ(valueOf(rt, "P1.seen"), "21");
  EXPECT_EQ(rt.cycle(), 1u);  // one cycle for the whole task
}

TEST(RuntimeSchedule, WithoutConfigurationEachProgramGetsAnImplicit10msTask) {
  auto p = mustCompile(
      "PROGRAM Alpha\nVAR n : DINT; END_VAR\nn := n + 1;\nEND_PROGRAM\n"
      "PROGRAM Beta\nVAR n : DINT; END_VAR\nn := n + 2;\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->tasks.size(), 2u);
  EXPECT_EQ(p->tasks[0].name, "Alpha");
  EXPECT_EQ(p->tasks[1].name, "Beta");
  EXPECT_EQ(p->tasks[0].intervalNs, 10 * kMs);
  EXPECT_EQ(p->tasks[1].intervalNs, 10 * kMs);
  ASSERT_EQ(p->instances.size(), 2u);
  EXPECT_EQ(p->instances[0].name, "Alpha");
  EXPECT_EQ(p->instances[1].name, "Beta");
  Runtime rt(p);
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"Alpha", 0}, {"Beta", 0}, {"Alpha", 10}, {"Beta", 10}, {"Alpha", 20}, {"Beta", 20},
  };
  EXPECT_EQ(schedule(rt, 6), expected);
  EXPECT_EQ(valueOf(rt, "Alpha.n"), "3");
  EXPECT_EQ(valueOf(rt, "Beta.n"), "6");
}

// ------------------------------------------------------------------ I/O and external writes

// Pauses at the statement whose line is `line` (once per cycle).
class PauseAtLine : public VmObserver {
 public:
  PauseAtLine(const Program& p, uint32_t line) : p_(p), line_(line) {}
  bool onStatement(uint32_t s, uint64_t) override { return p_.statement(s).span.line == line_; }
  const Program& p_;
  uint32_t line_;
};

TEST(RuntimeIo, InputsAreLatchedAtCycleStart) {
  const char* src =
      "PROGRAM Main\n"                                     // 1
      "VAR in AT %IW0 : INT; a : INT; b : INT; END_VAR\n"  // 2
      "a := in;\n"                                         // 3
      "b := in;\n"                                         // 4
      "END_PROGRAM\n";
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.inputs().size(), p->input.size);
  ASSERT_GE(rt.inputs().size(), 2u);
  rt.inputs()[0] = 7;  // %IW0 := 7
  PauseAtLine pause(*p, 4);
  rt.vm().setObserver(&pause);
  rt.startCycle();
  ASSERT_EQ(rt.run(), RunStatus::Paused);
  rt.inputs()[0] = 9;  // the field changes mid-cycle
  rt.vm().setObserver(nullptr);
  ASSERT_EQ(rt.run(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.a"), "7");
  EXPECT_EQ(valueOf(rt, "Main.b"), "7");  // still the latched value
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.a"), "9");
  EXPECT_EQ(valueOf(rt, "Main.b"), "9");
}

TEST(RuntimeIo, OutputsAreCopiedAtCycleEnd) {
  const char* src =
      "PROGRAM Main\n"                  // 1
      "VAR q AT %QW1 : INT; END_VAR\n"  // 2
      "q := q + 5;\n"                   // 3
      "q := q + 1;\n"                   // 4
      "END_PROGRAM\n";
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.outputs().size(), p->output.size);
  ASSERT_GE(rt.outputs().size(), 4u);
  PauseAtLine pause(*p, 4);
  rt.vm().setObserver(&pause);
  rt.startCycle();
  ASSERT_EQ(rt.run(), RunStatus::Paused);
  EXPECT_EQ(valueOf(rt, "Main.q"), "5");  // in the image already
  EXPECT_EQ(rt.outputs()[2], 0);          // not yet on the outputs
  ASSERT_EQ(rt.run(), RunStatus::CycleDone);
  EXPECT_EQ(rt.outputs()[2], 6);
  EXPECT_EQ(rt.outputs()[3], 0);
  rt.vm().setObserver(nullptr);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(rt.outputs()[2], 12);
}

TEST(RuntimeIo, QueuedWritesApplyAtTheNextCycleStart) {
  const char* src =
      "PROGRAM Main\n"                                      // 1
      "VAR v : DINT; seen : DINT; flags : BYTE; END_VAR\n"  // 2
      "seen := v;\n"                                        // 3
      "v := v + 1;\n"                                       // 4
      "END_PROGRAM\n";
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.v"), "1");
  std::string err;
  auto v = findVariable(*p, "Main.v", err);
  auto flags = findVariable(*p, "Main.flags", err);
  ASSERT_TRUE(v && flags) << err;
  ExternalWrite w;
  w.offset = v->offset;
  ASSERT_TRUE(encodeValue(*p, "100", *v->type, w.bytes, err)) << err;
  rt.queueWrite(w);
  ExternalWrite bit;
  bit.offset = flags->offset;
  bit.bit = 3;
  bit.bytes = {1};
  rt.queueWrite(bit);
  EXPECT_EQ(valueOf(rt, "Main.v"), "1");  // queued, not applied
  EXPECT_EQ(valueOf(rt, "Main.flags"), "0");
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.seen"), "100");
  EXPECT_EQ(valueOf(rt, "Main.v"), "101");
  EXPECT_EQ(valueOf(rt, "Main.flags"), "8");
  // Applied once only.
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.seen"), "101");

  // A write queued while paused mid-cycle waits for the next cycle too.
  PauseAtLine pause(*p, 4);
  rt.vm().setObserver(&pause);
  rt.startCycle();
  ASSERT_EQ(rt.run(), RunStatus::Paused);
  ASSERT_TRUE(encodeValue(*p, "-5", *v->type, w.bytes, err)) << err;
  rt.queueWrite(w);
  ASSERT_EQ(rt.run(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.v"), "103");
  rt.vm().setObserver(nullptr);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.seen"), "-5");
}

TEST(RuntimeIo, ApplyWriteClearsAndSetsBitsAndIgnoresOutOfRange) {
  uint8_t image[4] = {0xF0, 0, 0, 0};
  applyWrite(image, 4, ExternalWrite{0, 4, {0}});
  EXPECT_EQ(image[0], 0xE0);
  applyWrite(image, 4, ExternalWrite{0, 0, {1}});
  EXPECT_EQ(image[0], 0xE1);
  applyWrite(image, 4, ExternalWrite{2, -1, {0xAA, 0xBB}});
  EXPECT_EQ(image[2], 0xAA);
  EXPECT_EQ(image[3], 0xBB);
  applyWrite(image, 4, ExternalWrite{3, -1, {1, 2}});  // would run past the end
  EXPECT_EQ(image[3], 0xBB);
  applyWrite(image, 4, ExternalWrite{4, 0, {1}});
  EXPECT_EQ(image[3], 0xBB);
}

// ------------------------------------------------------------------ stimulus

const char* const kStimProgram =
    "PROGRAM Main\n"
    "VAR\n"
    "  start : BOOL;\n"
    "  speed : INT;\n"
    "  label : STRING[20];\n"
    "  limit : TIME;\n"
    "  sensor AT %IX0.2 : BOOL;\n"
    "  level AT %IW1 : WORD;\n"
    "  k : INT;\n"
    "END_VAR\n"
    "VAR CONSTANT\n"
    "  fixed : INT := 3;\n"
    "END_VAR\n"
    "k := k + 1;\n"
    "END_PROGRAM\n";

TEST(RuntimeStimulus, GoodFileAppliesRowsAtTheirCycles) {
  auto p = mustCompile(kStimProgram);
  ASSERT_TRUE(p);
  const std::string text =
      "# a comment\n"
      "cycle, Main.start, Main.speed, Main.label, Main.limit, %IX0.2, %IW1\n"
      "0, TRUE, 100, 'a,b', T#2s, 1, 16#00FF\n"
      "\n"
      "2, FALSE, , , T#1s500ms, 0, 300\r\n"
      "4, , -7, 'x y', , , \n";
  std::string err;
  std::optional<Stimulus> s = Stimulus::parse(text, "stim.csv", *p, err);
  ASSERT_TRUE(s) << err;
  ASSERT_EQ(s->rows().size(), 3u);
  EXPECT_EQ(s->rows()[0].cycle, 0u);
  EXPECT_EQ(s->rows()[0].line, 3u);
  EXPECT_EQ(s->rows()[1].cycle, 2u);
  EXPECT_EQ(s->rows()[1].line, 5u);
  EXPECT_EQ(s->rows()[0].cells.size(), 6u);
  EXPECT_EQ(s->rows()[1].cells.size(), 4u);  // empty cells write nothing
  EXPECT_EQ(s->rows()[2].cells.size(), 2u);
  // Address columns go to the field inputs, variables are queued writes.
  EXPECT_FALSE(s->rows()[0].cells[0].input);
  EXPECT_TRUE(s->rows()[0].cells[4].input);
  EXPECT_EQ(s->rows()[0].cells[4].write.offset, 0u);
  EXPECT_EQ(s->rows()[0].cells[4].write.bit, 2);
  EXPECT_TRUE(s->rows()[0].cells[5].input);
  EXPECT_EQ(s->rows()[0].cells[5].write.offset, 2u);

  Runtime rt(p);
  struct Expect {
    const char *start, *speed, *label, *limit, *sensor, *level;
  };
  const Expect want[] = {
      {"TRUE", "100", "'a,b'", "T#2s", "TRUE", "255"},        {"TRUE", "100", "'a,b'", "T#2s", "TRUE", "255"},  // held
      {"FALSE", "100", "'a,b'", "T#1s500ms", "FALSE", "300"}, {"FALSE", "100", "'a,b'", "T#1s500ms", "FALSE", "300"},
      {"FALSE", "-7", "'x y'", "T#1s500ms", "FALSE", "300"},  {"FALSE", "-7", "'x y'", "T#1s500ms", "FALSE", "300"},
  };
  for (uint64_t c = 0; c < 6; ++c) {
    s->apply(rt.nextCycle().cycle, rt);
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    EXPECT_EQ(valueOf(rt, "Main.start"), want[c].start) << "cycle " << c;
    EXPECT_EQ(valueOf(rt, "Main.speed"), want[c].speed) << "cycle " << c;
    EXPECT_EQ(valueOf(rt, "Main.label"), want[c].label) << "cycle " << c;
    EXPECT_EQ(valueOf(rt, "Main.limit"), want[c].limit) << "cycle " << c;
    EXPECT_EQ(valueOf(rt, "Main.sensor"), want[c].sensor) << "cycle " << c;
    EXPECT_EQ(valueOf(rt, "Main.level"), want[c].level) << "cycle " << c;
  }
}

// A quoted value may contain the IEC escape $' (a quote) and commas after it.
TEST(RuntimeStimulus, QuotedStringsWithEscapedQuotes) {
  auto p = mustCompile(kStimProgram);
  ASSERT_TRUE(p);
  std::string err;
  std::optional<Stimulus> s = Stimulus::parse("cycle,Main.label,Main.speed\n0,'it$'s, ok',5\n", "s.csv", *p, err);
  ASSERT_TRUE(s) << err;
  Runtime rt(p);
  s->apply(0, rt);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.label"), "'it$'s, ok'");
  EXPECT_EQ(valueOf(rt, "Main.speed"), "5");
}

TEST(RuntimeStimulus, ProgramWritesToAStimulusVariableSurviveUntilTheNextRow) {
  auto p = mustCompile("PROGRAM Main\nVAR x : INT; END_VAR\nx := x + 1;\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  std::string err;
  std::optional<Stimulus> s = Stimulus::parse("cycle,Main.x\n0,10\n3,0\n", "s.csv", *p, err);
  ASSERT_TRUE(s) << err;
  Runtime rt(p);
  const char* want[] = {"11", "12", "13", "1", "2"};
  for (int c = 0; c < 5; ++c) {
    s->apply(rt.nextCycle().cycle, rt);
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    EXPECT_EQ(valueOf(rt, "Main.x"), want[c]) << c;
  }
}

// The parse error of `text`, which must be rejected.
std::string stimulusError(const Program& p, const std::string& text) {
  std::string err;
  std::optional<Stimulus> s = Stimulus::parse(text, "stim.csv", p, err);
  EXPECT_FALSE(s) << text;
  EXPECT_FALSE(err.empty());
  return err;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RuntimeStimulus, BadFilesAreRejectedWithTheLine) {
  auto p = mustCompile(kStimProgram);
  ASSERT_TRUE(p);
  std::string e = stimulusError(*p, "time,Main.start\n0,TRUE\n");
  EXPECT_TRUE(contains(e, "stim.csv") && contains(e, "line 1") && contains(e, "cycle")) << e;
  e = stimulusError(*p, "# header follows\ncycle,Main.nothing\n0,1\n");
  EXPECT_TRUE(contains(e, "line 2") && contains(e, "nothing")) << e;
  e = stimulusError(*p, "cycle,Main.speed\n0,1\n1,abc\n");
  EXPECT_TRUE(contains(e, "line 3") && contains(e, "Main.speed") && contains(e, "abc")) << e;
  e = stimulusError(*p, "cycle,Main.speed\n0,40000\n");
  EXPECT_TRUE(contains(e, "line 2") && contains(e, "40000")) << e;
  e = stimulusError(*p, "cycle,Main.start\n0,2\n");
  EXPECT_TRUE(contains(e, "line 2")) << e;
  e = stimulusError(*p, "cycle,Main.start\n0,TRUE\n1,FALSE\n1,TRUE\n");
  EXPECT_TRUE(contains(e, "line 4") && contains(e, "cycle 1")) << e;
  e = stimulusError(*p, "cycle,Main.start\n5,TRUE\n3,FALSE\n");
  EXPECT_TRUE(contains(e, "line 3")) << e;
  e = stimulusError(*p, "cycle,Main.start,Main.speed\n0,TRUE\n");
  EXPECT_TRUE(contains(e, "line 2")) << e;
  e = stimulusError(*p, "cycle,Main.start\n-1,TRUE\n");
  EXPECT_TRUE(contains(e, "line 2")) << e;
  e = stimulusError(*p, "cycle,Main.start\nx,TRUE\n");
  EXPECT_TRUE(contains(e, "line 2")) << e;
  e = stimulusError(*p, "cycle,Main.fixed\n0,1\n");
  EXPECT_TRUE(contains(e, "constant")) << e;
  e = stimulusError(*p, "cycle,Main.label\n0,'this string is far too long'\n");
  EXPECT_TRUE(contains(e, "line 2")) << e;
  e = stimulusError(*p, "cycle,%IW9\n0,1\n");
  EXPECT_TRUE(contains(e, "line 1") && contains(e, "%IW9")) << e;
  e = stimulusError(*p, "");
  EXPECT_TRUE(contains(e, "header")) << e;
}

// ------------------------------------------------------------------ values

struct RoundTrip {
  const char* type;
  const char* text;      // as written
  const char* expected;  // as formatted
};

TEST(RuntimeValues, EncodeAndFormatEveryElementaryType) {
  const RoundTrip cases[] = {
      {"BOOL", "TRUE", "TRUE"},
      {"BOOL", "0", "FALSE"},
      {"BOOL", "1", "TRUE"},
      {"SINT", "-128", "-128"},
      {"SINT", "127", "127"},
      {"INT", "-32768", "-32768"},
      {"INT", "1_000", "1000"},
      {"DINT", "2147483647", "2147483647"},
      {"DINT", "16#7FFF_FFFF", "2147483647"},
      {"LINT", "-9223372036854775808", "-9223372036854775808"},
      {"USINT", "255", "255"},
      {"UINT", "65535", "65535"},
      {"UDINT", "4294967295", "4294967295"},
      {"ULINT", "18446744073709551615", "18446744073709551615"},
      {"BYTE", "16#FF", "255"},
      {"WORD", "2#1010", "10"},
      {"DWORD", "8#17", "15"},
      {"LWORD", "16#FFFF_FFFF_FFFF_FFFF", "18446744073709551615"},
      {"REAL", "0.1", "0.1"},
      {"REAL", "-3.5", "-3.5"},
      {"REAL", "1.5E3", "1500"},
      {"LREAL", "0.1", "0.1"},
      {"LREAL", "-2.25", "-2.25"},
      {"TIME", "T#1s750ms", "T#1s750ms"},
      {"TIME", "T#0s", "T#0s"},
      {"TIME", "T#-2s", "T#-2s"},
      {"TIME", "TIME#1h30m", "T#1h30m"},
      {"LTIME", "LTIME#5us", "LTIME#5us"},
      {"DATE", "D#2024-01-15", "D#2024-01-15"},
      {"DATE", "DATE#1970-01-01", "D#1970-01-01"},
      {"TOD", "TOD#08:30:15.5", "TOD#08:30:15.5"},
      {"TOD", "TIME_OF_DAY#23:59:59", "TOD#23:59:59"},
      {"DT", "DT#2024-01-15-08:30:00", "DT#2024-01-15-08:30:00"},
      {"REAL", "1.0E30", "1e+30"},
      {"LREAL", "1.0E-300", "1e-300"},
      {"TIME", "T#1d2h3m4s5ms6us7ns", "T#1d2h3m4s5ms6us7ns"},
      {"TIME", "T#0.5s", "T#500ms"},
      {"DATE", "D#1900-01-01", "D#1900-01-01"},
      {"DT", "DT#2024-02-29-12:00:00.5", "DT#2024-02-29-12:00:00.5"},
      {"STRING", "'a$Nb'", "'a$Nb'"},
      {"STRING", "'hello'", "'hello'"},
      {"STRING", "'it$'s $$5'", "'it$'s $$5'"},
      {"STRING", "''", "''"},
      {"STRING", "plain", "'plain'"},
  };
  for (const RoundTrip& rt : cases) {
    SCOPED_TRACE(std::string(rt.type) + " " + rt.text);
    auto p = mustCompile(std::string("PROGRAM Main\nVAR v : ") + rt.type +
                         "; pad : BYTE; END_VAR\npad := 1;\nEND_PROGRAM\n");
    if (!p) continue;
    std::string err;
    auto loc = findVariable(*p, "Main.v", err);
    ASSERT_TRUE(loc) << err;
    EXPECT_EQ(loc->path, "Main.v");
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(encodeValue(*p, rt.text, *loc->type, bytes, err)) << err;
    EXPECT_LE(bytes.size(), loc->type->size);
    std::vector<uint8_t> image = p->initialImage;
    applyWrite(image.data(), static_cast<uint32_t>(image.size()), ExternalWrite{loc->offset, loc->bit, bytes});
    const std::string shown = formatValue(*p, image.data(), loc->offset, loc->bit, *loc->type);
    EXPECT_EQ(shown, rt.expected);
    // What is shown reads back to the same bytes.
    std::vector<uint8_t> again;
    ASSERT_TRUE(encodeValue(*p, shown, *loc->type, again, err)) << shown << ": " << err;
    EXPECT_EQ(again, bytes) << shown;
  }
}

TEST(RuntimeValues, EncodeRejectsValuesThatDoNotFit) {
  const std::pair<const char*, const char*> bad[] = {
      {"SINT", "128"}, {"USINT", "-1"},         {"USINT", "256"}, {"INT", "40000"}, {"UINT", "-3"},
      {"BOOL", "2"},   {"DINT", "1.5"},         {"DINT", "T#1s"}, {"TIME", "5"},    {"DATE", "T#1s"},
      {"INT", "abc"},  {"STRING[3]", "'abcd'"}, {"REAL", "TRUE"}, {"ULINT", "-1"},  {"TOD", "D#2024-01-01"},
  };
  for (const auto& [type, text] : bad) {
    auto p = mustCompile(std::string("PROGRAM Main\nVAR v : ") + type + "; END_VAR\nEND_PROGRAM\n");
    if (!p) continue;
    std::string err;
    auto loc = findVariable(*p, "Main.v", err);
    ASSERT_TRUE(loc) << err;
    std::vector<uint8_t> bytes;
    EXPECT_FALSE(encodeValue(*p, text, *loc->type, bytes, err)) << type << " " << text;
    EXPECT_FALSE(err.empty()) << type << " " << text;
  }
}

TEST(RuntimeValues, EnumsSubrangesAndAliases) {
  auto p = mustCompile(
      "TYPE Mode : (Idle, Run := 5, Stop); Small : (A, B) SINT; Pct : INT (0..100); Speed : REAL; END_TYPE\n"
      "PROGRAM Main\nVAR m : Mode := Stop; s : Small; pc : Pct; sp : Speed; END_VAR\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  std::string err;
  Vm vm(p);
  EXPECT_EQ(valueOf(vm, "Main.m"), "Stop");
  auto m = findVariable(*p, "Main.m", err);
  ASSERT_TRUE(m) << err;
  EXPECT_EQ(m->type->size, 2u);  // default base INT
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encodeValue(*p, "Run", *m->type, bytes, err)) << err;
  ASSERT_EQ(bytes.size(), 2u);
  EXPECT_EQ(bytes[0], 5);
  ASSERT_TRUE(encodeValue(*p, "Mode#Idle", *m->type, bytes, err)) << err;
  EXPECT_EQ(bytes[0], 0);
  EXPECT_FALSE(encodeValue(*p, "Walk", *m->type, bytes, err));
  auto s = findVariable(*p, "Main.s", err);
  ASSERT_TRUE(s) << err;
  EXPECT_EQ(s->type->size, 1u);
  auto pc = findVariable(*p, "Main.pc", err);
  ASSERT_TRUE(pc) << err;
  EXPECT_TRUE(encodeValue(*p, "100", *pc->type, bytes, err)) << err;
  EXPECT_FALSE(encodeValue(*p, "101", *pc->type, bytes, err));
  auto sp = findVariable(*p, "Main.sp", err);
  ASSERT_TRUE(sp) << err;
  EXPECT_TRUE(encodeValue(*p, "2.5", *sp->type, bytes, err)) << err;
  EXPECT_EQ(bytes.size(), 4u);
}

TEST(RuntimeValues, FindVariablePaths) {
  auto p = mustCompile(
      "TYPE Pt : STRUCT x : INT; y : INT; END_STRUCT; END_TYPE\n"
      "FUNCTION_BLOCK Fb\nVAR_INPUT i : INT; END_VAR\nVAR_IN_OUT io : INT; END_VAR\nVAR pts : ARRAY[1..3] OF Pt; "
      "END_VAR\n"
      "END_FUNCTION_BLOCK\n"
      "VAR_GLOBAL g : DINT; gc : ARRAY[0..1, 0..2] OF BYTE; END_VAR\n"
      "PROGRAM Main\nVAR fb : Fb; grid : ARRAY[0..1, 1..2] OF INT; t : TON; END_VAR\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  std::string err;
  auto main = findVariable(*p, "Main", err);
  ASSERT_TRUE(main) << err;
  auto y = findVariable(*p, "main.FB.pts[2].Y", err);
  ASSERT_TRUE(y) << err;
  EXPECT_EQ(y->path, "Main.fb.pts[2].y");  // canonical spelling
  auto pts = findVariable(*p, "Main.fb.pts", err);
  ASSERT_TRUE(pts) << err;
  EXPECT_EQ(y->offset, pts->offset + 4 + 2);  // element 2 of 4-byte structs, field y
  auto g11 = findVariable(*p, "Main.grid[1, 2]", err);
  auto g00 = findVariable(*p, "Main.grid[0,1]", err);
  ASSERT_TRUE(g11 && g00) << err;
  EXPECT_EQ(g11->offset, g00->offset + 3 * 2);  // row-major
  auto gc = findVariable(*p, "gc[1,2]", err);
  auto gc0 = findVariable(*p, "gc", err);
  ASSERT_TRUE(gc && gc0) << err;
  EXPECT_EQ(gc->offset, gc0->offset + 5);
  auto et = findVariable(*p, "Main.t.ET", err);
  ASSERT_TRUE(et) << err;
  EXPECT_EQ(et->type->kind, TypeKind::Time);

  EXPECT_FALSE(findVariable(*p, "Nope", err));
  EXPECT_FALSE(findVariable(*p, "Main.nope", err));
  EXPECT_TRUE(contains(err, "nope")) << err;
  EXPECT_FALSE(findVariable(*p, "Main.grid[2,1]", err));
  EXPECT_TRUE(contains(err, "outside")) << err;
  EXPECT_FALSE(findVariable(*p, "Main.grid[1]", err));
  EXPECT_FALSE(findVariable(*p, "Main.grid[a,1]", err));
  EXPECT_FALSE(findVariable(*p, "g.x", err));
  EXPECT_FALSE(findVariable(*p, "g[0]", err));
  EXPECT_FALSE(findVariable(*p, "Main.fb.io", err));  // an in-out is a reference
  EXPECT_FALSE(findVariable(*p, "", err));
}

// A path is an expression of the program's names, resolved as the compiler resolves them: constant
// indexes may be folded expressions, a bit of an integer is a path, and anything that is not
// fixed storage is refused with a reason.
TEST(RuntimeValues, PathsResolveAsTheCompilerResolvesNames) {
  auto p = mustCompile(
      "VAR_GLOBAL CONSTANT N : INT := 2; END_VAR\n"
      "PROGRAM Main\nVAR w : WORD; grid : ARRAY[0..3, 1..2] OF INT; k : INT; r : REF_TO INT; END_VAR\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  std::string err;
  auto folded = findVariable(*p, "Main.grid[N + 1, 2]", err);
  auto plain = findVariable(*p, "Main.grid[3, 2]", err);
  ASSERT_TRUE(folded && plain) << err;
  EXPECT_EQ(folded->offset, plain->offset);
  EXPECT_EQ(folded->path, "Main.grid[3, 2]");
  auto w = findVariable(*p, "Main.w", err);
  auto bit = findVariable(*p, "main.W.9", err);
  ASSERT_TRUE(w && bit) << err;
  EXPECT_EQ(bit->offset, w->offset + 1);
  EXPECT_EQ(bit->bit, 1);
  EXPECT_EQ(bit->type->kind, TypeKind::Bool);
  EXPECT_EQ(bit->path, "Main.w.9");
  auto n = findVariable(*p, "N", err);  // a CONSTANT's storage, not its value
  ASSERT_TRUE(n) << err;
  EXPECT_TRUE(n->constant);
  EXPECT_FALSE(findVariable(*p, "Main.grid[Main.k, 1]", err));
  EXPECT_TRUE(contains(err, "constant")) << err;
  EXPECT_FALSE(findVariable(*p, "Main.r^", err));
  EXPECT_TRUE(contains(err, "reference")) << err;
  EXPECT_FALSE(findVariable(*p, "Main.k + 1", err));
  EXPECT_TRUE(contains(err, "not a variable")) << err;
  EXPECT_FALSE(findVariable(*p, "nosuch.x", err));
  EXPECT_TRUE(contains(err, "nosuch")) << err;
}

TEST(RuntimeValues, FindAddressAndLocatedVariablesAgree) {
  auto p = mustCompile(
      "PROGRAM Main\nVAR\n  b AT %IX0.3 : BOOL;\n  w AT %IW2 : WORD;\n  d AT %QD1 : DINT;\n"
      "  m AT %MB3 : BYTE;\n  l AT %IL1 : LWORD;\nEND_VAR\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  std::string err;
  struct Case {
    const char* var;
    const char* address;
    TypeKind kind;
  };
  const Case cases[] = {
      {"Main.b", "%IX0.3", TypeKind::Bool}, {"Main.w", "%IW2", TypeKind::Word},  {"Main.d", "%QD1", TypeKind::DWord},
      {"Main.m", "%MB3", TypeKind::Byte},   {"Main.l", "%IL1", TypeKind::LWord},
  };
  for (const Case& c : cases) {
    auto v = findVariable(*p, c.var, err);
    auto a = findAddress(*p, c.address, err);
    ASSERT_TRUE(v && a) << c.var << " " << err;
    EXPECT_EQ(v->offset, a->offset) << c.var;
    EXPECT_EQ(v->bit, a->bit) << c.var;
    EXPECT_EQ(a->type->kind, c.kind) << c.address;
    EXPECT_EQ(a->path, c.address);
  }
  auto b = findAddress(*p, "%IX0.3", err);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->offset, p->input.offset);
  EXPECT_EQ(b->bit, 3);
  auto w = findAddress(*p, "%iw2", err);  // case-insensitive
  ASSERT_TRUE(w) << err;
  EXPECT_EQ(w->offset, p->input.offset + 4);
  auto q = findAddress(*p, "%QD1", err);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->offset, p->output.offset + 4);
  auto x = findAddress(*p, "%IX1", err);  // no bit number: counts bits
  ASSERT_TRUE(x) << err;
  EXPECT_EQ(x->bit, 1);
  EXPECT_FALSE(findAddress(*p, "%IX0.8", err));
  EXPECT_FALSE(findAddress(*p, "%ZW0", err));
  EXPECT_FALSE(findAddress(*p, "%IY0", err));
  EXPECT_FALSE(findAddress(*p, "%IW", err));
  EXPECT_FALSE(findAddress(*p, "IW0", err));
  EXPECT_FALSE(findAddress(*p, "%IW100", err));
  EXPECT_TRUE(contains(err, "outside")) << err;
  // Writing through the address is seen by the variable.
  Vm vm(p);
  std::vector<uint8_t> bytes;
  auto wa = findAddress(*p, "%IW2", err);
  ASSERT_TRUE(encodeValue(*p, "16#1234", *wa->type, bytes, err)) << err;
  applyWrite(vm.image(), vm.imageSize(), ExternalWrite{wa->offset, wa->bit, bytes});
  EXPECT_EQ(valueOf(vm, "Main.w"), "4660");
  ASSERT_TRUE(encodeValue(*p, "TRUE", *b->type, bytes, err));
  applyWrite(vm.image(), vm.imageSize(), ExternalWrite{b->offset, b->bit, bytes});
  EXPECT_EQ(valueOf(vm, "Main.b"), "TRUE");
  EXPECT_EQ(formatValue(*p, vm.image(), b->offset, 2, *b->type), "FALSE");
}

// ------------------------------------------------------------------ state JSON

TEST(RuntimeStateJson, EveryKindOfValue) {
  const char* src =
      "TYPE Color : (Red, Green, Blue); Pt : STRUCT x : INT; y : REAL := 0.5; END_STRUCT; END_TYPE\n"
      "VAR_GLOBAL gflag : BOOL := TRUE; END_VAR\n"
      "VAR_GLOBAL CONSTANT LIMIT : INT := 7; END_VAR\n"
      "FUNCTION_BLOCK Fb\nVAR_INPUT i : INT; END_VAR\nVAR_OUTPUT o : BOOL; END_VAR\nVAR_IN_OUT io : INT; END_VAR\n"
      "VAR hidden_temp : INT; END_VAR\nVAR_TEMP tmp : INT; END_VAR\nEND_FUNCTION_BLOCK\n"
      "PROGRAM Main\n"
      "VAR\n"
      "  b : BOOL := TRUE;\n"
      "  si : SINT := -5;\n"
      "  ul : ULINT := 18446744073709551615;\n"
      "  bt : BYTE := 16#FF;\n"
      "  r : REAL := 0.1;\n"
      "  lr : LREAL := 0.1;\n"
      "  big : REAL := 1.0E30;\n"
      "  t : TIME := T#1s750ms;\n"
      "  tz : TIME;\n"
      "  tn : TIME := T#-2s;\n"
      "  lt : LTIME := LTIME#5us;\n"
      "  d : DATE := D#2024-01-15;\n"
      "  tod : TOD := TOD#08:30:15.5;\n"
      "  dt : DT := DT#2024-01-15-08:30:00;\n"
      "  s : STRING[10] := 'hi \"there\"';\n"
      "  c : Color := Green;\n"
      "  grid : ARRAY[1..2, 0..2] OF INT := [1, 2, 3, 4, 5, 6];\n"
      "  pt : Pt := (x := 3);\n"
      "  x : INT := 9;\n"
      "  rx : REF_TO INT;\n"
      "  rg : REF_TO INT;\n"
      "  rnull : REF_TO INT;\n"
      "  tm : TON;\n"
      "  f : Fb;\n"
      "END_VAR\n"
      "VAR_TEMP scratch : INT; END_VAR\n"
      "rx := REF(x);\n"
      "rg := REF(grid[2, 1]);\n"
      "END_PROGRAM\n";
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  const nlohmann::ordered_json j = stateToJson(*p, rt.vm().image());
  ASSERT_TRUE(j.contains("Main")) << j.dump();
  const auto& m = j["Main"];
  EXPECT_EQ(m["b"], true);
  EXPECT_EQ(m["si"], -5);
  EXPECT_EQ(m["ul"].get<uint64_t>(), 18446744073709551615ull);
  EXPECT_EQ(m["bt"], 255);
  EXPECT_EQ(m["r"].dump(), "0.1");
  EXPECT_EQ(m["lr"].dump(), "0.1");
  EXPECT_TRUE(m["big"].is_number_float());
  EXPECT_NEAR(m["big"].get<double>(), 1e30, 1e24);
  EXPECT_EQ(m["t"], "T#1s750ms");
  EXPECT_EQ(m["tz"], "T#0s");
  EXPECT_EQ(m["tn"], "T#-2s");
  EXPECT_EQ(m["lt"], "LTIME#5us");
  EXPECT_EQ(m["d"], "D#2024-01-15");
  EXPECT_EQ(m["tod"], "TOD#08:30:15.5");
  EXPECT_EQ(m["dt"], "DT#2024-01-15-08:30:00");
  EXPECT_EQ(m["s"], "hi \"there\"");
  EXPECT_EQ(m["c"], "Green");
  EXPECT_EQ(m["grid"].dump(), "[[1,2,3],[4,5,6]]");
  EXPECT_EQ(m["pt"].dump(), R"({"x":3,"y":0.5})");
  EXPECT_EQ(m["rx"], "REF(Main.x)");
  EXPECT_EQ(m["rg"], "REF(Main.grid[2,1])");
  EXPECT_TRUE(m["rnull"].is_null());
  // Standard FBs show their documented pins; user FBs their inputs, outputs and VARs, without
  // in-outs and temporaries.
  ASSERT_TRUE(m["tm"].is_object());
  std::vector<std::string> pins;
  for (auto it = m["tm"].begin(); it != m["tm"].end(); ++it) pins.push_back(it.key());
  EXPECT_EQ(pins, (std::vector<std::string>{"IN", "PT", "Q", "ET"}));
  EXPECT_EQ(m["tm"]["ET"], "T#0s");
  EXPECT_EQ(m["f"].dump(), R"({"i":0,"o":false,"hidden_temp":0})");
  EXPECT_FALSE(m.contains("scratch"));
  // Globals, constants included, follow the program instances at the top level.
  EXPECT_EQ(j["gflag"], true);
  EXPECT_EQ(j["LIMIT"], 7);
  std::vector<std::string> top;
  for (auto it = j.begin(); it != j.end(); ++it) top.push_back(it.key());
  EXPECT_EQ(top, (std::vector<std::string>{"Main", "gflag", "LIMIT"}));
}

TEST(RuntimeStateJson, PathOfOffset) {
  auto p = mustCompile(
      "TYPE Pt : STRUCT x : INT; y : INT; END_STRUCT; END_TYPE\n"
      "VAR_GLOBAL g : ARRAY[0..3] OF Pt; END_VAR\n"
      "PROGRAM Main\nVAR a : ARRAY[1..3] OF DINT; END_VAR\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  std::string err;
  auto a2 = findVariable(*p, "Main.a[2]", err);
  auto gy = findVariable(*p, "g[3].y", err);
  ASSERT_TRUE(a2 && gy) << err;
  EXPECT_EQ(pathOfOffset(*p, a2->offset, a2->type), "Main.a[2]");
  EXPECT_EQ(pathOfOffset(*p, gy->offset, gy->type), "g[3].y");
  auto g3 = findVariable(*p, "g[3]", err);
  ASSERT_TRUE(g3);
  EXPECT_EQ(pathOfOffset(*p, g3->offset, g3->type), "g[3]");
  EXPECT_EQ(pathOfOffset(*p, g3->offset, gy->type), "g[3].x");  // the INT at that offset
}

}  // namespace
}  // namespace scanback
