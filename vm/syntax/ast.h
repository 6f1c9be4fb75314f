// The abstract syntax tree of Structured Text. Every node carries the span of its source text.
// The parser builds it; sema/codegen read it and never change its shape.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/base/assert.h"
#include "vm/source/source.h"
#include "vm/syntax/literal_prefix.h"

namespace scanback::ast {

struct Expr;
struct Stmt;
struct TypeRef;
struct Initializer;
using ExprPtr = std::unique_ptr<Expr>;
using StmtList = std::vector<std::unique_ptr<Stmt>>;
using TypeRefPtr = std::unique_ptr<TypeRef>;
using InitPtr = std::unique_ptr<Initializer>;

// Where the nodes of a parsed file live (CompilationUnit::arena): taken from large blocks, and
// given back all at once with the file's CompilationUnit. A 10 MB source has two million nodes:
// one allocation each, and as many frees, were a fifth of its compile. Expr, Stmt, TypeRef and
// Initializer come from the arena that is current on their thread when they are made (a parse's),
// else from the heap; each remembers which, so that deleting one frees only what is its own.
class NodeArena {
 public:
  NodeArena() = default;
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;

  void* allocate(size_t bytes) {
    bytes = (bytes + 7) & ~size_t{7};  // the nodes' alignment
    if (bytes > left_) {
      const size_t size = std::max(kBlockBytes, bytes);
      blocks_.push_back(std::make_unique_for_overwrite<std::byte[]>(size));  // not zeroed: nodes are constructed
      next_ = blocks_.back().get();
      left_ = size;
    }
    void* node = next_;
    next_ += bytes;
    left_ -= bytes;
    return node;
  }

  // The arena of the parse under way on this thread (parseFile sets it), or null.
  static NodeArena*& current() {
    thread_local NodeArena* arena = nullptr;
    return arena;
  }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
  std::byte* next_ = nullptr;
  size_t left_ = 0;
};

// The allocation of a node type T: from the current arena when there is one (inArena, a member
// of T set by its constructor), else from the heap; a delete destroys the node and frees it only
// when it is the heap's (a destroying delete, which reads the member before the node is gone).
#define SCANBACK_AST_NODE_ALLOCATION(T)                            \
  static void* operator new(size_t bytes) {                        \
    NodeArena* arena = NodeArena::current();                       \
    return arena ? arena->allocate(bytes) : ::operator new(bytes); \
  }                                                                \
  static void operator delete(T* node, std::destroying_delete_t);  \
  bool inArena = NodeArena::current() != nullptr

// Its delete, defined once every node type is complete (a node's destructor destroys members of
// types declared after it: clang instantiates it where the delete is defined).
#define SCANBACK_AST_NODE_DELETE(T)                                   \
  inline void T::operator delete(T* node, std::destroying_delete_t) { \
    const bool inArena = node->inArena;                               \
    node->~T();                                                       \
    if (!inArena) ::operator delete(node);                            \
  }

// ---------------------------------------------------------------- expressions

enum class ExprKind : uint8_t {
  IntLiteral,     // intValue/negative; typePrefix optional ("INT", "BYTE", ...)
  RealLiteral,    // realValue; typePrefix optional ("REAL", "LREAL")
  BoolLiteral,    // boolValue; TRUE/FALSE or BOOL#1
  StringLiteral,  // text holds the decoded bytes ($ escapes resolved); typePrefix "WSTRING" or "WCHAR":
                  // "...", text holds UTF-16 code units, little-endian
  TimeLiteral,    // intValue = signed nanoseconds; typePrefix "TIME" or "LTIME"
  DateLiteral,    // intValue = ns since 1970-01-01 (midnight)
  TodLiteral,     // intValue = ns since midnight
  DtLiteral,      // intValue = ns since 1970-01-01
  Name,           // text = identifier (also THIS)
  Member,         // operand.text
  BitAccess,      // operand.<intValue>   e.g. w.3
  Index,          // operand[indices...]
  Deref,          // operand^
  Unary,          // unaryOp operand
  Binary,         // lhs binaryOp rhs
  Call,           // operand(args...)  operand is Name or Member (method / FB instance path); rhs: the
                  // same written with the operator, for IEC's functional forms (`ADD(a, b)`: `a + b`)
};

// IntLiteral .. DtLiteral.
inline bool isLiteral(ExprKind k) { return k >= ExprKind::IntLiteral && k <= ExprKind::DtLiteral; }

enum class UnaryOp : uint8_t { Negate, Plus, Not };
enum class BinaryOp : uint8_t { Power, Mul, Div, Mod, Add, Sub, Lt, Gt, Le, Ge, Eq, Ne, And, Xor, Or };

// An Expr holds these so that a node costs 120 bytes: a source of 10 MB has two million of them.

// A list that costs one pointer while it is empty, as it is in all but Index and Call nodes.
template <class T>
class SmallList {
 public:
  SmallList() = default;
  SmallList(std::vector<T> items) { *this = std::move(items); }  // NOLINT: a vector is a list
  SmallList& operator=(std::vector<T> items) {
    items_ = items.empty() ? nullptr : std::make_unique<std::vector<T>>(std::move(items));
    return *this;
  }
  size_t size() const { return items_ ? items_->size() : 0; }
  bool empty() const { return size() == 0; }
  T* begin() { return items_ ? items_->data() : nullptr; }
  T* end() { return begin() + size(); }
  const T* begin() const { return items_ ? items_->data() : nullptr; }
  const T* end() const { return begin() + size(); }
  T& operator[](size_t i) { return (*items_)[i]; }
  const T& operator[](size_t i) const { return (*items_)[i]; }
  T& front() { return (*items_).front(); }
  const T& front() const { return (*items_).front(); }
  T& back() { return (*items_).back(); }
  const T& back() const { return (*items_).back(); }
  void push_back(T item) {
    if (!items_) items_ = std::make_unique<std::vector<T>>();
    items_->push_back(std::move(item));
  }

