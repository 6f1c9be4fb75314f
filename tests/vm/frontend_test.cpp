// The typed front end (vm/sema): constant folding that computes what the VM computes, enumeration
// values checked against their base type, literal typing, byte order marks, names resolved
// regardless of where a declaration stands, and a compile time linear in the number of variables.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/vm/test_support.h"

namespace scanback {
namespace {

using test::compile;
using test::Compiled;
using test::mustCompile;

// True when some error was reported on `line` (0: any line) whose message is `message`.
bool hasErrorMessage(const Compiled& c, uint32_t line, std::string_view message) {
  for (const Diagnostic& d : c.diags.items())
    if (d.severity == Severity::Error && (line == 0 || d.span.line == line) && d.message == message) return true;
  return false;
}

bool hasErrorContaining(const Compiled& c, uint32_t line, std::string_view needle) {
  for (const Diagnostic& d : c.diags.items())
    if (d.severity == Severity::Error && (line == 0 || d.span.line == line) &&
        d.message.find(needle) != std::string::npos)
      return true;
  return false;
}

// ------------------------------------------------------------------ constant folding

// A constant expression the compiler folds gives the bits the VM computes for the same operation
// on variables: integers wrap at their type's width (issue 18: folding did `x * y` in 128-bit
// signed arithmetic, undefined for the largest ULINT values, caught by UBSan).
TEST(FrontEndFolding, TypedIntegersWrapAsTheVmComputes) {
  struct Case {
    const char* type;
    const char* a;
    const char* op;
    const char* b;
  };
  const Case cases[] = {
      {"ULINT", "18446744073709551615", "*", "18446744073709551615"},
      {"ULINT", "18446744073709551615", "+", "18446744073709551615"},
      {"ULINT", "0", "-", "1"},
      {"LWORD", "16#FFFFFFFFFFFFFFFF", "*", "16#FFFFFFFFFFFFFFFF"},
      {"LINT", "9223372036854775807", "+", "1"},
      {"LINT", "-9223372036854775808", "-", "1"},
      {"LINT", "9223372036854775807", "*", "9223372036854775807"},
      {"LINT", "-9223372036854775808", "*", "-1"},
      {"LINT", "-9223372036854775808", "/", "-1"},
      {"LINT", "-9223372036854775808", "MOD", "-1"},
      {"DINT", "2147483647", "*", "2147483647"},
      {"DINT", "-2147483648", "/", "-1"},
      {"UDINT", "0", "-", "1"},
      {"INT", "-32768", "-", "1"},
      {"INT", "32767", "*", "-32768"},
      {"SINT", "-128", "/", "-1"},
      {"SINT", "127", "+", "1"},
      {"USINT", "200", "+", "100"},
      {"BYTE", "16#F0", "*", "16#10"},
  };
  std::string vars, body;
  for (size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    vars += fmt::format("  f{0} : {1};\n  v{0} : {1};\n  a{0} : {1} := {1}#{2};\n  b{0} : {1} := {1}#{3};\n", i, c.type,
                        c.a, c.b);
    body += fmt::format("f{0} := {1}#{2} {3} {1}#{4};\nv{0} := a{0} {3} b{0};\n", i, c.type, c.a, c.op, c.b);
  }
  // The example of the issue, with an untyped operand that takes the other's type.
  vars += "  fx : LINT;\n  vx : LINT;\n  ax : LINT := 9223372036854775807;\n";
  body += "fx := LINT#9223372036854775807 + 1;\nvx := ax + 1;\n";
  const std::string src = "PROGRAM Main\nVAR\n" + vars + "END_VAR\n" + body + "END_PROGRAM\n";
  std::shared_ptr<const Program> p = mustCompile(src);
  ASSERT_TRUE(p);
  // Folded: each f := ... is one move from the constant pool.
  const uint32_t firstLine = static_cast<uint32_t>(std::count(src.begin(), src.begin() + src.find("f0 :="), '\n') + 1);
  for (size_t i = 0; i <= std::size(cases); ++i) {
    const uint32_t id = test::statementOnLine(*p, firstLine + 2 * static_cast<uint32_t>(i));
    ASSERT_NE(id, UINT32_MAX);
    const std::vector<test::Instruction> code = test::statementCode(*p, id);
    ASSERT_EQ(code.size(), 1u) << "case " << i << ":\n" << disassemble(*p);
    EXPECT_EQ(operandBase(code[0].operands.at(1)), Base::Const) << "case " << i;
  }
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  for (size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    EXPECT_EQ(test::valueOf(rt, fmt::format("Main.f{}", i)), test::valueOf(rt, fmt::format("Main.v{}", i)))
        << c.type << "#" << c.a << " " << c.op << " " << c.type << "#" << c.b;
  }
  EXPECT_EQ(test::valueOf(rt, "Main.f0"), "1");  // (2^64 - 1)^2 mod 2^64
  EXPECT_EQ(test::valueOf(rt, "Main.fx"), "-9223372036854775808");
  EXPECT_EQ(test::valueOf(rt, "Main.fx"), test::valueOf(rt, "Main.vx"));
}

// Untyped literals fold exactly (their type comes from where they are used); a result beyond the
// 128 bits that holds them is an error, not undefined behaviour.
TEST(FrontEndFolding, UntypedIntegersFoldExactlyOrOverflow) {
  std::shared_ptr<const Program> p = mustCompile(
      "PROGRAM Main\nVAR x : LINT; y : ULINT; END_VAR\n"
      "x := 9223372036854775807 * 2 - 9223372036854775807 - 9223372036854775807;\n"
      "y := 4294967296 * 4294967295 + 4294967295;\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.x"), "0");
  EXPECT_EQ(test::valueOf(rt, "Main.y"), "18446744073709551615");
  Compiled c = compile(
      "PROGRAM Main\nVAR x : ULINT; END_VAR\n"
      "x := 18446744073709551615 * 18446744073709551615 MOD 10;\nEND_PROGRAM\n");
  EXPECT_FALSE(c.program);
  EXPECT_TRUE(hasErrorMessage(c, 3, "constant expression overflows")) << c.messages();
}

// ------------------------------------------------------------------ enumerations

// Values beyond the base type are errors (issue 18: `(A := 9223372036854775807, B) LINT` computed
// B by signed overflow, `(X := 1000) BYTE` and `(A := 32767, B)` wrapped silently).
TEST(FrontEndEnumerations, ValuesMustFitTheBaseType) {
  struct Case {
    const char* type;
    const char* message;
  };
  const Case cases[] = {
      {"(A := 9223372036854775807, B) LINT",
       "B = 9223372036854775808 does not fit LINT, the base type of the enumeration"},
      {"(X := 1000) BYTE", "X = 1000 does not fit BYTE, the base type of the enumeration"},
      {"(A := 32767, B)", "B = 32768 does not fit INT, the base type of the enumeration"},
      {"(A := -129) SINT", "A = -129 does not fit SINT, the base type of the enumeration"},
      {"(A := -1) UINT", "A = -1 does not fit UINT, the base type of the enumeration"},
  };
  for (const Case& c : cases) {
    // Used or not, the type is checked.
    for (const char* use : {"e : E;", ""}) {
      Compiled r = compile(fmt::format(
          "TYPE E : {}; END_TYPE\nPROGRAM Main\nVAR {} n : INT; END_VAR\nn := 1;\nEND_PROGRAM\n", c.type, use));
      EXPECT_FALSE(r.program) << c.type;
      EXPECT_TRUE(hasErrorMessage(r, 1, c.message)) << c.type << ":\n" << r.messages();
    }
  }
}

TEST(FrontEndEnumerations, ValuesAtTheEdgesOfTheBaseType) {
  std::shared_ptr<const Program> p = mustCompile(
      "TYPE\n  Big : (Zero, Top := 18446744073709551615) ULINT;\n  Low : (Bottom := -9223372036854775808, Next) LINT;\n"
      "  Small : (S0, S255 := 255) BYTE;\nEND_TYPE\n"
      "PROGRAM Main\nVAR b : Big := Top; l : Low := Next; s : Small := S255; u : ULINT; END_VAR\n"
      "u := TO_ULINT(b);\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.b"), "Top");
  EXPECT_EQ(test::valueOf(rt, "Main.u"), "18446744073709551615");
  EXPECT_EQ(test::valueOf(rt, "Main.l"), "Next");
  EXPECT_EQ(test::valueOf(rt, "Main.s"), "S255");
}

