// The debugger's expression evaluator (vm/debug/evaluator.h).
//
// The core is differential: every expression is compiled twice, once by the evaluator and once by
// the ST compiler inside the program (`zr<i> := TO_<T>(<expression>);` in the POU under test, zr<i>
// declared with the type T the evaluator gives the expression; see conversionName). The program
// runs on the VM to a probe statement after those assignments; there the evaluator evaluates each
// expression in the VM's own frame and its bytes must equal the bytes the VM stored in zr<i>. An
// expression the VM faults on is checked against the evaluator's error. Expressions the evaluator
// rejects are checked against the compiler's first error for the same text (message and column).
// Tests for compile errors, frames, results and assignments, robustness (random bytes, token
// soups, random expressions over noise) and speed follow.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/vm/test_support.h"
#include "vm/debug/evaluator.h"
#include "vm/exec/strings.h"

namespace scanback::debug {
namespace {

// The program every test runs. (*DECLS:<pou>*) and (*BODY:<pou>*) mark where a test adds the
// variables and statements of the POU under test: Main (a program), Motor (an FB body), Run (the
// method Motor.Run) and Calc (a function called from the method).
const char* const kTemplate = R"ST(TYPE
  Color : (Red, Green := 5, Blue);
  Light : (Off, Red, Amber) USINT;
  Level : (Low, Mid, High) DINT;
  Pct : INT (0..100);
  Speed : REAL := 1.5;
  Point : STRUCT
    x : INT := -3;
    y : REAL := 2.5;
    name : STRING[10] := 'pt';
    flags : WORD := 16#A5F0;
    c : Color := Blue;
  END_STRUCT;
  Line : STRUCT
    a : Point;
    b : Point := (x := 7, y := -1.25, name := 'bee');
    pts : ARRAY[0..2] OF Point;
    m : ARRAY[1..2, -1..1] OF SINT := [1, -2, 3, -4, 5, -6];
  END_STRUCT;
END_TYPE

VAR_GLOBAL
  gSi : SINT := -100;
  gI : INT := 32000;
  gDi : DINT := -2147483000;
  gLi : LINT := 9223372036854775000;
  gUsi : USINT := 250;
  gUi : UINT := 65000;
  gUdi : UDINT := 4294967000;
  gUli : ULINT := 18446744073709551000;
  gB : BYTE := 16#F0;
  gW : WORD := 16#1234;
  gDw : DWORD := 16#DEADBEEF;
  gLw : LWORD := 16#0123456789ABCDEF;
  gR : REAL := 3.25;
  gLr : LREAL := -1234.5678;
  gBo : BOOL := TRUE;
  gT : TIME := T#1h2m3s4ms;
  gLt : LTIME := LTIME#5us7ns;
  gD : DATE := D#2024-02-29;
  gTod : TOD := TOD#23:59:58.5;
  gDt : DT := DT#2024-01-15-08:30:00;
  gS : STRING := 'Hello, World';
  gS5 : STRING[5] := 'abc';
  gWs : WSTRING[12] := "Grüße €";
  gWs3 : WSTRING[3] := "a😀";
  gWc : WCHAR := WCHAR#"ß";
  gColor : Color := Green;
  gLevel : Level := High;
  gPct : Pct := 42;
  gSpeed : Speed;
  gPt : Point;
  gLine : Line;
  gArr : ARRAY[-2..2] OF DINT := [10, -20, 30, -40, 50];
  gMat : ARRAY[1..3, 0..2] OF INT := [1, 2, 3, 4, 5, 6, 7, 8, 9];
  gPts : ARRAY[1..2] OF Point;
  gStrs : ARRAY[0..1] OF STRING[8] := ['one', 'two'];
  gRef : REF_TO DINT;
  gNull : REF_TO INT;
  gIn3 AT %IX0.3 : BOOL;
  gInB AT %IB1 : BYTE;
  gOutW AT %QW1 : WORD;
  gZero : DINT := 0;
END_VAR
VAR_GLOBAL CONSTANT
  K_MAX : INT := 100;
  K_R : REAL := 0.1;
  K_T : TIME := T#250ms;
END_VAR

FUNCTION Calc : DINT
VAR_INPUT
  a : DINT;
  b : INT := 3;
  s : STRING[20];
END_VAR
VAR_IN_OUT
  io : DINT;
END_VAR
VAR
  loc : LREAL := 2.75;
  arr : ARRAY[1..4] OF USINT := [4, 3, 2, 1];
  w : WORD := 16#8001;
  c : Color := Blue;
END_VAR
VAR_TEMP
  tmp : DINT;
END_VAR
VAR CONSTANT
  LK : DINT := 12;
END_VAR
(*DECLS:Calc*)
tmp := a * b;
io := io + 1;
(*BODY:Calc*)
Calc := tmp + LK;
END_FUNCTION

FUNCTION_BLOCK Motor
VAR_INPUT
  enable : BOOL;
  target : REAL := 100.0;
END_VAR
VAR_OUTPUT
  running : BOOL;
  count : INT;
  refNone : REFERENCE TO INT;
END_VAR
VAR_IN_OUT
  shared : DINT;
END_VAR
VAR
  speed : LREAL := 0.5;
  hist : ARRAY[0..3] OF INT := [5, 6, 7, 8];
  pt : Point;
  tmr : TON;
  mode : Level := Mid;
  name : STRING[16] := 'motor';
  stat : WORD := 16#00FF;
  cnt : UDINT := 4000000000;
END_VAR
VAR CONSTANT
  FK : INT := 7;
  FS : STRING[4] := 'abcd';
END_VAR
VAR_TEMP
  ft : INT;
  fr : REAL;
END_VAR
VAR_EXTERNAL
  gDi : DINT;
  K_MAX : INT;
END_VAR
(*DECLS:Motor*)
METHOD Run : INT
VAR_INPUT
  step : INT;
END_VAR
VAR
  ml : DINT := -77;
  mr : LREAL;
  ms : STRING[12] := 'method';
END_VAR
VAR_TEMP
  mt : SINT;
END_VAR
(*DECLS:Run*)
ml := ml + step;
mr := speed * 2.0;
mt := -5;
count := count + step;
shared := Calc(a := ml, s := ms, io := shared);
(*BODY:Run*)
Run := count;
END_METHOD
ft := count * 2;
fr := REAL#1.25;
IF enable THEN
  running := TRUE;
  count := count + 1;
END_IF;
tmr(IN := enable, PT := T#2s);
(*BODY:Motor*)
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  si : SINT := 127;
  i : INT := -32768;
  di : DINT := 2147483647;
  li : LINT := -9223372036854775807;
  usi : USINT := 255;
  ui : UINT := 3;
  udi : UDINT := 4294967295;
  uli : ULINT := 18446744073709551615;
  b : BYTE := 16#81;
  w : WORD := 16#FFFF;
  dw : DWORD := 16#80000000;
  lw : LWORD := 16#8000000000000001;
  r : REAL := 1.0E10;
  lr : LREAL := 0.1;
  bo : BOOL;
  t : TIME := T#-1500ms;
  lt : LTIME := LTIME#1d;
  d : DATE := D#1970-01-02;
  tod1 : TOD := TOD#12:00:00;
  dt1 : DT := DT#2000-02-28-23:00:00;
  s : STRING[30] := 'The quick brown fox';
  e : STRING;
  col : Color := Red;
  light : Light := Amber;
  lev : Level;
  pct : Pct := 100;
  sp : Speed;
  pt : Point;
  lne : Line;
  arr : ARRAY[1..10] OF INT := [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  neg : ARRAY[-5..-1] OF LREAL := [0.5, 1.5, 2.5, 3.5, 4.5];
  cube : ARRAY[0..1, 1..2, -1..0] OF DINT := [1, 2, 3, 4, 5, 6, 7, 8];
  motors : ARRAY[1..2] OF Motor;
  fb : Motor;
  rp : REF_TO Point;
  ri : REF_TO INT;
  rnull : REF_TO DINT;
  refI : REFERENCE TO INT;
  refPt : REFERENCE TO Point;
  refArr : REFERENCE TO ARRAY[1..10] OF INT;
  refNone : REFERENCE TO DINT;
  idx : INT := 3;
  big : LINT := 100;
  n : INT := 6;
  zero : INT;
  sh : DINT := 9;
  loc AT %QX0.1 : BOOL;
  res : DINT;
  K1 : INT := 1;
END_VAR
VAR CONSTANT
  PK : DINT := 1000;
  PS : STRING[3] := 'xyz';
END_VAR
VAR_TEMP
  tp : DINT;
  tr : LREAL;
END_VAR
(*DECLS:Main*)
tp := 41;
tr := 6.5;
rp := REF(pt);
ri := REF(arr[4]);
gRef := REF(gArr[1]);
refI REF= arr[4];
refPt REF= pt;
refArr REF= arr;
pt.x := 12;
lne.pts[1].x := 99;
lne.pts[2].name := 'last';
motors[2].count := 17;
fb(enable := TRUE, shared := res);
motors[1](enable := FALSE, shared := res);
res := fb.Run(step := 2);
(*BODY:Main*)
END_PROGRAM
)ST";

// ------------------------------------------------------------------ harness

struct Scope {
  const char* tag;  // marker in the template
  const char* pou;  // PouInfo name
  bool global;      // compile for the global scope (pou = UINT32_MAX)
};
constexpr Scope kMain{"Main", "Main", false};
constexpr Scope kMotor{"Motor", "Motor", false};
constexpr Scope kRun{"Run", "Motor.Run", false};
constexpr Scope kCalc{"Calc", "Calc", false};
constexpr Scope kGlobal{"Main", "Main", true};

std::string instantiate(const std::string& tag, const std::string& decls, const std::string& body) {
  std::string s = kTemplate;
  for (const char* t : {"Main", "Motor", "Run", "Calc"}) {
    const std::string d = fmt::format("(*DECLS:{}*)", t), b = fmt::format("(*BODY:{}*)", t);
    s.replace(s.find(d), d.size(), tag == t ? decls : "");
    s.replace(s.find(b), b.size(), tag == t ? body : "");
  }
  return s;
}

uint32_t lineOf(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return 0;
  return static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(at), '\n') + 1);
}

uint32_t findPou(const Program& p, const std::string& name) {
  for (uint32_t i = 0; i < p.pous.size(); ++i)
    if (p.pous[i].kind != PouKind::TaskEntry && equalsIgnoreCase(p.pous[i].name, name)) return i;
  return UINT32_MAX;
}

class PauseAt : public VmObserver {
 public:
  explicit PauseAt(uint32_t statement) : statement_(statement) {}
  bool onStatement(uint32_t statement, uint64_t) override { return statement == statement_; }

 private:
  uint32_t statement_;
};

EvalContext contextOf(const Frame& f) { return EvalContext{f.pou, f.thisOffset, f.frameOffset}; }

const Type* valueBase(const Type* t) {
  while (t && t->kind == TypeKind::Subrange) t = t->base;
  return t;
}

std::string hex(const std::vector<uint8_t>& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < 48; ++i) out += fmt::format("{:02x}", bytes[i]);
  return bytes.size() > 48 ? out + "..." : out;
}

std::string describe(const Program& p, const Type* type, const std::vector<uint8_t>& bytes) {
  const Type* t = valueBase(type);
  if (t && (t->isScalar() || t->kind == TypeKind::String) && bytes.size() >= t->size && t->kind != TypeKind::Ref)
    return formatValue(p, bytes.data(), 0, -1, *type) + " [" + hex(bytes) + "]";
  return "[" + hex(bytes) + "]";
}

// A STRING value's characters: up to its 0 (CODESYS's layout, vm/exec/strings.h).
std::string_view stringOf(const std::vector<uint8_t>& bytes) {
  const char* p = reinterpret_cast<const char*>(bytes.data());
  return std::string_view(p, strnlen(p, bytes.size()));
}

// The evaluator's value of `expr` in `ctx`, or its error.
struct Evaluated {
  bool ok = false;
  std::string error;
  EvalResult result;
  const Type* type = nullptr;
};

Evaluated evaluate(const Program& p, uint32_t pou, const std::string& expr, const uint8_t* memory, uint32_t size,
                   const EvalContext& ctx) {
  Evaluated out;
  auto e = Expression::compile(p, pou, expr, out.error);
  if (!e) {
    out.error = "compile: " + out.error;
    return out;
  }
  out.type = e->type();
  out.ok = e->evaluate(memory, size, ctx, out.result, out.error);
  return out;
}

bool faultMatches(const FaultInfo& f, const std::string& error) {
  auto has = [&](const std::string& s) { return error.find(s) != std::string::npos; };
  switch (f.code) {
    case FaultCode::DivisionByZero: return has("division by zero");
    case FaultCode::IndexOutOfRange: return has("array index out of range: " + f.detail);
    case FaultCode::NullReference: return has("null reference");
    case FaultCode::Subrange: return has("subrange violation: " + f.detail);
    case FaultCode::BadReference: return has("dangling reference") || has("outside the memory");
    default: return false;
  }
}

// An expression's type as a declaration can spell it, or "" when it cannot be declared.
std::string declarable(const Program& p, const Type* t) {
  if (!t || t->name == "STRUCT" || t->name == "ENUM" || t->kind == TypeKind::Void) return "";
  for (const ProgramInstanceInfo& i : p.instances)
    if (equalsIgnoreCase(i.type->name, t->name)) return "";
  return t->name;
}

struct Report {
  size_t compared = 0;                                          // values compared with the VM's
  size_t faults = 0;                                            // faults compared with the VM's
  size_t rejected = 0;                                          // rejected by the evaluator
  std::vector<std::pair<std::string, std::string>> rejections;  // expression, error
  std::vector<std::string> faulted;                             // expressions the VM faulted on (and the evaluator too)
};

struct Item {
  std::string expr;
  std::string type;        // as the evaluator types it, for the zr declaration
  std::string conversion;  // TO_<conversion>(expr) is the expression typed without a context type
};

// The evaluator types an expression without a context type (as a condition is typed); an
// assignment gives its right side the target's type as a hint, which can change how literals deep
// inside type (`SIN(SHR(ABS(16#FF), 1))`). A conversion to the expression's own type passes no
// hint and changes nothing: `zr := TO_LREAL(SIN(...))`.
std::string conversionName(const Type* t) {
  if (t->kind == TypeKind::String) return t->wide ? "WSTRING" : "STRING";
  if (!t->isScalar() || t->kind == TypeKind::Ref) return "";
  if (t->name.find_first_of(" [(") != std::string::npos) return "";
  return t->name;
}

