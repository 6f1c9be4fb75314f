// Object-oriented ST in the runtime: hot reload keeps each instance's class id the new program's
// own (class ids are numbered per program version), so a call through an interface kept across
// the reload still reaches the method of the instance's block.
#include <gtest/gtest.h>

#include <string>

#include "tests/vm/test_support.h"
#include "vm/runtime/reload.h"

namespace scanback {
namespace {

using test::mustCompile;
using test::runCycles;
using test::valueOf;

const char* kBlocks = R"(
INTERFACE I_Val
METHOD Get : INT
END_METHOD
END_INTERFACE
FUNCTION_BLOCK Two IMPLEMENTS I_Val
VAR n : INT := 2; END_VAR
METHOD Get : INT
Get := n;
END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Three IMPLEMENTS I_Val
METHOD Get : INT
Get := 3;
END_METHOD
END_FUNCTION_BLOCK
)";

// A block that sorts first takes class id 1 in the new version: Three's and Two's ids move.
const char* kFirst = R"(
FUNCTION_BLOCK Aaa IMPLEMENTS I_Val
METHOD Get : INT
Get := 100;
END_METHOD
END_FUNCTION_BLOCK
)";

TEST(OopReload, AnInterfaceKeptAcrossAReloadStillReachesTheMethodOfItsInstancesBlock) {
  const std::string v1 = std::string(kBlocks) +
                         "PROGRAM Main\nVAR two : Two; three : Three; it : I_Val; r : INT; END_VAR\n"
                         "IF r = 0 THEN it := three; END_IF\nr := it.Get();\nEND_PROGRAM\n";
  Runtime rt(mustCompile(v1));
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.r"), "3");
  const std::string v2 = std::string(kBlocks) + kFirst +
                         "PROGRAM Main\nVAR two : Two; three : Three; it : I_Val; r : INT; a : Aaa; END_VAR\n"
                         "r := it.Get() + two.Get() * 10;\nEND_PROGRAM\n";
  auto next = mustCompile(v2);
  ASSERT_TRUE(next);
  ASSERT_EQ(reloadBlocker(rt.program(), *next), "");
  rt.replaceProgram(next, planReload(rt.program(), *next));
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone) << rt.vm().fault().detail << " it=" << valueOf(rt, "Main.it");
  // Three's Get through the kept interface (3), Two's Get on the kept instance (2).
  EXPECT_EQ(valueOf(rt, "Main.r"), "23");
}

}  // namespace
}  // namespace scanback
