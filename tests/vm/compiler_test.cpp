// Semantic analysis and constant folding: which programs the compiler accepts, which it rejects,
// and where and how it says so.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/vm/test_support.h"

namespace scanback {
namespace {

using test::Compiled;
using test::compileErrors;
using test::mustCompile;

// This file pins down IEC's rules, so it compiles as `--strict` does; CompilerCodesys below tests
// the implicit conversions CODESYS accepts (the default).
Compiled compileIec(std::string_view text, std::string path = "main.st") {
  return test::compileStrict(text, std::move(path));
}

// True when some error was reported on `line` (0: any line) whose message contains `needle`.
bool hasError(const Compiled& c, uint32_t line, std::string_view needle) {
  for (const Diagnostic& d : c.diags.items())
    if (d.severity == Severity::Error && (line == 0 || d.span.line == line) &&
        d.message.find(needle) != std::string::npos)
      return true;
  return false;
}

// Compiles `text`, which must fail with an error on `line` containing `needle`.
void expectError(std::string_view text, uint32_t line, std::string_view needle) {
  Compiled c = compileIec(text);
  EXPECT_FALSE(c.program) << "expected an error on line " << line << " (" << needle << ") in:\n" << text;
  EXPECT_TRUE(hasError(c, line, needle)) << "expected an error on line " << line << " containing '" << needle
                                         << "', got:\n"
                                         << c.messages() << "source:\n"
                                         << text;
}

// A PROGRAM Main with the given declarations and body; the body starts on line 4.
std::string program(std::string_view vars, std::string_view body) {
  return "PROGRAM Main\nVAR\n" + std::string(vars) + "\nEND_VAR\n" + std::string(body) + "\nEND_PROGRAM\n";
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

// ------------------------------------------------------------------ diagnostics

TEST(CompilerDiagnostics, FormatIsFileLineColumnErrorMessage) {
  const char* src =
      "PROGRAM Main\n"     //
      "VAR\n"              //
      "  x : INT;\n"       //
      "END_VAR\n"          //
      "  x := TRUE;\n"     // 5: the value at column 8
      "  nothere := 1;\n"  // 6: the name at column 3
      "END_PROGRAM\n";
  Compiled c = compileIec(src, "dir/prog.st");
  ASSERT_FALSE(c.program);
  ASSERT_EQ(c.errorCount(), 2u) << c.messages();
  EXPECT_EQ(c.messages(),
            "dir/prog.st:5:8: error: cannot convert BOOL to INT\n"
            "dir/prog.st:6:3: error: undeclared identifier 'nothere'\n");
  // The structured form agrees with the text.
  ASSERT_EQ(c.diags.items().size(), 2u);
  EXPECT_EQ(c.diags.items()[0].severity, Severity::Error);
  EXPECT_EQ(c.diags.items()[0].span.line, 5u);
  EXPECT_EQ(c.diags.items()[0].span.column, 8u);
  EXPECT_EQ(c.diags.items()[0].span.endColumn, 12u);
}

TEST(CompilerDiagnostics, SeveralErrorsInSeveralPousAreAllReported) {
  const char* src =
      "FUNCTION F : INT\n"            // 1
      "VAR_INPUT a : INT; END_VAR\n"  // 2
      "F := a;\n"                     // 3
      "F := TRUE;\n"                  // 4  BOOL to INT
      "END_FUNCTION\n"                // 5
      "PROGRAM Main\n"                // 6
      "VAR\n"                         // 7
      "  s : STRING;\n"               // 8
      "  i : INT;\n"                  // 9
      "  r : REAL;\n"                 // 10
      "END_VAR\n"                     // 11
      "i := F(1);\n"                  // 12 fine
      "i := s;\n"                     // 13 STRING to INT
      "r := r + 1.0;\n"               // 14 fine
      "i := r;\n"                     // 15 REAL to INT
      "END_PROGRAM\n";
  Compiled c = compileIec(src);
  ASSERT_FALSE(c.program);
  EXPECT_EQ(c.errorCount(), 3u) << c.messages();
  const std::vector<std::string> got = lines(c.messages());
  ASSERT_EQ(got.size(), 3u) << c.messages();
  const std::regex shape(R"(main\.st:(\d+):(\d+): error: .+)");
  std::vector<int> errorLines;
  for (const std::string& l : got) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, shape)) << l;
    errorLines.push_back(std::stoi(m[1]));
  }
  EXPECT_EQ(errorLines, (std::vector<int>{4, 13, 15})) << c.messages();
}

TEST(CompilerDiagnostics, ErrorsInNestedStatementListsAreAllReported) {
  // The compiler analyses and lowers a body a statement at a time, nested lists included; errors
  // found while lowering, and after the first error (when nothing is lowered any more), are all
  // reported, and EXIT knows the loops around it wherever it is analysed.
  const Compiled c = compileIec(
      "PROGRAM Main\nVAR x : INT; END_VAR\n"
      "x := 1;\n"
      "IF x > 0 THEN\n"
      "  x := 2;\n"
      "  CASE x OF 1: y := 1;\n"  // line 6: found while the IF is lowered
      "  END_CASE;\n"
      "  WHILE x < 5 DO\n    IF x > 2 THEN EXIT; END_IF;\n    z := 1;\n  END_WHILE;\n"  // line 10
      "ELSIF x < 0 THEN\n  EXIT;\n"                                                     // line 13: no loop around it
      "END_IF;\n"
      "FOR x := 1 TO 3 DO\n  REPEAT\n    CONTINUE;\n  UNTIL w END_REPEAT;\nEND_FOR;\n"  // line 18
      "END_PROGRAM\n");
  EXPECT_FALSE(c.program);
  EXPECT_TRUE(hasError(c, 6, "'y'")) << c.messages();
  EXPECT_TRUE(hasError(c, 10, "'z'")) << c.messages();
  EXPECT_TRUE(hasError(c, 13, "EXIT outside a loop")) << c.messages();
  EXPECT_TRUE(hasError(c, 18, "'w'")) << c.messages();
  EXPECT_EQ(c.errorCount(), 4u) << c.messages();
}