// Compiles `items` as `zr<i> := <expr>;` in the POU of `scope` and runs to the probe. Items the
// compiler rejects or the VM faults on are checked, reported and taken out, and the rest is run
// again. Returns the items compared at the probe.
void runBatch(const Scope& scope, std::vector<Item> items, bool faultsExpected, Report& report,
              std::set<std::string>& faulted) {
  for (int round = 0; round < 500 && !items.empty(); ++round) {
    std::string decls = "VAR zprobe : BOOL;\n", body;
    for (size_t i = 0; i < items.size(); ++i) {
      decls += fmt::format("zr{} : {};\n", i, items[i].type);
      body += items[i].conversion.empty() ? fmt::format("zr{} := {};\n", i, items[i].expr)
                                          : fmt::format("zr{} := TO_{}({});\n", i, items[i].conversion, items[i].expr);
    }
    decls += "END_VAR";
    body += "zprobe := NOT zprobe;\n";
    const std::string source = instantiate(scope.tag, decls, body);
    // The assignments are on consecutive lines.
    const uint32_t first = lineOf(source, "zr0 := ");
    auto itemAt = [&](uint32_t line) -> size_t {
      return line >= first && line < first + items.size() ? line - first : items.size();
    };
    test::Compiled c = test::compileStrict(source);
    if (!c.program) {
      // The compiler rejects what the evaluator accepted: report those and try without them.
      std::set<size_t> bad;
      for (const Diagnostic& d : c.diags.items()) {
        const size_t i = itemAt(d.span.line);
        if (d.severity != Severity::Error || i == items.size()) continue;
        if (bad.insert(i).second)
          ADD_FAILURE() << scope.pou << ": '" << items[i].expr << "' (" << items[i].type
                        << ") is accepted by the evaluator, but the compiler says: " << d.message;
      }
      if (bad.empty()) {
        ADD_FAILURE() << "the test program does not compile:\n" << c.messages();
        return;
      }
      std::vector<Item> rest;
      for (size_t i = 0; i < items.size(); ++i)
        if (!bad.count(i)) rest.push_back(items[i]);
      items = std::move(rest);
      continue;
    }
    const Program& p = *c.program;
    const uint32_t probe = test::statementOnLine(p, first + static_cast<uint32_t>(items.size()));
    const uint32_t pou1 = findPou(p, scope.pou);
    Runtime rt(c.program);
    PauseAt observer(probe);
    rt.vm().setObserver(&observer);
    const RunStatus status = rt.runCycle();
    const Vm& vm = rt.vm();
    if (status == RunStatus::Faulted) {
      const uint32_t line =
          vm.fault().statement < p.statements.size() ? p.statement(vm.fault().statement).span.line : 0;
      const size_t which = itemAt(line);
      if (which == items.size()) {
        ADD_FAILURE() << "the VM faulted outside the expressions: " << rt.faultMessage();
        return;
      }
      const std::vector<Frame> frames = vm.frames();
      const Evaluated ev = evaluate(p, scope.global ? UINT32_MAX : pou1, items[which].expr, vm.memory(),
                                    vm.memorySize(), scope.global ? EvalContext{} : contextOf(frames.back()));
      EXPECT_TRUE(faultsExpected) << scope.pou << ": '" << items[which].expr
                                  << "' faults in the VM: " << rt.faultMessage();
      EXPECT_FALSE(ev.ok) << scope.pou << ": '" << items[which].expr << "' faults in the VM (" << rt.faultMessage()
                          << ") but the evaluator gives " << describe(p, ev.type, ev.result.bytes);
      if (!ev.ok) {
        EXPECT_TRUE(faultMatches(vm.fault(), ev.error))
            << scope.pou << ": '" << items[which].expr << "': VM fault '" << faultText(vm.fault().code) << ": "
            << vm.fault().detail << "', evaluator error '" << ev.error << "'";
      }
      ++report.faults;
      report.faulted.push_back(items[which].expr);
      faulted.insert(items[which].expr);
      items.erase(items.begin() + static_cast<ptrdiff_t>(which));
      continue;
    }
    EXPECT_EQ(status, RunStatus::Paused) << "the probe was not reached";
    if (status != RunStatus::Paused) return;
    const std::vector<Frame> frames = vm.frames();
    EXPECT_EQ(frames.back().pou, pou1);
    const EvalContext ctx = contextOf(frames.back());
    for (size_t i = 0; i < items.size(); ++i) {
      const Evaluated ev = evaluate(p, scope.global ? UINT32_MAX : pou1, items[i].expr, vm.memory(), vm.memorySize(),
                                    scope.global ? EvalContext{} : ctx);
      const Evaluated vmv = evaluate(p, pou1, fmt::format("zr{}", i), vm.memory(), vm.memorySize(), ctx);
      if (!vmv.ok) {
        ADD_FAILURE() << "reading zr" << i << ": " << vmv.error;
        continue;
      }
      if (!ev.ok) {
        ADD_FAILURE() << scope.pou << ": '" << items[i].expr << "': the evaluator fails (" << ev.error
                      << ") where the VM gives " << describe(p, vmv.type, vmv.result.bytes);
        continue;
      }
      EXPECT_FALSE(faultsExpected) << scope.pou << ": '" << items[i].expr << "' was expected to fault";
      EXPECT_EQ(ev.type->name, items[i].type) << items[i].expr;
      ++report.compared;
      const Type* t = valueBase(ev.type);
      if (t->kind == TypeKind::String) {
        EXPECT_EQ(stringOf(ev.result.bytes), stringOf(vmv.result.bytes)) << scope.pou << ": '" << items[i].expr << "'";
        EXPECT_EQ(ev.result.bytes.size(), vmv.result.bytes.size()) << items[i].expr;
      } else {
        EXPECT_EQ(hex(ev.result.bytes), hex(vmv.result.bytes))
            << scope.pou << ": '" << items[i].expr << "' (" << items[i].type << "): evaluator "
            << describe(p, ev.type, ev.result.bytes) << ", VM " << describe(p, vmv.type, vmv.result.bytes);
      }
    }
    return;
  }
}

// Runs `exprs` in `scope` against the VM (see the file comment). Expressions in `mustFault` must
// make the VM fault; every other one must compare equal. The evaluator first evaluates every
// expression at the probe of a program without the assignments (the same state): those it
// reports an error for run one after the other (each is expected to fault), the others together.
Report differential(const Scope& scope, const std::vector<std::string>& exprs,
                    const std::set<std::string>& mustFault = {}, bool expectAccepted = true) {
  Report report;
  const std::string baseSource = instantiate(scope.tag, "VAR zprobe : BOOL; END_VAR", "zprobe := NOT zprobe;\n");
  test::Compiled base = test::compileStrict(baseSource);
  EXPECT_TRUE(base.program) << base.messages();
  if (!base.program) return report;
  const Program& p0 = *base.program;
  const uint32_t pou0 = scope.global ? UINT32_MAX : findPou(p0, scope.pou);
  EXPECT_TRUE(scope.global || pou0 != UINT32_MAX) << scope.pou;
  const Type* ownType = pou0 == UINT32_MAX ? nullptr : p0.pous[pou0].instanceType;
  Runtime rt(base.program);
  PauseAt observer(test::statementOnLine(p0, lineOf(baseSource, "zprobe := NOT zprobe;")));
  rt.vm().setObserver(&observer);
  EXPECT_EQ(rt.runCycle(), RunStatus::Paused);
  const Vm& vm = rt.vm();
  const EvalContext ctx = scope.global || vm.frames().empty() ? EvalContext{} : contextOf(vm.frames().back());

  std::vector<Item> items, faulting;
  for (const std::string& expr : exprs) {
    std::string error;
    auto e = Expression::compile(p0, pou0, expr, error);
    if (!e) {
      ++report.rejected;
      report.rejections.push_back({expr, error});
      if (expectAccepted) ADD_FAILURE() << scope.pou << ": '" << expr << "' rejected: " << error;
      continue;
    }
    std::string type = declarable(p0, e->type());
    if (ownType && e->type() == ownType) type.clear();  // an FB cannot contain an instance of itself
    if (type.empty()) continue;
    EvalResult r;
    (e->evaluate(vm.memory(), vm.memorySize(), ctx, r, error) ? items : faulting)
        .push_back({expr, type, conversionName(e->type())});
  }
  std::set<std::string> faulted;
  runBatch(scope, std::move(items), false, report, faulted);
  for (Item& f : faulting) runBatch(scope, {std::move(f)}, true, report, faulted);
  for (const std::string& f : mustFault)
    EXPECT_TRUE(faulted.count(f)) << scope.pou << ": '" << f << "' was expected to fault in the VM";
  return report;
}

// Expressions the evaluator rejects must be rejected by the compiler with the same message at the
// same place: each is compiled as `zbad := <expression>;` (zbad : BOOL, a hint that changes no
// typing) in the POU of `scope`.
void sameErrors(const Scope& scope, const std::vector<std::pair<std::string, std::string>>& rejected) {
  if (rejected.empty()) return;
  std::string body;
  for (const auto& [expr, error] : rejected) body += fmt::format("zbad := {};\n", expr);
  body += "zprobe := NOT zprobe;\n";
  const std::string source = instantiate(scope.tag, "VAR zprobe : BOOL; zbad : BOOL; END_VAR", body);
  test::Compiled c = test::compileStrict(source);
  EXPECT_FALSE(c.program);
  // The statements are on consecutive lines from the first one.
  const uint32_t first = lineOf(source, "zbad := ");
  std::map<uint32_t, const Diagnostic*> firstError;
  for (const Diagnostic& d : c.diags.items())
    if (d.severity == Severity::Error && !firstError.count(d.span.line)) firstError[d.span.line] = &d;
  static const std::regex columnMessage(R"(^column (\d+): (.*)$)");
  for (size_t i = 0; i < rejected.size(); ++i) {
    const auto& [expr, error] = rejected[i];
    std::smatch m;
    if (!std::regex_match(error, m, columnMessage)) {
      ADD_FAILURE() << "'" << expr << "': error without a column: " << error;
      continue;
    }
    const uint32_t column = static_cast<uint32_t>(std::stoul(m[1])) + 8;  // after "zbad := "
    const std::string message = m[2];
    // Where the evaluator is stricter than the compiler on purpose.
    if (message.rfind("calling ", 0) == 0 || message == "constant expression overflows" ||
        message == "REF needs a variable: this value has no address")
      continue;
    auto it = firstError.find(first + static_cast<uint32_t>(i));
    if (it == firstError.end()) {
      ADD_FAILURE() << scope.pou << ": the evaluator rejects '" << expr << "' (" << error
                    << ") but the compiler accepts it";
      continue;
    }
    const Diagnostic& d = *it->second;
    if (message.rfind("unknown name '", 0) == 0) {
      EXPECT_EQ(d.message.rfind("undeclared identifier '", 0), 0u) << expr << ": " << d.message;
    } else {
      EXPECT_EQ(message, d.message) << scope.pou << ": '" << expr << "'";
    }
    EXPECT_EQ(column, d.span.column) << scope.pou << ": '" << expr << "': " << message;
  }
}

// Every binary operator over every pair of `atoms`: accepted ones against the VM, rejected ones
// against the compiler's errors.
void operatorMatrix(const Scope& scope, const std::vector<std::string>& atoms, const std::vector<std::string>& ops) {
  std::vector<std::string> exprs;
  for (const std::string& a : atoms)
    for (const std::string& op : ops)
      for (const std::string& b : atoms) {
        if ((op == "/" || op == "MOD") && (b == "0" || b == "zero")) continue;  // faults: tested apart
        exprs.push_back(a + " " + op + " " + b);
      }
  Report r = differential(scope, exprs, {}, false);
  sameErrors(scope, r.rejections);
  EXPECT_GT(r.compared, exprs.size() / 4) << "too few expressions compared";
  std::printf("[ %s ] %zu expressions: %zu compared with the VM, %zu VM faults, %zu rejected like the compiler\n",
              scope.pou, exprs.size(), r.compared, r.faults, r.rejected);
}

// ------------------------------------------------------------------ differential: values

