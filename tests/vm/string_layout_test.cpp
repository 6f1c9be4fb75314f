// CODESYS's layout of STRING and WSTRING (docs/language.md, "Types and their storage"): STRING(n)
// is n + 1 bytes, the characters then a 0; WSTRING(n) is n + 1 UTF-16 units, 0-terminated. Every
// string function at the capacity edges (empty, full, truncated by one), the bytes a program sees
// through a pointer, SIZEOF, and the bytes after the 0.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/vm/test_support.h"
#include "vm/exec/strings.h"

namespace scanback {
namespace {

// The value of `expr` assigned to a variable of `type`, as the debugger shows it.
std::string valueAs(const std::string& type, const std::string& expr) {
  test::Running r = test::run("PROGRAM Main\nVAR\nx : " + type + ";\nEND_VAR\nx := " + expr + ";\nEND_PROGRAM\n");
  return r.rt ? r["Main.x"] : "<no program>";
}

// The image bytes of the variable at `path` after one cycle of `program`.
std::vector<uint8_t> bytesOf(const test::Running& r, std::string_view path) {
  std::string error;
  const std::optional<VariableLocation> loc = findVariable(*r.program, path, error);
  if (!loc) {
    ADD_FAILURE() << error;
    return {};
  }
  const uint8_t* p = r.rt->vm().image() + loc->offset;
  return std::vector<uint8_t>(p, p + loc->type->size);
}

std::vector<uint8_t> bytes(std::string_view s) { return std::vector<uint8_t>(s.begin(), s.end()); }

TEST(StringLayout, Sizes) {
  EXPECT_EQ(valueAs("DINT", "SIZEOF(STRING)"), "81");
  EXPECT_EQ(valueAs("DINT", "SIZEOF(WSTRING)"), "162");
  // A STRING is aligned as bytes: BYTE at 0, STRING(4) at 1..5, INT at 6 (2-aligned), 8 in all.
  test::Running r = test::run(
      "TYPE Rec : STRUCT a : BYTE; s : STRING(4); b : INT; END_STRUCT; END_TYPE\n"
      "PROGRAM Main\nVAR\nr : Rec; n, atB : DINT; s10 : STRING(10); s1 : STRING[1]; w10 : WSTRING(10);\n"
      "n10, n1, nw10 : DINT;\nEND_VAR\n"
      "n := SIZEOF(r); atB := ADR(r.b) - ADR(r); n10 := SIZEOF(s10); n1 := SIZEOF(s1); nw10 := SIZEOF(w10);\n"
      "END_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.n"], "8");
  EXPECT_EQ(r["Main.atB"], "6");
  EXPECT_EQ(r["Main.n10"], "11");
  EXPECT_EQ(r["Main.n1"], "2");
  EXPECT_EQ(r["Main.nw10"], "22");
}

TEST(StringLayout, AssignmentAtCapacity) {
  EXPECT_EQ(valueAs("STRING(3)", "''"), "''");
  EXPECT_EQ(valueAs("STRING(3)", "'abc'"), "'abc'");
  EXPECT_EQ(valueAs("STRING(3)", "'abcd'"), "'abc'");
  test::Running r = test::run(
      "PROGRAM Main\nVAR\nfull, cut, empty : STRING(3);\nEND_VAR\n"
      "full := 'abc'; cut := 'abcd'; empty := '';\nEND_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  // The characters, then the 0 (the fourth byte of a STRING(3) is the 0 of a full one).
  EXPECT_EQ(bytesOf(r, "Main.full"), (std::vector<uint8_t>{'a', 'b', 'c', 0}));
  EXPECT_EQ(bytesOf(r, "Main.cut"), (std::vector<uint8_t>{'a', 'b', 'c', 0}));
  EXPECT_EQ(bytesOf(r, "Main.empty"), (std::vector<uint8_t>{0, 0, 0, 0}));
}

TEST(StringLayout, BytesAfterTheZeroKeepWhatTheyHeld) {
  // As on the PLC: a shorter value writes its characters and one 0; the rest is left.
  test::Running r = test::run(
      "PROGRAM Main\nVAR\ns : STRING(6) := 'abcdef'; n : INT;\nEND_VAR\n"
      "s := 'xy'; n := LEN(s);\nEND_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.s"], "'xy'");
  EXPECT_EQ(r["Main.n"], "2");
  EXPECT_EQ(bytesOf(r, "Main.s"), (std::vector<uint8_t>{'x', 'y', 0, 'd', 'e', 'f', 0}));
}

TEST(StringLayout, FunctionsAtCapacityEdges) {
  // Each function's result in a STRING(3): empty, exactly full, one character too long.
  EXPECT_EQ(valueAs("STRING(3)", "CONCAT('', '')"), "''");
  EXPECT_EQ(valueAs("STRING(3)", "CONCAT('ab', 'c')"), "'abc'");
  EXPECT_EQ(valueAs("STRING(3)", "CONCAT('ab', 'cd')"), "'abc'");
  EXPECT_EQ(valueAs("STRING(3)", "LEFT('abcd', 0)"), "''");
  EXPECT_EQ(valueAs("STRING(3)", "LEFT('abcd', 3)"), "'abc'");
  EXPECT_EQ(valueAs("STRING(3)", "LEFT('abcd', 4)"), "'abc'");
  EXPECT_EQ(valueAs("STRING(3)", "RIGHT('abcd', 0)"), "''");
  EXPECT_EQ(valueAs("STRING(3)", "RIGHT('abcd', 3)"), "'bcd'");
  EXPECT_EQ(valueAs("STRING(3)", "RIGHT('abcde', 4)"), "'bcd'");
  EXPECT_EQ(valueAs("STRING(3)", "MID('abcde', 0, 2)"), "''");
  EXPECT_EQ(valueAs("STRING(3)", "MID('abcde', 3, 2)"), "'bcd'");
  EXPECT_EQ(valueAs("STRING(3)", "MID('abcde', 4, 1)"), "'abc'");
  EXPECT_EQ(valueAs("STRING(3)", "INSERT('', '', 0)"), "''");
  EXPECT_EQ(valueAs("STRING(3)", "INSERT('ac', 'b', 1)"), "'abc'");
  EXPECT_EQ(valueAs("STRING(3)", "INSERT('ad', 'bc', 1)"), "'abc'");
  EXPECT_EQ(valueAs("STRING(3)", "DELETE('a', 1, 1)"), "''");
  EXPECT_EQ(valueAs("STRING(3)", "DELETE('abcde', 2, 2)"), "'ade'");
  EXPECT_EQ(valueAs("STRING(3)", "DELETE('abcde', 1, 1)"), "'bcd'");
  EXPECT_EQ(valueAs("STRING(3)", "REPLACE('ab', '', 2, 1)"), "''");
  EXPECT_EQ(valueAs("STRING(3)", "REPLACE('abc', 'X', 1, 2)"), "'aXc'");
  EXPECT_EQ(valueAs("STRING(3)", "REPLACE('abc', 'XY', 1, 2)"), "'aXY'");
  EXPECT_EQ(valueAs("STRING(4)", "INT_TO_STRING(-123)"), "'-123'");
  EXPECT_EQ(valueAs("STRING(3)", "INT_TO_STRING(-123)"), "'-12'");
  EXPECT_EQ(valueAs("STRING(5)", "BOOL_TO_STRING(FALSE)"), "'FALSE'");
  EXPECT_EQ(valueAs("STRING(4)", "BOOL_TO_STRING(FALSE)"), "'FALS'");
}

TEST(StringLayout, LengthFindComparisonsAndConversionsOfFullStrings) {
  test::Running r = test::run(
      "PROGRAM Main\nVAR\nfull : STRING(3) := 'abc'; empty : STRING(3); other : STRING(4) := 'abcd';\n"
      "lenFull, lenEmpty, findC, findNone, number : INT; eq, lt, ne : BOOL; r : REAL;\n"
      "digits : STRING(3) := '123'; w : WSTRING(3);\nEND_VAR\n"
      "lenFull := LEN(full); lenEmpty := LEN(empty); findC := FIND(full, 'c'); findNone := FIND(empty, 'a');\n"
      "eq := full = 'abc'; lt := full < other; ne := full <> other;\n"
      "number := STRING_TO_INT(digits); r := STRING_TO_REAL(digits); w := STRING_TO_WSTRING(other);\n"
      "END_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.lenFull"], "3");
  EXPECT_EQ(r["Main.lenEmpty"], "0");
  EXPECT_EQ(r["Main.findC"], "3");
  EXPECT_EQ(r["Main.findNone"], "0");
  EXPECT_EQ(r["Main.eq"], "TRUE");
  EXPECT_EQ(r["Main.lt"], "TRUE");
  EXPECT_EQ(r["Main.ne"], "TRUE");
  EXPECT_EQ(r["Main.number"], "123");
  EXPECT_EQ(r["Main.r"], "123");
  EXPECT_EQ(r["Main.w"], "\"abc\"");  // truncated by one
}