TEST(CompilerDiagnostics, ErrorsNameTheirOwnFile) {
  Compiled c = test::compileFiles({
      {"a.st", "FUNCTION F : INT\nF := undeclaredA;\nEND_FUNCTION\n"},
      {"b.st", "PROGRAM Main\nVAR x : INT; END_VAR\n\nx := undeclaredB;\nEND_PROGRAM\n"},
  });
  ASSERT_FALSE(c.program);
  const std::string m = c.messages();
  EXPECT_NE(m.find("a.st:2:6: error: undeclared identifier 'undeclaredA'"), std::string::npos) << m;
  EXPECT_NE(m.find("b.st:4:6: error: undeclared identifier 'undeclaredB'"), std::string::npos) << m;
}

TEST(CompilerDiagnostics, ValidProgramHasNoDiagnostics) {
  Compiled c = compileIec(program("x : INT;", "x := x + 1;"));
  ASSERT_TRUE(c.program) << c.messages();
  EXPECT_TRUE(c.diags.items().empty()) << c.messages();
}

// ------------------------------------------------------------------ names

TEST(CompilerNames, UndeclaredIdentifier) {
  expectError(program("x : INT;", "x := y;"), 5, "undeclared identifier 'y'");
  expectError(program("x : INT;", "y := 1;"), 5, "undeclared");
  expectError(program("x : INT;", "IF flag THEN x := 1; END_IF;"), 5, "undeclared");
}

// One mistake, one error: an undeclared identifier must not also produce a conversion error for
// the expression it stands in.
TEST(CompilerNames, UndeclaredIdentifierReportsOneError) {
  for (const char* body : {"x := nothere;", "x := x + nothere;", "IF nothere > x THEN x := 1; END_IF;"}) {
    Compiled c = compileIec(program("x : INT;", body));
    EXPECT_FALSE(c.program);
    EXPECT_EQ(c.errorCount(), 1u) << body << "\n" << c.messages();
    EXPECT_TRUE(hasError(c, 5, "undeclared identifier 'nothere'")) << c.messages();
  }
}

TEST(CompilerNames, IdentifiersAreCaseInsensitive) { mustCompile(program("myVar : INT;", "MYVAR := myvar + MyVar;")); }

TEST(CompilerNames, AssignmentToConstant) {
  expectError(
      "VAR_GLOBAL CONSTANT\n  LIMIT : INT := 5;\nEND_VAR\n"
      "PROGRAM Main\nVAR x : INT; END_VAR\nx := LIMIT;\nLIMIT := 6;\nEND_PROGRAM\n",
      7, "cannot assign to a constant");
  expectError("PROGRAM Main\nVAR CONSTANT\n  K : DINT := 1;\nEND_VAR\nK := 2;\nEND_PROGRAM\n", 5,
              "cannot assign to a constant");
  // A constant is not a FOR control variable either.
  expectError("PROGRAM Main\nVAR CONSTANT\n  K : DINT := 1;\nEND_VAR\nFOR K := 1 TO 3 DO\nEND_FOR;\nEND_PROGRAM\n", 5,
              "constant");
}

TEST(CompilerNames, DuplicateDeclarations) {
  expectError(program("x : INT;\n  x : DINT;", "x := 1;"), 4, "declared twice");
  expectError(
      "FUNCTION F : INT\nF := 1;\nEND_FUNCTION\n"
      "FUNCTION F : INT\nF := 2;\nEND_FUNCTION\n" +
          program("x : INT;", "x := F();"),
      4, "already declared");
  expectError("VAR_GLOBAL\n  g : INT;\n  g : INT;\nEND_VAR\n" + program("x : INT;", "x := g;"), 3, "already declared");
  expectError("TYPE T : INT; END_TYPE\nTYPE T : DINT; END_TYPE\n" + program("x : T;", "x := 1;"), 2,
              "already declared");
  expectError("TYPE S : STRUCT\n  a : INT;\n  a : DINT;\nEND_STRUCT; END_TYPE\n" + program("x : S;", "x.a := 1;"), 3,
              "declared twice");
  expectError("TYPE E : (Red, Green,\n Red); END_TYPE\n" + program("x : E;", "x := Green;"), 2, "listed twice");
  // A VAR_INPUT and a VAR of the same name in one POU.
  expectError("FUNCTION_BLOCK Fb\nVAR_INPUT a : INT; END_VAR\nVAR\n  a : BOOL;\nEND_VAR\nEND_FUNCTION_BLOCK\n" +
                  program("f : Fb;", "f();"),
              4, "declared twice");
}

// ------------------------------------------------------------------ types and conversions

TEST(CompilerTypes, NarrowingNeedsAConversion) {
  expectError(program("i : INT;\n  d : DINT;", "d := 1;\ni := d;"), 7, "DINT_TO_INT");
  mustCompile(program("i : INT;\n  d : DINT;", "i := 1;\nd := i;"));
  // The explicit conversion is accepted.
  mustCompile(program("i : INT;\n  d : DINT;", "i := DINT_TO_INT(d);"));
}

struct Pair {
  const char* from;
  const char* to;
};

std::string assignProgram(const Pair& p) {
  return std::string("PROGRAM Main\nVAR\n  src : ") + p.from + ";\n  dst : " + p.to +
         ";\nEND_VAR\ndst := src;\nEND_PROGRAM\n";
}