TEST(EvaluatorDifferential, ProgramScopeExpressions) {
  // clang-format off
  const std::vector<std::string> exprs = {
      // integers of every width wrap at their width
      "si + 1", "si * 2", "si - -1", "i - 1", "-i", "ABS(i)", "di + 1", "di * di", "li - 2", "li * li", "-li",
      "usi + 1", "usi * usi", "ui - 5", "udi + 1", "udi * udi", "uli + 1", "uli * uli", "-usi", "-b", "-ui",
      "b + 16#80", "w + 1", "dw * 2", "lw + lw",
      "gDi / -1", "li / -1", "si MOD 7", "i MOD -7", "di MOD 1000", "uli MOD 10", "-7 / 2", "-7 MOD 3", "7 MOD -3",
      "di / 7", "udi / 3", "i / 3", "usi / 4",
      // mixed widths and signedness: the common type
      "i + di", "si + usi", "ui + di", "usi + ui", "udi + li", "b AND w", "b OR dw", "w XOR lw", "si + li",
      "ui * ui", "usi - 255", "n + 0.5", "di + 0.5", "i + r", "di + lr", "r + lr", "si * r", "usi + r",
      // literals
      "16#FF", "2#1010", "8#17", "INT#-5", "BYTE#255", "BOOL#1", "REAL#1.5", "LREAL#2", "1_000_000", "2147483648",
      "-2147483649", "9223372036854775807", "18446744073709551615", "-9223372036854775808", "1 + 2 * 3", "7 / 2",
      "2147483647 + 1", "100000 * 100000", "1.5 + 2", "10 / 4.0", "2 ** 0.5", "(1 + 2) * 3", "TRUE AND FALSE",
      "NOT TRUE", "16#F0 AND 16#3C", "'abc' = 'abc'", "'abc' < 'abd'", "'b' > 'abc'", "T#1s", "LT#1h",
      "D#2024-01-15", "TOD#08:30:15.25", "DT#2024-01-15-08:30:00", "'it$'s'", "'$N$T$$'", "''", "-1.5",
      "1.0E300 * 1.0E300", "SINT#-128", "USINT#255 + 1", "INT#32767 + INT#1", "DINT#5 / 2",
      // reals
      "r + 1.0", "r * r", "lr / 3.0", "r / 3", "lr * 2", "SQRT(lr)", "SQRT(2)", "SIN(r)", "COS(lr)", "LN(10.0)",
      "LOG(1000)", "EXP(1)", "TAN(lr)", "ASIN(0.5)", "ACOS(lr)", "ATAN(r)", "SQRT(-1.0)", "LN(0.0)", "EXPT(2, 10)",
      "2 ** 10", "lr ** 2", "r ** 0.5", "EXPT(r, 2)", "EXPT(lr, n)", "r > 1.0E9", "lr = 0.1", "r <> r",
      "TRUNC(lr * 10.0)", "TRUNC(-2.7)", "REAL_TRUNC_INT(r)", "LREAL_TRUNC_SINT(lr * 1000.0)", "TRUNC(r)",
      "SQRT(i * i)", "EXP(lr) * r", "ABS(-2.5)", "ABS(lr - 1.0)", "-r", "-lr",
      // conversions
      "REAL_TO_INT(2.5)", "REAL_TO_INT(-2.5)", "LREAL_TO_DINT(lr * 1.0E12)", "REAL_TO_USINT(-5.0)",
      "REAL_TO_DINT(r)", "LREAL_TO_UDINT(-0.5)", "INT_TO_SINT(i)", "DINT_TO_INT(di)", "DINT_TO_BYTE(di)",
      "UDINT_TO_DINT(udi)", "LINT_TO_REAL(li)", "ULINT_TO_LREAL(uli)", "BOOL_TO_INT(bo)", "INT_TO_BOOL(n)",
      "TO_DINT(si)", "TO_REAL(i)", "TO_STRING(di)", "INT_TO_STRING(i)", "REAL_TO_STRING(r)", "LREAL_TO_STRING(lr)",
      "BOOL_TO_STRING(TRUE)", "TIME_TO_STRING(t)", "DATE_TO_STRING(d)", "TOD_TO_STRING(tod1)", "DT_TO_STRING(dt1)",
      "ULINT_TO_STRING(uli)", "LTIME_TO_STRING(lt)", "STRING_TO_INT('  42 ')", "STRING_TO_REAL('3.5e2')",
      "STRING_TO_BOOL('true')", "STRING_TO_DINT(s)", "STRING_TO_UDINT('12.7')", "STRING_TO_LREAL('x')",
      "TIME_TO_DINT(t)", "TIME_TO_LREAL(gT)", "DINT_TO_TIME(1500)", "LREAL_TO_TIME(2.5)", "DT_TO_DATE(dt1)",
      "DT_TO_TOD(dt1)", "DATE_TO_DT(d)", "TIME_TO_LTIME(t)", "LTIME_TO_TIME(lt)", "DATE_TO_UDINT(d)",
      "TOD_TO_DINT(tod1)", "WORD_TO_INT(w)", "BYTE_TO_SINT(b)", "LWORD_TO_ULINT(lw)", "DWORD_TO_REAL(dw)",
      "INT_TO_WORD(i)", "SINT_TO_LWORD(si)", "UINT_TO_REAL(ui)", "REAL_TO_LREAL(r)", "LREAL_TO_REAL(lr)",
      "TO_INT(col)", "INT_TO_STRING(-32768)", "TO_STRING(1.5)", "TO_STRING(T#3s)", "REAL_TO_STRING(1.0E-7)",
      "LINT_TO_TIME(li)", "REAL_TO_BOOL(0.0)", "BOOL_TO_REAL(TRUE)", "TO_LREAL(lr)",
      // bit access, shifts and rotates
      "b.0", "b.7", "w.15", "dw.31", "lw.63", "lw.0", "gDw.4", "i.15", "si.7", "usi.0", "pt.flags.15",
      "SHL(b, 1)", "SHR(w, 4)", "ROL(dw, 1)", "ROR(lw, 4)", "SHL(b, 9)", "SHL(di, 40)", "ROL(b, -1)",
      "SHL(1, 3)", "SHR(i, 1)", "ROR(usi, 9)", "SHL(w, n)", "ROL(lw, 65)", "SHR(dw, -1)", "NOT b", "NOT w",
      "w AND 16#0F0F", "dw OR 16#1", "lw XOR 16#FFFF", "NOT dw", "NOT lw", "NOT i", "NOT usi", "b AND NOT b",
      // time and dates
      "t + T#2s", "t - T#1h", "t * 3", "t / 4", "t * 1.5", "t / 2.5", "3 * t", "gT / n", "lt + t", "tod1 + T#1h",
      "dt1 - T#30m", "dt1 - DT#2000-01-01-00:00:00", "d - D#1970-01-01", "tod1 - TOD#06:00:00", "T#1s + T#500ms",
      "t < T#0s", "t = T#-1.5s", "gT > K_T", "ADD_TIME(t, T#1s)", "SUB_TIME(t, T#1s)", "MUL_TIME(t, 2)",
      "DIV_TIME(t, 2)", "MUL_TIME(t, 0.5)", "CONCAT_DATE_TOD(d, tod1)", "SUB_DATE_DATE(gD, d)",
      "ADD_TOD_TIME(tod1, T#13h)", "SUB_DT_DT(gDt, dt1)", "ADD_LTIME(lt, lt)", "SUB_TOD_TOD(gTod, tod1)",
      "ADD_DT_TIME(dt1, T#1d)", "MUL_LTIME(lt, 3)", "DIV_LTIME(lt, 7)", "ABS(t)", "-t", "MIN(t, T#0s)",
      "MAX(T#1s, t, gT)", "LIMIT(T#0s, t, T#1s)", "t * n", "t / lr", "K_T * 2", "d < gD", "dt1 >= gDt",
      "lt > t", "t = t", "gLt * 1000000", "T#1d * 1000000",
      // strings
      "s = 'The quick brown fox'", "s < 'Z'", "s > gS", "s <> e", "e = ''", "gS5 <= s", "s >= s", "LEN(s)",
      "LEFT(s, 3)", "RIGHT(s, 3)", "MID(s, 5, 5)", "CONCAT(s, ' jumps')", "CONCAT(gS5, gS5, 'x')",
      "INSERT(s, '!!', 3)", "DELETE(s, 4, 1)", "REPLACE(s, 'slow', 5, 5)", "FIND(s, 'brown')", "FIND(s, 'cat')",
      "LEFT(s, -1)", "MID(s, 100, 2)", "LEFT(s, 1000)", "LEN(CONCAT(s, s))", "CONCAT(s, s, s, s, s)", "LEN('')",
      "RIGHT(gS5, big)", "MID(s, 3, idx)", "DELETE(s, -1, 0)", "INSERT(s, s, 100)", "FIND(s, '')",
      "LEFT(CONCAT(s, gS), LEN(gS5) + 1)", "gStrs[1]", "gStrs[idx - 3]", "pt.name", "lne.b.name", "PS",
      "CONCAT(PS, PS)", "LEFT('abc', 2) = 'ab'", "MID(gS, 3, 1) < 'm'",
      // TwinCAT's and CODESYS's parameter names, and IEC's by name
      "LEN(STR := s)", "LEFT(STR := s, SIZE := 3)", "RIGHT(SIZE := 3, STR := s)", "MID(POS := 5, STR := s, LEN := 5)",
      "CONCAT(STR1 := s, STR2 := ' jumps')", "INSERT(STR1 := s, STR2 := '!!', POS := 3)",
      "DELETE(STR := s, LEN := 4, POS := 1)", "REPLACE(STR1 := s, STR2 := 'slow', L := 5, P := 5)",
      "FIND(STR2 := 'brown', STR1 := s)", "LEFT(IN := s, L := 2)", "MID(P := 2, L := 3, IN := gS)",
      // SIZEOF of a type written as a type
      "SIZEOF(STRING(10))", "SIZEOF(STRING[5])", "SIZEOF(WSTRING(10))", "SIZEOF(STRING)", "SIZEOF(INT)",
      "SIZEOF(Point)", "SIZEOF(STRING(K_MAX + 1))", "SIZEOF(WSTRING[PK])",
      // enumerations, subranges, aliases
      "col = Red", "col <> Blue", "col = Color#Red", "gColor = Green", "lev = Low", "gLevel", "col", "Color#Blue",
      "Green", "High", "gLevel > lev", "col < Blue", "TO_DINT(gLevel) + 1", "pct", "pct + 1", "pct - 200",
      "gPct * 2", "sp", "sp * 2.0", "gSpeed + sp", "pt.c = Blue", "Level#Mid", "MAX(col, Color#Blue)",
      "light = Red", "light <> Amber", "light", "Light#Red", "Amber", "light > Off", "TO_USINT(light) + 1",
      "col = Red AND light = Red",
      // structs, arrays, FB instances, nested chains
      "pt", "pt.x", "pt.y", "pt.flags", "pt.c", "lne", "lne.a.x", "lne.pts[1].x", "lne.pts[idx - 1].name",
      "lne.m[2, -1]", "lne.m[1, idx - 3]", "lne.m", "lne.pts", "lne.pts[2]", "arr", "arr[1]", "arr[idx]",
      "arr[idx * 2 + 1]", "arr[n]", "arr[big - 95]", "arr[usi - 250]", "arr[TO_INT(lr * 30.0)]", "arr[K1]",
      "neg[-3]", "neg[idx - 8]", "cube[1, 2, -1]", "cube[idx - 3, idx - 1, 0]", "cube[0, 1, -1] + cube[1, 2, 0]",
      "cube", "motors[2].count", "motors[1].enable", "motors[idx - 1].name", "motors[2].hist[3]", "fb.count",
      "fb.running", "fb.tmr.ET", "fb.tmr.Q", "fb.pt.name", "fb.shared", "fb.hist[fb.count MOD 4]", "fb",
      "motors[1]", "fb.pt", "fb.tmr", "fb.target * 2.0", "fb.cnt + 1", "fb.stat.0", "motors[idx - 2].hist",
      "arr[arr[2]]", "arr[arr[arr[1] + 1] + 1]", "gMat[2, 1]", "gMat[idx, idx - 1]", "gPts[2].name", "gArr[-2]",
      "gArr[idx - 5]", "gLine.pts[2].c", "gLine.m[2, 1]", "gPts", "gArr",
      // references
      "rp^", "rp^.x", "rp^.name", "ri^", "ri^ + 1", "gRef^", "REF(pt)", "REF(arr[3])", "rp = REF(pt)",
      "ri <> REF(arr[5])", "ADR(di)", "REF(fb.count)", "REF(gArr[2])", "REF(motors[2].hist[1])", "rnull",
      "gRef = rnull", "REF(tp)", "REF(rp^)", "REF(rp^.y)",
      // globals, located and CONSTANT variables, VAR_TEMP, program instance paths
      "gSi + gI", "gDi", "gLi", "gUsi", "gUli + 1", "gB", "gW", "gDw", "gLw", "gR", "gLr", "gBo", "gT", "gLt",
      "gD", "gTod", "gDt", "gS", "gS5", "gColor", "gPct", "gSpeed", "gPt", "gLine", "gIn3", "gInB", "gOutW",
      "gOutW.2", "loc", "K_MAX", "K_MAX * 2", "K_R * 10.0", "K_T * 2", "PK", "PK + tp", "PS = 'xyz'", "tp", "tr",
      "tp * 2", "tr / 2.0", "Main.di", "Main.arr[2]", "Main.pt.x", "Main.fb.count",
      // selection
      "MIN(si, i)", "MAX(di, 5)", "LIMIT(0, n, 5)", "LIMIT(-10, i, 10)", "MIN(1, 2, 3, -4)", "MAX(r, lr)",
      "MIN(usi, 3)", "MAX(b, w)", "SEL(bo, 1, 2)", "SEL(TRUE, s, gS5)", "SEL(bo, pt, gPt)",
      "SEL(NOT bo, arr, arr)", "SEL(bo, t, T#5s)", "SEL(gBo, di, li)", "SEL(gBo, pct, 7)", "MUX(1, 10, 20, 30)",
      "MUX(n - 5, 'a', 'bb', 'ccc')", "MUX(0, pt, gPt)", "MUX(idx - 1, r, lr, 2.5)", "MUX(idx, s, gS, gS5, e)",
      "MOVE(di)", "MOVE(pt).x", "SEL(gBo, 1, 2) + 1", "MUX(2, si, i, di)", "MAX(col, gColor)",
      // what SEL and MUX do not read unless chosen (as in the compiler's code)
      "SEL(idx <= 2, 0, arr[idx + 8])", "MUX(0, 1, arr[idx + 8])", "SEL(FALSE, 1, rnull^)",
      "SEL(FALSE, 1, motors[2].shared)", "SEL(FALSE, 1, motors[idx - 1].shared)", "MUX(1, gArr[idx + 5], 7)",
      "SEL(FALSE, 1, motors[2].hist[idx + 8])", "SEL(TRUE, gNull^, 5)",
      // boolean logic and comparisons
      "(bo OR gBo) AND NOT bo", "bo XOR TRUE", "gBo AND (di > 0)", "NOT (i < 0)", "di > 5 AND fb.count = 3",
      "i = -32768", "usi = 255", "udi > 0", "uli > 1", "li < 0", "bo = FALSE", "gBo <> bo", "b = 16#81",
      "w = 65535", "dw > 16#7FFFFFFF", "NOT gIn3 OR loc", "bo AND arr[idx] = 3", "gBo OR bo AND gBo",
      "si < i AND i < di AND di < li", "r < lr", "gR >= 3.25",
  };
  // clang-format on
  Report r = differential(kMain, exprs);
  EXPECT_EQ(r.rejected, 0u);
  EXPECT_TRUE(r.faulted.empty()) << r.faulted.front();
  std::printf("[ Main ] %zu expressions compared with the VM, %zu faults\n", r.compared, r.faults);
}

TEST(EvaluatorDifferential, WideStrings) {
  // clang-format off
  const std::vector<std::string> exprs = {
      "gWs", "gWs3", "gWc", "\"é€😀\"", "WSTRING#\"\"", "\"$\"q$\" $$ $N$0041\"", "LEN(gWs)", "LEN(gWs3)",
      "LEFT(gWs, 3)", "RIGHT(gWs, 2)", "MID(gWs, 2, 3)", "CONCAT(gWs, \"!\", gWs3)", "INSERT(gWs, \"<>\", 2)",
      "DELETE(gWs, 2, 1)", "REPLACE(gWs, \"ss\", 1, 4)", "FIND(gWs, \"ß\")", "FIND(gWs, \"x\")",
      "gWs = \"Grüße €\"", "gWs <> gWs3", "gWs < gWs3", "gWs3 <= \"a\"", "\"é\" < \"$0100\"", "gWs > \"Gr\"",
      "gWc = WCHAR#\"ß\"", "gWc < WCHAR#\"A\"", "WSTRING_TO_STRING(gWs)", "STRING_TO_WSTRING(gS)",
      "STRING_TO_WSTRING('hé')", "WSTRING_TO_DINT(\"42\")", "DINT_TO_WSTRING(di)", "TO_WSTRING(r)",
      "WCHAR_TO_WSTRING(gWc)", "WSTRING_TO_WCHAR(gWs)", "WCHAR_TO_WORD(gWc)", "WORD_TO_WCHAR(16#20AC)",
      "SEL(gBo, gWs, gWs3)", "MUX(1, gWs3, gWs, \"x\")", "LEN(CONCAT(gWs, gWs))", "SIZEOF(gWs)",
      "LEN(STR := gWs)", "LEFT(STR := gWs, SIZE := 2)", "FIND(STR1 := gWs, STR2 := \"ß\")",
  };
  // clang-format on
  Report r = differential(kMain, exprs);
  EXPECT_EQ(r.rejected, 0u);
  EXPECT_TRUE(r.faulted.empty()) << r.faulted.front();
  EXPECT_EQ(r.compared, exprs.size());
}

// A REFERENCE TO is read as the variable it designates, as the program reads it.
TEST(EvaluatorDifferential, References) {
  // clang-format off
  const std::vector<std::string> exprs = {
      "refI", "refI + 1", "refI * refArr[2]", "refPt.x", "refPt.name", "refPt.x = pt.x", "refArr[idx]",
      "refArr[refI]", "ADR(refI) = ADR(arr[4])", "SIZEOF(refPt)", "SIZEOF(refArr)", "-refI",
  };
  // clang-format on
  Report r = differential(kMain, exprs);
  EXPECT_EQ(r.rejected, 0u);
  EXPECT_TRUE(r.faulted.empty()) << r.faulted.front();
  EXPECT_EQ(r.compared, exprs.size());
}