TEST(StringLayout, WideFunctionsAtCapacityEdges) {
  EXPECT_EQ(valueAs("WSTRING(3)", "\"\""), "\"\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "\"äbc\""), "\"äbc\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "\"äbcd\""), "\"äbc\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "CONCAT(\"äb\", \"c\")"), "\"äbc\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "CONCAT(\"äb\", \"cd\")"), "\"äbc\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "LEFT(\"äbcd\", 4)"), "\"äbc\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "RIGHT(\"äbcd\", 3)"), "\"bcd\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "MID(\"äbcde\", 4, 1)"), "\"äbc\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "INSERT(\"äd\", \"bc\", 1)"), "\"äbc\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "DELETE(\"äbcde\", 1, 1)"), "\"bcd\"");
  EXPECT_EQ(valueAs("WSTRING(3)", "REPLACE(\"äbc\", \"XY\", 1, 2)"), "\"äXY\"");
  EXPECT_EQ(valueAs("INT", "LEN(WSTRING#\"äbc\")"), "3");
  EXPECT_EQ(valueAs("INT", "FIND(\"äbc\", \"c\")"), "3");
  EXPECT_EQ(valueAs("STRING(3)", "WSTRING_TO_STRING(\"abcd\")"), "'abc'");
  test::Running r = test::run(
      "PROGRAM Main\nVAR\nw : WSTRING(2); cut : WSTRING(2) := \"xy\";\nEND_VAR\n"
      "w := \"ab\"; cut := \"z\";\nEND_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  // UTF-16 little-endian units, then a 0 unit; after it what the longer value left.
  EXPECT_EQ(bytesOf(r, "Main.w"), (std::vector<uint8_t>{'a', 0, 'b', 0, 0, 0}));
  EXPECT_EQ(bytesOf(r, "Main.cut"), (std::vector<uint8_t>{'z', 0, 0, 0, 0, 0}));
}