// Every implicit conversion that docs/language.md lists (including the chains it implies).
TEST(CompilerTypes, EveryDocumentedWideningIsAccepted) {
  const Pair widening[] = {
      // SINT -> INT -> DINT -> LINT
      {"SINT", "INT"},
      {"SINT", "DINT"},
      {"SINT", "LINT"},
      {"INT", "DINT"},
      {"INT", "LINT"},
      {"DINT", "LINT"},
      // USINT -> UINT -> UDINT -> ULINT
      {"USINT", "UINT"},
      {"USINT", "UDINT"},
      {"USINT", "ULINT"},
      {"UINT", "UDINT"},
      {"UINT", "ULINT"},
      {"UDINT", "ULINT"},
      // unsigned to a wider signed type
      {"USINT", "INT"},
      {"USINT", "DINT"},
      {"USINT", "LINT"},
      {"UINT", "DINT"},
      {"UINT", "LINT"},
      {"UDINT", "LINT"},
      // BYTE -> WORD -> DWORD -> LWORD
      {"BYTE", "WORD"},
      {"BYTE", "DWORD"},
      {"BYTE", "LWORD"},
      {"WORD", "DWORD"},
      {"WORD", "LWORD"},
      {"DWORD", "LWORD"},
      // SINT/INT/USINT/UINT -> REAL
      {"SINT", "REAL"},
      {"INT", "REAL"},
      {"USINT", "REAL"},
      {"UINT", "REAL"},
      // any integer up to DINT/UDINT and REAL -> LREAL
      {"SINT", "LREAL"},
      {"INT", "LREAL"},
      {"DINT", "LREAL"},
      {"USINT", "LREAL"},
      {"UINT", "LREAL"},
      {"UDINT", "LREAL"},
      {"REAL", "LREAL"},
      // BOOL -> BYTE (and on up the bit strings)
      {"BOOL", "BYTE"},
      {"BOOL", "WORD"},
      {"BOOL", "DWORD"},
      {"BOOL", "LWORD"},
  };
  for (const Pair& p : widening) {
    Compiled c = compileIec(assignProgram(p));
    EXPECT_TRUE(c.program) << p.from << " -> " << p.to << " should be accepted:\n" << c.messages();
  }
}

TEST(CompilerTypes, NonWideningPairsAreRejected) {
  const Pair narrowing[] = {
      {"INT", "SINT"},    {"DINT", "INT"},   {"LINT", "DINT"},  {"UINT", "USINT"}, {"ULINT", "UDINT"},
      {"UINT", "INT"},    {"UDINT", "DINT"}, {"INT", "UINT"},   {"SINT", "USINT"}, {"DINT", "UDINT"},
      {"LINT", "ULINT"},  {"DINT", "REAL"},  {"UDINT", "REAL"}, {"LINT", "LREAL"}, {"ULINT", "LREAL"},
      {"REAL", "DINT"},   {"REAL", "INT"},   {"LREAL", "REAL"}, {"LREAL", "LINT"}, {"WORD", "BYTE"},
      {"LWORD", "DWORD"}, {"BOOL", "INT"},   {"INT", "BOOL"},   {"BYTE", "BOOL"},  {"WORD", "INT"},
      {"INT", "WORD"},    {"DWORD", "DINT"}, {"DINT", "DWORD"}, {"BYTE", "REAL"},  {"DWORD", "LREAL"},
      {"TIME", "DINT"},   {"DINT", "TIME"},  {"LINT", "TIME"},  {"STRING", "INT"}, {"INT", "STRING"},
      {"DATE", "TIME"},   {"TOD", "TIME"},   {"REAL", "TIME"},  {"LTIME", "TIME"},
  };
  for (const Pair& p : narrowing) {
    Compiled c = compileIec(assignProgram(p));
    EXPECT_FALSE(c.program) << p.from << " -> " << p.to << " should be rejected";
    EXPECT_TRUE(hasError(c, 6, "")) << p.from << " -> " << p.to << ": expected an error on line 6:\n" << c.messages();
  }
}

// docs/language.md: the implicit conversions between integers and bit strings are not in the
// IEC table (only BYTE->WORD->..., BOOL->BYTE); the same-width unsigned/bit-string pairs need a
// conversion function too.
TEST(CompilerTypes, UnsignedIntegersAndBitStringsDoNotConvertImplicitly) {
  const Pair pairs[] = {
      {"USINT", "BYTE"},  {"BYTE", "USINT"},  {"UINT", "WORD"},   {"WORD", "UINT"},  {"UDINT", "DWORD"},
      {"DWORD", "UDINT"}, {"ULINT", "LWORD"}, {"LWORD", "ULINT"}, {"USINT", "WORD"}, {"BYTE", "UDINT"},
  };
  for (const Pair& p : pairs) {
    Compiled c = compileIec(assignProgram(p));
    EXPECT_FALSE(c.program) << p.from << " -> " << p.to << " is not an IEC widening and should be rejected";
  }
}

TEST(CompilerTypes, WideningInExpressionsAndArguments) {
  mustCompile("FUNCTION F : LREAL\nVAR_INPUT a : LREAL; END_VAR\nF := a;\nEND_FUNCTION\n" +
              program("s : SINT; d : DINT; r : REAL; l : LREAL;", "d := s + d;\nl := F(d);\nl := F(r);\nr := s * r;"));
  expectError("FUNCTION F : INT\nVAR_INPUT a : INT; END_VAR\nF := a;\nEND_FUNCTION\n" +
                  program("d : DINT; i : INT;", "i := F(d);"),
              9, "");
}

