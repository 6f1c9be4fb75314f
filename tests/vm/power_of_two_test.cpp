// An unsigned x / 2^k is lowered to a shift and x MOD 2^k to a mask, a signed x MOD 2^k to MODP2
// (issue 17): the results are
// those of the division by a variable holding the same divisor, for every unsigned width, at the
// edges (0, 1, the maximum) and for divisors 1 and the largest power of two.
#include <gtest/gtest.h>

#include <string>

#include "tests/vm/test_support.h"

namespace scanback {
namespace {

TEST(PowerOfTwoDivisors, ShiftAndMaskEqualTheDivision) {
  struct Case {
    const char* type;
    const char* values;  // an ARRAY[0..4] initializer
    const char* powers;  // the literal divisors: 1, 2, 2^k, the largest
    int count;
  };
  const Case cases[] = {
      {"USINT", "0, 1, 77, 128, 255", "1, 2, 16, 128", 4},
      {"UINT", "0, 1, 1000, 32768, 65535", "1, 2, 64, 32768", 4},
      {"UDINT", "0, 1, 1298715481, 2147483648, 4294967295", "1, 2, 65536, 2147483648", 4},
      {"ULINT", "0, 1, 1298715481123, 9223372036854775808, 18446744073709551615", "1, 2, 4096, 9223372036854775808", 4},
  };
  // Signed: only MOD (MODP2), whose result takes the sign of the dividend.
  const Case signedCases[] = {
      {"SINT", "-128, -65, -1, 0, 127", "1, 2, 16, 64", 4},
      {"INT", "-32768, -129, -64, 63, 32767", "1, 2, 64, 16384", 4},
      {"DINT", "-2147483648, -1000001, -1, 65, 2147483647", "1, 2, 65536, 1073741824", 4},
      {"LINT", "-9223372036854775808, -4097, -4096, 1, 9223372036854775807", "1, 2, 4096, 4611686018427387904", 4},
  };
  for (const Case& c : signedCases) {
    std::string powers = c.powers;
    std::string src = std::string("PROGRAM Main\nVAR v : ARRAY[0..4] OF ") + c.type + " := [" + c.values +
                      "]; d : " + c.type + "; r, r2 : " + c.type + "; bad : DINT; i : DINT; END_VAR\n";
    size_t start = 0;
    for (int p = 0; p < c.count; ++p) {
      const size_t comma = powers.find(',', start);
      const std::string k = powers.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? powers.size() : comma + 2;
      src += "d := " + k + ";\nFOR i := 0 TO 4 DO\n  r := v[i] MOD " + k +
             "; r2 := v[i] MOD d;\n  IF r <> r2 THEN bad := bad + 1; END_IF;\nEND_FOR;\n";
    }
    src += "END_PROGRAM\n";
    SCOPED_TRACE(src);
    test::Running r = test::run(src);
    ASSERT_EQ(r.status, RunStatus::CycleDone);
    EXPECT_EQ(r["Main.bad"], "0");
    EXPECT_NE(disassemble(*r.program).find("MODP2_"), std::string::npos) << disassemble(*r.program);
  }
  for (const Case& c : cases) {
    std::string powers = c.powers;
    std::string src = std::string("PROGRAM Main\nVAR v : ARRAY[0..4] OF ") + c.type + " := [" + c.values +
                      "]; d : " + c.type + "; q, r, q2, r2 : " + c.type + "; bad : DINT; i : DINT; END_VAR\n";
    size_t start = 0;
    for (int p = 0; p < c.count; ++p) {
      const size_t comma = powers.find(',', start);
      const std::string k = powers.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? powers.size() : comma + 2;
      src += "d := " + k + ";\nFOR i := 0 TO 4 DO\n  q := v[i] / " + k + "; r := v[i] MOD " + k +
             ";\n  q2 := v[i] / d; r2 := v[i] MOD d;\n  IF q <> q2 OR r <> r2 THEN bad := bad + 1; END_IF;\nEND_FOR;\n";
    }
    src += "END_PROGRAM\n";
    SCOPED_TRACE(src);
    test::Running r = test::run(src);
    ASSERT_EQ(r.status, RunStatus::CycleDone);
    EXPECT_EQ(r["Main.bad"], "0");
    const std::string listing = disassemble(*r.program);
    EXPECT_NE(listing.find("SHR_"), std::string::npos) << listing;
    EXPECT_NE(listing.find("AND_"), std::string::npos) << listing;
  }
}

// a * b + c on 32- and 64-bit integers is one MULADD: the same wrapped result as the product and
// the sum computed apart (through a function, which the lowering does not fuse), at the edges.
TEST(MultiplyAdd, EqualsTheProductThenTheSum) {
  const char* const types[] = {"DINT", "UDINT", "LINT", "ULINT"};
  for (const char* type : types) {
    const std::string t = type;
    const std::string src = "FUNCTION Mul : " + t + "\nVAR_INPUT a, b : " + t +
                            "; END_VAR\nMul := a * b;\nEND_FUNCTION\n" + "PROGRAM Main\nVAR v : ARRAY[0..4] OF " + t +
                            "; i, j, k : DINT; r, r2 : " + t + "; a, b, c : " + t +
                            "; small : INT := -7; bad : DINT; n : DINT; END_VAR\n" +
                            "v[0] := 0; v[1] := 1; v[2] := 1664525; v[3] := v[1] - 2; v[4] := 16#7FFFFFFF;\n"
                            "FOR i := 0 TO 4 DO FOR j := 0 TO 4 DO FOR k := 0 TO 4 DO\n"
                            "  a := v[i]; b := v[j]; c := v[k]; r := a * b + c; r2 := Mul(a, b) + c;\n"
                            "  IF r <> r2 THEN bad := bad + 1; END_IF; n := n + 1;\n"
                            "END_FOR; END_FOR; END_FOR;\n"
                            "a := v[2]; r := a * 1000 + small; r2 := Mul(a, 1000) + small;\n"
                            "IF r <> r2 THEN bad := bad + 1; END_IF;\n"
                            "END_PROGRAM\n";
    SCOPED_TRACE(src);
    test::Running r = test::run(src);
    ASSERT_EQ(r.status, RunStatus::CycleDone);
    EXPECT_EQ(r["Main.bad"], "0");
    EXPECT_EQ(r["Main.n"], "125");
  }
  auto p = test::mustCompile(
      "PROGRAM Main VAR seed : UDINT := 777; x : LINT; y : LINT := 3; END_VAR\n"
      "seed := seed * 1664525 + 1013904223; x := y * y + 5; END_PROGRAM\n");
  ASSERT_TRUE(p);
  const std::string listing = disassemble(*p);
  EXPECT_NE(listing.find("MULADD_32"), std::string::npos) << listing;
  EXPECT_NE(listing.find("MULADD_64"), std::string::npos) << listing;
  test::Running r = test::run(
      "PROGRAM Main VAR seed : UDINT := 777; x : LINT; y : LINT := 3; END_VAR\n"
      "seed := seed * 1664525 + 1013904223; x := y * y + 5; END_PROGRAM\n");
  EXPECT_EQ(r["Main.seed"], "2307240148");  // 777 * 1664525 + 1013904223 mod 2^32
  EXPECT_EQ(r["Main.x"], "14");
}

}  // namespace
}  // namespace scanback