// ------------------------------------------------------------------ literals

// An untyped literal takes the type of its context when it fits it, else it is an error that says
// its value (issue 18: 16#FFFFFFFFFFFFFFFF was reported as "constant -1").
TEST(FrontEndLiterals, LargestHexLiteralIsAValidUlintAndLword) {
  std::shared_ptr<const Program> p = mustCompile(
      "PROGRAM Main\nVAR u : ULINT; w : LWORD; b : BOOL; END_VAR\n"
      "u := 16#FFFFFFFFFFFFFFFF;\nw := 16#FFFFFFFFFFFFFFFF AND w;\nb := u = 16#FFFFFFFFFFFFFFFF;\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.u"), "18446744073709551615");
  EXPECT_EQ(test::valueOf(rt, "Main.w"), "0");
  EXPECT_EQ(test::valueOf(rt, "Main.b"), "TRUE");

  struct Case {
    const char* statement;
    const char* message;
  };
  const Case errors[] = {
      {"l := 16#FFFFFFFFFFFFFFFF;", "constant 18446744073709551615 does not fit LINT"},
      {"i := i + 16#FFFFFFFFFFFFFFFF;", "constant 18446744073709551615 does not fit INT"},
      {"u := -16#FFFFFFFFFFFFFFFF;", "constant -18446744073709551615 does not fit ULINT"},
      {"l := LINT#16#FFFFFFFFFFFFFFFF;", "18446744073709551615 does not fit LINT"},
      {"b := l < 16#FFFFFFFFFFFFFFFF;", "constant 18446744073709551615 does not fit LINT"},
  };
  for (const Case& c : errors) {
    Compiled r = compile(std::string("PROGRAM Main\nVAR u : ULINT; l : LINT; i : INT; b : BOOL; END_VAR\n") +
                         c.statement + "\nEND_PROGRAM\n");
    EXPECT_FALSE(r.program) << c.statement;
    EXPECT_TRUE(hasErrorMessage(r, 3, c.message)) << c.statement << ":\n" << r.messages();
  }
}