TEST(CompilerTypes, UntypedLiteralsTakeTheTypeOfTheContextWhenTheyFit) {
  expectError(program("s : SINT;", "s := 200;"), 5, "SINT");
  expectError(program("s : SINT;", "s := -129;"), 5, "SINT");
  mustCompile(program("s : SINT;", "s := -128;"));
  mustCompile(program("b : BYTE;", "b := 255;"));
  expectError(program("b : BYTE;", "b := 256;"), 5, "BYTE");
  expectError(program("u : USINT;", "u := -1;"), 5, "USINT");
  mustCompile(program("u : UINT;", "u := 65535;"));
  expectError(program("u : UINT;", "u := 65536;"), 5, "UINT");
  mustCompile(program("i : INT;", "i := -32768;"));
  mustCompile(program("r : REAL;", "r := 5;"));  // an integer literal is a fine REAL
  expectError(program("i : INT;", "i := 1.5;"), 5, "INT");
  mustCompile(program("l : LWORD;", "l := 16#FFFF_FFFF_FFFF_FFFF;"));
  mustCompile(program("u : ULINT;", "u := 18446744073709551615;"));
  // The same rule in initial values.
  expectError(program("s : SINT := 300;", "s := 1;"), 3, "SINT");
  mustCompile(program("s : USINT := 255;", "s := 1;"));
  // Typed literals are typed.
  expectError(program("i : INT;", "i := DINT#5;"), 5, "");
  mustCompile(program("d : DINT;", "d := INT#5;"));
  expectError(program("x : INT;", "x := INT#40000;"), 5, "INT");
}

// ------------------------------------------------------------------ constant folding

TEST(CompilerConstants, ArrayBoundsFromGlobalAndLocalConstants) {
  const char* src =
      "VAR_GLOBAL CONSTANT\n"
      "  N : INT := 4;\n"
      "END_VAR\n"
      "PROGRAM Main\n"
      "VAR CONSTANT\n"
      "  M : DINT := 3;\n"
      "END_VAR\n"
      "VAR\n"
      "  a : ARRAY[0..N-1] OF INT;\n"
      "  b : ARRAY[1..M*2] OF BOOL;\n"
      "  c : ARRAY[0..N-1, 1..M] OF BYTE;\n"
      "  s : STRING[N * 10];\n"
      "END_VAR\n"
      "a[N-1] := 7;\n"
      "b[M*2] := TRUE;\n"
      "END_PROGRAM\n";
  std::shared_ptr<const Program> p = mustCompile(src);
  ASSERT_TRUE(p);
  std::string err;
  auto a = findVariable(*p, "Main.a", err);
  ASSERT_TRUE(a) << err;
  ASSERT_EQ(a->type->kind, TypeKind::Array);
  ASSERT_EQ(a->type->dims.size(), 1u);
  EXPECT_EQ(a->type->dims[0].lower, 0);
  EXPECT_EQ(a->type->dims[0].count, 4u);
  auto b = findVariable(*p, "Main.b", err);
  ASSERT_TRUE(b) << err;
  EXPECT_EQ(b->type->dims[0].lower, 1);
  EXPECT_EQ(b->type->dims[0].count, 6u);
  auto c = findVariable(*p, "Main.c", err);
  ASSERT_TRUE(c) << err;
  ASSERT_EQ(c->type->dims.size(), 2u);
  EXPECT_EQ(c->type->dims[0].count, 4u);
  EXPECT_EQ(c->type->dims[1].count, 3u);
  EXPECT_EQ(c->type->size, 12u);
  auto s = findVariable(*p, "Main.s", err);
  ASSERT_TRUE(s) << err;
  EXPECT_EQ(s->type->capacity, 40u);

  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone) << rt.faultMessage();
  EXPECT_EQ(test::valueOf(rt, "Main.a[3]"), "7");
  EXPECT_EQ(test::valueOf(rt, "Main.b[6]"), "TRUE");
}

TEST(CompilerConstants, ConstantIndexOutOfBoundsIsACompileError) {
  expectError(
      "VAR_GLOBAL CONSTANT N : INT := 4; END_VAR\n"
      "PROGRAM Main\nVAR a : ARRAY[0..N-1] OF INT; END_VAR\n"
      "a[N] := 1;\nEND_PROGRAM\n",
      4, "outside");
}

TEST(CompilerConstants, FoldedExpressionIsOneMoveOfAConstant) {
  const char* src =
      "VAR_GLOBAL CONSTANT\n"
      "  N : INT := 4;\n"
      "END_VAR\n"
      "PROGRAM Main\n"
      "VAR CONSTANT\n"
      "  M : DINT := 3;\n"
      "END_VAR\n"
      "VAR\n"
      "  x : DINT;\n"
      "  r : LREAL;\n"
      "  b : BOOL;\n"
      "END_VAR\n"
      "x := (N + M) * 2 - 1 + 16#10 MOD 3;\n"  // 13
      "r := 1.5 * 2.0 + N;\n"                  // 14
      "b := N > M AND NOT (M = 3);\n"          // 15
      "END_PROGRAM\n";
  std::shared_ptr<const Program> p = mustCompile(src);
  ASSERT_TRUE(p);
  for (uint32_t line : {13u, 14u, 15u}) {
    const uint32_t id = test::statementOnLine(*p, line);
    ASSERT_NE(id, UINT32_MAX);
    const std::vector<test::Instruction> code = test::statementCode(*p, id);
    ASSERT_EQ(code.size(), 1u) << "line " << line << ":\n" << disassemble(*p);
    EXPECT_TRUE(code[0].op == Op::MOV1 || code[0].op == Op::MOV4 || code[0].op == Op::MOV8) << opInfo(code[0].op).name;
    ASSERT_EQ(code[0].operands.size(), 2u);
    EXPECT_EQ(operandBase(code[0].operands[1]), Base::Const) << "line " << line;
    EXPECT_EQ(operandBase(code[0].operands[0]), Base::Image) << "line " << line;
  }
  // The disassembly shows the same: one (possibly statement-fused) MOV from the constant pool.
  const std::string listing = disassemble(*p);
  EXPECT_TRUE(std::regex_search(listing, std::regex(R"(MOV4 +(s\d+ \(13:1\) )?@\d+ k\+\d+\n)"))) << listing;
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.x"), "14");
  EXPECT_EQ(test::valueOf(rt, "Main.r"), "7");
  EXPECT_EQ(test::valueOf(rt, "Main.b"), "FALSE");
}

