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

}  // namespace
}  // namespace scanback
