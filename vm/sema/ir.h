// The typed IR: what the semantic pass (analyzer.h) makes of the AST, and what the code generator
// (vm/compiler) and the debugger's evaluator (vm/debug) lower, each in its own way. Every name is
// resolved (a Variable and where it lives), every node has its type, every conversion is a node of
// its own, and constant expressions are folded. Nothing here is checked again by a lowering: an
// analysis that reported no error gives an IR every lowering accepts.
//
// Nodes are in evaluation order: a lowering that evaluates operands left to right computes what
// the program computes. A few flags say how the compiler's code lays out temporaries where that is
// not implied by the node alone (atRead, fresh, readEach, ScaleForm); they change no value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vm/bytecode/assertions.h"
#include "vm/bytecode/constant.h"
#include "vm/bytecode/open_arrays.h"
#include "vm/bytecode/program.h"
#include "vm/bytecode/types.h"
#include "vm/syntax/ast.h"

namespace scanback::sema {

enum class ExprKind : uint8_t {
  Invalid,          // an expression whose error was reported; never reaches a lowering
  Constant,         // `constant`; type null: an untyped integer or real literal (ANY_INT, ANY_REAL)
  Variable,         // `variable`, in the frame, the instance or the image (`storage`)
  ProgramInstance,  // a program instance: `offset` (image), its layout as type
  This,             // the instance of the function block body or method
  Field,            // a[0].`variable`: a field of a structure or FB instance (absolute, or a reference slot)
  Offset,           // the `offset` bytes further into a[0]: an array element at constant indexes
  Element,          // a[0][a[1], ...]: an array element at computed DINT indexes
  Bit,              // bit `bit` of a[0]
  Deref,            // the variable the reference a[0] designates
  AddressOf,        // REF(a[0])
  Convert,          // a[0] converted to type (`conversion`)
  RangeCheck,       // a[0], a fault unless within the subrange `type`
  Operation,        // `op` on a
  ScaleDuration,    // a duration times or divided by a number (`op` Mul/Div, `real`, `form`)
  MinMax,           // `op` Min/Max folded over a (two or more)
  Limit,            // LIMIT(a[0], a[1], a[2])
  Select,           // SEL(a[0], a[1], a[2]): a[1..2] stored as type
  Mux,              // MUX(a[0], a[1..]): a[0] DINT, checked; a[1..] stored as type
  Parameter,        // after a call, the value of the callee's output `variable`
  Call,             // a user function, method or function block (`call`)
  Assertion,        // ASSERT_* of a unit test (`assertion`); no value
  AssertOperand,    // inside an Assertion: the value computed for its operand number `offset`
};

// Where a named variable lives, as the code naming it reaches it.
enum class Storage : uint8_t {
  Frame,     // the call frame (function and method variables, VAR_TEMP)
  Instance,  // the instance (THIS; a program's instance is at an absolute offset)
  Global,    // the image (globals, located variables)
};

enum class Conversion : uint8_t {
  Relabel,  // the same bits read as another type (same storage, same-width integers, strings, arrays)
  NotZero,  // a number to BOOL: <> 0
  Convert,  // between storage types (CVT): `from` to `to`
};

// The operations, by what they work on. Laid out by hand.
// clang-format off
enum class Op : uint8_t {
  // numbers, of `prim`; comparisons give BOOL
  Add, Sub, Mul, Div, Mod, Expt, Min, Max,
  Eq, Ne, Lt, Le, Gt, Ge,
  Neg, Abs,
  Sqrt, Ln, Log, Exp, Sin, Cos, Tan, Asin, Acos, Atan,  // REAL or LREAL
  Atan2,                                                // ATAN2(Y, X): REAL or LREAL
  Trunc,  // REAL or LREAL to LINT, toward zero
  Idx64,  // LINT to DINT, clamped (array indexes)
  // bit strings and BOOL, of `size` bytes; shift counts are LINT
  And, Or, Xor, BitNot, Shl, Shr, Rol, Ror,
  BoolNot,
  // strings
  StrEq, StrNe, StrLt, StrLe, StrGt, StrGe,
  StrLen, StrFind, StrLeft, StrRight, StrMid, StrConcat, StrInsert, StrDelete, StrReplace,
  // to and from STRING
  FromI64, FromU64, FromF32, FromF64, FromBool, FromTime, FromLTime, FromDate, FromTod, FromDt,
  ToI64, ToU64, ToF64, ToBool,
  // STRING to WSTRING (UTF-8 decoded); WSTRING to STRING (non-ASCII as '?'; or as UTF-8, for
  // messages); WCHAR to WSTRING (one unit); WSTRING to WCHAR (the first unit, 0 when empty)
  WideFromStr, StrFromWide, Utf8FromWide, WideFromWChar, WCharFromWide,
  // no operands: the virtual start time of the current cycle (TIME() and LTIME())
  Now,
  // a unit test's ADVANCE_TIME(a): the current cycle's virtual time moves forward by the TIME or
  // LTIME a (no value)
  AdvanceTime,
  // LOWER_BOUND and UPPER_BOUND (DINT) of dimension `bit` (from 0) of the ARRAY[*] variable a[0]
  LowerBound, UpperBound,
  // CODESYS's operators (pointer_builtins.cpp), BOOL:
  // __ISVALIDREF(a[0]): the REF_TO, POINTER TO or interface a[0] is not NULL and its `size` bytes
  // lie inside one variable (an instance, for a function block or an interface: `bit` 1);
  // __QUERYINTERFACE(a[0], a[1]): the instance the interface a[0] designates implements the
  // interface of the place a[1], which then designates it; __QUERYPOINTER(a[0], a[1]): a[0] is
  // not NULL, and the pointer place a[1] designates its instance.
  IsValidRef, QueryInterface, QueryPointer,
};
// clang-format on

// How a ScaleDuration was written (the order its code reads the operands in).
enum class ScaleForm : uint8_t {
  Binary,    // duration * n, duration / n
  Reversed,  // n * duration
  Builtin,   // MUL_TIME(duration, n) and friends
};

struct Expr;

// One argument of a call, in the callee's parameter order.
struct Binding {
  enum class Role : uint8_t { Input, InOut, Output };
  Role role = Role::Input;
  const Variable* parameter = nullptr;  // in the callee's frame (functions, methods) or instance (FBs)
  // Input: the value stored into the parameter (converted, checked). InOut: the variable passed
  // (a place). Output: the value stored into `target` (a Parameter node, converted, checked).
  const Expr* value = nullptr;
  const Expr* target = nullptr;  // Output: the receiving variable (a place)
  SourceSpan span;               // the argument
};

struct CallInfo {
  enum class Kind : uint8_t { Function, Method, FunctionBlock };
  Kind kind = Kind::Function;
  uint32_t pou = UINT32_MAX;       // Function, Method: the callee's POU index
  const Type* fbType = nullptr;    // FunctionBlock: the instance layout
  const Expr* instance = nullptr;  // Method: THIS of the call; FunctionBlock: the instance (places)
  std::vector<Binding> inputs;     // inputs and in-outs, in parameter order
  std::vector<Binding> outputs;    // outputs, in parameter order
  // Method: a dynamic call through dispatch slot `slot` (Program::dispatch); `instance` is then
  // an interface value or THIS, and `pou` the method whose parameters the call fills.
  uint32_t slot = UINT32_MAX;
};

// A unit test's assertion (ASSERT_EQUAL and the others, docs/language.md). Its operands are
// evaluated once, in order; the condition and the texts read them through AssertOperand nodes (or
// are the operand itself when it is a constant). When the condition is FALSE the texts are
// computed and the test fails there, like a fault.
struct AssertInfo {
  AssertKind kind = AssertKind::True;
  std::vector<const Expr*> operands;  // expected, actual[, tolerance]; ASSERT_TRUE/FALSE: the condition
  const Expr* condition = nullptr;    // BOOL: TRUE when the assertion holds
  std::vector<const Expr*> texts;     // STRING: each operand's value as text (none for TRUE/FALSE)
  bool quoted = false;                // the texts are STRING values: shown in quotes
  bool wide = false;                  // ... WSTRING values (their texts UTF-8): in double quotes
};

struct Expr {
  ExprKind kind = ExprKind::Invalid;
  const Type* type = nullptr;
  SourceSpan span;
  std::vector<const Expr*> a;  // operands, in evaluation order

