// What each statement reads (vm/sema/reads.h, by statement id: vm/compiler/statement_reads.h): the
// places its own code uses, as written, against lists derived by hand from the source.
#include "vm/compiler/statement_reads.h"

#include <gtest/gtest.h>

#include "tests/vm/test_support.h"

using namespace scanback;

namespace {

// The texts of the reads of the first statement on `line`.
std::vector<std::string> readsOn(const Program& p, uint32_t line) {
  std::string error;
  const std::shared_ptr<const StatementReads> reads = statementReads(p, error);
  if (!reads) {
    ADD_FAILURE() << error;
    return {};
  }
  for (uint32_t id = 0; id < p.statements.size(); ++id) {
    if (p.statements[id].span.line != line) continue;
    std::vector<std::string> out;
    for (const SourceSpan& r : reads->of[id]) out.push_back(spanText(p.sources, r));
    return out;
  }
  ADD_FAILURE() << "no statement on line " << line;
  return {};
}

using Texts = std::vector<std::string>;

}  // namespace

TEST(StatementReads, PlacesIndexesReferencesAndCalls) {
  const std::shared_ptr<const Program> p = test::mustCompile(R"(FUNCTION_BLOCK Scale
VAR_INPUT in : INT; END_VAR
VAR_OUTPUT out : INT; END_VAR
VAR k : INT := 2; END_VAR
out := in * k;
END_FUNCTION_BLOCK
PROGRAM Main
VAR
  a : ARRAY[1..5] OF INT; i : INT := 1; j : INT := 2; x : INT; y : INT; b : BOOL; w : WORD;
  fb : Scale; p : REF_TO INT; n : INT; io : INT;
END_VAR
VAR CONSTANT c : INT := 7; END_VAR
a[i + 1] := a[j] + x * c;
p := REF(a[j]);
y := p^ + fb.out;
fb(in := y + n, out => a[i]);
IF b AND x > 3 THEN
  x := 0;
ELSIF w.2 THEN
  x := 1;
END_IF;
FOR n := i TO j BY 1 DO
  y := y + 1;
END_FOR;
x := MAX(x, 3) + ABS(a[2]);
END_PROGRAM
)");
  ASSERT_TRUE(p);
  // The target is not read, its index is; a CONSTANT is folded away.
  EXPECT_EQ(readsOn(*p, 13), (Texts{"i", "a[j]", "j", "x"}));
  // REF() of a place reads what its address depends on only.
  EXPECT_EQ(readsOn(*p, 14), (Texts{"j"}));
  // A dereference reads the reference too.
  EXPECT_EQ(readsOn(*p, 15), (Texts{"p^", "p", "fb.out"}));
  // A call reads its inputs; an output's target is not read, its index is.
  EXPECT_EQ(readsOn(*p, 16), (Texts{"y", "n", "i"}));
  // An IF reads every condition, ELSIF's included; not its branches.
  EXPECT_EQ(readsOn(*p, 17), (Texts{"b", "x", "w.2"}));
  EXPECT_EQ(readsOn(*p, 18), (Texts{}));
  EXPECT_EQ(readsOn(*p, 22), (Texts{"i", "j"}));
  EXPECT_EQ(readsOn(*p, 25), (Texts{"x", "a[2]"}));
  // In a function block's body, its own variables, by their names there.
  EXPECT_EQ(readsOn(*p, 5), (Texts{"in", "k"}));
}