TEST(CompilerConstants, DivisionByZeroInAConstantExpression) {
  expectError(program("x : DINT;", "x := 10 / 0;"), 5, "division by zero");
  expectError(program("x : DINT;", "x := 10 MOD 0;"), 5, "division by zero");
  expectError(program("x : REAL;", "x := 1.0 / 0.0;"), 5, "division by zero");
  expectError(
      "VAR_GLOBAL CONSTANT Z : INT := 0; END_VAR\n"
      "PROGRAM Main\nVAR x : DINT; END_VAR\n"
      "x := 100 / (Z * 5);\nEND_PROGRAM\n",
      4, "division by zero");
  expectError(
      "PROGRAM Main\nVAR CONSTANT Z : INT := 0; END_VAR\nVAR\n"
      "  a : ARRAY[0..10 / Z] OF INT;\nEND_VAR\na[0] := 1;\nEND_PROGRAM\n",
      4, "division by zero");
}

TEST(CompilerConstants, NonConstantArrayBoundIsAnError) {
  expectError(
      "VAR_GLOBAL n : INT := 4; END_VAR\n"
      "PROGRAM Main\nVAR a : ARRAY[0..n] OF INT; END_VAR\na[0] := 1;\nEND_PROGRAM\n",
      3, "constant");
}

// ------------------------------------------------------------------ statements

TEST(CompilerStatements, CaseLabelOverlap) {
  expectError(program("x : INT; y : INT;",
                      "CASE x OF\n"  // 5
                      "  1..5: y := 1;\n"
                      "  3: y := 2;\n"  // 7
                      "END_CASE;"),
              7, "overlaps");
  expectError(program("x : INT; y : INT;",
                      "CASE x OF\n"
                      "  1, 2: y := 1;\n"
                      "  4, 2: y := 2;\n"  // 7
                      "END_CASE;"),
              7, "overlaps");
  mustCompile(program("x : INT; y : INT;", "CASE x OF\n 1..5: y := 1;\n 6..9, 10: y := 2;\nEND_CASE;"));
}

TEST(CompilerStatements, CaseLabelsMustBeConstants) {
  expectError(program("x : INT; y : INT; z : INT;",
                      "CASE x OF\n"
                      "  1: y := 1;\n"
                      "  z: y := 2;\n"  // 7
                      "END_CASE;"),
              7, "must be a constant");
  // Named constants are fine.
  mustCompile("VAR_GLOBAL CONSTANT K : INT := 3; K2 : INT := 6; END_VAR\n" +
              program("x : INT; y : INT;", "CASE x OF\n K: y := 1;\n 4..K2: y := 2;\nEND_CASE;"));
}

TEST(CompilerStatements, CaseLabelTypeChecks) {
  expectError(program("x : SINT; y : INT;", "CASE x OF\n  300: y := 1;\nEND_CASE;"), 6, "");
  expectError("TYPE E : (A, B); END_TYPE\nTYPE F : (C, D); END_TYPE\n" +
                  program("e : E; y : INT;", "CASE e OF\n  A: y := 1;\n  C: y := 2;\nEND_CASE;"),
              9, "");
  expectError(program("r : REAL; y : INT;", "CASE r OF\n  1: y := 1;\nEND_CASE;"), 5, "CASE");
}

TEST(CompilerStatements, ExitAndContinueOutsideALoop) {
  expectError(program("x : INT;", "x := 1;\nEXIT;"), 6, "EXIT outside a loop");
  expectError(program("x : INT;", "IF x > 0 THEN\n  CONTINUE;\nEND_IF;"), 6, "CONTINUE outside a loop");
  mustCompile(program("x : INT; i : INT;", "FOR i := 1 TO 3 DO\n  IF i = 2 THEN EXIT; END_IF;\nEND_FOR;"));
  // EXIT inside a loop body but in a function called from it is still outside a loop.
  expectError("FUNCTION F : INT\nEXIT;\nF := 1;\nEND_FUNCTION\n" +
                  program("x : INT; i : INT;", "FOR i := 1 TO 3 DO x := F(); END_FOR;"),
              2, "EXIT");
}

TEST(CompilerStatements, ConditionMustBeBool) {
  expectError(program("x : INT;", "IF x THEN x := 1; END_IF;"), 5, "BOOL");
  expectError(program("x : INT;", "WHILE x + 1 DO x := 1; END_WHILE;"), 5, "BOOL");
  expectError(program("x : INT;", "REPEAT x := 1; UNTIL 5 END_REPEAT;"), 5, "");
}

TEST(CompilerStatements, ForControlVariableMustBeAnInteger) {
  expectError(program("r : REAL;", "FOR r := 1 TO 3 DO END_FOR;"), 5, "integer");
}

// ------------------------------------------------------------------ calls

TEST(CompilerCalls, CallingAFunctionBlockTypeInsteadOfAnInstance) {
  expectError(program("x : BOOL;", "TON(IN := TRUE, PT := T#1s);"), 5, "declare an instance");
  expectError("FUNCTION_BLOCK Counter\nVAR_INPUT inc : INT; END_VAR\nEND_FUNCTION_BLOCK\n" +
                  program("c : Counter;", "Counter(inc := 1);"),
              8, "declare an instance");
}

TEST(CompilerCalls, MissingInOutArgument) {
  const std::string fn =
      "FUNCTION Bump : INT\nVAR_IN_OUT v : INT; END_VAR\nv := v + 1;\nBump := v;\nEND_FUNCTION\n";  // 5 lines
  expectError(fn + program("x : INT; y : INT;", "y := Bump();"), 10, "in-out parameter 'v'");
  mustCompile(fn + program("x : INT; y : INT;", "y := Bump(v := x);\ny := Bump(x);"));
  const std::string fb = "FUNCTION_BLOCK Fb\nVAR_IN_OUT v : INT; END_VAR\nv := v + 1;\nEND_FUNCTION_BLOCK\n";  // 4
  expectError(fb + program("f : Fb; x : INT;", "f();"), 9, "in-out parameter 'v'");
  // A constant cannot be passed where a variable is needed.
  expectError(fn + program("x : INT; y : INT;", "y := Bump(v := 5);"), 10, "needs");
  // An in-out of the wrong type.
  expectError(fn + program("x : DINT; y : INT;", "y := Bump(v := x);"), 10, "in-out parameter 'v'");
}

