// The debugger and ACTIONs: a replayed step into `Name()` and `inst.Name()` enters the action's
// statements, in a frame of its own that names the instance it runs on; stepping out returns to
// the caller, stepping back goes back into it.
#include <gtest/gtest.h>

#include "replayer/replayer.h"
#include "tests/support/trace_support.h"
#include "vm/runtime/state_json.h"

using namespace scanback;
using test::mustCompile;
using test::recordCycles;
using test::TempTrace;

namespace {

const char* kActions = R"(FUNCTION_BLOCK Motor
VAR_INPUT speed : INT; END_VAR
VAR_OUTPUT running : BOOL; END_VAR
ACTION Start:
  running := TRUE;
END_ACTION
IF speed > 0 THEN
  Start();
END_IF;
END_FUNCTION_BLOCK
PROGRAM Main
VAR m : Motor; count : INT; END_VAR
Tick();
m(speed := 5);
m.Start();
ACTION Tick:
  count := count + 1;
END_ACTION
END_PROGRAM
)";

struct Here {
  uint32_t line = 0;
  std::string frame;  // the innermost frame's name
  size_t depth = 0;
};

Here here(const replay::Replayer& r) {
  Here h;
  h.line = r.program().statement(r.statement()).span.line;
  const std::vector<Frame> frames = r.vm().frames();
  h.depth = frames.size();
  if (!frames.empty()) h.frame = frameName(r.program(), frames.back());
  return h;
}

TEST(ActionSteps, StepInEntersActionsAndStepOutLeavesThem) {
  std::shared_ptr<const Program> program = mustCompile(kActions);
  ASSERT_TRUE(program);
  const TempTrace path("action_steps");
  recordCycles(program, path, 2, 1000);
  std::string error;
  std::unique_ptr<replay::Replayer> r = replay::Replayer::open(path.string(), {}, error);
  ASSERT_TRUE(r) << error;
  ASSERT_TRUE(r->seek(*r->start(), error)) << error;
  EXPECT_EQ(here(*r).line, 13u);  // Tick();

  ASSERT_TRUE(r->stepIn({}, {}, error)) << error;
  Here h = here(*r);
  EXPECT_EQ(h.line, 17u);  // count := count + 1; in Main's action Tick
  EXPECT_EQ(h.depth, 2u);
  EXPECT_EQ(h.frame, "Main (Main.Tick)");

  ASSERT_TRUE(r->stepOut({}, {}, error)) << error;
  EXPECT_EQ(here(*r).line, 14u);  // m(speed := 5);
  EXPECT_EQ(here(*r).depth, 1u);

  ASSERT_TRUE(r->stepIn({}, {}, error)) << error;  // into Motor's body
  EXPECT_EQ(here(*r).line, 7u);
  ASSERT_TRUE(r->stepIn({}, {}, error)) << error;  // Start();
  EXPECT_EQ(here(*r).line, 8u);
  ASSERT_TRUE(r->stepIn({}, {}, error)) << error;  // into the FB's action, on the instance m
  h = here(*r);
  EXPECT_EQ(h.line, 5u);
  EXPECT_EQ(h.depth, 3u);
  EXPECT_EQ(h.frame, "Main.m (Motor.Start)");

  // Out of the action: Motor's body has nothing left, so the next stop is Main's call from outside.
  ASSERT_TRUE(r->stepOut({}, {}, error)) << error;
  EXPECT_EQ(here(*r).line, 15u);  // m.Start();
  EXPECT_EQ(here(*r).depth, 1u);
  ASSERT_TRUE(r->stepIn({}, {}, error)) << error;
  h = here(*r);
  EXPECT_EQ(h.line, 5u);
  EXPECT_EQ(h.frame, "Main.m (Motor.Start)");

  // And backwards: from the action's statement back to the call.
  ASSERT_TRUE(r->reverseStepOut({}, error)) << error;
  EXPECT_EQ(here(*r).line, 15u);
}

}  // namespace
