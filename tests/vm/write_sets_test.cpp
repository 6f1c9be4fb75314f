// The write sets (vm/bytecode/write_sets.h): what each statement may write, per opcode family
// against ranges derived by hand from the layout, and — over every program in the repository — that
// every byte a cycle changed, at any statement boundary, lies in the sets of the statements it ran.
#include "vm/bytecode/write_sets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/vm/test_support.h"
#include "vm/bytecode/native_blocks.h"
#include "vm/exec/vm.h"

namespace fs = std::filesystem;
using namespace scanback;

namespace {

class Analysed {
 public:
  explicit Analysed(std::string_view text) : program_(test::mustCompile(text)) {
    if (program_) sets_ = std::make_unique<WriteSets>(*program_, natives_);
  }
  explicit operator bool() const { return sets_ != nullptr; }
  const Program& program() const { return *program_; }
  const WriteSets& sets() const { return *sets_; }

  // The statement that starts on `line` (the first one there).
  uint32_t statementOn(uint32_t line) const {
    for (uint32_t id = 0; id < program_->statements.size(); ++id)
      if (program_->statements[id].span.line == line) return id;
    ADD_FAILURE() << "no statement on line " << line;
    return 0;
  }
  std::vector<ImageRange> writesOn(uint32_t line) const {
    const uint32_t id = statementOn(line);
    EXPECT_FALSE(sets_->anywhere(id)) << "line " << line << " may write anywhere";
    const auto r = sets_->of(id);
    return {r.begin(), r.end()};
  }
  bool anywhereOn(uint32_t line) const { return sets_->anywhere(statementOn(line)); }

  // The bytes of a variable.
  ImageRange var(std::string_view path) const {
    std::string error;
    const std::optional<VariableLocation> v = findVariable(*program_, path, error);
    EXPECT_TRUE(v) << error;
    return v ? ImageRange{v->offset, v->type->size} : ImageRange{};
  }
  // From the start of `first` to the end of `last`.
  ImageRange span(std::string_view first, std::string_view last) const {
    const ImageRange a = var(first), b = var(last);
    return {a.offset, b.offset + b.size - a.offset};
  }

 private:
  std::vector<uint32_t> natives_ = nativeInstanceSizes();
  std::shared_ptr<const Program> program_;
  std::unique_ptr<WriteSets> sets_;
};

using Ranges = std::vector<ImageRange>;

std::string show(const Ranges& r) {
  std::string s;
  for (const ImageRange& x : r) s += "[" + std::to_string(x.offset) + "+" + std::to_string(x.size) + ")";
  return s;
}

}  // namespace

TEST(WriteSets, EveryOpcodeIsKnown) {
  for (uint32_t i = 0; i < kPlainOpCount; ++i)
    EXPECT_TRUE(writeSetsKnow(static_cast<Op>(i))) << opInfo(static_cast<Op>(i)).name;
}

TEST(WriteSets, NormalizeMergesAndCaps) {
  Ranges r{{10, 4}, {2, 2}, {12, 6}, {4, 1}, {30, 2}, {40, 1}, {100, 50}};
  normalizeRanges(r, 120, 0);
  EXPECT_EQ(r, (Ranges{{2, 3}, {10, 8}, {30, 2}, {40, 1}, {100, 20}})) << show(r);
  // Three at most: across the two smallest gaps (5 bytes from 5 to 10, 8 from 32 to 40).
  normalizeRanges(r, 120, 3);
  EXPECT_EQ(r, (Ranges{{2, 16}, {30, 11}, {100, 20}})) << show(r);
}