  ConstValue constant;                 // Constant
  const Variable* variable = nullptr;  // Variable, Field, Parameter
  Storage storage = Storage::Global;   // Variable
  uint32_t offset = 0;                 // ProgramInstance, Offset
  uint32_t bit = 0;                    // Bit
  Op op = Op::Add;                     // Operation, ScaleDuration, MinMax
  Prim prim = Prim::I32;               // Operation on numbers; Convert: `from`
  Prim to = Prim::I32;                 // Convert (Conversion::Convert)
  uint32_t size = 0;                   // Operation on bits: bytes
  Conversion conversion = Conversion::Relabel;
  ScaleForm form = ScaleForm::Binary;     // ScaleDuration
  bool real = false;                      // ScaleDuration by a REAL factor
  std::unique_ptr<CallInfo> call;         // Call
  std::unique_ptr<AssertInfo> assertion;  // Assertion

  bool readOnly = false;  // a place inside a CONSTANT: it cannot be assigned
  bool named = false;     // a place the text names (a variable, field, element, dereference, bit)
  // And/Or on BOOL whose right side cannot fault or have effects: it may be skipped.
  bool rhsSafeToSkip = false;
  // And/Or on BOOL written AND_THEN / OR_ELSE: the right side is computed only when the left
  // does not decide (a value of its own, whatever the right side may do).
  bool shortCircuit = false;
  // Built by Analyzer::condition() for a jump: a fused comparison, a NOT that flips the jump, a
  // short-circuit AND/OR.
  bool jumpForm = false;