TEST(CompilerCalls, UnknownNamedArgument) {
  const std::string fn = "FUNCTION Add : INT\nVAR_INPUT a, b : INT; END_VAR\nAdd := a + b;\nEND_FUNCTION\n";  // 4
  expectError(fn + program("x : INT;", "x := Add(a := 1, zz := 2);"), 9, "no parameter 'zz'");
  expectError(program("t : TON; q : BOOL;", "t(IN := TRUE, PTT := T#1s);"), 5, "PTT");
  expectError(fn + program("x : INT;", "x := Add(1, 2, 3);"), 9, "too many arguments");
  expectError(fn + program("x : INT;", "x := Add(a := 1, a := 2);"), 9, "twice");
  expectError(fn + program("x : INT;", "x := Nope(1);"), 9, "unknown function 'Nope'");
}

TEST(CompilerCalls, ArgumentTypesAreChecked) {
  const std::string fn = "FUNCTION Add : INT\nVAR_INPUT a, b : INT; END_VAR\nAdd := a + b;\nEND_FUNCTION\n";  // 4
  expectError(fn + program("x : INT; s : STRING;", "x := Add(a := s, b := 1);"), 9, "");
  mustCompile(fn + program("x : INT; s : SINT;", "x := Add(a := s, b := 1);"));
}

TEST(CompilerCalls, VarExternalTypeMismatch) {
  expectError(
      "VAR_GLOBAL g : DINT; END_VAR\n"
      "PROGRAM Main\nVAR_EXTERNAL\n  g : INT;\nEND_VAR\ng := 1;\nEND_PROGRAM\n",
      4, "VAR_EXTERNAL 'g'");
  expectError("PROGRAM Main\nVAR_EXTERNAL\n  nowhere : INT;\nEND_VAR\nnowhere := 1;\nEND_PROGRAM\n", 3,
              "names no global");
  mustCompile(
      "VAR_GLOBAL g : DINT; END_VAR\n"
      "PROGRAM Main\nVAR_EXTERNAL\n  G : DINT;\nEND_VAR\ng := 1;\nEND_PROGRAM\n");
}

// ------------------------------------------------------------------ types

TEST(CompilerTypeDecls, RecursiveTypes) {
  expectError("TYPE A : B; END_TYPE\nTYPE B : A; END_TYPE\n" + program("x : A;", "x := 1;"), 0, "itself");
  expectError("TYPE S : STRUCT\n  next : S;\nEND_STRUCT; END_TYPE\n" + program("x : S;", ""), 0, "itself");
  expectError("FUNCTION_BLOCK Fb\nVAR inner : Fb; END_VAR\nEND_FUNCTION_BLOCK\n" + program("f : Fb;", "f();"), 0,
              "itself");
}

TEST(CompilerTypeDecls, UnknownTypeAndEmptyRanges) {
  expectError(program("x : NoSuchType;", "x := 1;"), 3, "unknown type 'NoSuchType'");
  expectError(program("a : ARRAY[5..1] OF INT;", ""), 3, "empty");
  expectError("TYPE R : INT (10..0); END_TYPE\n" + program("x : R;", ""), 1, "empty");
}

// ------------------------------------------------------------------ configurations and I/O

// A program instance without WITH gets an implicit task named after it (time_now golden program),
// so that name must be free.
TEST(CompilerConfiguration, UnknownTaskAndMissingWith) {
  const std::string prog = program("x : INT;", "x := x + 1;");  // 6 lines
  expectError(prog +
                  "CONFIGURATION C\n"                                   // 7
                  "  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);\n"  // 8
                  "  PROGRAM P1 WITH Slow : Main;\n"                    // 9
                  "END_CONFIGURATION\n",
              9, "unknown task 'Slow'");
  expectError(prog +
                  "CONFIGURATION C\n"
                  "  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);\n"
                  "  PROGRAM Fast : Main;\n"  // 9
                  "END_CONFIGURATION\n",
              9, "without WITH needs a task of its name");
  expectError(prog +
                  "CONFIGURATION C\n"
                  "  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);\n"
                  "  PROGRAM P1 WITH Fast : NoSuchProgram;\n"  // 9
                  "END_CONFIGURATION\n",
              9, "NoSuchProgram");
  expectError(prog +
                  "CONFIGURATION C\n"
                  "  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);\n"
                  "  TASK Fast (INTERVAL := T#20ms, PRIORITY := 2);\n"  // 9
                  "  PROGRAM P1 WITH Fast : Main;\n"
                  "END_CONFIGURATION\n",
              9, "declared twice");
  expectError(prog +
                  "CONFIGURATION C\n"
                  "  TASK Fast (INTERVAL := T#0ms, PRIORITY := 1);\n"  // 8
                  "  PROGRAM P1 WITH Fast : Main;\n"
                  "END_CONFIGURATION\n",
              8, "positive");
  Compiled ok = compileIec(prog +
                           "CONFIGURATION C\n"
                           "  RESOURCE R ON PLC\n"
                           "    TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);\n"
                           "    PROGRAM P1 WITH Fast : Main;\n"
                           "    PROGRAM P2 WITH Fast : Main;\n"
                           "  END_RESOURCE\n"
                           "END_CONFIGURATION\n");
  ASSERT_TRUE(ok.program) << ok.messages();
  ASSERT_EQ(ok.program->instances.size(), 2u);
  EXPECT_EQ(ok.program->instances[0].name, "P1");
  EXPECT_EQ(ok.program->instances[1].name, "P2");
}