TEST(StringLayout, PointerReadsTheCharacters) {
  // The idiom: the first byte of a STRING is its first character, 97 for 'a'.
  test::Running r = test::run(
      "PROGRAM Main\nVAR\ns : STRING := 'abc'; p : POINTER TO BYTE; c, last : BYTE; wc : WORD;\n"
      "w : WSTRING := \"xyz\"; pw : POINTER TO WORD;\nEND_VAR\n"
      "p := ADR(s); c := p^; last := (p + 3)^; pw := ADR(w); wc := (pw + 2)^;\nEND_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.c"], "97");
  EXPECT_EQ(r["Main.last"], "0");  // the terminating 0 after 'abc'
  EXPECT_EQ(r["Main.wc"], "121");  // 'y'
}

TEST(StringLayout, BytesWrittenThroughAPointerAreTheString) {
  test::Running r = test::run(
      "PROGRAM Main\nVAR\ns : STRING(10); p : POINTER TO BYTE; i, n, cut : INT; t : STRING(10) := 'abcdef';\n"
      "END_VAR\n"
      "p := ADR(s);\n"
      "FOR i := 0 TO 4 DO p[i] := INT_TO_BYTE(65 + i); END_FOR\n"
      "n := LEN(s);\n"
      "p := ADR(t); p[2] := 0; cut := LEN(t);\nEND_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.s"], "'ABCDE'");
  EXPECT_EQ(r["Main.n"], "5");
  EXPECT_EQ(r["Main.cut"], "2");  // a 0 written at index 2 ends the string there
  EXPECT_EQ(r["Main.t"], "'ab'");
}