 private:
  std::unique_ptr<std::vector<T>> items_;
};

struct Argument {
  std::string name;            // empty for a positional argument
  bool isOutput = false;       // `name => variable`
  bool negatedOutput = false;  // `NOT name => variable`
  ExprPtr value;               // expression, or for outputs the receiving variable
  SourceSpan span;
};

struct Expr {
  SourceSpan span;
  ExprKind kind;
  UnaryOp unaryOp = UnaryOp::Negate;
  BinaryOp binaryOp = BinaryOp::Add;

  // literals
  bool negative = false;  // IntLiteral written with a leading '-' inside a typed literal (INT#-5)
  bool boolValue = false;
  SCANBACK_AST_NODE_ALLOCATION(Expr);
  union {
    uint64_t intValue = 0;  // magnitude for IntLiteral (see `negative`); signed ns for time/date kinds
    double realValue;       // RealLiteral
  };
  LiteralPrefix typePrefix;  // "INT" in INT#5, upper-cased; empty when untyped

  // names, members, strings
  std::string text;

  ExprPtr operand;             // Member/BitAccess/Index/Deref/Unary/Call target; Binary left side
  ExprPtr rhs;                 // Binary right side
  SmallList<ExprPtr> indices;  // Index
  SmallList<Argument> args;    // Call