// Direct stores: exactly the bytes the opcode stores, which for an assignment is the variable.
TEST(WriteSets, DirectStoresWriteTheirVariable) {
  Analysed a(R"(PROGRAM Main
VAR
  b : BOOL; si : SINT; i : INT; d : DINT; l : LINT; r : REAL; lr : LREAL; w : WORD; t : TIME;
  s : STRING[10]; ws : WSTRING[10]; n : INT; dw : DWORD; bt : BYTE; u : UDINT; x : LINT;
END_VAR
i := i + 1;
d := d * 3 - i;
l := -l;
lr := SQRT(lr) + EXP(lr);
r := INT_TO_REAL(i);
b := d > 5;
w := SHL(w, 2) OR WORD#16#F0;
dw.3 := TRUE;
si := SINT#3 MOD si;
s := CONCAT(s, 'abc');
ws := "abc";
n := LEN(s);
bt := DINT_TO_BYTE(d);
u := UDINT#7 * u + UDINT#1;
x := STRING_TO_LINT(s);
t := TIME() + T#1s;
b := s < 'x';
END_PROGRAM
)");
  ASSERT_TRUE(a);
  const std::pair<uint32_t, const char*> cases[] = {
      {6, "Main.i"},   {7, "Main.d"},   {8, "Main.l"},   {9, "Main.lr"}, {10, "Main.r"},  {11, "Main.b"},
      {12, "Main.w"},  {13, "Main.dw"}, {14, "Main.si"}, {15, "Main.s"}, {16, "Main.ws"}, {17, "Main.n"},
      {18, "Main.bt"}, {19, "Main.u"},  {20, "Main.x"},  {21, "Main.t"}, {22, "Main.b"},
  };
  for (const auto& [line, name] : cases)
    EXPECT_EQ(a.writesOn(line), Ranges{a.var(name)}) << "line " << line << ": " << show(a.writesOn(line));
  // A WSTRING holds its terminating unit: 2 * 11 bytes (CODESYS's layout, no length before it).
  EXPECT_EQ(a.var("Main.ws").size, 22u);
}

// Element stores: the whole array, wherever the index points.
TEST(WriteSets, ElementStoresWriteTheWholeArray) {
  Analysed a(R"(TYPE Rec : STRUCT x : INT; y : DINT; END_STRUCT; END_TYPE
PROGRAM Main
VAR
  arr : ARRAY[1..10] OF DINT;
  bytes : ARRAY[0..7] OF BYTE;
  grid : ARRAY[0..2, 0..3] OF INT;
  recs : ARRAY[1..4] OF Rec;
  flags : ARRAY[1..100] OF BOOL;
  i, j : DINT;
  k : INT;
END_VAR
arr[i] := 5;
bytes[k + 1] := 7;
grid[i, j] := 1;
recs[i].y := 3;
FOR k := 1 TO 100 DO flags[k] := TRUE; END_FOR;
END_PROGRAM
)");
  ASSERT_TRUE(a);
  EXPECT_EQ(a.writesOn(12), Ranges{a.var("Main.arr")});
  EXPECT_EQ(a.writesOn(13), Ranges{a.var("Main.bytes")});
  EXPECT_EQ(a.writesOn(14), Ranges{a.var("Main.grid")});
  // Through the element's reference: from the first element's field to the last one's.
  EXPECT_EQ(a.writesOn(15), Ranges{a.span("Main.recs[1].y", "Main.recs[4].y")});
  // The FOR statement sets k; its body's boundary dominates the back edge, which steps k (and
  // runs the next iterations ahead as the body's element store).
  const uint32_t forStatement = a.statementOn(16);
  const auto forWrites = a.sets().of(forStatement);
  EXPECT_EQ(Ranges(forWrites.begin(), forWrites.end()), Ranges{a.var("Main.k")});
  const uint32_t body = forStatement + 1;
  ASSERT_EQ(a.program().statements[body].span.line, 16u);
  const auto bodyWrites = a.sets().of(body);
  Ranges expected{a.var("Main.flags"), a.var("Main.k")};
  normalizeRanges(expected, a.program().imageSize(), 0);
  EXPECT_EQ(Ranges(bodyWrites.begin(), bodyWrites.end()), expected);
}