TEST(StringLayout, AnOverwrittenZeroReadsOnAsOnThePlc) {
  // The 0 of a full STRING(3) is its fourth byte, inside the variable: a pointer may overwrite it.
  // The string then reads on into the bytes after it (here t, laid out right after s), as the PLC
  // reads it; the debugger shows the variable's own characters.
  test::Running r = test::run(
      "PROGRAM Main\nVAR\ns : STRING(3) := 'abc'; t : STRING(3) := 'xy'; p : POINTER TO BYTE; n : INT;\n"
      "copy : STRING(10);\nEND_VAR\n"
      "p := ADR(s); p[3] := 90; n := LEN(s); copy := s;\nEND_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.n"], "6");
  EXPECT_EQ(r["Main.copy"], "'abcZxy'");
  EXPECT_EQ(r["Main.s"], "'abc'");
}

TEST(StringLayout, StringsInStructsArraysBlocksAndInOuts) {
  test::Running r = test::run(
      "TYPE Rec : STRUCT tag : STRING(4); n : INT; END_STRUCT; END_TYPE\n"
      "FUNCTION_BLOCK Fb\nVAR_INPUT in : STRING(2); END_VAR\nVAR_OUTPUT out : STRING(5); END_VAR\n"
      "out := CONCAT(in, '!');\nEND_FUNCTION_BLOCK\n"
      "FUNCTION Up : BOOL\nVAR_IN_OUT s : STRING(4); END_VAR\nVAR p : POINTER TO BYTE; END_VAR\n"
      "p := ADR(s); p^ := p^ - 32; Up := TRUE;\nEND_FUNCTION\n"
      "FUNCTION SumLen : INT\nVAR_IN_OUT xs : ARRAY[*] OF STRING(4); END_VAR\nVAR i : DINT; END_VAR\n"
      "FOR i := LOWER_BOUND(xs, 1) TO UPPER_BOUND(xs, 1) DO SumLen := SumLen + LEN(xs[i]); END_FOR\nEND_FUNCTION\n"
      "PROGRAM Main\nVAR\nr : Rec; names : ARRAY[0..2] OF STRING(4); f : Fb; total : INT; ok : BOOL;\n"
      "size : DINT;\nEND_VAR\n"
      "r.tag := 'abcdef'; r.n := 7; names[0] := 'x'; names[1] := 'yyyy'; names[2] := 'zzzzz';\n"
      "f(in := 'hey'); ok := Up(names[1]); total := SumLen(xs := names); size := SIZEOF(names);\nEND_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.r.tag"], "'abcd'");
  EXPECT_EQ(r["Main.r.n"], "7");
  EXPECT_EQ(r["Main.f.out"], "'he!'");
  EXPECT_EQ(r["Main.names[1]"], "'Yyyy'");
  EXPECT_EQ(r["Main.names[2]"], "'zzzz'");
  EXPECT_EQ(r["Main.total"], "9");
  EXPECT_EQ(r["Main.size"], "15");  // 3 STRING(4) of 5 bytes, no padding between them
}