TEST(EvaluatorDifferential, FunctionBlockBody) {
  // clang-format off
  const std::vector<std::string> exprs = {
      "enable", "target", "running", "count", "count * 2", "shared", "shared + 1", "speed", "hist", "hist[2]",
      "hist[count MOD 4]", "pt", "pt.name", "tmr.PT", "tmr.IN", "tmr", "mode", "mode = Mid", "name", "stat",
      "stat.7", "cnt", "cnt + cnt", "FK", "FK * count", "FS", "CONCAT(FS, name)", "ft", "fr", "fr * 2.0",
      "THIS.count", "THIS^.hist[1]", "THIS^.speed * 2.0", "THIS", "gR + fr", "Main.di", "Main.fb.count = count",
      "ft + count", "gDi + K_MAX", "REF(count)", "REF(THIS^.pt)", "SEL(enable, ft, count)", "LEN(name) + FK", "target > 50.0",
  };
  // clang-format on
  Report r = differential(kMotor, exprs);
  EXPECT_EQ(r.rejected, 0u);
}

TEST(EvaluatorDifferential, MethodFrame) {
  // clang-format off
  const std::vector<std::string> exprs = {
      "step", "ml", "mr", "ms", "mt", "mt * 3", "Run", "count", "speed", "hist[2]", "pt.x", "THIS.count",
      "THIS^.speed", "name", "FK", "FS", "mode", "cnt + 1", "shared", "tmr.ET", "enable", "target", "gDi",
      "Main.di", "Main.fb.count", "ml * step", "ms = 'method'", "CONCAT(ms, name)", "LEFT(ms, step)", "REF(ml)",
      "REF(count)", "ml + count + shared", "-mt", "ABS(mt)", "SINT_TO_INT(mt) * FK", "mr > speed", "THIS",
      "Main.motors[2].count", "step + Run",
  };
  // clang-format on
  Report r = differential(kRun, exprs);
  EXPECT_EQ(r.rejected, 0u);
}

TEST(EvaluatorDifferential, FunctionFrame) {
  // clang-format off
  const std::vector<std::string> exprs = {
      "a", "b", "s", "io", "io + 1", "loc", "arr", "arr[2]", "arr[a MOD 4 + 1]", "w", "w.15", "c", "c = Blue",
      "tmp", "tmp + a", "LK", "LK * 2", "Calc", "gDi", "Main.di", "Main.fb.count", "REF(io)", "REF(tmp)",
      "s = ms", "LEN(s)", "a / b", "loc * a", "USINT_TO_INT(arr[1]) + b", "Main.res = io",
  };
  // clang-format on
  // `ms` is a variable of the method, not of Calc: rejected.
  std::vector<std::string> valid;
  for (const std::string& e : exprs)
    if (e != "s = ms") valid.push_back(e);
  Report r = differential(kCalc, valid);
  EXPECT_EQ(r.rejected, 0u);
  Report bad = differential(kCalc, {"s = ms"}, {}, false);
  EXPECT_EQ(bad.rejected, 1u);
}

TEST(EvaluatorDifferential, GlobalScope) {
  // clang-format off
  const std::vector<std::string> exprs = {
      "gDi", "gLi + 1", "gS", "gColor", "Green", "Color#Blue", "Main.di", "Main.fb.count", "Main.motors[2].count",
      "Main.arr[Main.idx]", "Main.pt", "Main.lne.pts[1].x", "K_MAX", "K_T", "gArr[-1]", "gMat[3, 2]", "gRef^",
      "Main.rp^.x", "1 + 2", "'text'", "gPts[1].c = Blue", "Main.fb.tmr.PT", "Main.s", "LEN(Main.s)", "Main.loc",
      "Main.K1 + K_MAX",
  };
  // clang-format on
  Report r = differential(kGlobal, exprs);
  EXPECT_EQ(r.rejected, 0u);
}

// ------------------------------------------------------------------ differential: faults

TEST(EvaluatorDifferential, FaultsMatchTheVm) {
  // clang-format off
  const std::vector<std::string> faults = {
      "di / zero", "di MOD zero", "lr / 0.0", "r / TO_REAL(zero)", "t / zero", "gT / zero", "DIV_TIME(t, zero)",
      "arr[idx + 8]", "arr[idx - 3]", "arr[big]", "arr[big * 100000000000]", "neg[idx - 3]", "cube[idx - 1, 1, 0]",
      "cube[1, idx, 0]", "cube[0, 1, idx - 2]", "arr[-big * 100000000000]", "arr[uli]", "arr[udi]", "lne.pts[idx].x", "gMat[idx + 1, 0]", "motors[idx].count", "rnull^", "gNull^ + 1",
      "motors[2].shared", "MUX(idx, 1, 2)", "MUX(-1, 'a', 'b')", "fb.hist[fb.count + 10]", "gArr[idx]",
      "arr[idx] / (arr[1] - 1)", "SEL(bo, 1 / zero, 2)", "LIMIT(0, arr[idx + 8], 5)",
      // what SEL and MUX compute before choosing (as in the compiler's code)
      "SEL(idx <= 2, 0, cube[idx, 1, 0])", "SEL(TRUE, 0, lne.pts[idx].x)", "MUX(0, 1, arr[arr[idx + 8]])",
      "SEL(FALSE, 1, motors[idx].shared)", "MUX(0, 1, 2 / zero)", "SEL(arr[idx + 8] = 0, 1, 2)",
      "SEL(FALSE, rnull^, 1)",
  };
  // clang-format on
  std::set<std::string> must(faults.begin(), faults.end());
  Report r = differential(kMain, faults, must);
  EXPECT_EQ(r.faults, faults.size());
  EXPECT_EQ(r.rejected, 0u);
}

// ------------------------------------------------------------------ differential: generated

TEST(EvaluatorDifferential, OperatorMatrixProgram) {
  operatorMatrix(kMain, {"si",  "i",     "di", "li", "usi", "ui",    "udi",        "uli",  "b",    "w",
                         "dw",  "lw",    "r",  "lr", "bo",  "t",     "lt",         "tod1", "s",    "col",
                         "pct", "K_MAX", "0",  "-1", "300", "70000", "3000000000", "2.5",  "TRUE", "T#1s"},
                 {"+", "-", "*", "/", "MOD", "**", "<", ">", "<=", ">=", "=", "<>", "AND", "OR", "XOR"});
}

TEST(EvaluatorDifferential, OperatorMatrixMethod) {
  operatorMatrix(kRun, {"step", "ml", "mr", "mt", "count", "speed", "cnt", "stat", "FK", "shared", "1", "-2.5"},
                 {"+", "-", "*", "/", "MOD", "<", "=", "AND", "XOR"});
}

TEST(EvaluatorDifferential, UnaryAndConversionMatrix) {
  const std::vector<std::pair<std::string, std::string>> atoms = {
      {"si", "SINT"},    {"i", "INT"},     {"di", "DINT"},  {"li", "LINT"}, {"usi", "USINT"}, {"ui", "UINT"},
      {"udi", "UDINT"},  {"uli", "ULINT"}, {"b", "BYTE"},   {"w", "WORD"},  {"dw", "DWORD"},  {"lw", "LWORD"},
      {"r", "REAL"},     {"lr", "LREAL"},  {"bo", "BOOL"},  {"t", "TIME"},  {"lt", "LTIME"},  {"d", "DATE"},
      {"tod1", "TOD"},   {"dt1", "DT"},    {"s", "STRING"}, {"gR", "REAL"}, {"gLr", "LREAL"}, {"gLi", "LINT"},
      {"gUli", "ULINT"}, {"gDw", "DWORD"}, {"gSi", "SINT"},
  };
  std::vector<std::string> exprs;
  for (const auto& [atom, type] : atoms) {
    for (const char* u : {"-", "NOT ", "ABS(", "SQRT(", "TRUNC(", "TO_STRING("}) {
      const std::string op = u;
      exprs.push_back(op.back() == '(' ? op + atom + ")" : op + atom);
    }
    for (const auto& [other, to] : atoms) {
      if (type == to && atom != other) continue;
      exprs.push_back(fmt::format("{}_TO_{}({})", type, to, atom));
      exprs.push_back(fmt::format("TO_{}({})", to, atom));
    }
  }
  Report r = differential(kMain, exprs, {}, false);
  sameErrors(kMain, r.rejections);
  std::printf("[ conversions ] %zu expressions: %zu compared, %zu rejected like the compiler\n", exprs.size(),
              r.compared, r.rejected);
  EXPECT_GT(r.compared, 400u);
}

// Random expressions from a small grammar over the program's variables: most type, many do not,
// many fault. Each is compared with the VM (values and faults) or with the compiler (errors).
class RandomExpressions {
 public:
  explicit RandomExpressions(uint64_t seed) : rng_(seed) {}

  std::string expr(int depth) {
    if (depth <= 0 || pick(10) < 3) return atom();
    switch (pick(9)) {
      case 0:
      case 1:
      case 2: return expr(depth - 1) + " " + one(kOps) + " " + expr(depth - 1);
      case 3: return one({"-", "NOT ", "-", "+"}) + "(" + expr(depth - 1) + ")";
      case 4: return "(" + expr(depth - 1) + ")";
      case 5: {
        const std::string f = one(kFunctions1);
        return f + "(" + expr(depth - 1) + ")";
      }
      case 6: {
        const std::string f = one(kFunctions2);
        return f + "(" + expr(depth - 1) + ", " + expr(depth - 1) + ")";
      }
      case 7:
        return one({"SEL", "LIMIT", "MUX", "MID", "REPLACE"}) + "(" + expr(depth - 1) + ", " + expr(depth - 1) + ", " +
               expr(depth - 1) + ")";
      default: return place();
    }
  }

 private:
  size_t pick(size_t n) { return static_cast<size_t>(rng_() % n); }
  std::string one(const std::vector<std::string>& v) { return v[pick(v.size())]; }
  std::string index() { return one({"idx", "n", "1", "2", "3", "idx - 1", "i MOD 3", "usi MOD 4", "K1", "n - 4"}); }
  std::string place() {
    switch (pick(12)) {
      case 0: return "arr[" + index() + "]";
      case 1: return "neg[" + index() + " - 6]";
      case 2: return "cube[" + index() + " MOD 2, 1, 0]";
      case 3: return "lne.pts[" + index() + " MOD 3]." + one({"x", "y", "name", "flags", "c"});
      case 4: return "gArr[" + index() + " - 3]";
      case 5: return "fb.hist[" + index() + " MOD 4]";
      case 6: return "motors[" + index() + " MOD 2 + 1]." + one({"count", "speed", "name", "enable"});
      case 7: return one({"b", "w", "dw", "lw", "usi", "i", "pt.flags", "gW"}) + "." + std::to_string(pick(9));
      case 8: return one({"rp^.x", "rp^.name", "ri^", "gRef^", "rnull^"});
      case 9: return "gMat[" + index() + ", " + index() + " - 1]";
      case 10: return "gStrs[" + index() + " - 2]";
      default: return "lne.m[" + index() + " MOD 2 + 1, " + index() + " - 2]";
    }
  }
  std::string atom() {
    return one({"si",        "i",      "di",    "li",         "usi", "ui",   "udi",   "uli",  "b",      "w",
                "dw",        "lw",     "r",     "lr",         "idx", "n",    "K_MAX", "pct",  "tp",     "tr",
                "0",         "1",      "2",     "-1",         "3",   "7",    "100",   "300",  "70000",  "2.5",
                "-0.5",      "1.0E3",  "16#FF", "bo",         "gBo", "gIn3", "loc",   "TRUE", "FALSE",  "t",
                "lt",        "T#1s",   "gT",    "K_T",        "s",   "gS",   "gS5",   "e",    "'ab'",   "PS",
                "col",       "gColor", "Red",   "Color#Blue", "d",   "tod1", "dt1",   "zero", "INT#-3", "BYTE#7",
                "REAL#0.25", "gLr",    "gR",    "gUli",       "gSi", "sp",   "lev"});
  }

  std::mt19937_64 rng_;
  const std::vector<std::string> kOps = {
      "+", "-", "*", "/", "MOD", "**", "<", ">", "<=", ">=", "=", "<>", "AND", "OR", "XOR", "+", "-", "*", "=", "<"};
  // clang-format off
  const std::vector<std::string> kFunctions1 = {
      "ABS", "SQRT", "TRUNC", "TO_INT", "TO_DINT", "TO_REAL", "TO_LREAL", "TO_STRING", "INT_TO_REAL", "LEN",
      "DINT_TO_STRING", "TIME_TO_DINT", "REAL_TO_INT", "STRING_TO_INT", "MOVE", "EXP", "SIN", "LN", "TO_BYTE",
      "TO_WORD", "TO_USINT", "TO_LINT", "TO_ULINT", "TO_TIME", "BOOL_TO_INT"};
  const std::vector<std::string> kFunctions2 = {"MIN", "MAX", "SHL", "SHR", "ROL", "ROR", "EXPT", "LEFT", "RIGHT",
                                                "CONCAT", "FIND", "MUL_TIME", "DIV_TIME", "ADD_TIME", "DELETE"};
};

TEST(EvaluatorDifferential, RandomExpressions) {
  // SCANBACK_EVAL_SEED=<n> explores other expressions (and SCANBACK_EVAL_COUNT more of them).
  const char* seed = std::getenv("SCANBACK_EVAL_SEED");
  const char* count = std::getenv("SCANBACK_EVAL_COUNT");
  RandomExpressions gen(seed ? std::strtoull(seed, nullptr, 10) : 20240229);
  const size_t n = count ? std::strtoull(count, nullptr, 10) : 2500;
  std::set<std::string> unique;
  std::vector<std::string> exprs;
  while (exprs.size() < n) {
    std::string e = gen.expr(seed ? 4 : 3);
    if (unique.insert(e).second) exprs.push_back(std::move(e));
  }
  Report r = differential(kMain, exprs, {}, false);
  sameErrors(kMain, r.rejections);
  std::printf("[ random ] %zu expressions: %zu compared with the VM, %zu VM faults, %zu rejected like the compiler\n",
              exprs.size(), r.compared, r.faults, r.rejected);
  EXPECT_GT(r.compared, 300u);
  EXPECT_GT(r.faults, 20u);
}

// ------------------------------------------------------------------ compile errors

struct Fixture {
  std::shared_ptr<const Program> program;
  uint32_t main = UINT32_MAX, motor = UINT32_MAX, run = UINT32_MAX, calc = UINT32_MAX;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture x;
    // IEC's rules (--strict): the type errors below are those; EvaluatorCodesys tests the default.
    test::Compiled c =
        test::compileStrict(instantiate("Main", "VAR zprobe : BOOL; END_VAR", "zprobe := NOT zprobe;\n"));
    EXPECT_TRUE(c.program) << c.messages();
    x.program = c.program;
    if (x.program) {
      x.main = findPou(*x.program, "Main");
      x.motor = findPou(*x.program, "Motor");
      x.run = findPou(*x.program, "Motor.Run");
      x.calc = findPou(*x.program, "Calc");
    }
    return x;
  }();
  return f;
}