// THIS-relative stores: the field in every instance the body runs on — instances called
// directly, elements of an array of instances called through their reference, and an instance
// its base's body runs on (SUPER^()). An instance never called is not among them.
TEST(WriteSets, FunctionBlockBodiesWriteTheirInstancesFields) {
  Analysed a(R"(FUNCTION_BLOCK Counter
VAR_INPUT inc : INT; END_VAR
VAR_OUTPUT total : INT; END_VAR
total := total + inc;
END_FUNCTION_BLOCK

FUNCTION_BLOCK Base
VAR x : INT; END_VAR
x := x + 1;
END_FUNCTION_BLOCK

FUNCTION_BLOCK Derived EXTENDS Base
VAR y : INT; END_VAR
SUPER^();
y := y + 1;
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  a, never : Counter;
  arr : ARRAY[1..3] OF Counter;
  d : Derived;
  plain : Base;
  i : INT;
  t : TON;
  go : BOOL;
END_VAR
a(inc := 1);
arr[i](inc := 2);
d();
t(IN := go, PT := T#1s);
END_PROGRAM
)");
  ASSERT_TRUE(a);
  EXPECT_EQ(a.writesOn(4), (Ranges{a.var("Main.a.total"), a.var("Main.arr[1].total"), a.var("Main.arr[2].total"),
                                   a.var("Main.arr[3].total")}))
      << show(a.writesOn(4));
  EXPECT_EQ(a.writesOn(9), Ranges{a.var("Main.d.x")}) << show(a.writesOn(9));
  EXPECT_EQ(a.writesOn(15), Ranges{a.var("Main.d.y")});
  // The callers store the inputs: one instance, or every element's.
  EXPECT_EQ(a.writesOn(28), Ranges{a.var("Main.a.inc")});
  EXPECT_EQ(a.writesOn(29), Ranges{a.span("Main.arr[1].inc", "Main.arr[3].inc")});
  // A standard function block's call writes its whole instance.
  EXPECT_EQ(a.writesOn(31), Ranges{a.var("Main.t")});
}

// A method called through an interface runs on the instances of every class whose dispatch
// slot names it.
TEST(WriteSets, MethodsThroughInterfacesWriteTheirClassesInstances) {
  Analysed a(R"(INTERFACE I_Adder
METHOD Add : INT
VAR_INPUT n : INT; END_VAR
END_METHOD
END_INTERFACE

FUNCTION_BLOCK A IMPLEMENTS I_Adder
VAR sum : INT; END_VAR
METHOD Add : INT
VAR_INPUT n : INT; END_VAR
sum := sum + n;
Add := sum;
END_METHOD
END_FUNCTION_BLOCK

FUNCTION_BLOCK B IMPLEMENTS I_Adder
VAR total : INT; END_VAR
METHOD Add : INT
VAR_INPUT n : INT; END_VAR
total := total + 2 * n;
Add := total;
END_METHOD
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  a1, a2 : A;
  b1 : B;
  itf : I_Adder;
  r : INT;
END_VAR
itf := a1;
r := itf.Add(n := 1);
END_PROGRAM
)");
  ASSERT_TRUE(a);
  EXPECT_EQ(a.writesOn(11), (Ranges{a.var("Main.a1.sum"), a.var("Main.a2.sum")})) << show(a.writesOn(11));
  EXPECT_EQ(a.writesOn(20), Ranges{a.var("Main.b1.total")}) << show(a.writesOn(20));
  // The return value is in the frame: nothing in the image.
  EXPECT_EQ(a.writesOn(12), Ranges{});
  EXPECT_EQ(a.writesOn(33), Ranges{a.var("Main.r")});
}

// A reference read from a variable may point anywhere: a VAR_IN_OUT, a REF_TO, a POINTER TO.
// One the statement computes is followed: a constant address (REF(x) folded), an element's.
TEST(WriteSets, StoresThroughReferences) {
  Analysed a(R"(FUNCTION_BLOCK Acc
VAR_IN_OUT target : INT; END_VAR
target := target + 1;
END_FUNCTION_BLOCK

FUNCTION Bump : INT
VAR_IN_OUT v : DINT; END_VAR
v := v + 1;
Bump := 0;
END_FUNCTION

PROGRAM Main
VAR
  acc : Acc;
  x : INT;
  y : DINT;
  p : POINTER TO INT;
  r : REF_TO DINT;
  z : INT;
END_VAR
acc(target := x);
Bump(y);
p := ADR(x);
p^ := 5;
r := REF(y);
r^ := 6;
ADR(z)^ := 7;
END_PROGRAM
)");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a.anywhereOn(3));
  EXPECT_TRUE(a.anywhereOn(8));
  EXPECT_FALSE(a.anywhereOn(9));
  EXPECT_TRUE(a.anywhereOn(24));
  EXPECT_TRUE(a.anywhereOn(26));
  EXPECT_EQ(a.writesOn(23), Ranges{a.var("Main.p")});
  EXPECT_EQ(a.writesOn(27), Ranges{a.var("Main.z")}) << show(a.writesOn(27));
  // The caller stores the reference into the instance's slot, nothing else.
  EXPECT_FALSE(a.anywhereOn(21));
  EXPECT_FALSE(a.anywhereOn(22));
  EXPECT_TRUE(a.sets().unowned().empty());
  EXPECT_FALSE(a.sets().unownedAnywhere());
}

// A function runs on its caller's THIS and writes its frame; a block's ACTION writes the instance
// its caller names (a program's, the program's instance).
TEST(WriteSets, FunctionsAndActionsRunOnTheirCallersInstance) {
  Analysed a(R"(FUNCTION Twice : INT
VAR_INPUT v : INT; END_VAR
Twice := v * 2;
END_FUNCTION

FUNCTION_BLOCK Motor
VAR starts : INT; END_VAR
ACTION Start:
  starts := starts + 1;
END_ACTION
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  n, m : INT;
  left, right, idle : Motor;
END_VAR
n := Twice(n);
left.Start();
Tick();
right.Start();
ACTION Tick:
  m := m + 1;
END_ACTION
END_PROGRAM
)");
  ASSERT_TRUE(a);
  EXPECT_EQ(a.writesOn(3), Ranges{});  // the frame only
  EXPECT_EQ(a.writesOn(18), Ranges{a.var("Main.n")});
  EXPECT_EQ(a.writesOn(9), (Ranges{a.var("Main.left.starts"), a.var("Main.right.starts")})) << show(a.writesOn(9));
  EXPECT_EQ(a.writesOn(23), Ranges{a.var("Main.m")});
}

// More instances than THIS sets hold one by one: one span holds them all, and the propagation ends.
TEST(WriteSets, ThousandsOfInstancesMakeOneSpan) {
  std::string text = "FUNCTION_BLOCK Cell\nVAR v : INT; END_VAR\nv := v + 1;\nEND_FUNCTION_BLOCK\nPROGRAM Main\nVAR\n";
  constexpr int kInstances = 1500;
  for (int i = 0; i < kInstances; ++i) text += "  c" + std::to_string(i) + " : Cell;\n";
  text += "  other : INT;\nEND_VAR\n";
  for (int i = 0; i < kInstances; ++i) text += "c" + std::to_string(i) + "();\n";
  text += "other := 1;\nEND_PROGRAM\n";
  Analysed a(text);
  ASSERT_TRUE(a);
  const Ranges writes = a.writesOn(3);
  ASSERT_EQ(writes.size(), 1u) << show(writes);
  const ImageRange first = a.var("Main.c0.v"), last = a.var("Main.c" + std::to_string(kInstances - 1) + ".v");
  EXPECT_EQ(writes[0].offset, first.offset);
  EXPECT_EQ(writes[0].offset + writes[0].size, last.offset + last.size);
  EXPECT_EQ(a.writesOn(5 + kInstances + 3 + kInstances + 1), Ranges{a.var("Main.other")});
}

// ---------------------------------------------------------------- soundness over every program

namespace {

// Compares the image at every statement boundary with the one at the boundary before.
class ChangeObserver : public VmObserver {
 public:
  explicit ChangeObserver(const Vm& vm)
      : vm_(vm), last_(vm.image(), vm.image() + vm.imageSize()), changed_(last_.size()) {}
  bool onStatement(uint32_t, uint64_t) override {
    note();
    return false;
  }
  void note() {
    const uint8_t* image = vm_.image();
    for (size_t i = 0; i < last_.size(); ++i)
      if (image[i] != last_[i]) {
        changed_[i] = 1;
        last_[i] = image[i];
      }
  }
  void restart() {
    std::fill(changed_.begin(), changed_.end(), 0);
    last_.assign(vm_.image(), vm_.image() + vm_.imageSize());
  }
  const std::vector<uint8_t>& changed() const { return changed_; }

 private:
  const Vm& vm_;
  std::vector<uint8_t> last_;
  std::vector<uint8_t> changed_;
};

// Runs `cycles` cycles (the tasks in turn) and checks that every byte that changed at any statement
// boundary lies in the sets of the statements in the cycle's statement log. Without an observer
// too: the loops that run iterations ahead run only then.
void checkCovered(const std::string& name, const std::shared_ptr<const Program>& program, int cycles) {
  const std::vector<uint32_t> natives = nativeInstanceSizes();
  const WriteSets sets(*program, natives);
  if (program->tasks.empty()) return;
  for (bool observed : {true, false}) {
    Vm vm(program);
    std::vector<uint32_t> log(1u << 20);
    vm.setStatementLog(log.data(), log.data() + log.size());
    ChangeObserver observer(vm);
    if (observed) vm.setObserver(&observer);
    for (int c = 0; c < cycles; ++c) {
      observer.restart();
      vm.rewindStatementLog();
      vm.beginCycle(static_cast<uint32_t>(c) % program->tasks.size(), int64_t{c} * 10'000'000);
      const RunStatus status = vm.run();
      observer.note();
      if (vm.statementLogOverflowed()) {
        std::printf("%s: cycle %d ran more statements than the log holds; not checked\n", name.c_str(), c);
        break;
      }
      std::vector<uint8_t> allowed(vm.imageSize(), 0);
      bool anywhere = sets.unownedAnywhere();
      auto allow = [&](std::span<const ImageRange> r) {
        for (const ImageRange& x : r) std::fill_n(allowed.begin() + x.offset, x.size, 1);
      };
      allow(sets.unowned());
      for (const uint32_t* id = vm.statementLogBegin(); id != vm.statementLogEnd(); ++id) {
        anywhere = anywhere || sets.anywhere(*id);
        allow(sets.of(*id));
      }
      if (!anywhere)
        for (size_t i = 0; i < allowed.size(); ++i)
          if (observer.changed()[i] && !allowed[i]) {
            std::string path = "?";
            for (const ProgramInstanceInfo& inst : program->instances)
              if (i >= inst.offset && i < inst.offset + inst.type->size) path = inst.name;
            ADD_FAILURE() << name << (observed ? "" : " (no observer)") << ": cycle " << c << " changed byte " << i
                          << " (in " << path << ") outside the write sets of the statements it ran";
            return;
          }
      if (status != RunStatus::CycleDone) break;
    }
  }
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(WriteSets, EveryChangeOfEveryProgramInTheRepositoryIsCovered) {
  const fs::path root = SCANBACK_SOURCE_DIR;
  // Each project: its files, and whether it is compiled with IEC's conversions only.
  std::vector<std::pair<std::string, std::vector<fs::path>>> projects;
  for (const char* dir : {"tests/golden", "tests/codegen", "bench/programs"}) {
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.is_directory()) {
        std::vector<fs::path> files;
        for (const auto& f : fs::directory_iterator(e.path()))
          if (f.path().extension() == ".st") files.push_back(f.path());
        std::sort(files.begin(), files.end());
        if (!files.empty()) projects.push_back({e.path().string(), files});
      } else if (e.path().extension() == ".st") {
        projects.push_back({e.path().string(), {e.path()}});
      }
    }
  }
  {
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(root / "examples/plant"))
      if (f.path().extension() == ".st") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    projects.push_back({"examples/plant", files});
  }
  std::sort(projects.begin(), projects.end());
  size_t checked = 0;
  for (const auto& [name, files] : projects) {
    std::vector<std::pair<std::string, std::string>> texts;
    for (const fs::path& f : files) texts.push_back({f.filename().string(), readFile(f)});
    CompileOptions options;
    options.strict = texts.front().second.find("// @strict") != std::string::npos;
    test::Compiled c = test::compileFiles(texts, options);
    if (!c) continue;  // the compile-error cases
    checkCovered(name, c.program, 12);
    ++checked;
  }
  EXPECT_GT(checked, 140u);
}
