// Forcing (vm/runtime/forces.h): a force holds a variable or an address at every cycle start,
// over the field and external writes, a forced output reaches the field with its forced value, a
// release leaves the last value in place, and bad targets and values are refused with a reason.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "tests/vm/test_support.h"
#include "vm/runtime/forces.h"

namespace scanback {
namespace {

using test::mustCompile;
using test::valueOf;

const char* kForced =
    "PROGRAM Main\n"
    "VAR\n"
    "  sensor AT %IX0.2 : BOOL;\n"
    "  level AT %IW2 : INT;\n"
    "  lamp AT %QX0.1 : BOOL;\n"
    "  speed : INT;\n"
    "  seenSensor : BOOL;\n"
    "  seenSpeed : INT;\n"
    "  label : STRING;\n"
    "  a : ARRAY[0..3] OF INT;\n"
    "END_VAR\n"
    "VAR CONSTANT limit : INT := 5; END_VAR\n"
    "seenSensor := sensor;\n"
    "seenSpeed := speed;\n"
    "speed := speed + 1;\n"
    "lamp := FALSE;\n"
    "a[3] := a[3] + 10;\n"
    "END_PROGRAM\n";

Force mustForce(const Program& p, const char* target, const char* value) {
  std::string error;
  std::optional<Force> f = resolveForce(p, target, value, error);
  EXPECT_TRUE(f) << error;
  return f ? *f : Force{};
}

TEST(Forces, AForcedInputHoldsOverTheFieldUntilReleased) {
  auto p = mustCompile(kForced);
  ASSERT_TRUE(p);
  Runtime rt(p);
  rt.requestForce({false, mustForce(*p, "%IX0.2", "TRUE")});
  EXPECT_EQ(rt.forces().size(), 1u);      // requested: listed at once
  EXPECT_TRUE(rt.forces(false).empty());  // not yet applied
  for (int i = 0; i < 3; ++i) {
    rt.inputs()[0] = 0;  // the field says FALSE
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    EXPECT_EQ(valueOf(rt, "Main.seenSensor"), "TRUE") << "cycle " << i;
  }
  ASSERT_EQ(rt.forces(false).size(), 1u);
  EXPECT_EQ(rt.forces(false)[0].target, "%IX0.2");
  EXPECT_EQ(rt.forces(false)[0].value, "TRUE");
  EXPECT_EQ(rt.forces(false)[0].type, "BOOL");
  EXPECT_EQ(rt.forces(false)[0].sinceCycle, 0u);
  // Released: the forced value stays in the image until the field's next latch overwrites it.
  rt.requestForce({true, mustForce(*p, "%IX0.2", "TRUE")});
  rt.startCycle();
  EXPECT_EQ(rt.forceChanges().size(), 1u);
  EXPECT_TRUE(rt.forceChanges()[0].release);
  EXPECT_EQ(valueOf(rt, "Main.sensor"), "FALSE");  // the field latched at this cycle start
  ASSERT_EQ(rt.run(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.seenSensor"), "FALSE");
  EXPECT_TRUE(rt.forces().empty());
}

TEST(Forces, AForcedVariableHoldsAtEveryCycleStartAndAReleaseLeavesItsValue) {
  auto p = mustCompile(kForced);
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);  // speed 1
  rt.requestForce({false, mustForce(*p, "Main.speed", "40")});
  rt.requestForce({false, mustForce(*p, "main.a[3]", "7")});
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    EXPECT_EQ(valueOf(rt, "Main.seenSpeed"), "40");
    EXPECT_EQ(valueOf(rt, "Main.speed"), "41");  // the program writes it within the cycle
    EXPECT_EQ(valueOf(rt, "Main.a[3]"), "17");
  }
  EXPECT_EQ(rt.forces(false)[1].target, "Main.a[3]");  // canonical spelling
  EXPECT_EQ(rt.forces(false)[0].sinceCycle, 1u);
  // A re-force replaces the value in place; an external write does not override a force.
  rt.requestForce({false, mustForce(*p, "Main.speed", "100")});
  std::string err;
  auto speed = findVariable(*p, "Main.speed", err);
  ASSERT_TRUE(speed) << err;
  ExternalWrite w{speed->offset, -1, {}};
  ASSERT_TRUE(encodeValue(*p, "5", *speed->type, w.bytes, err)) << err;
  rt.queueWrite(w);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.seenSpeed"), "100");
  ASSERT_EQ(rt.forces(false).size(), 2u);
  EXPECT_EQ(rt.forces(false)[0].value, "100");
  // Released: the program goes on from the value the cycle left.
  rt.requestForce({true, mustForce(*p, "Main.speed", "0")});
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.seenSpeed"), "101");
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.seenSpeed"), "102");
  // A release of what is not forced changes nothing and is not a change of the cycle.
  rt.requestForce({true, mustForce(*p, "Main.speed", "0")});
  rt.startCycle();
  EXPECT_TRUE(rt.forceChanges().empty());
  ASSERT_EQ(rt.run(), RunStatus::CycleDone);
}

TEST(Forces, AForcedOutputReachesTheFieldWhateverTheProgramWrote) {
  auto p = mustCompile(kForced);
  ASSERT_TRUE(p);
  Runtime rt(p);
  rt.requestForce({false, mustForce(*p, "%QX0.1", "TRUE")});
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  ASSERT_FALSE(rt.outputs().empty());
  EXPECT_EQ(rt.outputs()[0] & 0x2, 0x2);         // the field sees the forced TRUE
  EXPECT_EQ(valueOf(rt, "Main.lamp"), "FALSE");  // the program wrote FALSE into the image
  rt.startCycle();
  EXPECT_EQ(valueOf(rt, "Main.lamp"), "TRUE");  // forced again at the cycle start
  ASSERT_EQ(rt.run(), RunStatus::CycleDone);
  rt.requestForce({true, mustForce(*p, "%QX0.1", "TRUE")});
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(rt.outputs()[0] & 0x2, 0);
}

TEST(Forces, BadTargetsAndValuesAreRefusedWithAReason) {
  auto p = mustCompile(kForced);
  ASSERT_TRUE(p);
  std::string error;
  EXPECT_FALSE(resolveForce(*p, "Main.nothing", "1", error));
  EXPECT_NE(error.find("cannot force 'Main.nothing'"), std::string::npos) << error;
  EXPECT_FALSE(resolveForce(*p, "Main.limit", "1", error));
  EXPECT_NE(error.find("'Main.limit' is a constant"), std::string::npos) << error;
  EXPECT_FALSE(resolveForce(*p, "Main.a", "1", error));
  EXPECT_NE(error.find("name one of its elements"), std::string::npos) << error;
  EXPECT_FALSE(resolveForce(*p, "Main.speed", "abc", error));
  EXPECT_NE(error.find("cannot force 'Main.speed' to abc"), std::string::npos) << error;
  EXPECT_FALSE(resolveForce(*p, "%IW99", "1", error));
  EXPECT_NE(error.find("%IW99"), std::string::npos) << error;
  const std::optional<Force> s = resolveForce(*p, "Main.label", "'hi'", error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->type, "STRING");
  const std::optional<Force> w = resolveForce(*p, "%IW2", "16#10", error);
  ASSERT_TRUE(w) << error;
  EXPECT_EQ(w->value, "16");
}

TEST(Forces, RequestsFromAnotherThreadAreTakenAtACycleStart) {
  auto p = mustCompile(kForced);
  ASSERT_TRUE(p);
  Runtime rt(p);
  const Force f = mustForce(*p, "Main.speed", "9");
  std::thread other([&] { rt.requestForce({false, f}); });
  other.join();
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.seenSpeed"), "9");
}

TEST(Forces, AReloadKeepsForcesOnWhatTheyName) {
  auto p = mustCompile(kForced);
  ASSERT_TRUE(p);
  Runtime rt(p);
  rt.requestForce({false, mustForce(*p, "Main.speed", "33")});
  rt.requestForce({false, mustForce(*p, "Main.label", "'x'")});
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  // speed moves behind a new variable; label is gone.
  std::string src = kForced;
  const auto edit = [&src](const std::string& from, const std::string& to) {
    src.replace(src.find(from), from.size(), to);
  };
  edit("  speed : INT;", "  extra : LINT;\n  speed : INT;");
  edit("  label : STRING;\n", "");
  auto q = mustCompile(src);
  ASSERT_TRUE(q);
  const ReloadPlan plan = planReload(*p, *q);
  EXPECT_EQ(rt.replaceProgram(q, plan), 1u);  // the force of label is released
  ASSERT_EQ(rt.forces().size(), 1u);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.seenSpeed"), "33");
}

}  // namespace
}  // namespace scanback