// ------------------------------------------------------------------ source text

// A UTF-8 byte order mark at the start of a file is not text (issue 18: "unexpected character
// 0xEF"); columns on the first line are counted without it.
TEST(FrontEndSource, ByteOrderMarkIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  std::shared_ptr<const Program> p = mustCompile(bom + "PROGRAM Main\nVAR x : INT; END_VAR\nx := 7;\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.x"), "7");
  Compiled c = compile(bom + "VAR_GLOBAL g : Nope; END_VAR\nPROGRAM Main\nEND_PROGRAM\n");
  ASSERT_EQ(c.errorCount(), 1u) << c.messages();
  EXPECT_EQ(c.diags.items()[0].span.line, 1u);
  EXPECT_EQ(c.diags.items()[0].span.column, 16u) << c.messages();
  // Only at the start of a file.
  Compiled middle = compile("PROGRAM Main\n" + bom + "END_PROGRAM\n");
  EXPECT_TRUE(hasErrorContaining(middle, 2, "unexpected character")) << middle.messages();
}

// ------------------------------------------------------------------ names

// A function's constants are folded in the function's own scope, whichever body the compiler
// meets first (the constants of a function first called from an earlier body were resolved in
// the caller's scope: "an initial value must be a constant expression").
TEST(FrontEndNames, ConstantsOfAFunctionAreResolvedInItsOwnScope) {
  std::shared_ptr<const Program> p = mustCompile(
      "FUNCTION Zf : INT\nVAR CONSTANT A : INT := 5; B : INT := A * 2; END_VAR\nZf := B;\nEND_FUNCTION\n"
      "FUNCTION Af : INT\nAf := Zf();\nEND_FUNCTION\n"
      "PROGRAM Main\nVAR x : INT; END_VAR\nx := Af();\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.x"), "10");
}