TEST(CompilerConfiguration, OpenAddressNeedsVarConfig) {
  const std::string prog =
      "PROGRAM Main\nVAR\n  x AT %I* : BOOL;\n  y : BOOL;\nEND_VAR\ny := x;\nEND_PROGRAM\n";  // 7 lines
  // A configuration without VAR_CONFIG for the open address.
  {
    Compiled c = compileIec(prog +
                            "CONFIGURATION C\n"
                            "  TASK T (INTERVAL := T#10ms, PRIORITY := 1);\n"
                            "  PROGRAM P WITH T : Main;\n"
                            "END_CONFIGURATION\n");
    EXPECT_FALSE(c.program);
    EXPECT_NE(c.messages().find("VAR_CONFIG"), std::string::npos) << c.messages();
  }
  // No configuration at all.
  {
    Compiled c = compileIec(prog);
    EXPECT_FALSE(c.program) << "an AT %I* variable without VAR_CONFIG must be rejected";
    EXPECT_NE(c.messages().find("VAR_CONFIG"), std::string::npos) << c.messages();
  }
  // With VAR_CONFIG it compiles and the variable is located.
  Compiled ok = compileIec(prog +
                           "CONFIGURATION C\n"
                           "  TASK T (INTERVAL := T#10ms, PRIORITY := 1);\n"
                           "  PROGRAM P WITH T : Main;\n"
                           "  VAR_CONFIG\n"
                           "    P.x AT %IX2.5 : BOOL;\n"
                           "  END_VAR\n"
                           "END_CONFIGURATION\n");
  ASSERT_TRUE(ok.program) << ok.messages();
  std::string err;
  auto a = findVariable(*ok.program, "P.x", err);
  auto b = findAddress(*ok.program, "%IX2.5", err);
  ASSERT_TRUE(a && b) << err;
  EXPECT_EQ(a->offset, b->offset);
  EXPECT_EQ(a->bit, 5);
  // VAR_CONFIG with the wrong type.
  expectError(prog +
                  "CONFIGURATION C\n"
                  "  TASK T (INTERVAL := T#10ms, PRIORITY := 1);\n"
                  "  PROGRAM P WITH T : Main;\n"
                  "  VAR_CONFIG\n"
                  "    P.x AT %IW2 : WORD;\n"  // 12
                  "  END_VAR\n"
                  "END_CONFIGURATION\n",
              12, "");
}

TEST(CompilerConfiguration, LocatedVariableSizeLetterMustMatchItsType) {
  expectError(program("w AT %IW0 : DINT;", ""), 3, "");
  expectError(program("d AT %QD1 : WORD;", ""), 3, "");
  expectError(program("b AT %IB0 : INT;", ""), 3, "");
  expectError(program("l AT %ML0 : DINT;", ""), 3, "");
  expectError(program("x AT %IX0.1 : INT;", ""), 3, "BOOL");
  expectError(program("x AT %IX0.8 : BOOL;", ""), 3, "%IX0.8");
  expectError(program("s AT %IW0 : STRING;", ""), 3, "");
  mustCompile(
      program("w AT %IW0 : WORD;\n  i AT %IW1 : INT;\n  d AT %QD1 : DINT;\n  r AT %MD0 : REAL;\n"
              "  b AT %IB7 : BYTE;\n  x AT %IX0.7 : BOOL;\n  l AT %QL2 : LWORD;",
              "d := i;"));
}

TEST(CompilerConfiguration, LocatedVariablesFollowCodesysAddressing) {
  std::shared_ptr<const Program> p =
      mustCompile(program("w AT %IW2 : WORD;\n  d AT %ID1 : DWORD;\n  x AT %IX4.2 : BOOL;\n  q AT %QB3 : BYTE;", ""));
  ASSERT_TRUE(p);
  std::string err;
  auto w = findVariable(*p, "Main.w", err);
  auto d = findVariable(*p, "Main.d", err);
  auto x = findVariable(*p, "Main.x", err);
  auto q = findVariable(*p, "Main.q", err);
  ASSERT_TRUE(w && d && x && q) << err;
  EXPECT_EQ(w->offset, p->input.offset + 4);
  EXPECT_EQ(d->offset, p->input.offset + 4);
  EXPECT_EQ(x->offset, p->input.offset + 4);
  EXPECT_EQ(x->bit, 2);
  EXPECT_EQ(q->offset, p->output.offset + 3);
  EXPECT_GE(p->input.size, 8u);
  EXPECT_GE(p->output.size, 4u);
}

TEST(CompilerConfiguration, ProjectWithoutProgram) {
  Compiled c = compileIec("FUNCTION F : INT\nF := 1;\nEND_FUNCTION\n");
  EXPECT_FALSE(c.program);
  EXPECT_NE(c.messages().find("no PROGRAM"), std::string::npos) << c.messages();
}

}  // namespace
}  // namespace scanback