TEST(StringLayout, WrittenValuesAreTheCharactersAndZeros) {
  // What a debugger's setVariable and a stimulus file write (encodeValue): the whole variable.
  test::Running r = test::run("PROGRAM Main\nVAR\ns : STRING(3); w : WSTRING(2);\nEND_VAR\ns := s;\nEND_PROGRAM\n");
  ASSERT_TRUE(r.rt);
  std::string error;
  const std::optional<VariableLocation> s = findVariable(*r.program, "Main.s", error);
  const std::optional<VariableLocation> w = findVariable(*r.program, "Main.w", error);
  ASSERT_TRUE(s && w) << error;
  std::vector<uint8_t> out;
  ASSERT_TRUE(encodeValue(*r.program, "'ab'", *s->type, out, error)) << error;
  EXPECT_EQ(out, (std::vector<uint8_t>{'a', 'b', 0, 0}));
  ASSERT_TRUE(encodeValue(*r.program, "'abc'", *s->type, out, error)) << error;
  EXPECT_EQ(out, (std::vector<uint8_t>{'a', 'b', 'c', 0}));
  EXPECT_FALSE(encodeValue(*r.program, "'abcd'", *s->type, out, error));
  EXPECT_NE(error.find("longer than STRING[3]"), std::string::npos) << error;
  ASSERT_TRUE(encodeValue(*r.program, "\"é\"", *w->type, out, error)) << error;
  EXPECT_EQ(out, (std::vector<uint8_t>{0xE9, 0, 0, 0, 0, 0}));
  // The value shown is the characters up to the 0.
  const uint8_t bytesAb[] = {'a', 'b', 0, 'z'};
  EXPECT_EQ(formatValue(*r.program, bytesAb, 0, -1, *s->type), "'ab'");
  const uint8_t full[] = {'a', 'b', 'c', 'd'};  // no 0 inside: the capacity's characters
  EXPECT_EQ(formatValue(*r.program, full, 0, -1, *s->type), "'abc'");
}

TEST(StringLayout, ProgramsThatStoreStrings) {
  // Program::storesStrings decides whether an old trace's layout matters (docs/replayer.md).
  auto stores = [](const std::string& text) {
    const std::shared_ptr<const Program> p = test::mustCompile(text);
    return p && p->storesStrings();
  };
  EXPECT_FALSE(stores("PROGRAM Main\nVAR n : INT; END_VAR\nn := LEN('abc');\nEND_PROGRAM\n"));
  EXPECT_TRUE(stores("PROGRAM Main\nVAR s : STRING(3); END_VAR\ns := 'a';\nEND_PROGRAM\n"));
  EXPECT_TRUE(stores("VAR_GLOBAL g : ARRAY[0..1] OF WSTRING; END_VAR\nPROGRAM Main\nEND_PROGRAM\n"));
  EXPECT_TRUE(
      stores("TYPE R : STRUCT s : STRING; END_STRUCT; END_TYPE\n"
             "FUNCTION F : INT\nVAR r : R; END_VAR\nF := LEN(r.s);\nEND_FUNCTION\n"
             "PROGRAM Main\nVAR n : INT; END_VAR\nn := F();\nEND_PROGRAM\n"));
}

TEST(StringLayout, HostViewsFindTheZero) {
  uint8_t s[5] = {'a', 'b', 0, 'x', 0};
  EXPECT_EQ(stringView(s), "ab");
  EXPECT_EQ(stringLengthWithin(s, 4, false), 2u);
  const uint8_t full[4] = {'a', 'b', 'c', 'd'};  // no 0 within the capacity: the capacity
  EXPECT_EQ(stringLengthWithin(full, 4, false), 4u);
  alignas(2) uint8_t w[6] = {'a', 0, 0, 0, 'b', 0};
  EXPECT_EQ(wideStringView(w), u"a");
  EXPECT_EQ(stringLengthWithin(w, 2, true), 1u);
  EXPECT_EQ(stringBytes(80, false), 81u);
  EXPECT_EQ(stringBytes(10, true), 22u);
  // stringAssign writes the characters and one 0, nothing after it.
  uint8_t d[6];
  std::memset(d, 'Q', sizeof d);
  stringAssign(d, 5, std::string_view("hi"));
  EXPECT_EQ(std::vector<uint8_t>(d, d + 6), (std::vector<uint8_t>{'h', 'i', 0, 'Q', 'Q', 'Q'}));
  stringAssign(d, 5, std::string_view("toolong"));
  EXPECT_EQ(std::vector<uint8_t>(d, d + 6), bytes(std::string_view("toolo\0", 6)));
}

}  // namespace
}  // namespace scanback