// A declared type is found by name wherever it is declared and whether or not a variable uses it.
TEST(FrontEndNames, TypesAreFoundWhereverTheyAreDeclared) {
  std::shared_ptr<const Program> p = mustCompile(
      "PROGRAM Main\nVAR r : REAL; c : INT; END_VAR\n"
      "r := TO_Speed(3);\nc := TO_INT(Mode#Run);\nEND_PROGRAM\n"
      "TYPE Speed : REAL; Mode : (Stop, Run := 4); Unused : STRUCT a : INT; END_STRUCT; END_TYPE\n");
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.r"), "3");
  EXPECT_EQ(test::valueOf(rt, "Main.c"), "4");
  // The symbol table names every declared type, used or not.
  for (const char* name : {"SPEED", "MODE", "UNUSED"}) EXPECT_TRUE(p->symbols.types.count(name)) << name;
  // Errors in a type nothing uses are reported too.
  Compiled c = compile("TYPE Broken : ARRAY[1..Nowhere] OF INT; END_TYPE\nPROGRAM Main\nEND_PROGRAM\n");
  EXPECT_FALSE(c.program);
  EXPECT_TRUE(hasErrorContaining(c, 1, "constant")) << c.messages();
}

// Constants defined in terms of each other are an error, not an endless resolution; a method
// sees its function block's constants declared anywhere; initial values see earlier variables
// only (a later one is no initial value yet).
TEST(FrontEndNames, ConstantsDeclaredLaterAndEarlierVariables) {
  Compiled cyc = compile(
      "PROGRAM Main\nVAR a : ARRAY[0..M] OF INT; END_VAR\n"
      "VAR CONSTANT M : INT := K; K : INT := M; END_VAR\nEND_PROGRAM\n");
  EXPECT_FALSE(cyc.program);
  EXPECT_TRUE(hasErrorContaining(cyc, 2, "")) << cyc.messages();

  std::shared_ptr<const Program> p = mustCompile(
      "FUNCTION_BLOCK Fb\nVAR buf : ARRAY[1..SIZE] OF INT; END_VAR\n"
      "METHOD Last : INT\nLast := buf[SIZE] + SIZE;\nEND_METHOD\n"
      "VAR CONSTANT SIZE : INT := 3; END_VAR\nbuf[SIZE] := 4;\nEND_FUNCTION_BLOCK\n"
      "FUNCTION Scale : REAL\nVAR_INPUT f : REAL := 1.5; END_VAR\nVAR g : REAL := f * 2.0; END_VAR\n"
      "Scale := g;\nEND_FUNCTION\n"
      "PROGRAM Main\nVAR fb : Fb; x : INT; r : REAL; END_VAR\nfb();\nx := fb.Last();\nr := Scale(f := 4.0);\n"
      "END_PROGRAM\n");
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.x"), "7");
  // g's initial value is computed from f's initial value (1.5), not from the argument.
  EXPECT_EQ(test::valueOf(rt, "Main.r"), "3");

  Compiled later = compile("PROGRAM Main\nVAR b : INT := a; a : INT := 1; END_VAR\nEND_PROGRAM\n");
  EXPECT_FALSE(later.program);
  EXPECT_TRUE(hasErrorContaining(later, 2, "undeclared identifier 'a'")) << later.messages();
}

// ------------------------------------------------------------------ size

// 100,000 variables in one POU compile (in linear time: bench/compile_bench measures it).
TEST(FrontEndSize, AHundredThousandVariablesCompile) {
  constexpr int kVariables = 100'000;
  std::string src = "PROGRAM Main\nVAR\n";
  for (int i = 0; i < kVariables; ++i) src += fmt::format("  v{} : INT := {};\n", i, i % 1000);
  src += "END_VAR\nv99999 := v99998 + v1;\nEND_PROGRAM\n";
  std::shared_ptr<const Program> p = mustCompile(src);
  ASSERT_TRUE(p);
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.v99999"), "999");
  EXPECT_EQ(p->instances.at(0).type->fields.size(), static_cast<size_t>(kVariables));
}

}  // namespace
}  // namespace scanback