  // A Convert, RangeCheck or Idx64 that its consumer applies when it reads the operand, after
  // computing the operands before it (a binary operation's conversions come after both sides).
  bool atRead = false;
  // How the compiler's code computes an Operation (see the file comment).
  bool fresh = false;     // the result is a new temporary, never the assignment's destination
  bool readEach = false;  // each operand is read as soon as it is computed (not all computed first)
};

enum class StmtKind : uint8_t { Assign, Call, If, Case, For, While, Repeat, Exit, Continue, Return };

struct Stmt;
using StmtList = std::vector<const Stmt*>;

struct IfBranch {
  const Expr* condition = nullptr;  // Analyzer::condition()
  StmtList body;
  const ast::StmtList* source = nullptr;  // instead of body: not analysed yet (Options::deferLists)
};

struct CaseRange {
  Int128 lower = 0, upper = 0;
  size_t branch = 0;
  SourceSpan span;
};

struct Stmt {
  StmtKind kind = StmtKind::Assign;
  SourceSpan span;
  // Assign: target (a place) := value (converted to its type, checked). For: target is the control
  // variable, value the start (stored; null when the variable is a constant), limit and step (each
  // a constant of the variable's type or a value stored as it). Call: value. Case: value is the
  // selector. While, Repeat: value is the condition.
  const Expr* target = nullptr;
  const Expr* value = nullptr;
  const Expr* limit = nullptr;
  const Expr* step = nullptr;
  const Type* valueType = nullptr;  // Case: the labels' integer type
  std::vector<IfBranch> branches;   // If; Case: the bodies (no conditions)
  std::vector<CaseRange> ranges;    // Case
  StmtList body;                    // For, While, Repeat
  StmtList elseBody;                // If, Case
  bool hasElse = false;
  // Analyzer::Options::deferLists: the nested statement lists as written, instead of body and
  // elseBody (and of each branch's body), for the compiler to analyse and lower a statement at a
  // time (Analyzer::listStatement) with `listLoops` loops around them.
  const ast::StmtList* bodySource = nullptr;
  const ast::StmtList* elseSource = nullptr;
  int listLoops = 0;
};

// Owns the nodes of one analysis, in blocks that double in size (a body's thousands of nodes take
// a few allocations). Allocates nothing until the first node: the compiler makes an arena for each
// constant expression of a declaration, which needs one or two.
template <class T>
class Blocks {
 public:
  T* next() {
    if (block_ == blocks_.size() || used_ == blocks_[block_].capacity) {
      if (block_ < blocks_.size()) ++block_;
      if (block_ == blocks_.size()) {
        const size_t capacity = blocks_.empty() ? 2 : std::min<size_t>(blocks_.back().capacity * 2, 256);
        blocks_.push_back(Block{std::make_unique<T[]>(capacity), capacity, 0});
      }
      used_ = 0;
    }
    Block& b = blocks_[block_];
    T* node = &b.nodes[used_++];
    if (used_ <= b.handedOut)
      *node = T{};  // handed out before a reset(): as new
    else
      b.handedOut = used_;
    return node;
  }
  // Forgets every node; the blocks stay for the nodes that follow.
  void reset() {
    block_ = 0;
    used_ = 0;
  }

 private:
  struct Block {
    std::unique_ptr<T[]> nodes;
    size_t capacity = 0;
    size_t handedOut = 0;  // nodes handed out since the block was made
  };
  std::vector<Block> blocks_;
  size_t block_ = 0;  // the block in use
  size_t used_ = 0;   // nodes handed out of it
};

class Arena {
 public:
  Expr* expr() { return exprs_.next(); }
  Stmt* stmt() { return stmts_.next(); }
  // Forgets every node (the compiler reuses one arena for statement after statement).
  void reset() {
    exprs_.reset();
    stmts_.reset();
  }

 private:
  Blocks<Expr> exprs_;
  Blocks<Stmt> stmts_;
};

// The operand under the conversions its consumer applies when it reads it (Expr::atRead): what is
// computed before them.
const Expr* unconverted(const Expr* e);
// Those conversions, innermost first.
std::vector<const Expr*> conversionsOf(const Expr* e);

// `e` as the value of an enclosing expression that adds nothing to it (MOVE(x), +x, a conversion
// to its own type): no storage the text names, and never computed into the destination of an
// assignment (the code computes the inner expression into a temporary, then stores it).
inline Expr* asValue(Expr* e) {
  e->named = false;
  e->fresh = true;
  return e;
}

// The REFERENCE TO a use of a reference dereferences (Analyzer::dereferenced()), or null when `e`
// is no such use: what REF= binds and __ISVALIDREF tests.
inline Expr* referenceSlot(const Expr* e) {
  if (!e || e->kind != ExprKind::Deref || !e->a[0]->type || !e->a[0]->type->isReference()) return nullptr;
  return const_cast<Expr*>(e->a[0]);
}
// How a fault names that reference: `r`, `fb.r`, `GetRef()`.
std::string referenceName(const Expr* slot);

// The place the compiler reaches directly (a variable, a field or a constant-index element of
// one, a temporary), rather than through a reference, a computed index or a single bit.
bool isDirect(const Expr* e);

}  // namespace scanback::sema