  Expr(ExprKind k, SourceSpan s) : span(s), kind(k) {}
};

// Millions of them in a large source: kept small (ast.h, SmallList).
static_assert(sizeof(Expr) <= 112, "an Expr grew: a 10 MB source has two million of them");

// ---------------------------------------------------------------- initial values

enum class InitKind : uint8_t { Expr, Array, Struct };

struct ArrayInitItem {
  ExprPtr repeat;  // `n(value)`: the count; null for a single item
  InitPtr value;   // may be null for `n()` (repeat default)
};

struct StructInitItem {
  std::string name;
  SourceSpan span;
  InitPtr value;
};

struct Initializer {
  InitKind kind = InitKind::Expr;
  SCANBACK_AST_NODE_ALLOCATION(Initializer);
  SourceSpan span;
  ExprPtr expr;
  std::vector<ArrayInitItem> arrayItems;
  std::vector<StructInitItem> structItems;
};

// ---------------------------------------------------------------- types as written

enum class TypeRefKind : uint8_t {
  Named,      // name: elementary or user type (INT, MyStruct, TON)
  String,     // STRING or STRING[length] / STRING(length), or WSTRING (wide); length may be null
  Array,      // ARRAY[lo..hi, ...] OF element
  RefTo,      // REF_TO element
  PointerTo,  // POINTER TO element (CODESYS)
  Reference,  // REFERENCE TO element (CODESYS): dereferenced wherever it is used, bound with REF=
  Struct,     // STRUCT fields END_STRUCT (only in TYPE)
  Enum,       // (A, B := 5, C) [base]  (only in TYPE); base optional
  Subrange,   // base (lo..hi)
};

struct VarDecl;

struct ArrayDim {
  ExprPtr lower;
  ExprPtr upper;
};

struct EnumValue {
  std::string name;
  SourceSpan span;
  ExprPtr value;  // optional explicit value
};

struct TypeRef {
  TypeRefKind kind = TypeRefKind::Named;
  SCANBACK_AST_NODE_ALLOCATION(TypeRef);
  SourceSpan span;
  std::string name;                   // Named
  ExprPtr length;                     // String
  bool wide = false;                  // String: WSTRING
  std::vector<ArrayDim> dims;         // Array; Subrange uses dims[0]
  TypeRefPtr element;                 // Array element, RefTo target, Subrange/Enum base type
  std::vector<VarDecl> fields;        // Struct
  std::vector<EnumValue> enumValues;  // Enum
  bool open = false;                  // Array: ARRAY[*] (dims holds one entry without bounds per '*')
  bool isUnion = false;               // Struct: UNION ... END_UNION (every field at offset 0)
};

// ---------------------------------------------------------------- variables

enum class VarSection { Var, Input, Output, InOut, Temp, Global, External, Config };

// `AT %IX0.3`: area I/Q/M, size X/B/W/D/L ('*' for `AT %I*`), numeric parts (0, 3).
struct Location {
  char area = 'I';
  char size = 'X';
  std::vector<uint32_t> parts;
  SourceSpan span;
  bool incomplete() const { return size == '*'; }
};

struct VarDecl {
  std::string name;
  SourceSpan span;  // the name
  VarSection section = VarSection::Var;
  TypeRefPtr type;
  InitPtr init;
  std::optional<Location> location;
  bool constant = false;
  bool retain = false;
};

// VAR_CONFIG entry: `Main.x AT %IX0.1 : BOOL := TRUE;`, or without an address `Main.fb.n : INT := 5;`
struct VarConfigEntry {
  std::vector<std::string> path;  // instance path, first element a program instance
  SourceSpan span;
  std::optional<Location> location;
  TypeRefPtr type;
  InitPtr init;
};

// ---------------------------------------------------------------- statements

enum class StmtKind : uint8_t { Assign, Call, If, Case, For, While, Repeat, Exit, Continue, Return, Empty };

struct IfBranch {
  ExprPtr condition;
  StmtList body;
};

struct CaseLabel {
  ExprPtr lower;
  ExprPtr upper;  // null unless a range `lo..hi`
  SourceSpan span;
};

struct CaseBranch {
  std::vector<CaseLabel> labels;
  StmtList body;
  SourceSpan span;
};

struct Stmt {
  StmtKind kind;
  SCANBACK_AST_NODE_ALLOCATION(Stmt);
  SourceSpan span;  // first token to end of the statement (including END_IF etc.)

  ExprPtr target;  // Assign: left side; For: control variable (a Name)
  ExprPtr value;   // Assign: right side; Call: the Call expression; Case: selector;
                   // While: condition; Repeat: UNTIL condition; For: start value
  ExprPtr to;      // For
  ExprPtr by;      // For (optional)

  std::vector<IfBranch> branches;  // If: IF and ELSIF branches in order
  std::vector<CaseBranch> cases;   // Case
  StmtList body;                   // For/While/Repeat body
  StmtList elseBody;               // If/Case ELSE
  bool hasElse = false;
  bool refAssign = false;  // Assign written `target REF= value` (CODESYS): binds the REFERENCE TO target
  SourceSpan elseSpan;     // the ELSE keyword, when present