std::string compileError(uint32_t pou, const std::string& text) {
  std::string error;
  auto e = Expression::compile(*fixture().program, pou, text, error);
  EXPECT_FALSE(e) << "'" << text << "' compiled to " << (e ? e->type()->name : "");
  return error;
}

TEST(EvaluatorErrors, SyntaxErrorsHaveColumns) {
  const uint32_t m = fixture().main;
  EXPECT_EQ(compileError(m, "di +"), "column 5: expected an expression, found end of file");
  EXPECT_EQ(compileError(m, "(di"), "column 4: expected ')' to close '(', found end of file");
  EXPECT_EQ(compileError(m, "di di"), "column 4: unexpected 'di' after the expression");
  EXPECT_EQ(compileError(m, ""), "column 1: expected an expression, found end of file");
  EXPECT_EQ(compileError(m, "arr[1"), "column 6: expected ']' to close the index, found end of file");
  EXPECT_EQ(compileError(m, "di @ 2"), "column 4: unexpected character '@'");
  EXPECT_EQ(compileError(m, "'open"), "column 1: unterminated string literal");
}

TEST(EvaluatorErrors, UnknownNamesSaySearchedScopes) {
  const Fixture& f = fixture();
  EXPECT_EQ(compileError(f.main, "nosuch + 1"),
            "column 1: unknown name 'nosuch': not a local variable of Main, an instance variable of Main, a global variable, a program "
            "instance or an enumeration value");
  EXPECT_EQ(compileError(f.run, "di"),
            "column 1: unknown name 'di': not a local variable of Motor.Run, an instance variable of Motor, a "
            "global variable, a program instance or an enumeration value");
  EXPECT_EQ(compileError(f.calc, "x"),
            "column 1: unknown name 'x': not a local variable of Calc, a global variable, a program instance or "
            "an enumeration value");
  EXPECT_EQ(compileError(UINT32_MAX, "di"),
            "column 1: unknown name 'di': not a global variable, a program instance or an enumeration value");
  EXPECT_EQ(compileError(f.main, "pt.z"), "column 1: Point has no member 'z'");
  EXPECT_EQ(compileError(f.main, "fb.Run"), "column 1: method 'Run' must be called with ( )");
  EXPECT_EQ(compileError(f.main, "fb.tmr.prevIn"), "column 1: TON has no member 'prevIn'");
  EXPECT_EQ(compileError(f.main, "Color#Purple"), "column 1: Color has no value 'Purple'");
  EXPECT_EQ(compileError(f.main, "Hue#Red"), "column 1: unknown type 'HUE'");
  EXPECT_EQ(compileError(f.main, "Point#x"), "column 1: 'POINT' is not an enumeration");
  EXPECT_EQ(compileError(f.main, "Motor#x"), "column 1: 'MOTOR' is not an enumeration");
  EXPECT_EQ(compileError(f.main, "Main#x"), "column 1: 'MAIN' is a PROGRAM, not a type");
  EXPECT_EQ(compileError(f.main, "Calc"), "column 1: 'Calc' is a POU; call it with ( )");
  EXPECT_EQ(compileError(f.main, "THIS"), "column 1: THIS is only available in function blocks and their methods");
  EXPECT_EQ(compileError(f.main, "nofn(1)"), "column 1: unknown function 'nofn'");
  EXPECT_EQ(compileError(f.main, "TON(1)"), "column 1: 'TON' is a FUNCTION_BLOCK: declare an instance and call that");
}

TEST(EvaluatorErrors, CallsToUserPousAreRejected) {
  const Fixture& f = fixture();
  const std::string tail = " is not allowed here: evaluating must not change the program state";
  EXPECT_EQ(compileError(f.main, "Calc(a := 1, io := di)"), "column 1: calling Calc" + tail);
  EXPECT_EQ(compileError(f.main, "1 + fb.Run(step := 1)"), "column 5: calling fb.Run" + tail);
  EXPECT_EQ(compileError(f.main, "fb(enable := TRUE)"), "column 1: calling fb" + tail);
  EXPECT_EQ(compileError(f.main, "motors[1](enable := TRUE)"), "column 1: calling motors[1]" + tail);
  EXPECT_EQ(compileError(f.main, "fb.tmr(IN := TRUE)"), "column 1: calling fb.tmr" + tail);
  EXPECT_EQ(compileError(f.motor, "Run(step := 1)"), "column 1: calling Run" + tail);
  EXPECT_EQ(compileError(f.run, "THIS^.Run(step := 1)"), "column 1: calling THIS^.Run" + tail);
  EXPECT_EQ(compileError(f.motor, "tmr(IN := FALSE)"), "column 1: calling tmr" + tail);
  EXPECT_EQ(compileError(f.main, "di(1)"), "column 1: 'di' is a variable of type DINT, not something to call");
  // A unit test's assertions and ADVANCE_TIME change the run (a fault, the clock): never evaluated.
  EXPECT_EQ(compileError(f.main, "ASSERT_TRUE(TRUE)"), "column 1: calling ASSERT_TRUE" + tail);
  EXPECT_EQ(compileError(f.main, "ADVANCE_TIME(T#1s)"), "column 1: calling ADVANCE_TIME" + tail);
}

TEST(EvaluatorErrors, TypeErrors) {
  const uint32_t m = fixture().main;
  EXPECT_EQ(compileError(m, "s + 1"), "column 1: operator + cannot be applied to STRING[30] and ?");
  EXPECT_EQ(compileError(m, "b + si"), "column 1: no common type for BYTE and SINT; convert one of them explicitly");
  EXPECT_EQ(compileError(m, "li + 0.5"), "column 1: cannot convert LINT to LREAL");
  EXPECT_EQ(compileError(m, "b + 100000"), "column 1: constant 100000 does not fit BYTE");
  EXPECT_EQ(compileError(m, "t + 1"), "column 1: operator + cannot be applied to TIME and a number");
  EXPECT_EQ(compileError(m, "d + d"), "column 1: operator + cannot be applied to DATE and DATE");
  EXPECT_EQ(compileError(m, "r MOD 2"), "column 1: MOD needs integers, not REAL");
  EXPECT_EQ(compileError(m, "cube[2, 1, 0]"), "column 6: index 2 is outside 0..1");
  EXPECT_EQ(compileError(m, "cube[0, 1, 1]"), "column 12: index 1 is outside -1..0");
  EXPECT_EQ(compileError(m, "neg[0]"), "column 5: index 0 is outside -5..-1");
  EXPECT_EQ(compileError(m, "col = lev"), "column 1: Color and Level are different enumerations");
  EXPECT_EQ(compileError(m, "pt = pt"), "column 1: Point values cannot be compared");
  EXPECT_EQ(compileError(m, "rp < rp"), "column 1: references can only be compared with = and <>");
  EXPECT_EQ(compileError(m, "NOT r"), "column 1: NOT needs a BOOL or bit string, not REAL");
  EXPECT_EQ(compileError(m, "-bo"), "column 1: cannot negate a BOOL");
  EXPECT_EQ(compileError(m, "-'x'"), "column 1: operator needs a typed operand");
  EXPECT_EQ(compileError(m, "r AND bo"), "column 1: no common type for REAL and BOOL; convert one of them explicitly");
  EXPECT_EQ(compileError(m, "di.32"), "column 1: DINT has no bit 32");
  EXPECT_EQ(compileError(m, "r.1"), "column 1: bit access needs an integer or bit string variable");
  EXPECT_EQ(compileError(m, "arr[1, 2]"), "column 1: ARRAY[1..10] OF INT needs 1 index(es), got 2");
  EXPECT_EQ(compileError(m, "arr[11]"), "column 5: index 11 is outside 1..10");
  EXPECT_EQ(compileError(m, "arr[r]"), "column 5: an array index must be an integer, not REAL");
  EXPECT_EQ(compileError(m, "arr[1.5]"), "column 5: an array index must be an integer");
  EXPECT_EQ(compileError(m, "di[1]"), "column 1: only arrays and pointers can be indexed");
  EXPECT_EQ(compileError(m, "di^"), "column 1: only a REF_TO value can be dereferenced with ^");
  EXPECT_EQ(compileError(m, "rp.x"), "column 1: dereference the reference with ^ before selecting a member");
  EXPECT_EQ(compileError(m, "di.x"), "column 1: DINT has no member 'x'");
  EXPECT_EQ(compileError(m, "5 / 0"), "column 1: division by zero in a constant expression");
  EXPECT_EQ(compileError(m, "INT#70000"), "column 1: 70000 does not fit INT");
  EXPECT_EQ(compileError(m, "SINT#1.5"), "column 1: a SINT literal cannot have a fraction or exponent");
  EXPECT_EQ(compileError(m, "REF(5)"), "column 5: REF needs a variable");
  EXPECT_EQ(compileError(m, "REF(b.1)"), "column 5: a single bit has no address");
  EXPECT_EQ(compileError(m, "WCHAR#\"ab\""), "column 1: WCHAR#\"...\" holds one UTF-16 code unit, not 2");
  EXPECT_EQ(compileError(m, "gWs = gS"),
            "column 1: cannot compare WSTRING[12] and STRING; convert one with STRING_TO_WSTRING or WSTRING_TO_STRING");
  EXPECT_EQ(compileError(m, "CONCAT(gWs, gS)"), "column 13: CONCAT needs a WSTRING here, not STRING; convert with "
                                                "STRING_TO_WSTRING");
}

TEST(EvaluatorErrors, StandardFunctionArguments) {
  const uint32_t m = fixture().main;
  EXPECT_EQ(compileError(m, "SQRT()"), "column 1: SQRT needs its argument IN");
  EXPECT_EQ(compileError(m, "SQRT(1, 2)"), "column 9: too many arguments for SQRT (1 expected)");
  EXPECT_EQ(compileError(m, "SQRT(X := 1)"), "column 6: SQRT has no parameter 'X'");
  EXPECT_EQ(compileError(m, "SQRT(IN => r)"), "column 6: SQRT has no outputs");
  EXPECT_EQ(compileError(m, "SQRT('a')"), "column 6: SQRT needs a number");
  EXPECT_EQ(compileError(m, "SQRT(t)"), "column 6: SQRT needs a number, not TIME");
  EXPECT_EQ(compileError(m, "LEN(5)"), "column 5: LEN needs a STRING or WSTRING here");
  EXPECT_EQ(compileError(m, "LEFT(s, r)"), "column 9: LEFT needs an integer here");
  EXPECT_EQ(compileError(m, "MID(s, 1)"), "column 1: MID needs its argument P");
  EXPECT_EQ(compileError(m, "SHL(r, 1)"), "column 5: SHL needs a bit string or integer");
  EXPECT_EQ(compileError(m, "ABS(s)"), "column 5: ABS needs a number");
  EXPECT_EQ(compileError(m, "TRUNC(di)"), "column 7: TRUNC needs a REAL or LREAL");
  EXPECT_EQ(compileError(m, "INT_TO_DINT(r)"), "column 13: INT_TO_DINT expects a INT, not REAL");
  EXPECT_EQ(compileError(m, "TIME_TO_DATE(t)"), "column 1: cannot convert TIME to DATE");
  EXPECT_EQ(compileError(m, "TO_DINT(pt)"), "column 1: cannot convert Point to DINT");
  EXPECT_EQ(compileError(m, "MIN(pt, pt)"), "column 1: MIN needs numbers or times");
  EXPECT_EQ(compileError(m, "SEL(bo, 1, 'a')"), "column 1: constant 1 does not fit STRING[1]");
  EXPECT_EQ(compileError(m, "SEL(bo, pct, 500)"), "column 1: 500 is outside Pct");
}

// Found by these tests: the compiler read past its arguments for LIMIT with two (fixed in
// vm/compiler/builtins.cpp); it reports the missing one, as the evaluator does.
TEST(EvaluatorErrors, CompilerLimitWithTwoArguments) {
  const std::string messages =
      test::compileErrors("PROGRAM Main\nVAR x : INT; END_VAR\nx := LIMIT(1, 2);\nEND_PROGRAM\n");
  EXPECT_NE(messages.find("main.st:3:6: error: LIMIT needs its argument MX"), std::string::npos) << messages;
  EXPECT_EQ(compileError(fixture().main, "LIMIT(1, 2)"), "column 1: LIMIT needs its argument MX");
}

// Found by the random differential test: a string element converted to another capacity
// (TO_STRING) was read with the converted type's size as the array stride (fixed in
// vm/compiler/expressions.cpp readOperand); the evaluator reads the element itself.
TEST(EvaluatorDifferential, CompilerStringElementConversion) {
  test::Running r = test::run(
      "PROGRAM Main\n"
      "VAR strs : ARRAY[0..2] OF STRING[8] := ['one', 'two', 'three']; i : INT := 2; a, b : STRING;\n"
      "  refs : REF_TO STRING[8]; c : STRING; END_VAR\n"
      "a := TO_STRING(strs[i]);\n"
      "b := CONCAT(TO_STRING(strs[i - 1]), '!');\n"
      "refs := REF(strs[1]);\n"
      "c := TO_STRING(refs^);\n"
      "END_PROGRAM\n");
  ASSERT_TRUE(r.program);
  EXPECT_EQ(r["Main.a"], "'three'");
  EXPECT_EQ(r["Main.b"], "'two!'");
  EXPECT_EQ(r["Main.c"], "'two'");
  const Evaluated ev = evaluate(*r.program, UINT32_MAX, "TO_STRING(Main.strs[Main.i])", r.rt->vm().memory(),
                                r.rt->vm().memorySize(), {});
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_EQ(stringOf(ev.result.bytes), "three");
}

// CODESYS's string layout in the debugger's expressions: a pointer reads the characters, a 0
// written through one ends the string, SIZEOF counts the 0, and the functions read up to the 0.
TEST(EvaluatorStrings, CodesysLayout) {
  test::Running r = test::run(
      "PROGRAM Main\n"
      "VAR s : STRING := 'abc'; t : STRING(6) := 'abcdef'; p, q : POINTER TO BYTE; END_VAR\n"
      "p := ADR(s); q := ADR(t); q[2] := 0;\n"
      "END_PROGRAM\n");
  ASSERT_TRUE(r.program);
  auto eval = [&](const std::string& expr) {
    return evaluate(*r.program, UINT32_MAX, expr, r.rt->vm().memory(), r.rt->vm().memorySize(), {});
  };
  auto integer = [](const Evaluated& ev) {
    int64_t v = 0;
    std::memcpy(&v, ev.result.bytes.data(), std::min<size_t>(ev.result.bytes.size(), 8));
    return v;
  };
  Evaluated ev = eval("Main.p^");
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_EQ(integer(ev) & 0xFF, 97);
  ev = eval("(Main.p + 3)^");  // the 0 after 'abc'
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_EQ(integer(ev) & 0xFF, 0);
  ev = eval("LEN(Main.t)");
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_EQ(integer(ev) & 0xFFFF, 2);
  ev = eval("SIZEOF(Main.s)");
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_EQ(integer(ev), 81);
  ev = eval("CONCAT(Main.t, Main.s)");
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_EQ(stringOf(ev.result.bytes), "ababc");
  ev = eval("Main.t");
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_EQ(stringOf(ev.result.bytes), "ab");
  EXPECT_EQ(r["Main.t"], "'ab'");
}