namespace scanback {
namespace {

bool hasWarning(const Compiled& c, uint32_t line, std::string_view needle) {
  for (const Diagnostic& d : c.diags.items())
    if (d.severity == Severity::Warning && d.span.line == line && d.message.find(needle) != std::string::npos)
      return true;
  return false;
}

// Without --strict, what CODESYS converts implicitly compiles with a warning on its line; with it,
// the same text is an error. Values are converted as the explicit conversion functions do.
TEST(CompilerCodesys, ImplicitConversionsWarnAndStrictRejectsThem) {
  const std::string src =
      "PROGRAM Main\nVAR b : BYTE := 16#F0; w : WORD; i : INT := -2; d : DINT := 70000;\n"
      "r : REAL := 2.5; u : UINT; s : SINT; k : INT; x : DINT; END_VAR\n"
      "w := i;\n"      // 4: INT -> WORD, same bits
      "k := d;\n"      // 5: DINT -> INT wraps (70000 - 65536)
      "s := r;\n"      // 6: REAL -> SINT rounds (half away from zero)
      "u := b + i;\n"  // 7: BYTE + INT computed in INT, then to UINT
      "x := w * 2;\n"  // 8: computed in WORD (wraps), then WORD -> DINT
      "k := 3.7;\n"    // 9: a real literal to INT
      "END_PROGRAM\n";
  Compiled c = test::compile(src);
  ASSERT_TRUE(c.program) << c.messages();
  for (uint32_t line : {4u, 5u, 6u, 7u, 8u, 9u})
    EXPECT_TRUE(hasWarning(c, line, "CODESYS")) << "line " << line << ":\n" << c.messages();
  EXPECT_TRUE(hasWarning(c, 4, "INT_TO_WORD")) << c.messages();
  Runtime rt(c.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.w"), "65534");
  EXPECT_EQ(test::valueOf(rt, "Main.k"), "4");  // line 9 wins: 3.7 rounds to 4
  EXPECT_EQ(test::valueOf(rt, "Main.s"), "3");
  EXPECT_EQ(test::valueOf(rt, "Main.u"), "238");
  EXPECT_EQ(test::valueOf(rt, "Main.x"), "65532");

  Compiled strict = test::compileStrict(src);
  EXPECT_FALSE(strict.program);
  for (uint32_t line : {4u, 5u, 6u, 7u, 8u, 9u}) EXPECT_TRUE(hasError(strict, line, "")) << "line " << line;

  // BOOL, times, strings and enumerations stay errors either way.
  for (const char* body : {"i := TRUE;", "i := T#1s;", "i := 'a';"}) {
    Compiled bad = test::compile("PROGRAM Main\nVAR i : INT; END_VAR\n" + std::string(body) + "\nEND_PROGRAM\n");
    EXPECT_FALSE(bad.program) << body;
  }
}

// Issue 30: a conversion function's argument converts as a user function's input does.
TEST(CompilerCodesys, ConversionFunctionArgumentsNarrowAsUserFunctionInputs) {
  const std::string src =
      "FUNCTION Pass : INT\nVAR_INPUT i : INT; END_VAR\nPass := i;\nEND_FUNCTION\n"  // 1-4
      "PROGRAM Main\nVAR d : DINT := 70000; b : BYTE; k : INT; END_VAR\n"            // 5-6
      "b := INT_TO_BYTE(d);\n"                                                       // 7
      "k := Pass(d);\n"                                                              // 8
      "END_PROGRAM\n";
  Compiled c = test::compile(src);
  ASSERT_TRUE(c.program) << c.messages();
  EXPECT_TRUE(hasWarning(c, 7, "implicit conversion from DINT to INT")) << c.messages();
  EXPECT_TRUE(hasWarning(c, 8, "implicit conversion from DINT to INT")) << c.messages();
  EXPECT_EQ(c.diags.items().size(), 2u) << c.messages();  // one warning each, not two
  Runtime rt(c.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.k"), "4464");  // 70000 - 65536
  EXPECT_EQ(test::valueOf(rt, "Main.b"), "112");   // 16#1170's low byte
  Compiled strict = test::compileStrict(src);
  EXPECT_FALSE(strict.program);
  EXPECT_TRUE(hasError(strict, 7, "INT_TO_BYTE expects a INT, not DINT")) << strict.messages();
}

// A user's FUNCTION named like an operator's functional form is called; without one, a form with
// the wrong arguments is told what the form takes.
TEST(CompilerCodesys, OperatorFormsYieldToUserFunctions) {
  const std::string fn = "FUNCTION Add : INT\nVAR_INPUT a, b, c : INT; END_VAR\nAdd := a * b * c;\nEND_FUNCTION\n";
  test::Compiled c = test::compile(fn + "PROGRAM Main\nVAR x : INT; END_VAR\nx := ADD(2, 3, 4);\nEND_PROGRAM\n");
  ASSERT_TRUE(c.program) << c.messages();
  Runtime rt(c.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EXPECT_EQ(test::valueOf(rt, "Main.x"), "24");  // the user's product, not the sum 9
  const std::string m = test::compileErrors(
      "PROGRAM Main\nVAR x : INT; END_VAR\nx := SUB(5, 2, 1);\nx := GT(1, x + 1, 0);\nEND_PROGRAM\n");
  EXPECT_NE(m.find("main.st:3:6: error: SUB is the functional form of an operator"), std::string::npos) << m;
  EXPECT_NE(m.find("main.st:4:6: error: GT is the functional form of an operator"), std::string::npos) << m;
}

// An unknown function is reported once: no '<error>' type and no 'has no value' follow it.
TEST(CompilerCodesys, AFailedCallIsReportedOnce) {
  const std::string m = test::compileErrors(
      "PROGRAM Main\nVAR s : STRING; i : INT; END_VAR\n"
      "s := INT_TO_STRING(NoSuch(3));\n"
      "i := NoSuch2(1) + 2;\n"
      "IF NoSuch3() THEN i := 1; END_IF;\n"
      "END_PROGRAM\n");
  EXPECT_NE(m.find("main.st:3:20: error: unknown function 'NoSuch'"), std::string::npos) << m;
  EXPECT_NE(m.find("main.st:4:6: error: unknown function 'NoSuch2'"), std::string::npos) << m;
  EXPECT_NE(m.find("main.st:5:4: error: unknown function 'NoSuch3'"), std::string::npos) << m;
  EXPECT_EQ(m.find("<error>"), std::string::npos) << m;
  EXPECT_EQ(m.find("has no value"), std::string::npos) << m;
  size_t errors = 0;
  for (size_t at = m.find("error:"); at != std::string::npos; at = m.find("error:", at + 1)) ++errors;
  EXPECT_EQ(errors, 3u) << m;
}

}  // namespace
}  // namespace scanback