  Stmt(StmtKind k, SourceSpan s) : kind(k), span(s) {}
};

// ---------------------------------------------------------------- program organisation units

enum class PouKind { Program, Function, FunctionBlock, Method, Interface };

// Object orientation (IEC 61131-3 Ed.3 as CODESYS writes it): access specifiers of methods and
// properties, and what a property accessor is.
enum class Access { Public, Private, Protected, Internal };
enum class Accessor { None, Get, Set };

struct NameRef {
  std::string name;
  SourceSpan span;
};

struct Pou {
  PouKind kind = PouKind::Program;
  std::string name;
  SourceSpan span;        // the name
  SourceSpan endSpan;     // the END_* keyword
  TypeRefPtr returnType;  // Function/Method, optional for methods
  std::vector<VarDecl> vars;
  StmtList body;
  std::vector<Pou> methods;  // FunctionBlock, Interface (prototypes); property accessors and actions too
  // TEST_PROGRAM (kind Program) or TEST_FUNCTION_BLOCK (kind FunctionBlock): a unit test that
  // `scanback test` runs; no task runs it otherwise.
  bool test = false;
  // ACTION ... END_ACTION of a program or function block (kind Method, no variables, no return
  // value): kept among `methods`, it runs on the POU's instance.
  bool action = false;

  // Object orientation.
  bool isClass = false;     // CLASS ... END_CLASS (a FunctionBlock without a body)
  bool isAbstract = false;  // FUNCTION_BLOCK ABSTRACT, METHOD ABSTRACT
  bool isFinal = false;
  bool isOverride = false;             // METHOD OVERRIDE
  bool isPrototype = false;            // a method or accessor of an INTERFACE, or ABSTRACT: no body
  Access access = Access::Public;      // methods and properties
  std::vector<NameRef> extends;        // FunctionBlock: its base; Interface: the interfaces it extends
  std::vector<NameRef> implements;     // FunctionBlock
  Accessor accessor = Accessor::None;  // GET or SET of the property `name`
};

struct TypeDecl {
  std::string name;
  SourceSpan span;
  TypeRefPtr type;
  InitPtr init;  // `TYPE T : INT := 5; END_TYPE`, `(A, B) := B`
};

struct TaskDecl {
  std::string name;
  SourceSpan span;
  ExprPtr interval;  // INTERVAL := T#10ms (optional)
  ExprPtr priority;  // PRIORITY := 1 (optional)
  ExprPtr single;    // SINGLE := var (parsed, rejected by sema)
};

struct ProgramInstance {
  std::string name;
  std::string taskName;  // empty when no WITH
  std::string typeName;
  SourceSpan span;
  std::vector<Argument> args;  // optional `( input := value, output => global )`
};

struct Resource {
  std::string name;  // empty for tasks/programs written directly in the CONFIGURATION
  SourceSpan span;
  std::vector<TaskDecl> tasks;
  std::vector<ProgramInstance> programs;
  std::vector<VarDecl> globals;
};

struct Configuration {
  std::string name;
  SourceSpan span;
  std::vector<VarDecl> globals;
  std::vector<Resource> resources;
  std::vector<VarConfigEntry> varConfig;
};

// A pragma `{attribute 'name'}` (the name lower-case). Pragmas are otherwise ignored, as CODESYS
// ignores the ones it does not know.
struct Attribute {
  std::string name;
  SourceSpan span;
};

// One parsed file.
struct CompilationUnit {
  // First, so that it is destroyed last: its nodes are in it.
  std::unique_ptr<NodeArena> arena = std::make_unique<NodeArena>();
  FileId file = 0;
  std::vector<TypeDecl> types;
  std::vector<Pou> pous;
  std::vector<VarDecl> globals;  // VAR_GLOBAL blocks at file level
  std::vector<Configuration> configurations;
  std::vector<Attribute> attributes;  // in source order
};

SCANBACK_AST_NODE_DELETE(Expr)
SCANBACK_AST_NODE_DELETE(Initializer)
SCANBACK_AST_NODE_DELETE(TypeRef)
SCANBACK_AST_NODE_DELETE(Stmt)

}  // namespace scanback::ast