TEST(EvaluatorErrors, ScopeErrors) {
  std::string error;
  EXPECT_FALSE(Expression::compile(*fixture().program, 100000, "1", error));
  EXPECT_EQ(error, "there is no POU 100000 in the program");
  // Compiled for one frame, evaluated in another.
  auto e = Expression::compile(*fixture().program, fixture().run, "ml", error);
  ASSERT_TRUE(e) << error;
  Vm vm(fixture().program);
  EvalResult r;
  EXPECT_FALSE(e->evaluate(vm.memory(), vm.memorySize(), EvalContext{fixture().calc, 0, 0}, r, error));
  EXPECT_EQ(error, "'ml' was compiled for a frame of Motor.Run, not of Calc");
  // A global-scope expression runs in any context.
  auto g = Expression::compile(*fixture().program, UINT32_MAX, "gDi", error);
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->evaluate(vm.memory(), vm.memorySize(), EvalContext{fixture().calc, 0, 0}, r, error)) << error;
}

TEST(EvaluatorErrors, RuntimeErrorsAreLocated) {
  const Fixture& f = fixture();
  Runtime rt(f.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  const Vm& vm = rt.vm();
  const ProgramInstanceInfo& main = f.program->instances.at(0);
  const EvalContext ctx{f.main, main.offset, vm.imageSize()};
  auto err = [&](const std::string& text) {
    const Evaluated ev = evaluate(*f.program, f.main, text, vm.memory(), vm.memorySize(), ctx);
    EXPECT_FALSE(ev.ok) << text;
    return ev.error;
  };
  // clang-format on
  EXPECT_EQ(err("di + di / zero"), "column 6: division by zero");
  EXPECT_EQ(err("arr[idx + 20]"), "column 1: array index out of range: index 23 outside 1..10 (arr)");
  EXPECT_EQ(err("1 + cube[1, idx, 0]"), "column 5: array index out of range: index 3 outside 1..2 (cube)");
  EXPECT_EQ(err("rnull^ + 1"), "column 1: null reference");
  // An unbound REFERENCE TO is named, as the program's fault names it.
  EXPECT_EQ(err("refNone + 1"), "column 1: invalid reference: REFERENCE TO 'refNone' is not bound; REF= binds it");
  EXPECT_EQ(err("1 + fb.refNone"),
            "column 5: invalid reference: REFERENCE TO 'fb.refNone' is not bound; REF= binds it");
  EXPECT_EQ(err("motors[2].shared"), "column 1: null reference");
  EXPECT_EQ(err("MUX(idx, 1, 2)"), "column 1: subrange violation: value 3 outside 0..1");
  // A reference past the end of memory.
  std::vector<uint8_t> memory(vm.memory(), vm.memory() + vm.memorySize());
  const Evaluated where = evaluate(*f.program, f.main, "rnull", memory.data(), vm.memorySize(), ctx);
  ASSERT_TRUE(where.ok && where.result.offset);
  const uint32_t bad = vm.memorySize() - 2;
  std::memcpy(memory.data() + *where.result.offset, &bad, 4);
  const Evaluated dangling = evaluate(*f.program, f.main, "rnull^", memory.data(), vm.memorySize(), ctx);
  EXPECT_FALSE(dangling.ok);
  EXPECT_EQ(dangling.error,
            fmt::format("column 1: dangling reference: {} + 4 bytes is past the end of memory ({} bytes)", bad,
                        vm.memorySize()));
  // A context outside memory.
  const Evaluated outside =
      evaluate(*f.program, f.main, "tp", vm.memory(), vm.memorySize(), EvalContext{f.main, main.offset, 0xFFFFFFF0u});
  EXPECT_FALSE(outside.ok);
  EXPECT_NE(outside.error.find("outside the memory"), std::string::npos) << outside.error;
}

// ------------------------------------------------------------------ frames

// Paused inside Calc, called from the method Motor.Run, called from the program Main: every frame
// of the stack evaluates its own locals, its instance's variables, globals and Main.x paths.
TEST(EvaluatorFrames, EachFrameOfTheStack) {
  const std::string source = instantiate("Calc", "", "tmp := tmp;\n");
  test::Compiled c = test::compileStrict(source);
  ASSERT_TRUE(c.program) << c.messages();
  const Program& p = *c.program;
  Runtime rt(c.program);
  PauseAt observer(test::statementOnLine(p, lineOf(source, "tmp := tmp;")));
  rt.vm().setObserver(&observer);
  ASSERT_EQ(rt.runCycle(), RunStatus::Paused);
  const Vm& vm = rt.vm();
  const std::vector<Frame> frames = vm.frames();
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(p.pous[frames[0].pou].name, "Main");
  EXPECT_EQ(p.pous[frames[1].pou].name, "Motor.Run");
  EXPECT_EQ(p.pous[frames[2].pou].name, "Calc");

  auto value = [&](size_t frame, const std::string& text) {
    const Frame& f = frames[frame];
    const Evaluated ev = evaluate(p, f.pou, text, vm.memory(), vm.memorySize(), contextOf(f));
    EXPECT_TRUE(ev.ok) << text << ": " << ev.error;
    return ev.ok ? formatValue(p, ev.result.bytes.data(), 0, -1, *ev.type) : "<" + ev.error + ">";
  };
  auto offset = [&](size_t frame, const std::string& text) -> int64_t {
    const Frame& f = frames[frame];
    const Evaluated ev = evaluate(p, f.pou, text, vm.memory(), vm.memorySize(), contextOf(f));
    EXPECT_TRUE(ev.ok && ev.result.offset) << text << ": " << ev.error;
    return ev.ok && ev.result.offset ? int64_t{*ev.result.offset} : -1;
  };
  auto imageOffset = [&](const std::string& path) -> int64_t {
    std::string error;
    auto loc = findVariable(p, path, error);
    EXPECT_TRUE(loc) << error;
    return loc ? int64_t{loc->offset} : -2;
  };

  // Main: its variables, its VAR_TEMP (in its frame), globals, its instance path.
  EXPECT_EQ(value(0, "tp"), "41");
  EXPECT_EQ(value(0, "tr"), "6.5");
  EXPECT_EQ(value(0, "di"), "2147483647");
  EXPECT_EQ(value(0, "Main.di"), "2147483647");
  EXPECT_EQ(value(0, "fb.count"), "3");
  EXPECT_EQ(value(0, "gDi"), "-2147483000");
  EXPECT_EQ(offset(0, "fb.count"), imageOffset("Main.fb.count"));
  EXPECT_EQ(offset(0, "tp"), int64_t{frames[0].frameOffset});
  // Motor.Run: its locals and VAR_TEMP, the instance's variables (through THIS too), in-outs.
  EXPECT_EQ(value(1, "step"), "2");
  EXPECT_EQ(value(1, "ml"), "-75");
  EXPECT_EQ(value(1, "mt"), "-5");
  EXPECT_EQ(value(1, "ms"), "'method'");
  EXPECT_EQ(value(1, "mr"), "1");
  EXPECT_EQ(value(1, "count"), "3");
  EXPECT_EQ(value(1, "THIS^.count + THIS.count"), "6");
  EXPECT_EQ(value(1, "Main.fb.count = count"), "TRUE");
  EXPECT_EQ(value(1, "shared"), "1");
  EXPECT_EQ(offset(1, "count"), imageOffset("Main.fb.count"));
  EXPECT_EQ(offset(1, "shared"), imageOffset("Main.res"));
  EXPECT_EQ(offset(1, "THIS"), imageOffset("Main.fb"));
  EXPECT_EQ(value(1, "gDi + 1"), "-2147482999");
  // Calc: inputs, locals, VAR_TEMP, the return value, an in-out through two references.
  EXPECT_EQ(value(2, "a"), "-75");
  EXPECT_EQ(value(2, "b"), "3");
  EXPECT_EQ(value(2, "s"), "'method'");
  EXPECT_EQ(value(2, "tmp"), "-225");
  EXPECT_EQ(value(2, "loc * 2.0"), "5.5");
  EXPECT_EQ(value(2, "arr[2] + arr[4]"), "4");
  EXPECT_EQ(value(2, "io"), "1");
  EXPECT_EQ(value(2, "Calc"), "0");
  EXPECT_EQ(value(2, "LK"), "12");
  EXPECT_EQ(value(2, "Main.res"), "1");
  EXPECT_EQ(offset(2, "io"), imageOffset("Main.res"));
  for (const Variable& v : p.pous[frames[2].pou].frameVariables)
    if (v.name == "tmp") {
      EXPECT_EQ(offset(2, "tmp"), int64_t{frames[2].frameOffset} + v.offset);
    }
  // Each frame has its own names.
  std::string error;
  EXPECT_FALSE(Expression::compile(p, frames[2].pou, "ml", error));
  EXPECT_FALSE(Expression::compile(p, frames[1].pou, "tmp", error));
  EXPECT_FALSE(Expression::compile(p, frames[0].pou, "count", error));
}

// ------------------------------------------------------------------ the compiler's names

// Names resolve through the program's symbol table, as the compiler resolved them: a declared
// type no variable uses, an alias without a default of its own, the CONSTANTs of a function's
// frame (folded, as the compiler folds them, so no frame needs to be read).
TEST(EvaluatorNames, TheSymbolTableKnowsWhatTheCompilerKnew) {
  test::Compiled c = test::compileStrict(
      "TYPE\n  Unused : (One, Two := 20, Three);\n  Speed : LREAL;\n  Limits : STRUCT lo : INT; END_STRUCT;\nEND_TYPE\n"
      "FUNCTION F : INT\nVAR CONSTANT K : INT := 6; KS : STRING[4] := 'ab'; END_VAR\nF := K;\nEND_FUNCTION\n"
      "PROGRAM Main\nVAR x : INT; END_VAR\nx := F();\nEND_PROGRAM\n");
  ASSERT_TRUE(c.program) << c.messages();
  const Program& p = *c.program;
  const uint32_t f = findPou(p, "F");
  ASSERT_NE(f, UINT32_MAX);
  // Somewhere no frame of F is: the constants are not read from memory.
  const std::vector<uint8_t> memory(p.imageSize() + 64, 0xA5);
  auto value = [&](uint32_t pou, const std::string& text) {
    const Evaluated ev =
        evaluate(p, pou, text, memory.data(), static_cast<uint32_t>(memory.size()), EvalContext{pou, 0, p.imageSize()});
    EXPECT_TRUE(ev.ok) << text << ": " << ev.error;
    return ev.ok ? formatValue(p, ev.result.bytes.data(), 0, -1, *ev.type) + " " + ev.type->name : "<" + ev.error + ">";
  };
  EXPECT_EQ(value(UINT32_MAX, "Unused#Two"), "Two Unused");
  EXPECT_EQ(value(UINT32_MAX, "TO_DINT(Three)"), "21 DINT");
  EXPECT_EQ(value(UINT32_MAX, "TO_Speed(3) / 2"), "1.5 LREAL");
  EXPECT_EQ(value(f, "K * 2"), "12 INT");
  EXPECT_EQ(value(f, "KS"), "'ab' STRING[4]");
  std::string error;
  auto k = Expression::compile(p, f, "K", error);
  ASSERT_TRUE(k) << error;
  EXPECT_FALSE(k->isStorage());
  EXPECT_FALSE(Expression::compile(p, UINT32_MAX, "Limits#lo", error));
  EXPECT_EQ(error, "column 1: 'LIMITS' is not an enumeration");
}

// ------------------------------------------------------------------ results and assignments

TEST(EvaluatorResults, StorageAndAssignment) {
  const Fixture& f = fixture();
  const Program& p = *f.program;
  Runtime rt(f.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  const Vm& vm = rt.vm();
  const EvalContext ctx{f.main, p.instances.at(0).offset, vm.imageSize()};
  auto eval = [&](const std::string& text) {
    Evaluated ev = evaluate(p, f.main, text, vm.memory(), vm.memorySize(), ctx);
    EXPECT_TRUE(ev.ok) << text << ": " << ev.error;
    return ev;
  };
  auto at = [&](const std::string& path) {
    std::string error;
    auto loc = findVariable(p, path, error);
    EXPECT_TRUE(loc) << error;
    return loc ? loc->offset : 0;
  };
  // Storage: the same offsets findVariable gives.
  EXPECT_EQ(eval("di").result.offset, at("Main.di"));
  EXPECT_EQ(eval("lne.pts[2].name").result.offset, at("Main.lne.pts[2].name"));
  EXPECT_EQ(eval("lne.pts[idx - 1].name").result.offset, at("Main.lne.pts[2].name"));
  EXPECT_EQ(eval("cube[1, 2, -1]").result.offset, at("Main.cube[1, 2, -1]"));
  EXPECT_EQ(eval("gMat[idx, 0]").result.offset, at("gMat[3, 0]"));
  EXPECT_EQ(eval("rp^.x").result.offset, at("Main.pt.x"));
  EXPECT_EQ(eval("motors[2].hist[1]").result.offset, at("Main.motors[2].hist[1]"));
  const Evaluated bit = eval("w.11");
  EXPECT_EQ(bit.result.offset, at("Main.w") + 1);
  EXPECT_EQ(bit.result.bit, 3);
  EXPECT_EQ(bit.result.bytes, std::vector<uint8_t>{1});
  EXPECT_EQ(eval("gIn3").result.bit, 3);
  // Values are not storage.
  EXPECT_FALSE(eval("di + 0").result.offset);
  EXPECT_FALSE(eval("MOVE(di)").result.offset);
  EXPECT_FALSE(eval("SEL(TRUE, pt, pt)").result.offset);
  EXPECT_FALSE(eval("K_MAX").result.offset);  // folded constants, as in the compiler
  EXPECT_FALSE(eval("PK").result.offset);
  std::string error;
  auto e = Expression::compile(p, f.main, "lne.pts[1]", error);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->isStorage());
  EXPECT_FALSE(e->isBoolean());
  EXPECT_TRUE(Expression::compile(p, f.main, "di > 5 AND fb.count = 3", error)->isBoolean());

  // encodeAssignment: the bytes of a literal for the target's type.
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encodeAssignment(p, eval("di").result, "-5", bytes, error)) << error;
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0xFB, 0xFF, 0xFF, 0xFF}));
  ASSERT_TRUE(encodeAssignment(p, eval("w.11").result, "FALSE", bytes, error)) << error;
  EXPECT_EQ(bytes, std::vector<uint8_t>{0});
  ASSERT_TRUE(encodeAssignment(p, eval("col").result, "Blue", bytes, error)) << error;
  EXPECT_EQ(bytes, (std::vector<uint8_t>{6, 0}));
  ASSERT_TRUE(encodeAssignment(p, eval("lne.pts[1].name").result, "'ok'", bytes, error)) << error;
  EXPECT_EQ(bytes.size(), 11u);  // STRING[10]: 10 characters and the 0
  EXPECT_EQ(stringOf(bytes), "ok");
  ASSERT_TRUE(encodeAssignment(p, eval("t").result, "T#2s", bytes, error)) << error;
  // No implicit BOOL conversion, as in ST.
  EXPECT_FALSE(encodeAssignment(p, eval("di").result, " true ", bytes, error));
  EXPECT_EQ(error, "'TRUE' is a BOOL, not DINT");
  EXPECT_FALSE(encodeAssignment(p, eval("col").result, "BOOL#1", bytes, error));
  EXPECT_FALSE(encodeAssignment(p, eval("si").result, "300", bytes, error));
  EXPECT_EQ(error, "300 is outside the range of SINT");
  EXPECT_FALSE(encodeAssignment(p, eval("pct").result, "101", bytes, error));
  EXPECT_EQ(error, "101 is outside Pct");
  EXPECT_FALSE(encodeAssignment(p, eval("di + 1").result, "5", bytes, error));
  EXPECT_EQ(error, "the expression is not a variable: only variables, fields, elements and bits can be assigned");
  EXPECT_FALSE(encodeAssignment(p, eval("PS").result, "'abc'", bytes, error));
  EXPECT_FALSE(encodeAssignment(p, eval("tp").result, "5", bytes, error));
  EXPECT_EQ(error,
            "the variable lives in a call frame (a function's or method's variable, VAR_TEMP); only variables "
            "in the image (globals, program and FB instances) can be written");
  EXPECT_FALSE(encodeAssignment(p, eval("pt").result, "5", bytes, error));
  EXPECT_EQ(error, "Point values cannot be written as text");

  // The write applied at a cycle start is what the evaluator then reads.
  const EvalResult target = eval("lne.pts[idx - 2].x").result;
  ASSERT_TRUE(encodeAssignment(p, target, "-1234", bytes, error)) << error;
  rt.queueWrite(ExternalWrite{*target.offset, target.bit, bytes});
  rt.startCycle();
  EXPECT_EQ(formatValue(p, vm.memory(), *target.offset, -1, *target.type), "-1234");
}

