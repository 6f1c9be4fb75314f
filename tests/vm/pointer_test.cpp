// Pointer dereferences stay inside the variable they point into (docs/language.md, "Pointers"):
// each kind of area (global, program variable, function block field, array, structure, a call's
// frame), the last element and one past it, one byte across into the next variable, and the
// dereferences the compiler proves safe without a check.
#include <gtest/gtest.h>

#include <string>

#include "tests/vm/test_support.h"
#include "vm/bytecode/areas.h"

namespace scanback {
namespace {

using test::decode;
using test::mustCompile;
using test::valueOf;

struct CycleOutcome {
  RunStatus status = RunStatus::CycleDone;
  FaultCode code = FaultCode::None;
  uint32_t line = 0;
  std::string message;
};

CycleOutcome runOnce(Runtime& rt) {
  CycleOutcome r;
  r.status = rt.runCycle();
  if (r.status == RunStatus::Faulted) {
    const FaultInfo& f = rt.vm().fault();
    r.code = f.code;
    r.line = rt.vm().program().statement(f.statement).span.line;
    r.message = rt.faultMessage();
  }
  return r;
}

// A program whose body is `body` (its first line is line 5, after the lines of `before`).
std::string programWith(const std::string& vars, const std::string& body, const std::string& before = "") {
  return before + "PROGRAM Main\nVAR\n" + vars + "\nEND_VAR\n" + body + "\nEND_PROGRAM\n";
}

void expectOutside(const std::string& src, uint32_t line) {
  SCOPED_TRACE(src);
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  Runtime rt(p);
  const CycleOutcome o = runOnce(rt);
  ASSERT_EQ(o.status, RunStatus::Faulted);
  EXPECT_EQ(o.code, FaultCode::OutsideVariable) << o.message;
  EXPECT_EQ(o.line, line) << o.message;
  EXPECT_NE(o.message.find("pointer outside its variable"), std::string::npos) << o.message;
}

std::shared_ptr<const Program> runsClean(const std::string& src, Runtime*& out) {
  static std::unique_ptr<Runtime> keep;
  auto p = mustCompile(src);
  if (!p) return p;
  keep = std::make_unique<Runtime>(p);
  const CycleOutcome o = runOnce(*keep);
  EXPECT_EQ(o.status, RunStatus::CycleDone) << o.message << "\n" << src;
  out = keep.get();
  return p;
}

TEST(PointerAreas, ArrayWalkReachesTheLastElementAndFaultsOnePast) {
  // b is 4-byte aligned: two bytes of padding follow a, in no variable.
  const std::string vars = "a : ARRAY[0..4] OF INT := [1, 2, 3, 4, 5]; b : DINT := 99; p : POINTER TO INT; s : INT;";
  Runtime* rt = nullptr;
  runsClean(programWith(vars, "p := ADR(a);\nWHILE p <= ADR(a[4]) DO s := s + p^; p := p + SIZEOF(INT); END_WHILE"),
            rt);
  ASSERT_TRUE(rt);
  EXPECT_EQ(valueOf(*rt, "Main.s"), "15");
  expectOutside(programWith(vars, "p := ADR(a[4]);\ns := p^;\np := p + SIZEOF(INT);\ns := p^;"), 8);
  // Writing is checked as reading is.
  expectOutside(programWith(vars, "p := ADR(a) + 10;\np^ := 7;"), 6);
  // A pointer is an address: moved exactly onto the next variable, it reads that variable.
  runsClean(programWith(vars, "p := ADR(a) + 12;\ns := p^;"), rt);
  EXPECT_EQ(valueOf(*rt, "Main.s"), "99");
}

TEST(PointerAreas, OneByteAcrossIntoTheNextVariableFaults) {
  const std::string vars = "x : INT; y : INT; pd : POINTER TO DINT; pi : POINTER TO INT; v : DINT;";
  // x and y lie side by side (2 + 2 bytes): a DINT read at x would take y's bytes.
  expectOutside(programWith(vars, "pd := ADR(x);\nv := pd^;"), 6);
  // An INT at x's second byte takes one byte of y.
  expectOutside(programWith(vars, "pi := ADR(x) + 1;\nv := pi^;"), 6);
  Runtime* rt = nullptr;
  runsClean(programWith(vars, "y := 7;\npi := ADR(x) + 2;\nv := pi^;"), rt);  // exactly y: its own area
  ASSERT_TRUE(rt);
  EXPECT_EQ(valueOf(*rt, "Main.v"), "7");
}

TEST(PointerAreas, ReadingADintsBytesThroughAPointerToByteWorks) {
  Runtime* rt = nullptr;
  runsClean(programWith("d : DINT := 16#11223344; pb : POINTER TO BYTE; b : ARRAY[0..3] OF BYTE; i : INT;",
                        "pb := ADR(d);\nFOR i := 0 TO 3 DO b[i] := (pb + i)^; END_FOR"),
            rt);
  ASSERT_TRUE(rt);
  EXPECT_EQ(valueOf(*rt, "Main.b[0]"), "68");  // 16#44
  EXPECT_EQ(valueOf(*rt, "Main.b[3]"), "17");  // 16#11
  expectOutside(programWith("d : DINT; e : DINT; pd : POINTER TO DINT; v : DINT;", "pd := ADR(d) + 2;\nv := pd^;"), 6);
}

TEST(PointerAreas, Globals) {
  const std::string globals = "VAR_GLOBAL g : DINT := 5; h : DINT := 6; END_VAR\n";
  Runtime* rt = nullptr;
  runsClean(programWith("p : POINTER TO DINT; v : DINT;", "p := ADR(h);\nv := p^;", globals), rt);
  ASSERT_TRUE(rt);
  EXPECT_EQ(valueOf(*rt, "Main.v"), "6");
  expectOutside(programWith("p : POINTER TO DINT; pw : POINTER TO WORD; v : DINT;",
                            "pw := ADR(g) + 2;\nv := pw^;\np := pw;\nv := p^;", globals),
                9);
}

TEST(PointerAreas, StructIsOneArea) {
  const std::string types = "TYPE Pt : STRUCT x : INT; y : INT; z : DINT; END_STRUCT; END_TYPE\n";
  Runtime* rt = nullptr;
  runsClean(programWith("pt : Pt; after : INT; p : POINTER TO DINT; pi : POINTER TO INT; v : DINT;",
                        "pt.x := 1; pt.y := 2;\np := ADR(pt.x);\nv := p^;\npi := ADR(pt.x) + 6;\npi^ := 4;", types),
            rt);
  ASSERT_TRUE(rt);
  EXPECT_EQ(valueOf(*rt, "Main.v"), "131073");  // x and y as one little-endian DINT
  EXPECT_EQ(valueOf(*rt, "Main.pt.z"), "262144");
  expectOutside(
      programWith("pt : Pt; after : INT; pi : POINTER TO INT; v : INT;", "pi := ADR(pt) + 7;\nv := pi^;", types), 7);
}

TEST(PointerAreas, FunctionBlockFieldsAreAreasAndTheInstanceIsOneForItsType) {
  const std::string fb =
      "FUNCTION_BLOCK Counter\nVAR_INPUT step : INT; END_VAR\nVAR_OUTPUT count : INT; END_VAR\n"
      "count := count + step;\nEND_FUNCTION_BLOCK\n";
  Runtime* rt = nullptr;
  runsClean(programWith("c : Counter; pc : POINTER TO Counter; pi : POINTER TO INT; v : INT;",
                        "pi := ADR(c.count);\npi^ := 40;\npc := ADR(c);\npc^(step := 2);\nv := pc^.count;", fb),
            rt);
  ASSERT_TRUE(rt);
  EXPECT_EQ(valueOf(*rt, "Main.v"), "42");
  // Two fields at once are not one variable, though both are inside the instance.
  expectOutside(programWith("c : Counter; pd : POINTER TO DINT; v : DINT;", "pd := ADR(c.step);\nv := pd^;", fb), 11);
  // An instance's type through a pointer into one of its fields reaches past that field.
  expectOutside(
      programWith("c : Counter; d : Counter; pc : POINTER TO Counter;", "pc := ADR(c.count);\npc^(step := 1);", fb),
      11);
}

TEST(PointerAreas, LocalsOfAFunctionOnTheCallStack) {
  const std::string fn =
      "FUNCTION Sum3 : DINT\nVAR_INPUT off : INT; END_VAR\nVAR a : ARRAY[0..2] OF DINT; b : DINT; p : POINTER TO "
      "DINT; i : INT; END_VAR\n"
      "a[0] := 1; a[1] := 2; a[2] := 3; b := 100;\np := ADR(a) + off;\nFOR i := 0 TO 2 DO Sum3 := Sum3 + p^; p := p "
      "+ 4; END_FOR\nEND_FUNCTION\n";
  Runtime* rt = nullptr;
  runsClean(programWith("v : DINT;", "v := Sum3(0);", fn), rt);
  ASSERT_TRUE(rt);
  EXPECT_EQ(valueOf(*rt, "Main.v"), "6");
  // Shifted by half an element, the walk's last read takes a's last two bytes and two of b's.
  expectOutside(programWith("v : DINT;", "v := Sum3(2);", fn), 6);
  // After the call returned, its frame holds no variable any more.
  expectOutside(
      programWith("v : DINT; p : POINTER TO DINT;", "p := Leak();\nv := p^;",
                  "FUNCTION Leak : POINTER TO DINT\nVAR x : DINT := 5; END_VAR\nLeak := ADR(x);\nEND_FUNCTION\n"),
      10);
}

TEST(PointerAreas, AReferenceBuiltFromAPointerIsChecked) {
  expectOutside(programWith("a : ARRAY[0..1] OF INT; b : INT; r : REF_TO INT; p : POINTER TO INT; v : INT;",
                            "p := ADR(a) + 3;\nr := p;\nv := r^;"),
                7);
}

TEST(PointerAreas, NullAndPastTheImageKeepTheirOwnFaults) {
  auto p = mustCompile(programWith("p : POINTER TO INT; v : INT; d : DWORD;", "d := 16#FFFFFFF0;\np := d;\nv := p^;"));
  ASSERT_TRUE(p);
  Runtime rt(p);
  EXPECT_EQ(runOnce(rt).code, FaultCode::BadReference);
  auto q = mustCompile(programWith("p : POINTER TO INT; v : INT;", "v := p^;"));
  ASSERT_TRUE(q);
  Runtime rt2(q);
  EXPECT_EQ(runOnce(rt2).code, FaultCode::NullReference);
}

// The compiler checks where it cannot prove; ADR(x)^ and REF(x)^ need no search, ADR(p^) reads nothing.
TEST(PointerAreas, ProvenDereferencesAreNotChecked) {
  auto count = [](const Program& prog) {
    int n = 0;
    for (const auto& ins : decode(prog, 0, static_cast<uint32_t>(prog.code.size())))
      if (ins.op == Op::PCHK) ++n;
    return n;
  };
  auto proven = mustCompile(
      programWith("x : DINT; v : DINT; p : POINTER TO DINT;", "v := ADR(x)^;\nREF(x)^ := 3;\np := ADR(p^);"));
  ASSERT_TRUE(proven);
  EXPECT_EQ(count(*proven), 0);
  auto checked = mustCompile(programWith("x : DINT; v : DINT; p : POINTER TO DINT; r : REF_TO DINT;",
                                         "p := ADR(x);\nv := p^;\nr := REF(x);\nr^ := 2;"));
  ASSERT_TRUE(checked);
  EXPECT_EQ(count(*checked), 2);
}

// SEL and MUX read only the chosen operand: a dereference they do not choose is not checked.
TEST(PointerAreas, OnlyTheChosenOperandOfSelAndMuxIsChecked) {
  const std::string vars = "x : INT; y : INT; pd : POINTER TO DINT; v : DINT;";
  Runtime* rt = nullptr;
  runsClean(programWith(vars, "pd := ADR(x) + 1;\nv := SEL(FALSE, 5, pd^);\nv := v + MUX(0, 2, pd^);"), rt);
  ASSERT_TRUE(rt);
  EXPECT_EQ(valueOf(*rt, "Main.v"), "7");
  expectOutside(programWith(vars, "pd := ADR(x) + 1;\nv := SEL(TRUE, 5, pd^);"), 6);
  expectOutside(programWith(vars, "pd := ADR(x) + 1;\nv := MUX(1, 2, pd^);"), 6);
}

TEST(PointerAreas, IsValidRefAsksWhatADereferenceWouldCheck) {
  Runtime* rt = nullptr;
  runsClean(programWith("x : INT; y : INT; p : POINTER TO DINT; r : REF_TO INT; ok : ARRAY[0..4] OF BOOL;",
                        "ok[0] := __ISVALIDREF(r);\nr := REF(y);\nok[1] := __ISVALIDREF(r);\np := ADR(x);\n"
                        "ok[2] := __ISVALIDREF(p);\nok[3] := Local();\np := Leak();\nok[4] := __ISVALIDREF(p);",
                        "FUNCTION Local : BOOL\nVAR a : DINT; p : POINTER TO DINT; END_VAR\np := ADR(a);\n"
                        "Local := __ISVALIDREF(p);\nEND_FUNCTION\n"
                        "FUNCTION Leak : POINTER TO DINT\nVAR a : DINT; END_VAR\nLeak := ADR(a);\nEND_FUNCTION\n"),
            rt);
  ASSERT_TRUE(rt);
  EXPECT_EQ(valueOf(*rt, "Main.ok[0]"), "FALSE");  // NULL
  EXPECT_EQ(valueOf(*rt, "Main.ok[1]"), "TRUE");
  EXPECT_EQ(valueOf(*rt, "Main.ok[2]"), "FALSE");  // a DINT across x and y
  EXPECT_EQ(valueOf(*rt, "Main.ok[3]"), "TRUE");   // a local of the active call
  EXPECT_EQ(valueOf(*rt, "Main.ok[4]"), "FALSE");  // a local of a call that returned
}

TEST(PointerAreas, OnlyCodesysOperatorsMayHaveADoubleUnderscore) {
  const std::string errors = test::compileErrors(programWith("a__b : INT;", "a__b := 1;"));
  EXPECT_NE(errors.find("double or trailing underscore"), std::string::npos) << errors;
}

TEST(PointerAreas, TableNestsInstancesAndDropsPartialOverlaps) {
  VariableAreas areas;
  areas.add(100, 20, true);  // an instance
  areas.add(100, 4);         // its fields
  areas.add(104, 4);
  areas.add(200, 8);
  areas.add(204, 8);  // overlaps the previous one without being inside it: dropped
  areas.finish();
  EXPECT_TRUE(areas.contains(100, 4, false));
  EXPECT_FALSE(areas.contains(102, 4, false));
  EXPECT_FALSE(areas.contains(102, 4, true));  // an instance starts where its area starts
  EXPECT_TRUE(areas.contains(100, 20, true));
  EXPECT_FALSE(areas.contains(108, 1, false));  // inside the instance, in no field
  EXPECT_FALSE(areas.contains(118, 4, true));
  EXPECT_FALSE(areas.contains(99, 1, true));
  EXPECT_TRUE(areas.contains(204, 4, false));
  EXPECT_FALSE(areas.contains(206, 4, false));
  EXPECT_FALSE(areas.contains(300, 1, true));
}

// A field or element through a pointer is checked on its own bytes, not the whole declared target
// (docs/language.md, "Pointers"): CODESYS's POINTER TO ARRAY[0..32000] OF BYTE over a small buffer.
TEST(PointerAreas, ElementsAndFieldsAreCheckedOnTheBytesRead) {
  auto p = mustCompile(programWith(
      "buf : ARRAY[0..9] OF BYTE := [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]; pt : POINTER TO ARRAY[0..32000] OF BYTE;\n"
      "x, y : BYTE; i : INT := 9; small : INT := 5; pb : POINTER TO Big; seen : INT;",
      "pt := ADR(buf);\nx := pt^[i];\npt^[0] := 77;\ny := buf[0];\npb := ADR(small);\nseen := pb^.first;\n"
      "pb^.first := 6;",
      "TYPE Big : STRUCT first : INT; rest : ARRAY[0..999] OF INT; END_STRUCT; END_TYPE\n"));
  ASSERT_TRUE(p);
  Runtime rt(p);
  const CycleOutcome o = runOnce(rt);
  ASSERT_EQ(o.status, RunStatus::CycleDone) << o.message;
  EXPECT_EQ(valueOf(rt, "Main.x"), "10");
  EXPECT_EQ(valueOf(rt, "Main.y"), "77");
  EXPECT_EQ(valueOf(rt, "Main.seen"), "5");
  EXPECT_EQ(valueOf(rt, "Main.small"), "6");
}

TEST(PointerAreas, AnElementPastTheVariableStillFaultsWithItsOwnBytes) {
  // buf is 3 bytes; the byte after it is padding before the 2-aligned INT after.
  auto p =
      mustCompile(programWith("buf : ARRAY[0..2] OF BYTE; after : INT; pt : POINTER TO ARRAY[0..99] OF BYTE; x : BYTE;",
                              "pt := ADR(buf);\nx := pt^[2];\nx := pt^[3];"));
  ASSERT_TRUE(p);
  Runtime rt(p);
  const CycleOutcome o = runOnce(rt);
  EXPECT_EQ(o.code, FaultCode::OutsideVariable);
  EXPECT_EQ(o.line, 7u);
  EXPECT_NE(o.message.find("pointer outside its variable (the 1 bytes at"), std::string::npos) << o.message;
  // A NULL pointer's field is still a null reference, not a check of the field's offset.
  auto q = mustCompile(programWith("pr : POINTER TO Rec; v : INT;", "v := pr^.b;",
                                   "TYPE Rec : STRUCT a : INT; b : INT; END_STRUCT; END_TYPE\n"));
  ASSERT_TRUE(q);
  Runtime rt2(q);
  EXPECT_EQ(runOnce(rt2).code, FaultCode::NullReference);
}

}  // namespace
}  // namespace scanback
