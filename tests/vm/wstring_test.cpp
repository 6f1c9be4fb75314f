// WSTRING and WCHAR (docs/language.md): the STRING functions at UTF-16 units, comparisons,
// conversions, storage, and the errors for mixing them with STRING.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tests/vm/test_support.h"
#include "vm/exec/strings.h"

namespace scanback {
namespace {

// Runs `body` once in a program with `decls`; returns the runner.
test::Running runBody(const std::string& decls, const std::string& body) {
  return test::run("PROGRAM Main\nVAR\n" + decls + "\nEND_VAR\n" + body + "\nEND_PROGRAM\n");
}

// The value of one WSTRING (or any) expression, as the debugger shows it.
std::string valueOfExpr(const std::string& type, const std::string& expr) {
  test::Running r = runBody("x : " + type + ";", "x := " + expr + ";");
  return r.rt ? r["Main.x"] : "<no program>";
}

TEST(WString, Functions) {
  EXPECT_EQ(valueOfExpr("INT", "LEN(\"Grüße\")"), "5");
  EXPECT_EQ(valueOfExpr("INT", "LEN(\"a😀\")"), "3");  // code units: the emoji is a surrogate pair
  EXPECT_EQ(valueOfExpr("INT", "LEN(WSTRING#\"\")"), "0");
  EXPECT_EQ(valueOfExpr("WSTRING", "LEFT(\"äbcdé\", 2)"), "\"äb\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "LEFT(\"abc\", 9)"), "\"abc\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "RIGHT(\"äbcdé\", 2)"), "\"dé\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "RIGHT(\"abc\", -1)"), "\"\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "MID(\"äbcdé\", 3, 2)"), "\"bcd\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "CONCAT(\"ä\", \"b\", \"€\")"), "\"äb€\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "INSERT(\"äé\", \"XY\", 1)"), "\"äXYé\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "DELETE(\"äbcdé\", 2, 2)"), "\"ädé\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "REPLACE(\"äbcdé\", \"€\", 3, 2)"), "\"ä€é\"");
  EXPECT_EQ(valueOfExpr("INT", "FIND(\"äbcdé\", \"dé\")"), "4");
  EXPECT_EQ(valueOfExpr("INT", "FIND(\"äbcdé\", \"x\")"), "0");
}

TEST(WString, ComparisonsByCodeUnits) {
  EXPECT_EQ(valueOfExpr("BOOL", "\"é\" = \"é\""), "TRUE");
  EXPECT_EQ(valueOfExpr("BOOL", "\"é\" <> \"e\""), "TRUE");
  EXPECT_EQ(valueOfExpr("BOOL", "\"abc\" < \"abd\""), "TRUE");
  EXPECT_EQ(valueOfExpr("BOOL", "\"ab\" < \"abc\""), "TRUE");
  // U+00E9 (one unit 0x00E9) sorts before U+0100, though its UTF-8 bytes would not decide that.
  EXPECT_EQ(valueOfExpr("BOOL", "\"é\" < \"$0100\""), "TRUE");
  EXPECT_EQ(valueOfExpr("BOOL", "\"$FFFF\" > \"😀\""), "TRUE");  // by units: 0xFFFF > 0xD83D
  EXPECT_EQ(valueOfExpr("BOOL", "\"b\" >= \"b\""), "TRUE");
  EXPECT_EQ(valueOfExpr("BOOL", "\"b\" <= \"a\""), "FALSE");
  EXPECT_EQ(valueOfExpr("BOOL", "WCHAR#\"a\" < WCHAR#\"b\""), "TRUE");
  EXPECT_EQ(valueOfExpr("BOOL", "WCHAR#\"a\" = WCHAR#\"b\""), "FALSE");
}

TEST(WString, Conversions) {
  EXPECT_EQ(valueOfExpr("STRING", "WSTRING_TO_STRING(\"Grüße €!\")"), "'Gr??e ?!'");
  EXPECT_EQ(valueOfExpr("STRING", "WSTRING_TO_STRING(\"😀\")"), "'?'");         // one character, one '?'
  EXPECT_EQ(valueOfExpr("WSTRING", "STRING_TO_WSTRING('hé')"), "\"hé\"");      // a STRING holds UTF-8
  EXPECT_EQ(valueOfExpr("WSTRING", "STRING_TO_WSTRING('a$FFb')"), "\"a?b\"");  // not UTF-8
  EXPECT_EQ(valueOfExpr("DINT", "WSTRING_TO_DINT(\" 42 \")"), "42");
  EXPECT_EQ(valueOfExpr("REAL", "WSTRING_TO_REAL(\"2.5\")"), "2.5");
  EXPECT_EQ(valueOfExpr("BOOL", "WSTRING_TO_BOOL(\"TRUE\")"), "TRUE");
  EXPECT_EQ(valueOfExpr("WSTRING", "DINT_TO_WSTRING(-17)"), "\"-17\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "TIME_TO_WSTRING(T#1s500ms)"), "\"T#1s500ms\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "TO_WSTRING(TRUE)"), "\"TRUE\"");
  EXPECT_EQ(valueOfExpr("WSTRING", "WCHAR_TO_WSTRING(WCHAR#\"ß\")"), "\"ß\"");
  EXPECT_EQ(valueOfExpr("WCHAR", "WSTRING_TO_WCHAR(\"ßx\")"), "\"ß\"");
  EXPECT_EQ(valueOfExpr("WCHAR", "WSTRING_TO_WCHAR(WSTRING#\"\")"), "\"$0000\"");
  EXPECT_EQ(valueOfExpr("WORD", "WCHAR_TO_WORD(WCHAR#\"€\")"), "8364");
  EXPECT_EQ(valueOfExpr("WCHAR", "WORD_TO_WCHAR(16#41)"), "\"A\"");
  EXPECT_EQ(valueOfExpr("STRING", "WCHAR_TO_STRING(WCHAR#\"A\")"), "'A'");
  EXPECT_EQ(valueOfExpr("WCHAR", "STRING_TO_WCHAR('é')"), "\"é\"");
}

TEST(WString, AssignmentTruncatesAndTerminates) {
  test::Running r = runBody("a : WSTRING[3]; b : WSTRING[10] := \"abcdefghij\"; n : INT;",
                            "b := \"xyz\"; a := \"äöüß\"; n := LEN(a);");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.a"], "\"äöü\"");
  EXPECT_EQ(r["Main.b"], "\"xyz\"");
  EXPECT_EQ(r["Main.n"], "3");
  // b's image: x y z, a 0 unit, then what "abcdefghij" left (CODESYS's layout).
  std::string error;
  const auto loc = findVariable(*r.program, "Main.b", error);
  ASSERT_TRUE(loc) << error;
  EXPECT_EQ(loc->type->size, 2u * 11u);
  const uint8_t* p = r.rt->vm().image() + loc->offset;
  const uint8_t expected[] = {'x', 0, 'y', 0, 'z', 0, 0, 0, 'e', 0};
  EXPECT_EQ(std::memcmp(p, expected, sizeof expected), 0);
}

TEST(WString, TheLongestResultsFitTheWorkArea) {
  // Doubling past 65535 units: every CONCAT and INSERT is cut at the capacity (ASan watches the
  // work area, which holds no more than one result).
  test::Running r =
      runBody("a, b : WSTRING[65535]; s : STRING[65535]; i : DINT; na, nb, ns : UINT; lastA, lastB : WCHAR;",
              "a := \"é😀\"; s := 'xy';\n"
              "FOR i := 1 TO 16 DO a := CONCAT(a, a); s := CONCAT(s, s); END_FOR;\n"
              "b := INSERT(a, a, 5);\n"
              // LEN is an INT (as in CODESYS): 65535 reads back through UINT
              "na := INT_TO_UINT(LEN(a)); nb := INT_TO_UINT(LEN(b)); ns := INT_TO_UINT(LEN(s));\n"
              "lastA := WSTRING_TO_WCHAR(RIGHT(a, 1)); lastB := WSTRING_TO_WCHAR(RIGHT(b, 1));");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.na"], "65535");
  EXPECT_EQ(r["Main.nb"], "65535");
  EXPECT_EQ(r["Main.ns"], "65535");
  // a repeats é, high and low surrogate: its unit 65535 (3 * 21845) is a low surrogate; b is a's
  // first 5 units then a's first 65530, ending with unit 65530 of a (3 * 21843 + 1): an é.
  EXPECT_EQ(r["Main.lastA"], "\"$DE00\"");
  EXPECT_EQ(r["Main.lastB"], "\"é\"");
}

TEST(WString, SizeofAndLayout) {
  EXPECT_EQ(valueOfExpr("DINT", "SIZEOF(WSTRING)"), "162");  // 81 units: 80 and the 0
  test::Running r = runBody("w : WSTRING[8]; c : WCHAR; n, m : DINT;", "n := SIZEOF(w); m := SIZEOF(c);");
  ASSERT_TRUE(r.rt);
  EXPECT_EQ(r["Main.n"], "18");
  EXPECT_EQ(r["Main.m"], "2");
}

TEST(WString, MixingWithStringIsAnError) {
  const std::string decls = "PROGRAM Main\nVAR w : WSTRING; s : STRING; b : BOOL; c : WCHAR; END_VAR\n";
  auto errorsOf = [&](const std::string& body) { return test::compileErrors(decls + body + "\nEND_PROGRAM\n"); };
  EXPECT_NE(errorsOf("w := s;").find("main.st:3:6: error: cannot convert STRING to WSTRING; use STRING_TO_WSTRING"),
            std::string::npos);
  EXPECT_NE(errorsOf("s := w;").find("cannot convert WSTRING to STRING; use WSTRING_TO_STRING"), std::string::npos);
  EXPECT_NE(errorsOf("w := 'abc';").find("cannot convert STRING[3] to WSTRING"), std::string::npos);
  EXPECT_NE(errorsOf("b := w = s;").find("cannot compare WSTRING and STRING"), std::string::npos);
  EXPECT_NE(errorsOf("w := CONCAT(w, s);").find("CONCAT needs a WSTRING here, not STRING"), std::string::npos);
  EXPECT_NE(errorsOf("c := WCHAR#\"ab\";").find("WCHAR#\"...\" holds one UTF-16 code unit, not 2"), std::string::npos);
  EXPECT_NE(errorsOf("c := WCHAR#\"😀\";").find("holds one UTF-16 code unit, not 2"), std::string::npos);
  EXPECT_NE(errorsOf("c := 65;").find("a number is not a WCHAR"), std::string::npos);
  EXPECT_NE(errorsOf("w := w + w;").find("operator + cannot be applied to WSTRING and WSTRING"), std::string::npos);
}

TEST(WString, StringFunctionTemplatesAtBothWidths) {
  // The same template at both widths: results truncate to the capacity in characters.
  std::vector<char> scratch(kStringScratchBytes);
  uint8_t narrow[4 + 1];
  std::memset(narrow, 0xEE, sizeof narrow);
  stringConcat(narrow, 4, std::string_view("abc"), std::string_view("def"), scratch.data());
  EXPECT_EQ(stringView(narrow), "abcd");
  EXPECT_EQ(narrow[4], 0);  // the terminating byte
  alignas(2) uint8_t wide[2 * 5];
  std::memset(wide, 0xEE, sizeof wide);
  stringConcat(wide, 4, std::u16string_view(u"abc"), std::u16string_view(u"def"), scratch.data());
  EXPECT_EQ(wideStringView(wide), u"abcd");
  EXPECT_EQ(wide[8], 0);  // the terminating unit
  EXPECT_EQ(wide[9], 0);
  stringMid(wide, 4, wideStringView(wide), 2, 2, scratch.data());  // the source aliases the result
  EXPECT_EQ(wideStringView(wide), u"bc");
  EXPECT_EQ(stringFind(std::u16string_view(u"xéé"), std::u16string_view(u"é")), 2);
  EXPECT_EQ(utf8FromWide(u"\xD800x"), "\xEF\xBF\xBDx");  // a lone surrogate is U+FFFD in UTF-8
  EXPECT_EQ(wideFromUtf8("\xC3\xA9\xF0\x9F\x98\x80"), u"\u00e9\U0001F600");
}

}  // namespace
}  // namespace scanback