TEST(EvaluatorResults, ConstantsReadOnly) {
  const Fixture& f = fixture();
  Runtime rt(f.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  std::string error;
  // A CONSTANT a member path reaches is storage, read-only.
  const Evaluated ev = evaluate(*f.program, UINT32_MAX, "Main.PK", rt.vm().memory(), rt.vm().memorySize(), {});
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_TRUE(ev.result.offset.has_value());
  EXPECT_TRUE(ev.result.readOnly);
  std::vector<uint8_t> bytes;
  EXPECT_FALSE(encodeAssignment(*f.program, ev.result, "1", bytes, error));
  EXPECT_EQ(error, "cannot assign to a constant");
}

// ------------------------------------------------------------------ robustness

// Random bytes and random token soups: compile() gives an error or an expression, and evaluating
// that expression in any context over any memory gives an error or a value. Never a crash, never
// a read outside memory (AddressSanitizer watches the exact-size copy of memory).
void evaluateEverywhere(const Expression& e, const Program& p, std::mt19937_64& rng,
                        const std::vector<std::pair<std::vector<uint8_t>, EvalContext>>& states) {
  EvalResult r;
  std::string error;
  // An error comes with its reason.
  const auto evaluate = [&](const uint8_t* memory, uint32_t size, const EvalContext& context) {
    error.clear();
    if (!e.evaluate(memory, size, context, r, error)) {
      EXPECT_FALSE(error.empty());
    }
  };
  for (const auto& [memory, ctx] : states) {
    std::vector<uint8_t> copy(memory);  // exact size: ASan reports any read past it
    evaluate(copy.data(), static_cast<uint32_t>(copy.size()), ctx);
  }
  std::vector<uint8_t> noise(p.imageSize() + 64);
  for (uint8_t& b : noise) b = static_cast<uint8_t>(rng());
  EvalContext wild{static_cast<uint32_t>(rng() % (p.pous.size() + 1)), static_cast<uint32_t>(rng()),
                   static_cast<uint32_t>(rng())};
  evaluate(noise.data(), static_cast<uint32_t>(noise.size()), wild);
  evaluate(nullptr, 0, EvalContext{});
}

// The memory while paused in Calc (called from Motor.Run, called from Main) with the context of
// each frame, and the same memory sprinkled with noise.
std::vector<std::pair<std::vector<uint8_t>, EvalContext>> pausedStates(const std::string& source,
                                                                       const test::Compiled& c) {
  std::vector<std::pair<std::vector<uint8_t>, EvalContext>> states;
  if (!c.program) return states;
  Runtime rt(c.program);
  PauseAt observer(test::statementOnLine(*c.program, lineOf(source, "tmp := tmp;")));
  rt.vm().setObserver(&observer);
  if (rt.runCycle() != RunStatus::Paused) return states;
  const Vm& vm = rt.vm();
  std::mt19937_64 rng(7);
  for (const Frame& fr : vm.frames()) {
    std::vector<uint8_t> mem(vm.memory(), vm.memory() + vm.memorySize());
    states.push_back({mem, contextOf(fr)});
    for (size_t i = 0; i < mem.size(); i += 1 + rng() % 7) mem[i] = static_cast<uint8_t>(rng());
    states.push_back({std::move(mem), contextOf(fr)});
  }
  return states;
}

TEST(EvaluatorRobustness, RandomBytes) {
  const Fixture& f = fixture();
  std::mt19937_64 rng(1);
  const std::vector<std::pair<std::vector<uint8_t>, EvalContext>> none;
  size_t compiled = 0;
  for (int n = 0; n < 3000; ++n) {
    std::string text(rng() % 24, '\0');
    for (char& ch : text)
      ch = static_cast<char>(rng() % 4 == 0 ? rng() : "abiv()[].^+-*/,':=#$ 0123456789"[rng() % 31]);
    std::string error;
    const uint32_t pou = rng() % 2 ? f.main : UINT32_MAX;
    auto e = Expression::compile(*f.program, pou, text, error);
    if (!e) {
      EXPECT_FALSE(error.empty()) << text;
      continue;
    }
    ++compiled;
    evaluateEverywhere(*e, *f.program, rng, none);
  }
  std::printf("[ random bytes ] 3000 texts, %zu compiled\n", compiled);
}

TEST(EvaluatorRobustness, TokenSoup) {
  // Names that resolve in the paused frames of Main, Motor.Run and Calc, and all kinds of tokens.
  // clang-format off
  const std::vector<std::string> tokens = {
      "si", "i", "di", "li", "usi", "uli", "b", "w", "lw", "r", "lr", "bo", "t", "s", "e", "pt", "lne", "arr", "neg",
      "cube", "motors", "fb", "rp", "ri", "rnull", "idx", "zero", "gS", "gArr", "gMat", "gRef", "gNull", "gLine",
      "col", "Red", "Color#Blue", "count", "hist", "ml", "ms", "mt", "THIS", "a", "io", "tmp", "Main", "x", "y",
      "name", "pts", "m", "shared", "tmr", "ET", "(", ")", "(", ")", "[", "]", ",", ".", ".", "^", "+", "-", "*",
      "/", "MOD", "**", "<", ">", "=", "<>", "AND", "OR", "XOR", "NOT", ":=", "=>", "0", "1", "-1", "3", "7",
      "1000000", "2.5", "1.0E300", "TRUE", "T#1s", "'ab'", "''", "SEL", "MUX", "MIN", "MAX", "LIMIT", "LEN",
      "LEFT", "MID", "CONCAT", "REPLACE", "FIND", "SHL", "ROR", "SQRT", "TRUNC", "REF", "ADR", "MOVE",
      "INT_TO_STRING", "TO_DINT", "STRING_TO_INT", "DT_TO_TOD", "TIME_TO_DINT", "ABS", "EXPT", "Calc", "INT#",
      "16#FF", ".3", "D#2024-01-01", "IN", "P", "L", "K", "G", "ADD_TIME", "MUL_TIME",
  };
  // clang-format on
  std::mt19937_64 rng(2);
  const std::string source = instantiate("Calc", "", "tmp := tmp;\n");
  test::Compiled c = test::compileStrict(source);
  ASSERT_TRUE(c.program) << c.messages();
  const auto states = pausedStates(source, c);
  ASSERT_EQ(states.size(), 6u);
  const Program& p = *c.program;
  size_t compiled = 0, evaluated = 0;
  for (int n = 0; n < 6000; ++n) {
    std::string text;
    const size_t count = 1 + rng() % 9;
    for (size_t k = 0; k < count; ++k) text += tokens[rng() % tokens.size()] + (rng() % 3 ? "" : " ");
    const auto& [mem, ctx] = states[rng() % states.size()];
    std::string error;
    auto e = Expression::compile(p, ctx.pou, text, error);
    if (!e) {
      EXPECT_FALSE(error.empty()) << text;
      EXPECT_EQ(error.find("internal error"), std::string::npos) << text << ": " << error;
      continue;
    }
    ++compiled;
    EvalResult r;
    std::vector<uint8_t> copy(mem);
    if (e->evaluate(copy.data(), static_cast<uint32_t>(copy.size()), ctx, r, error)) {
      ++evaluated;
      EXPECT_EQ(copy, mem) << "evaluating wrote memory: " << text;
      if (valueBase(e->type())->kind != TypeKind::String) {
        EXPECT_EQ(r.bytes.size(), e->type()->size) << text;
      }
    }
    evaluateEverywhere(*e, p, rng, {});
  }
  std::printf("[ token soup ] 6000 texts, %zu compiled, %zu evaluated to a value\n", compiled, evaluated);
  EXPECT_GT(compiled, 100u);
}

// Well-formed random expressions over memory full of noise (references and indexes anywhere):
// errors or values, no read outside memory.
TEST(EvaluatorRobustness, RandomExpressionsOverNoise) {
  const Fixture& f = fixture();
  Runtime rt(f.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  const Vm& vm = rt.vm();
  const EvalContext ctx{f.main, f.program->instances.at(0).offset, vm.imageSize()};
  std::mt19937_64 rng(3);
  RandomExpressions gen(4);
  size_t compiled = 0, values = 0, errors = 0;
  for (int n = 0; n < 3000; ++n) {
    std::string error;
    auto e = Expression::compile(*f.program, f.main, gen.expr(3), error);
    if (!e) continue;
    ++compiled;
    for (int k = 0; k < 4; ++k) {
      std::vector<uint8_t> memory(vm.memory(), vm.memory() + vm.memorySize());
      const size_t step = k == 0 ? memory.size() : 1 + rng() % 16;  // k = 0: the real state
      for (size_t i = 0; i < memory.size(); i += step) memory[i] = static_cast<uint8_t>(rng());
      memory.resize(k == 3 ? vm.imageSize() : memory.size());  // k = 3: no stack at all
      EvalResult r;
      (e->evaluate(memory.data(), static_cast<uint32_t>(memory.size()), ctx, r, error) ? values : errors) += 1;
    }
  }
  std::printf("[ noise ] %zu random expressions compiled: %zu values, %zu errors\n", compiled, values, errors);
  EXPECT_GT(compiled, 300u);
  EXPECT_GT(errors, 100u);
}

TEST(EvaluatorRobustness, DeepExpressions) {
  const Fixture& f = fixture();
  std::string error;
  std::string sum = "di";
  for (int k = 0; k < 990; ++k) sum += " + di";
  auto e = Expression::compile(*f.program, f.main, sum, error);
  ASSERT_TRUE(e) << error;
  std::string nested;
  for (int k = 0; k < 150; ++k) nested += "ABS(";
  nested += "-i";
  for (int k = 0; k < 150; ++k) nested += ")";
  EXPECT_TRUE(Expression::compile(*f.program, f.main, nested, error)) << error;
  std::string parens(300, '(');
  EXPECT_FALSE(Expression::compile(*f.program, f.main, parens + "1" + std::string(300, ')'), error));
  EXPECT_NE(error.find("nesting is too deep"), std::string::npos) << error;
  Runtime rt(f.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  EvalResult r;
  EXPECT_TRUE(e->evaluate(rt.vm().memory(), rt.vm().memorySize(),
                          EvalContext{f.main, f.program->instances[0].offset, rt.vm().imageSize()}, r, error))
      << error;
}

TEST(EvaluatorRobustness, ConcurrentEvaluation) {
  const Fixture& f = fixture();
  Runtime rt(f.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  std::string error;
  auto e = Expression::compile(*f.program, f.main, "CONCAT(s, INT_TO_STRING(arr[idx] * 2), gS) = gS", error);
  ASSERT_TRUE(e) << error;
  const EvalContext ctx{f.main, f.program->instances[0].offset, rt.vm().imageSize()};
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      EvalResult r;
      std::string err;
      for (int k = 0; k < 2000; ++k)
        if (!e->evaluate(rt.vm().memory(), rt.vm().memorySize(), ctx, r, err) || r.bytes != std::vector<uint8_t>{0})
          ++failures;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// ------------------------------------------------------------------ speed

TEST(EvaluatorSpeed, ConditionIsFast) {
  const Fixture& f = fixture();
  Runtime rt(f.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  std::string error;
  auto e = Expression::compile(*f.program, f.main, "n > 5 AND fb.count = 3", error);
  ASSERT_TRUE(e) << error;
  const EvalContext ctx{f.main, f.program->instances[0].offset, rt.vm().imageSize()};
  EvalResult r;
  ASSERT_TRUE(e->evaluate(rt.vm().memory(), rt.vm().memorySize(), ctx, r, error));
  EXPECT_EQ(r.bytes, std::vector<uint8_t>{1});  // n = 6, fb.count = 3 after one cycle
  const int n = 1'000'000;
  int trues = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < n; ++k) {
    if (!e->evaluate(rt.vm().memory(), rt.vm().memorySize(), ctx, r, error)) FAIL() << error;
    trues += r.bytes[0];
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / n;
  std::printf("[ speed ] 'n > 5 AND fb.count = 3': %.1f ns per evaluation (%d true)\n", ns, trues);
  RecordProperty("ns_per_evaluation", static_cast<int>(ns));
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(ns, 1000.0);
#else
  EXPECT_LT(ns, 20000.0);  // unoptimised or sanitised builds: only a sanity bound
#endif
}

// Sources of truth the differential tests rely on: the compiler rejects the same texts with the
// same messages (compile errors above, checked against the compiler here).
TEST(EvaluatorErrors, SameMessagesAsTheCompiler) {
  // clang-format off
  const std::vector<std::string> texts = {
      "s + 1", "b + si", "li + 0.5", "b + 100000", "t + 1", "d + d", "r MOD 2", "col = lev", "cube[2, 1, 0]", "pt = pt",
      "rp < rp", "NOT r", "-bo", "-'x'", "r AND bo", "di.32", "r.1", "arr[1, 2]", "arr[11]", "arr[r]",
      "arr[1.5]", "di[1]", "di^", "rp.x", "di.x", "5 / 0", "INT#70000", "REF(5)", "REF(b.1)", "neg[0]",
      "SQRT()", "SQRT(1, 2)", "SQRT(X := 1)", "SQRT(IN => r)", "SQRT('a')", "SQRT(t)", "LEN(5)", "LEFT(s, r)",
      "MID(s, 1)", "SHL(r, 1)", "ABS(s)", "TRUNC(di)", "INT_TO_DINT(r)", "TIME_TO_DATE(t)", "TO_DINT(pt)",
      "MIN(pt, pt)", "SEL(bo, 1, 'a')", "SEL(bo, pct, 500)", "pt.z", "fb.Run", "fb.tmr.prevIn", "Color#Purple",
      "Hue#Red", "Point#x", "Motor#x", "Main#x", "TON#x", "Calc", "THIS", "nofn(1)", "TON(1)", "di(1)", "nosuch + 1", "K_MAX.1",
      "T#1s ** 2", "Red = light", "Red", "Red + 1", "light = Blue", "col = Amber", "s * 2", "pt + 1", "fb + 1", "arr + 1", "MAX(s, 1)",
      "CONCAT(s, 1)", "FIND(1, s)", "DELETE(s, 'a', 1)", "TO_STRING(pt)", "STRING_TO_TIME(s)",
      "BOOL_TO_DATE(bo)", "REF(di + 1)", "rp^^", "gRef.x", "MUX(bo, 1)", "LIMIT(1, 2)", "EXPT(s, 2)",
  };
  // clang-format on
  std::vector<std::pair<std::string, std::string>> rejected;
  for (const std::string& t : texts) {
    std::string error;
    if (Expression::compile(*fixture().program, fixture().main, t, error)) {
      ADD_FAILURE() << "'" << t << "' compiles";
      continue;
    }
    rejected.push_back({t, error});
  }
  sameErrors(kMain, rejected);
}

// TIME() and LTIME() in the debugger are the cycle's virtual start time the context gives, as the
// program's own TIME() reads it (the DAP passes Vm::cycleTime()).
TEST(EvaluatorTime, TimeIsTheCycleStartOfTheContext) {
  std::string error;
  auto t = Expression::compile(*fixture().program, UINT32_MAX, "TIME() + T#1ms", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->type()->kind, TypeKind::Time);
  auto lt = Expression::compile(*fixture().program, UINT32_MAX, "LTIME_TO_LINT(LTIME())", error);
  ASSERT_TRUE(lt) << error;
  Vm vm(fixture().program);
  EvalContext ctx;
  ctx.cycleTime = 250'000'000;
  EvalResult r;
  ASSERT_TRUE(t->evaluate(vm.memory(), vm.memorySize(), ctx, r, error)) << error;
  int64_t ns = 0;
  ASSERT_EQ(r.bytes.size(), 8u);
  std::memcpy(&ns, r.bytes.data(), 8);
  EXPECT_EQ(ns, 251'000'000);
  ASSERT_TRUE(lt->evaluate(vm.memory(), vm.memorySize(), ctx, r, error)) << error;
  std::memcpy(&ns, r.bytes.data(), 8);
  EXPECT_EQ(ns, 250'000'000);
}

// A program compiled with CODESYS's implicit conversions (the default): the debugger's expressions
// accept what its code accepts, typed alike.
TEST(EvaluatorCodesys, ExpressionsFollowTheProgramsConversionRules) {
  test::Compiled c = test::compile(
      "PROGRAM Main\nVAR b : BYTE := 200; si : SINT := -3; li : LINT := 2; END_VAR\nb := b;\nEND_PROGRAM\n");
  ASSERT_TRUE(c.program) << c.messages();
  std::string error;
  const uint32_t main = findPou(*c.program, "Main");
  auto sum = Expression::compile(*c.program, main, "b + si", error);
  ASSERT_TRUE(sum) << error;
  EXPECT_EQ(sum->type()->name, "INT");
  auto half = Expression::compile(*c.program, main, "li + 0.5", error);
  ASSERT_TRUE(half) << error;
  EXPECT_EQ(half->type()->name, "LREAL");
  Vm vm(c.program);
  const EvalContext ctx{main, c.program->instances.at(0).offset, vm.imageSize()};
  EvalResult r;
  ASSERT_TRUE(sum->evaluate(vm.memory(), vm.memorySize(), ctx, r, error)) << error;
  int16_t v = 0;
  std::memcpy(&v, r.bytes.data(), 2);
  EXPECT_EQ(v, 197);
}

// Pointer arithmetic, SIZEOF and Enum.Member in the debugger mean what they mean in the program.
TEST(EvaluatorPointers, ArithmeticSizeofAndQualifiedEnumValues) {
  test::Compiled c = test::compile(
      "TYPE Mode : (Idle, Run := 5); END_TYPE\n"
      "PROGRAM Main\nVAR arr : ARRAY[0..3] OF INT := [1, 2, 3, 4]; p : POINTER TO INT; m : Mode := Mode.Run; "
      "END_VAR\np := ADR(arr[1]);\nEND_PROGRAM\n");
  ASSERT_TRUE(c.program) << c.messages();
  Runtime rt(c.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  const Vm& vm = rt.vm();
  const uint32_t main = findPou(*c.program, "Main");
  const EvalContext ctx{main, c.program->instances.at(0).offset, vm.imageSize()};
  auto value = [&](const char* text) -> int64_t {
    std::string error;
    auto e = Expression::compile(*c.program, main, text, error);
    EXPECT_TRUE(e) << text << ": " << error;
    if (!e) return INT64_MIN;
    EvalResult r;
    EXPECT_TRUE(e->evaluate(vm.memory(), vm.memorySize(), ctx, r, error)) << text << ": " << error;
    int64_t v = 0;
    std::memcpy(&v, r.bytes.data(), std::min<size_t>(r.bytes.size(), 8));
    if (r.type->size == 2) v = static_cast<int16_t>(v);
    return v;
  };
  EXPECT_EQ(value("(p + SIZEOF(INT))^"), 3);
  EXPECT_EQ(value("(p - 2)^"), 1);
  EXPECT_EQ(value("(p + 4) - p"), 4);
  EXPECT_EQ(value("SIZEOF(arr)"), 8);
  EXPECT_EQ(value("BOOL_TO_INT(m = Mode.Run)"), 1);
}

// Issue 30's constructs mean in the debugger what they mean in the program (the typed front end
// is shared): a pointer's index, AND_THEN / OR_ELSE skipping what would fault, the functional
// forms of the operators, ATAN2, TIME_TO_<unit>, DAY_OF_WEEK, CONCAT of three, a doubled quote.
TEST(EvaluatorCodesys, NewConstructsEvaluateAsInTheProgram) {
  test::Compiled c = test::compile(
      "PROGRAM Main\nVAR arr : ARRAY[0..3] OF INT := [1, 2, 3, 4]; p : POINTER TO INT; q : POINTER TO INT; "
      "t : TIME := T#1m30s; x : INT := 2; END_VAR\np := ADR(arr[1]);\nEND_PROGRAM\n");
  ASSERT_TRUE(c.program) << c.messages();
  Runtime rt(c.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  const Vm& vm = rt.vm();
  const uint32_t main = findPou(*c.program, "Main");
  const EvalContext ctx{main, c.program->instances.at(0).offset, vm.imageSize()};
  auto result = [&](const char* text, std::string& error) -> std::optional<EvalResult> {
    auto e = Expression::compile(*c.program, main, text, error);
    if (!e) return std::nullopt;
    EvalResult r;
    if (!e->evaluate(vm.memory(), vm.memorySize(), ctx, r, error)) return std::nullopt;
    return r;
  };
  auto value = [&](const char* text) -> int64_t {
    std::string error;
    std::optional<EvalResult> r = result(text, error);
    EXPECT_TRUE(r) << text << ": " << error;
    if (!r) return INT64_MIN;
    int64_t v = 0;
    std::memcpy(&v, r->bytes.data(), std::min<size_t>(r->bytes.size(), 8));
    if (r->type->size == 2) v = static_cast<int16_t>(v);
    if (r->type->size == 1) v = static_cast<uint8_t>(v);
    return v;
  };
  auto real = [&](const char* text) -> double {
    std::string error;
    std::optional<EvalResult> r = result(text, error);
    EXPECT_TRUE(r) << text << ": " << error;
    if (!r) return 0;
    if (r->type->size == 4) {
      float f;
      std::memcpy(&f, r->bytes.data(), 4);
      return f;
    }
    double d;
    std::memcpy(&d, r->bytes.data(), 8);
    return d;
  };
  EXPECT_EQ(value("p[0]"), 2);
  EXPECT_EQ(value("p[2]"), 4);
  EXPECT_EQ(value("p[-1]"), 1);
  EXPECT_EQ(value("q <> 0 AND_THEN q^ > 0"), 0);  // q is NULL: never dereferenced
  EXPECT_EQ(value("q = 0 OR_ELSE q^ > 0"), 1);
  EXPECT_EQ(value("p <> 0 AND_THEN p^ = 2"), 1);
  EXPECT_EQ(value("ADD(x, 3, 4)"), 9);
  EXPECT_EQ(value("GT(3, x, 1)"), 1);
  EXPECT_EQ(value("MOD(7, x)"), 1);
  EXPECT_NEAR(real("ATAN2(1.0, -1.0)"), 2.35619449, 1e-6);
  EXPECT_EQ(value("TIME_TO_S(t)"), 90);
  EXPECT_EQ(value("TIME_TO_M(t)"), 1);
  EXPECT_EQ(value("DAY_OF_WEEK(D#2024-01-15)"), 1);
  EXPECT_EQ(value("LEN(CONCAT('a', 'bc', 'it''s'))"), 7);
  // q[0] of a NULL pointer faults as q^ does.
  std::string error;
  EXPECT_FALSE(result("q[0]", error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
}

// A global list (a file of VAR_GLOBAL blocks only, named after the file) means in the debugger
// what it means in the program: `GVL.Eps` evaluates and is assigned, a qualified CONSTANT folds,
// a qualified_only global's plain name is the compiler's error, and a list's plain globals keep
// both names.
TEST(EvaluatorCodesys, QualifiedGlobalLists) {
  test::Compiled c = test::compileFiles(
      {{"plc/GVL.st",
        "{attribute 'qualified_only'}\nVAR_GLOBAL\n  Eps : REAL := 0.25;\n  count : INT;\nEND_VAR\n"
        "VAR_GLOBAL CONSTANT\n  N : INT := 3;\nEND_VAR\n"},
       {"Params.st", "VAR_GLOBAL\n  limit : INT := 10;\nEND_VAR\n"},
       {"main.st",
        "PROGRAM Main\nVAR a : ARRAY[1..GVL.N] OF INT; END_VAR\nGVL.count := GVL.count + 1;\nEND_PROGRAM\n"}});
  ASSERT_TRUE(c.program) << c.messages();
  Runtime rt(c.program);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  const Vm& vm = rt.vm();
  const uint32_t main = findPou(*c.program, "Main");
  const EvalContext ctx{main, c.program->instances.at(0).offset, vm.imageSize()};
  auto bytes = [&](const char* text, std::string& error) -> std::optional<EvalResult> {
    auto e = Expression::compile(*c.program, main, text, error);
    if (!e) return std::nullopt;
    EvalResult r;
    if (!e->evaluate(vm.memory(), vm.memorySize(), ctx, r, error)) return std::nullopt;
    return r;
  };
  auto value = [&](const char* text) -> int64_t {
    std::string error;
    std::optional<EvalResult> r = bytes(text, error);
    EXPECT_TRUE(r) << text << ": " << error;
    if (!r) return INT64_MIN;
    int16_t v = 0;
    std::memcpy(&v, r->bytes.data(), 2);
    return v;
  };
  EXPECT_EQ(value("GVL.count"), 1);
  EXPECT_EQ(value("gvl.COUNT + GVL.N"), 4);
  EXPECT_EQ(value("limit + Params.limit"), 20);
  EXPECT_EQ(value("UPPER_BOUND(a, 1)"), 3);
  EXPECT_EQ(value("REAL_TO_INT(GVL.Eps * 8.0)"), 2);
  std::string error;
  EXPECT_FALSE(bytes("count", error));
  EXPECT_EQ(error,
            "column 1: 'count' is a global of the list GVL, which is {attribute 'qualified_only'}: write "
            "GVL.count");
  EXPECT_FALSE(bytes("GVL.limit", error));
  EXPECT_EQ(error, "column 1: the global list GVL has no variable 'limit'");
}

// An ARRAY[*] parameter: its elements and bounds come from its slot, as the compiled code reads
// them (one and two dimensions, a lower bound other than 0, an index out of its bounds).
TEST(EvaluatorOpenArrays, ElementsAndBoundsComeFromTheSlot) {
  const std::string source =
      "FUNCTION Total : DINT\n"
      "VAR_IN_OUT xs : ARRAY[*] OF INT; grid : ARRAY[*, *] OF INT; END_VAR\n"
      "VAR i : DINT; END_VAR\n"
      "FOR i := LOWER_BOUND(xs, 1) TO UPPER_BOUND(xs, 1) DO Total := Total + xs[i]; END_FOR\n"
      "Total := Total + grid[2, 1];\n"
      "END_FUNCTION\n"
      "PROGRAM Main\n"
      "VAR a : ARRAY[3..6] OF INT := [10, 20, 30, 40]; g : ARRAY[1..2, 0..1] OF INT := [1, 2, 3, 4]; t : DINT; "
      "END_VAR\n"
      "t := Total(a, g);\n"
      "END_PROGRAM\n";
  test::Compiled c = test::compile(source);
  ASSERT_TRUE(c.program) << c.messages();
  const Program& p = *c.program;
  Runtime rt(c.program);
  PauseAt observer(test::statementOnLine(p, 5));
  rt.vm().setObserver(&observer);
  ASSERT_EQ(rt.runCycle(), RunStatus::Paused);
  const Vm& vm = rt.vm();
  const std::vector<Frame> frames = vm.frames();
  ASSERT_EQ(frames.size(), 2u);
  const Frame& f = frames[1];
  auto value = [&](const std::string& text) {
    const Evaluated ev = evaluate(p, f.pou, text, vm.memory(), vm.memorySize(), contextOf(f));
    return ev.ok ? formatValue(p, ev.result.bytes.data(), 0, -1, *ev.type) : "<" + ev.error + ">";
  };
  EXPECT_EQ(value("xs[3]"), "10");
  EXPECT_EQ(value("xs[6] + xs[4]"), "60");
  EXPECT_EQ(value("LOWER_BOUND(xs, 1)"), "3");
  EXPECT_EQ(value("UPPER_BOUND(xs, 1)"), "6");
  EXPECT_EQ(value("UPPER_BOUND(grid, 2)"), "1");
  EXPECT_EQ(value("grid[2, 1]"), "4");
  EXPECT_EQ(value("grid[1, 0]"), "1");
  EXPECT_EQ(value("Total"), "100");
  EXPECT_NE(value("xs[7]").find("array index out of range: index 7 outside 3..6 (xs)"), std::string::npos)
      << value("xs[7]");
  // Writing an element through the evaluator's place lands in the caller's array.
  const Evaluated ev = evaluate(p, f.pou, "xs[5]", vm.memory(), vm.memorySize(), contextOf(f));
  ASSERT_TRUE(ev.ok && ev.result.offset) << ev.error;
  std::string error;
  auto loc = findVariable(p, "Main.a[5]", error);
  ASSERT_TRUE(loc) << error;
  EXPECT_EQ(*ev.result.offset, loc->offset);
}

}  // namespace
}  // namespace scanback::debug
