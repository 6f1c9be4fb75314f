// Golden opcode listings: every tests/codegen/NAME.st compiles to exactly the code in NAME.disasm
// (the output of disassemble()). With SCANBACK_UPDATE_GOLDEN=1 the test rewrites the .disasm files
// instead; read the diff before committing it.
//
// Plus the opcode table's own consistency (names, meanings, operand letters).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/files.h"
#include "tests/vm/test_support.h"

namespace scanback {
namespace {

namespace fs = std::filesystem;
using test::readText;

const fs::path kCodegenDir = fs::path(SCANBACK_SOURCE_DIR) / "tests" / "codegen";

std::vector<std::string> listingNames() {
  std::vector<std::string> out;
  if (!fs::exists(kCodegenDir)) return out;
  for (const auto& e : fs::directory_iterator(kCodegenDir))
    if (e.path().extension() == ".st") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool updating() {
  const char* v = std::getenv("SCANBACK_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

// The first line where two listings differ, for a readable failure.
std::string firstDifference(const std::string& expected, const std::string& actual) {
  std::istringstream a(expected), b(actual);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(a, la));
    const bool hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "identical";
    if (!ha || !hb || la != lb)
      return "line " + std::to_string(line) + ":\n  expected: " + (ha ? la : "<end>") +
             "\n  actual:   " + (hb ? lb : "<end>");
  }
}

class CodegenListing : public ::testing::TestWithParam<std::string> {};

TEST_P(CodegenListing, MatchesGolden) {
  const std::string name = GetParam();
  const fs::path st = kCodegenDir / (name + ".st");
  const fs::path golden = kCodegenDir / (name + ".disasm");
  test::Compiled c = test::compileFiles({{name + ".st", readText(st)}});
  ASSERT_TRUE(c.program) << c.messages();
  const std::string actual = disassemble(*c.program);
  if (updating()) {
    std::ofstream out(golden, std::ios::binary);
    out << actual;
    SUCCEED() << "rewrote " << golden;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with SCANBACK_UPDATE_GOLDEN=1 to create it";
  const std::string expected = readText(golden);
  EXPECT_EQ(expected, actual) << name << ": " << firstDifference(expected, actual)
                              << "\n(SCANBACK_UPDATE_GOLDEN=1 rewrites the listing)";
}

INSTANTIATE_TEST_SUITE_P(Listings, CodegenListing, ::testing::ValuesIn(listingNames()),
                         [](const ::testing::TestParamInfo<std::string>& testInfo) { return testInfo.param; });

TEST(CodegenListings, DirectoryHasListings) {
  EXPECT_GE(listingNames().size(), 12u) << kCodegenDir;
  for (const std::string& n : listingNames())
    EXPECT_TRUE(fs::exists(kCodegenDir / (n + ".disasm"))) << n << ".disasm is missing";
}

// The idioms the listings exist for, checked structurally as well, so that a blindly
// regenerated listing cannot lose them unnoticed.
struct Decoded {
  std::shared_ptr<const Program> program;
  std::vector<test::Instruction> main;  // the code of PROGRAM Main
  std::string listing;
  bool has(Op op) const {
    for (const test::Instruction& i : main)
      if (i.op == op) return true;
    return false;
  }
};

Decoded decodeListing(const std::string& name) {
  Decoded d;
  test::Compiled c = test::compileFiles({{name + ".st", readText(kCodegenDir / (name + ".st"))}});
  EXPECT_TRUE(c.program) << c.messages();
  if (!c.program) return d;
  d.program = c.program;
  d.listing = disassemble(*c.program);
  for (uint32_t i = 0; i < c.program->pous.size(); ++i)
    if (c.program->pous[i].kind == PouKind::Program && c.program->pous[i].name == "Main")
      d.main = test::decodePou(*c.program, i);
  EXPECT_FALSE(d.main.empty()) << name;
  return d;
}

TEST(CodegenListings, KeyIdiomsUseTheirOpcodes) {
  // x := x + 1 on a DINT global: a statement boundary and one ADD_I32 in place, then RET.
  const Decoded inc = decodeListing("inc_global");
  ASSERT_EQ(test::opNames(inc.main), (std::vector<std::string>{"STMT", "ADD_I32", "RET"})) << inc.listing;
  EXPECT_EQ(inc.main[1].operands[0], inc.main[1].operands[1]);
  EXPECT_EQ(operandBase(inc.main[1].operands[2]), Base::Const);

  const Decoded loop = decodeListing("for_loop");
  EXPECT_TRUE(loop.has(Op::FORCHK_I32) && loop.has(Op::FORNEXT_I32)) << loop.listing;

  // Conditions are fused compare-and-branch; no BOOL is materialised.
  const Decoded cmp = decodeListing("if_compare");
  EXPECT_TRUE(cmp.has(Op::JLE_I32) && cmp.has(Op::JNLT_F32)) << cmp.listing;
  for (const test::Instruction& i : cmp.main) {
    const std::string_view n = opInfo(i.op).name;
    EXPECT_FALSE(n.rfind("LT_", 0) == 0 || n.rfind("LE_", 0) == 0 || n.rfind("EQ_", 0) == 0) << n;
  }

  const Decoded cases = decodeListing("case_jtab");
  EXPECT_TRUE(cases.has(Op::JTAB)) << cases.listing;

  const Decoded arr = decodeListing("array_index");
  EXPECT_TRUE(arr.has(Op::ELD4) && arr.has(Op::EST4) && arr.has(Op::ELEM)) << arr.listing;

  // Every CALLF is preceded, in its statement, by the MOVN of the callee's frame template.
  const Decoded fn = decodeListing("function_call");
  int calls = 0;
  for (size_t k = 0; k < fn.main.size(); ++k) {
    if (fn.main[k].op != Op::CALLF) continue;
    ++calls;
    const PouInfo& callee = fn.program->pous.at(fn.main[k].operands[0]);
    EXPECT_EQ(callee.name, "Scale");
    bool template_ = false;
    for (size_t b = k; b-- > 0 && fn.main[b].op != Op::STMT;)
      if (fn.main[b].op == Op::MOVN && fn.main[b].operands[2] == callee.frameSize) template_ = true;
    EXPECT_TRUE(template_) << "CALLF at " << fn.main[k].pc << " without a frame template copy\n" << fn.listing;
  }
  EXPECT_EQ(calls, 2);

  const Decoded fb = decodeListing("fb_call");
  ASSERT_TRUE(fb.has(Op::CALLI)) << fb.listing;
  for (const test::Instruction& i : fb.main) {
    if (i.op == Op::CALLI) {
      EXPECT_EQ(fb.program->pous.at(i.operands[0]).name, "Counter");
    }
  }

  const Decoded nat = decodeListing("std_fb");
  EXPECT_TRUE(nat.has(Op::NATFB)) << nat.listing;
  EXPECT_FALSE(nat.has(Op::CALLI) || nat.has(Op::CALLF)) << nat.listing;

  const Decoded m = decodeListing("method_call");
  ASSERT_TRUE(m.has(Op::CALLI)) << m.listing;
  for (const test::Instruction& i : m.main) {
    if (i.op == Op::CALLI) {
      EXPECT_EQ(m.program->pous.at(i.operands[0]).name, "Axis.MoveBy");
    }
  }
}

// ------------------------------------------------------------------ the opcode table

TEST(OpcodeTable, EveryOpcodeHasANameAMeaningAndValidOperandLetters) {
  const size_t count = static_cast<size_t>(Op::Count);
  ASSERT_EQ(std::size(kOpInfo), count);
  std::set<std::string_view> names;
  for (size_t i = 0; i < count; ++i) {
    const OpInfo& info = kOpInfo[i];
    EXPECT_FALSE(info.name.empty()) << "opcode " << i;
    EXPECT_FALSE(info.meaning.empty()) << info.name;
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name " << info.name;
    for (char c : info.operands)
      EXPECT_NE(std::string_view("okjpsn*").find(c), std::string_view::npos)
          << info.name << " has operand letter '" << c << "'";
    // A jump table's targets follow the count operand it is sized by.
    const size_t star = info.operands.find('*');
    if (star != std::string_view::npos) {
      EXPECT_EQ(star, info.operands.size() - 1) << info.name << ": '*' must be last";
      EXPECT_NE(info.operands.substr(0, star).find('k'), std::string_view::npos) << info.name;
    }
    EXPECT_EQ(&opInfo(static_cast<Op>(i)), &info);
  }
}

// Every plain opcode has its statement-fused twin S_<op>, which takes the statement id first.
TEST(OpcodeTable, FusedOpsMirrorThePlainOnes) {
  ASSERT_EQ(static_cast<uint32_t>(Op::Count), 2 * kPlainOpCount);
  for (uint32_t i = 0; i < kPlainOpCount; ++i) {
    const Op plain = static_cast<Op>(i);
    const Op fused = fusedWithStatement(plain);
    EXPECT_FALSE(isFused(plain));
    EXPECT_TRUE(isFused(fused));
    EXPECT_EQ(unfused(fused), plain);
    EXPECT_EQ(unfused(plain), plain);
    EXPECT_EQ(std::string(opInfo(fused).name), "S_" + std::string(opInfo(plain).name));
    EXPECT_EQ(std::string(opInfo(fused).operands), "s" + std::string(opInfo(plain).operands));
  }
}

TEST(OpcodeTable, TypedFamiliesAreInPrimOrder) {
  // opFor(first, prim) relies on every family listing its members in Prim order.
  EXPECT_EQ(opInfo(static_cast<Op>(static_cast<uint32_t>(Op::ADD_I8) + static_cast<uint32_t>(Prim::F64))).name,
            "ADD_F64");
  EXPECT_EQ(opInfo(static_cast<Op>(static_cast<uint32_t>(Op::ADD_I8) + static_cast<uint32_t>(Prim::U16))).name,
            "ADD_U16");
  EXPECT_EQ(opInfo(static_cast<Op>(static_cast<uint32_t>(Op::MOD_I8) + static_cast<uint32_t>(Prim::U64))).name,
            "MOD_U64");
  EXPECT_EQ(opInfo(static_cast<Op>(static_cast<uint32_t>(Op::JLT_I8) + static_cast<uint32_t>(Prim::F32))).name,
            "JLT_F32");
  EXPECT_EQ(opInfo(static_cast<Op>(static_cast<uint32_t>(Op::FORNEXT_I8) + static_cast<uint32_t>(Prim::I32))).name,
            "FORNEXT_I32");
  EXPECT_EQ(opInfo(static_cast<Op>(static_cast<uint32_t>(Op::CVT_I8_I8) + 10 * 2 + 9)).name, "CVT_I32_F64");
}

TEST(OpcodeTable, OperandEncodingRoundTrips) {
  for (Base b : {Base::Image, Base::This, Base::Frame, Base::Const}) {
    for (uint32_t off : {0u, 1u, 12345u, kOffsetMask}) {
      const uint32_t o = operand(b, off);
      EXPECT_EQ(operandBase(o), b);
      EXPECT_EQ(operandOffset(o), off);
    }
  }
}

// Every program's code decodes: walking the opcodes with their operand counts lands exactly on
// the end of the code, and every jump target is the start of an instruction.
TEST(OpcodeTable, CompiledCodeDecodesCleanly) {
  std::vector<std::string> sources;
  for (const std::string& n : listingNames()) sources.push_back(readText(kCodegenDir / (n + ".st")));
  ASSERT_FALSE(sources.empty());
  for (size_t si = 0; si < sources.size(); ++si) {
    test::Compiled c = test::compile(sources[si]);
    ASSERT_TRUE(c.program) << c.messages();
    const std::vector<uint32_t>& code = c.program->code;
    std::set<uint32_t> starts;
    std::vector<uint32_t> targets;
    uint32_t pc = 0;
    while (pc < code.size()) {
      starts.insert(pc);
      ASSERT_LT(code[pc], static_cast<uint32_t>(Op::Count)) << "bad opcode at " << pc;
      const OpInfo& info = opInfo(static_cast<Op>(code[pc]));
      uint32_t at = pc + 1, lastK = 0;
      for (char l : info.operands) {
        if (l == '*') {
          for (uint32_t i = 0; i < lastK; ++i) targets.push_back(code.at(at++));
          continue;
        }
        const uint32_t v = code.at(at++);
        if (l == 'k') lastK = v;
        if (l == 'j') targets.push_back(v);
        if (l == 'p') {
          EXPECT_LT(v, c.program->pous.size()) << info.name << " at " << pc;
        }
        if (l == 's') {
          EXPECT_LT(v, c.program->statements.size()) << info.name << " at " << pc;
        }
      }
      pc = at;
    }
    EXPECT_EQ(pc, code.size());
    for (uint32_t t : targets) EXPECT_TRUE(starts.count(t)) << "jump into the middle of an instruction: " << t;
    for (const PouInfo& pou : c.program->pous)
      if (pou.kind != PouKind::Native) {
        EXPECT_TRUE(starts.count(pou.entryPc)) << pou.name;
      }
    for (uint32_t id = 0; id < c.program->statements.size(); ++id) {
      const StatementInfo& s = c.program->statements[id];
      ASSERT_TRUE(starts.count(s.pc));
      // A statement starts at a STMT or at an op fused with its boundary; either carries the id.
      const Op op = static_cast<Op>(code[s.pc]);
      EXPECT_TRUE(op == Op::STMT || isFused(op)) << opInfo(op).name;
      EXPECT_EQ(code.at(s.pc + 1), id);
    }
    // The line table is sorted and maps every STMT to its own statement.
    for (size_t i = 1; i < c.program->lineTable.size(); ++i)
      EXPECT_LE(c.program->lineTable[i - 1].pc, c.program->lineTable[i].pc);
    for (uint32_t id = 0; id < c.program->statements.size(); ++id)
      EXPECT_EQ(c.program->statementAt(c.program->statements[id].pc), id)
          << "statement " << id << " of " << listingNames()[si] << ".st";
  }
}

}  // namespace
}  // namespace scanback
