// Resolving and typing an expression: the compiler's rules (vm/compiler/expressions.cpp and
// builtins.cpp) applied to a parsed expression, building evaluation nodes where the compiler emits
// opcodes. Each function here mirrors the compiler function of the same name, in the same order of
// checks and with the same messages, so that an expression types (and folds) as it would in the
// program's own code. Where the compiler reports an error and carries on, this stops at the first.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "vm/base/int128.h"
#include "vm/debug/expression_impl.h"
#include "vm/exec/natives.h"
#include "vm/exec/strings.h"
#include "vm/syntax/parser.h"

namespace scanback::debug::detail {

namespace {

// A compile-time constant: integers wide enough for every IEC integer type.
struct ConstValue {
  enum class Kind : uint8_t { None, Int, Real, Bool, String };
  Kind kind = Kind::None;
  Int128 i = 0;
  double r = 0.0;
  std::string s;

  static ConstValue ofInt(Int128 v) {
    ConstValue c;
    c.kind = Kind::Int;
    c.i = v;
    return c;
  }
  static ConstValue ofReal(double v) {
    ConstValue c;
    c.kind = Kind::Real;
    c.r = v;
    return c;
  }
  static ConstValue ofBool(bool v) {
    ConstValue c;
    c.kind = Kind::Bool;
    c.i = v;
    return c;
  }
  static ConstValue ofString(std::string v) {
    ConstValue c;
    c.kind = Kind::String;
    c.s = std::move(v);
    return c;
  }
};

// The result of an expression while compiling: a constant (untyped for ANY_INT/ANY_REAL literals:
// type == nullptr), a value computed by `node`, or storage designated by the place `node`.
struct Val {
  const Type* type = nullptr;
  bool isConst = false;
  ConstValue constant;
  const Node* node = nullptr;
  bool isPlace = false;   // node is a place (NodeKind::Place)
  bool storage = false;   // a variable, field, element, dereference or bit the text names
  bool readOnly = false;  // inside a constant
};

struct CompileError {
  SourceSpan span;
  std::string message;
};

bool isComparison(ast::BinaryOp op) {
  return op == ast::BinaryOp::Lt || op == ast::BinaryOp::Gt || op == ast::BinaryOp::Le || op == ast::BinaryOp::Ge ||
         op == ast::BinaryOp::Eq || op == ast::BinaryOp::Ne;
}

const char* opText(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::Power: return "**";
    case ast::BinaryOp::Mul: return "*";
    case ast::BinaryOp::Div: return "/";
    case ast::BinaryOp::Mod: return "MOD";
    case ast::BinaryOp::Add: return "+";
    case ast::BinaryOp::Sub: return "-";
    case ast::BinaryOp::Lt: return "<";
    case ast::BinaryOp::Gt: return ">";
    case ast::BinaryOp::Le: return "<=";
    case ast::BinaryOp::Ge: return ">=";
    case ast::BinaryOp::Eq: return "=";
    case ast::BinaryOp::Ne: return "<>";
    case ast::BinaryOp::And: return "AND";
    case ast::BinaryOp::Xor: return "XOR";
    case ast::BinaryOp::Or: return "OR";
  }
  return "?";
}

int intRank(const Type* t) {
  switch (t->kind) {
    case TypeKind::SInt:
    case TypeKind::USInt:
    case TypeKind::Byte: return 1;
    case TypeKind::Int:
    case TypeKind::UInt:
    case TypeKind::Word: return 2;
    case TypeKind::DInt:
    case TypeKind::UDInt:
    case TypeKind::DWord: return 3;
    case TypeKind::LInt:
    case TypeKind::ULInt:
    case TypeKind::LWord: return 4;
    default: return 0;
  }
}

const Type* valueBase(const Type* t) {
  while (t && t->kind == TypeKind::Subrange) t = t->base;
  return t;
}

Int128 wrapTo(Int128 v, const Type* t) {
  switch (primOf(*t)) {
    case Prim::I8: return static_cast<int8_t>(static_cast<uint8_t>(v));
    case Prim::I16: return static_cast<int16_t>(static_cast<uint16_t>(v));
    case Prim::I32: return static_cast<int32_t>(static_cast<uint32_t>(v));
    case Prim::I64: return static_cast<int64_t>(static_cast<uint64_t>(v));
    case Prim::U8: return static_cast<uint8_t>(v);
    case Prim::U16: return static_cast<uint16_t>(v);
    case Prim::U32: return static_cast<uint32_t>(v);
    case Prim::U64: return static_cast<uint64_t>(v);
    default: return v;
  }
}

// A typed constant converted like the VM's CVT would (explicit) or value-preserving (implicit).
ConstValue convertConst(const ConstValue& c, const Type* to) {
  const Type* base = valueBase(to);
  if (base->kind == TypeKind::Enum) base = base->base;
  if (base->isReal()) {
    double r = c.kind == ConstValue::Kind::Real ? c.r : static_cast<double>(c.i);
    if (base->kind == TypeKind::Real) r = static_cast<float>(r);
    return ConstValue::ofReal(r);
  }
  if (base->kind == TypeKind::Bool) {
    return ConstValue::ofBool(c.kind == ConstValue::Kind::Real ? c.r != 0.0 : c.i != 0);
  }
  if (c.kind == ConstValue::Kind::Real) {
    const double r = std::round(c.r);
    Int128 v;
    const Prim p = primOf(*base);
    const double lo = primIsSigned(p) ? -std::ldexp(1.0, static_cast<int>(primSize(p) * 8 - 1)) : 0.0;
    const double hi = primIsSigned(p) ? std::ldexp(1.0, static_cast<int>(primSize(p) * 8 - 1)) - 1
                                      : std::ldexp(1.0, static_cast<int>(primSize(p) * 8)) - 1;
    if (std::isnan(r))
      v = 0;
    else if (r <= lo)
      v = static_cast<Int128>(lo);
    else if (r >= hi)
      v = static_cast<Int128>(hi);
    else
      v = static_cast<Int128>(r);
    return ConstValue::ofInt(v);
  }
  if (base->isScalar()) return ConstValue::ofInt(wrapTo(c.i, base));
  return c;
}

// The constant a CONSTANT variable's initial bytes hold.
ConstValue constFromBytes(const Type* t, const uint8_t* p) {
  const Type* base = valueBase(t);
  if (base->kind == TypeKind::String) {
    uint16_t n;
    std::memcpy(&n, p, 2);
    n = static_cast<uint16_t>(std::min<uint32_t>(n, base->capacity));
    return ConstValue::ofString(std::string(reinterpret_cast<const char*>(p + 2), n));
  }
  if (base->kind == TypeKind::Bool) return ConstValue::ofBool(p[0] != 0);
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (primOf(*base)) {
    case Prim::I8: return ConstValue::ofInt(get(int8_t{}));
    case Prim::I16: return ConstValue::ofInt(get(int16_t{}));
    case Prim::I32: return ConstValue::ofInt(get(int32_t{}));
    case Prim::I64: return ConstValue::ofInt(get(int64_t{}));
    case Prim::U8: return ConstValue::ofInt(get(uint8_t{}));
    case Prim::U16: return ConstValue::ofInt(get(uint16_t{}));
    case Prim::U32: return ConstValue::ofInt(get(uint32_t{}));
    case Prim::U64: return ConstValue::ofInt(get(uint64_t{}));
    case Prim::F32: return ConstValue::ofReal(get(float{}));
    case Prim::F64: return ConstValue::ofReal(get(double{}));
  }
  return ConstValue::ofInt(0);
}

// Folds the compiler folds: constants whose value it knows (scalars; strings for POU constants).
bool foldableGlobal(const Variable& v) {
  return v.constant && v.type && v.type->isScalar() && v.type->kind != TypeKind::Ref && v.bit < 0;
}
bool foldableField(const Variable& v) {
  return v.constant && v.type && !v.absolute && !v.byReference && v.type->kind != TypeKind::Ref &&
         (v.type->isScalar() || v.type->kind == TypeKind::String);
}

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerS = 1'000'000'000;
constexpr int64_t kNsPerDay = 86'400 * kNsPerS;

class Builder {
 public:
  Builder(const Program& program, Expression::Impl& impl, std::string_view text)
      : program_(program), impl_(impl), text_(text) {
    lineStarts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') lineStarts_.push_back(i + 1);
  }

  [[noreturn]] void fail(const SourceSpan& span, std::string message) { throw CompileError{span, std::move(message)}; }

  uint32_t columnOf(const SourceSpan& span) const {
    if (span.line == 0 || span.line > lineStarts_.size()) return 0;
    return static_cast<uint32_t>(lineStarts_[span.line - 1] + span.column);
  }

  std::string sourceText(const SourceSpan& span) const {
    const uint32_t begin = columnOf(span);
    if (!begin || span.endLine == 0 || span.endLine > lineStarts_.size()) return {};
    const size_t end = lineStarts_[span.endLine - 1] + span.endColumn - 1;
    if (end < begin - 1 || end > text_.size()) return {};
    return std::string(text_.substr(begin - 1, end - (begin - 1)));
  }

  void setScope(uint32_t pou) {
    if (pou == UINT32_MAX) return;
    if (pou >= program_.pous.size()) fail({}, fmt::format("there is no POU {} in the program", pou));
    const PouInfo& info = program_.pous[pou];
    pouInfo_ = &info;
    switch (info.kind) {
      case PouKind::Program:
        mode_ = Mode::Program;
        programBase_ = info.instanceOffset;
        break;
      case PouKind::FunctionBlock:
      case PouKind::Native: mode_ = Mode::FbBody; break;
      case PouKind::Method: mode_ = Mode::Method; break;
      case PouKind::Function: mode_ = Mode::Function; break;
      case PouKind::TaskEntry: pouInfo_ = nullptr; return;
    }
    instanceType_ = info.instanceType;
    for (const Variable& v : info.frameVariables) frameVars_.emplace(upperCase(v.name), &v);
  }

  // The value of the whole expression.
  Val compileRoot(const ast::Expr& e) {
    Val v = gen(e);
    if (v.isConst) {
      const Type* t = v.type ? v.type : literalType(v.constant);
      Val r;
      r.type = t;
      r.node = constNode(t, v.constant, e.span);
      return r;
    }
    if (v.type && v.type->kind == TypeKind::Void) fail(e.span, "expression has no value");
    return v;
  }

 private:
  enum class Mode { Global, Function, Method, FbBody, Program };

  // ---------------------------------------------------------------- types

  const Type* elem(TypeKind k) const { return program_.types->elementary(k); }

  // STRING[n] and REF_TO types the program may not have: interned for the whole process, so that
  // a result's type stays valid after its Expression is gone (a handful of small objects).
  static const Type* internedType(const Type& t) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, const Type*>, std::unique_ptr<Type>> types;
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = types[{t.name, t.base}];
    if (!slot) slot = std::make_unique<Type>(t);
    return slot.get();
  }

  const Type* stringType(uint32_t capacity) {
    capacity = std::clamp<uint32_t>(capacity, 1, 65535);
    if (auto it = strings_.find(capacity); it != strings_.end()) return it->second;
    Type t;
    t.kind = TypeKind::String;
    t.capacity = capacity;
    t.name = capacity == 80 ? "STRING" : fmt::format("STRING[{}]", capacity);
    t.size = 2 + capacity;
    t.align = 2;
    t.init.assign(t.size, 0);
    return strings_[capacity] = internedType(t);
  }

  const Type* refTo(const Type* target) {
    if (auto it = refs_.find(target); it != refs_.end()) return it->second;
    Type t;
    t.kind = TypeKind::Ref;
    t.base = target;
    t.name = "REF_TO " + target->name;
    t.size = 4;
    t.align = 4;
    t.init.assign(4, 0);
    return refs_[target] = internedType(t);
  }

  // Named types reachable from the program's variables (declared structs, enumerations,
  // subranges, aliases with their own default, FB types), and every enumeration among them.
  void collectTypes() {
    if (typesCollected_) return;
    typesCollected_ = true;
    std::set<const Type*> seen;
    auto visit = [&](auto&& self, const Type* t) -> void {
      if (!t || !seen.insert(t).second) return;
      if (!t->name.empty()) namedTypes_.emplace(upperCase(t->name), t);
      if (t->kind == TypeKind::Enum) enums_.push_back(t);
      self(self, t->base);
      for (const Variable& f : t->fields) self(self, f.type);
    };
    for (const Variable& g : program_.globals) visit(visit, g.type);
    for (const ProgramInstanceInfo& i : program_.instances) visit(visit, i.type);
    for (const PouInfo& p : program_.pous) {
      visit(visit, p.instanceType);
      visit(visit, p.returnType);
      for (const Variable& v : p.frameVariables) visit(visit, v.type);
    }
  }

  // A declared type name as the compiler's resolvedTypes_ knows it (not FBs, not anonymous).
  const Type* declaredType(const std::string& key) {
    collectTypes();
    if (key == "STRUCT" || key == "ENUM") return nullptr;
    auto it = namedTypes_.find(key);
    if (it == namedTypes_.end() || it->second->kind == TypeKind::FunctionBlock) return nullptr;
    return it->second;
  }

  const PouInfo* findPou(const std::string& key, bool functionsOnly = false) const {
    for (const PouInfo& p : program_.pous) {
      if (p.kind == PouKind::Method || p.kind == PouKind::TaskEntry || p.kind == PouKind::Native) continue;
      if (functionsOnly && p.kind != PouKind::Function) continue;
      if (equalsIgnoreCase(p.name, key)) return &p;
    }
    return nullptr;
  }
  bool isNativeFb(const std::string& key) const {
    for (const NativeFbInfo& n : nativeFunctionBlocks())
      if (equalsIgnoreCase(n.name, key)) return true;
    return false;
  }
  const PouInfo* findMethod(const Type* fb, const std::string& name) const {
    if (!fb || fb->kind != TypeKind::FunctionBlock) return nullptr;
    const std::string full = fb->name + "." + name;
    for (const PouInfo& p : program_.pous)
      if (p.kind == PouKind::Method && equalsIgnoreCase(p.name, full)) return &p;
    return nullptr;
  }

  const Type* resolveNamedType(const std::string& name, const SourceSpan& span) {
    const std::string key = upperCase(name);
    if (const Type* t = program_.types->findElementary(key)) return t;
    if (key == "STRING") return stringType(80);
    if (key == "WSTRING") fail(span, "WSTRING is not supported");
    if (const Type* t = declaredType(key)) return t;
    if (const PouInfo* p = findPou(key)) {
      if (p->kind == PouKind::FunctionBlock) return p->instanceType ? p->instanceType : elem(TypeKind::Void);
      fail(span, fmt::format("'{}' is a {}, not a type", name, pouKindName(p->kind)));
    }
    if (isNativeFb(key)) return elem(TypeKind::Void);  // a function block type: not an enumeration
    fail(span, fmt::format("unknown type '{}'", name));
  }

  bool implicitlyConvertible(const Type* from, const Type* to) const {
    if (!from || !to) return false;
    if (from == to) return true;
    if (to->kind == TypeKind::Subrange) return implicitlyConvertible(from, to->base);
    if (from->kind == TypeKind::Subrange) return implicitlyConvertible(from->base, to);
    if (from->kind == TypeKind::Enum) return to->kind == TypeKind::Enum ? false : implicitlyConvertible(from->base, to);
    if (from->kind == TypeKind::String && to->kind == TypeKind::String) return true;
    if (from->kind == TypeKind::Ref && to->kind == TypeKind::Ref) return from->base == to->base;
    if (from->kind == TypeKind::Array && to->kind == TypeKind::Array) {
      if (from->base != to->base || from->dims.size() != to->dims.size()) return false;
      for (size_t i = 0; i < from->dims.size(); ++i)
        if (from->dims[i].lower != to->dims[i].lower || from->dims[i].count != to->dims[i].count) return false;
      return true;
    }
    if (from->kind == TypeKind::Time && to->kind == TypeKind::LTime) return true;
    if (from->kind == TypeKind::Real && to->kind == TypeKind::LReal) return true;
    if (from->kind == TypeKind::Bool) return to->isBitString();
    if (from->isInteger()) {
      if (to->isInteger() && from->isBitString() != to->isBitString()) return false;
      const int rf = intRank(from);
      if (to->kind == TypeKind::Real) return rf <= 2 && !from->isBitString();
      if (to->kind == TypeKind::LReal) return rf <= 3 && !from->isBitString();
      if (!to->isInteger()) return false;
      const int rt = intRank(to);
      if (from->isSigned()) return to->isSigned() && rf <= rt;
      if (to->isSigned()) return rf < rt && !from->isBitString();
      return rf <= rt;
    }
    return false;
  }

  bool fitsLiteral(const ConstValue& c, const Type* t) const {
    t = valueBase(t);
    if (!t) return false;
    if (c.kind == ConstValue::Kind::Real) return t->isReal();
    if (c.kind != ConstValue::Kind::Int) return false;
    if (t->isReal()) return true;
    if (t->kind == TypeKind::Bool) return c.i == 0 || c.i == 1;
    if (!t->isInteger()) return false;
    switch (primOf(*t)) {
      case Prim::I8: return c.i >= INT8_MIN && c.i <= INT8_MAX;
      case Prim::I16: return c.i >= INT16_MIN && c.i <= INT16_MAX;
      case Prim::I32: return c.i >= INT32_MIN && c.i <= INT32_MAX;
      case Prim::I64: return c.i >= INT64_MIN && c.i <= INT64_MAX;
      case Prim::U8: return c.i >= 0 && c.i <= UINT8_MAX;
      case Prim::U16: return c.i >= 0 && c.i <= UINT16_MAX;
      case Prim::U32: return c.i >= 0 && c.i <= UINT32_MAX;
      case Prim::U64: return c.i >= 0 && c.i <= static_cast<Int128>(UINT64_MAX);
      default: return false;
    }
  }

  const Type* literalType(const ConstValue& c) const {
    if (c.kind == ConstValue::Kind::Real) return elem(TypeKind::LReal);
    if (c.kind == ConstValue::Kind::Bool) return elem(TypeKind::Bool);
    if (c.i >= INT32_MIN && c.i <= INT32_MAX) return elem(TypeKind::DInt);
    if (c.i >= INT64_MIN && c.i <= INT64_MAX) return elem(TypeKind::LInt);
    return elem(TypeKind::ULInt);
  }

  const Type* commonType(const Val& a, const Val& b, const SourceSpan& span) {
    const Type* ta = a.type;
    const Type* tb = b.type;
    if (!ta && !tb) {
      if (a.constant.kind == ConstValue::Kind::Real || b.constant.kind == ConstValue::Kind::Real)
        return elem(TypeKind::LReal);
      const Type* la = literalType(a.constant);
      const Type* lb = literalType(b.constant);
      return intRank(la) >= intRank(lb) ? la : lb;
    }
    if (!ta || !tb) {
      const Val& lit = ta ? b : a;
      const Type* other = valueBase(ta ? ta : tb);
      if (other->kind == TypeKind::Enum) other = other->base;
      if (fitsLiteral(lit.constant, other)) return other;
      if (lit.constant.kind == ConstValue::Kind::Real && other->isInteger())
        return implicitlyConvertible(other, elem(TypeKind::Real)) ? elem(TypeKind::Real) : elem(TypeKind::LReal);
      const Type* lt = literalType(lit.constant);
      if (implicitlyConvertible(other, lt)) return lt;
      fail(span, fmt::format("constant {} does not fit {}", static_cast<int64_t>(lit.constant.i), other->name));
    }
    ta = valueBase(ta);
    tb = valueBase(tb);
    if (ta->kind == TypeKind::Enum && tb->kind == TypeKind::Enum) {
      if (ta != tb) fail(span, fmt::format("{} and {} are different enumerations", ta->name, tb->name));
      return ta;
    }
    if (ta->kind == TypeKind::Enum) ta = ta->base;
    if (tb->kind == TypeKind::Enum) tb = tb->base;
    if (ta == tb) return ta;
    if (implicitlyConvertible(ta, tb)) return tb;
    if (implicitlyConvertible(tb, ta)) return ta;
    for (TypeKind k : {TypeKind::Int, TypeKind::DInt, TypeKind::LInt, TypeKind::Real, TypeKind::LReal}) {
      const Type* c = elem(k);
      if (implicitlyConvertible(ta, c) && implicitlyConvertible(tb, c)) return c;
    }
    fail(span, fmt::format("no common type for {} and {}; convert one of them explicitly", ta->name, tb->name));
  }

  // ---------------------------------------------------------------- nodes

  Node* newNode(NodeKind kind, const SourceSpan& span) {
    impl_.nodes.push_back(std::make_unique<Node>());
    Node* n = impl_.nodes.back().get();
    n->kind = kind;
    n->column = columnOf(span);
    return n;
  }

  const Node* scalarNode(ScalarFn fn, Prim p, const Node* a, const Node* b, const SourceSpan& span) {
    Node* n = newNode(NodeKind::Scalar, span);
    n->scalar = fn;
    n->prim = p;
    n->a = a;
    n->b = b;
    return n;
  }

  Node* stringNode(StringFn fn, uint32_t cap, const SourceSpan& span, bool buffer) {
    Node* n = newNode(NodeKind::String, span);
    n->string = fn;
    n->cap = cap;
    if (buffer) {
      impl_.scratchSize = (impl_.scratchSize + 1) & ~1u;
      n->buf = impl_.scratchSize;
      impl_.scratchSize += kStringHeaderBytes + cap;
    }
    return n;
  }

  Node* placeNode(PlaceFn fn, const SourceSpan& span) {
    Node* n = newNode(NodeKind::Place, span);
    n->place = fn;
    return n;
  }

  // The bits of a typed constant (the compiler's writeConst / constOperand).
  const Node* constNode(const Type* type, const ConstValue& c, const SourceSpan& span) {
    const Type* base = valueBase(type);
    if (base->kind == TypeKind::String) {
      if (c.kind != ConstValue::Kind::String) fail(span, fmt::format("expected a string for {}", type->name));
      Node* n = stringNode(strConstFn(), static_cast<uint32_t>(std::min<size_t>(c.s.size(), 65535)), span, false);
      n->text = c.s.substr(0, 65535);
      return n;
    }
    if (!base->isScalar()) fail(span, fmt::format("a {} cannot be initialised from a single value", type->name));
    if (c.kind == ConstValue::Kind::String || c.kind == ConstValue::Kind::None)
      fail(span, fmt::format("expected a value of type {}", type->name));
    const Prim prim = primOf(*base);
    const Int128 iv = c.kind == ConstValue::Kind::Real ? static_cast<Int128>(c.r) : c.i;
    const double rv = c.kind == ConstValue::Kind::Real ? c.r : static_cast<double>(c.i);
    uint64_t bits = 0;
    switch (prim) {
      case Prim::F32: bits = put<float>(static_cast<float>(rv)); break;
      case Prim::F64: bits = put<double>(rv); break;
      case Prim::I8: bits = put<int8_t>(static_cast<int8_t>(iv)); break;
      case Prim::U8: bits = put<uint8_t>(static_cast<uint8_t>(iv)); break;
      case Prim::I16: bits = put<int16_t>(static_cast<int16_t>(iv)); break;
      case Prim::U16: bits = put<uint16_t>(static_cast<uint16_t>(iv)); break;
      case Prim::I32: bits = put<int32_t>(static_cast<int32_t>(iv)); break;
      case Prim::U32: bits = put<uint32_t>(static_cast<uint32_t>(iv)); break;
      case Prim::I64: bits = put<int64_t>(static_cast<int64_t>(iv)); break;
      case Prim::U64: bits = put<uint64_t>(static_cast<uint64_t>(iv)); break;
    }
    Node* n = newNode(NodeKind::Scalar, span);
    n->scalar = constFn();
    n->prim = prim;
    n->k = bits;
    return n;
  }

  Val valueOf(const Node* n, const Type* t) {
    Val v;
    v.type = t;
    v.node = n;
    v.isPlace = n->kind == NodeKind::Place;
    return v;
  }

  // readOperand: a node computing the value of v (a place of an aggregate stays a place).
  const Node* read(const Val& v, const SourceSpan& span) {
    if (v.isConst) return constNode(v.type ? v.type : literalType(v.constant), v.constant, span);
    if (!v.isPlace) return v.node;
    const Type* t = valueBase(v.type);
    if (t->kind == TypeKind::String) {
      Node* n = stringNode(strLoadFn(), t->capacity, span, false);
      n->a = v.node;
      return n;
    }
    if (!t->isScalar()) return v.node;
    const Prim p = primOf(*t);
    const Node& pl = *v.node;
    Node* n = newNode(NodeKind::Scalar, span);
    n->prim = p;
    if (pl.place == placeFn(PlaceBase::Abs) || pl.place == placeFn(PlaceBase::This) ||
        pl.place == placeFn(PlaceBase::Frame)) {
      const PlaceBase base = pl.place == placeFn(PlaceBase::Abs)    ? PlaceBase::Abs
                             : pl.place == placeFn(PlaceBase::This) ? PlaceBase::This
                                                                    : PlaceBase::Frame;
      n->scalar = loadFn(base, p);
      n->k = pl.k;
    } else {
      n->scalar = loadPlaceFn(p);
      n->a = v.node;
    }
    return n;
  }

  // A place designating `size` bytes at base + offset.
  Val basePlace(PlaceBase base, uint64_t offset, const Type* type, const SourceSpan& span) {
    if (base != PlaceBase::Abs) impl_.usesContext = true;
    Node* n = placeNode(placeFn(base), span);
    n->k = offset;
    n->size = type ? type->size : 0;
    Val v = valueOf(n, type);
    v.storage = true;
    return v;
  }

  // The place `offset` bytes further into the place `base` (its field or element), of `type`.
  const Node* offsetPlace(const Node* base, uint64_t offset, const Type* type, const SourceSpan& span) {
    if (offset == 0 && base->place != placeDerefFn()) return base;
    const PlaceFn f = base->place;
    if (f == placeFn(PlaceBase::Abs) || f == placeFn(PlaceBase::This) || f == placeFn(PlaceBase::Frame) ||
        f == placeDerefFn()) {
      Node* n = placeNode(f, span);
      const uint32_t column = n->column;
      *n = *base;
      if (column) n->column = column;
      n->k = base->k + offset;
      n->size = type->size;
      return n;
    }
    Node* n = placeNode(placeOffsetFn(), span);
    n->a = base;
    n->k = offset;
    n->size = type->size;
    return n;
  }

  bool isDirect(const Node* place) const {
    return place->place == placeFn(PlaceBase::Abs) || place->place == placeFn(PlaceBase::This) ||
           place->place == placeFn(PlaceBase::Frame);
  }

  // What of a place the compiler's code computes where the expression stands, rather than where
  // the value is read: the address of an element of a multi-dimensional array or of an array
  // reached through a reference (with its bounds and NULL checks), the reference a dereference
  // goes through, the index values of any element.
  void collectEager(const Node* n, std::vector<const Node*>& out) const {
    if (isDirect(n)) return;
    if (n->place == placeDerefFn()) {
      out.push_back(n->a);
    } else if (n->place == placeIndexFn() && n->lazy) {
      for (const Node* i : n->list) out.push_back(i);
    } else if (n->place == placeBitFn() && isDirect(n->a)) {
      return;
    } else {
      out.push_back(n);
    }
  }

  // A REF read from the 4-byte slot at `slot`, dereferenced: the target designates `type`.
  const Node* derefPlace(const Node* ref, uint64_t offset, const Type* type, const SourceSpan& span) {
    Node* n = placeNode(placeDerefFn(), span);
    n->a = ref;
    n->k = offset;
    n->size = type ? type->size : 0;
    return n;
  }

  // ---------------------------------------------------------------- conversions

  Val convert(Val v, const Type* to, const SourceSpan& span, bool explicitConversion) {
    if (!to) return v;
    if (v.type == to) return v;
    if (to->kind == TypeKind::Void) fail(span, "expression has no value");
    if (v.isConst) {
      if (!v.type) {
        const Type* target = valueBase(to);
        if (target->kind == TypeKind::Enum) {
          if (!explicitConversion) fail(span, fmt::format("a number is not a value of {}; use its names", to->name));
          target = target->base;
        }
        if (!fitsLiteral(v.constant, target) && !(explicitConversion && target->isScalar())) {
          if (v.constant.kind == ConstValue::Kind::Real)
            fail(span, fmt::format("a real number cannot be converted implicitly to {}", to->name));
          fail(span, fmt::format("constant {} does not fit {}", static_cast<int64_t>(v.constant.i), to->name));
        }
        Val r;
        r.type = to;
        r.isConst = true;
        r.constant = convertConst(v.constant, to);
        return r;
      }
      if (v.constant.kind == ConstValue::Kind::String) {
        if (to->kind == TypeKind::String) {
          Val r = v;
          r.type = to;
          return r;
        }
      } else if (to->isScalar() && v.type->isScalar() && !v.type->isTimeLike() && !to->isTimeLike() &&
                 to->kind != TypeKind::Ref && v.type->kind != TypeKind::Ref &&
                 (explicitConversion || implicitlyConvertible(v.type, to))) {
        Val r;
        r.type = to;
        r.isConst = true;
        r.constant = convertConst(v.constant, to);
        if (to->kind == TypeKind::Subrange && (r.constant.i < to->lower || r.constant.i > to->upper))
          fail(span, fmt::format("{} is outside {}", static_cast<int64_t>(r.constant.i), to->name));
        return r;
      } else if (v.type->isTimeLike() && to->isTimeLike() &&
                 (explicitConversion || implicitlyConvertible(v.type, to))) {
        Val r = v;
        r.type = to;
        return r;
      }
      // Other typed constants convert through code like variables do.
      Val placed = valueOf(read(v, span), v.type);
      placed.readOnly = true;
      return convert(placed, to, span, explicitConversion);
    }
    const Type* from = v.type;
    if (!explicitConversion && !implicitlyConvertible(from, to)) {
      if (from->isInteger() && to->isInteger())
        fail(span, fmt::format("implicit conversion from {} to {} may lose data; use {}_TO_{}", from->name, to->name,
                               valueBase(from)->name, valueBase(to)->name));
      fail(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    }
    if (to->kind == TypeKind::String || from->kind == TypeKind::String) {
      if (to->kind == TypeKind::String && from->kind == TypeKind::String) {
        Val r = v;
        r.type = to;  // capacity differences are handled when stored
        return r;
      }
      fail(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    }
    if (!from->isScalar() || !to->isScalar()) {
      if (implicitlyConvertible(from, to)) {
        Val r = v;
        r.type = to;
        return r;
      }
      fail(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    }
    const Prim pf = primOf(*from);
    const Prim pt = primOf(*to);
    const Type* toBase = valueBase(to);
    if (toBase->kind == TypeKind::Bool && from->kind != TypeKind::Bool) {
      const Node* src = read(v, span);
      return valueOf(scalarNode(unaryFn(Unop::NeZero, pf), Prim::U8, src, nullptr, span), to);
    }
    const bool sameWidthIntegers = !primIsFloat(pf) && !primIsFloat(pt) && primSize(pf) == primSize(pt);
    if (pf == pt || sameWidthIntegers) {
      Val r = v;  // a reinterpretation
      r.type = to;
      return r;
    }
    const Node* src = read(v, span);
    return valueOf(scalarNode(cvtFn(pf, pt), pt, src, nullptr, span), to);
  }

  const Node* operandAs(const Val& v, const Type* type, const SourceSpan& span, bool explicitConversion = false) {
    return read(convert(v, type, span, explicitConversion), span);
  }

  // The value `v` has once stored into a temporary of `type` (the compiler's store()): converted,
  // checked against a subrange, truncated to a string's capacity.
  const Node* storeAs(const Val& v, const Type* type, const SourceSpan& span) {
    if (type->kind == TypeKind::FunctionBlock && v.type != type)
      fail(span, fmt::format("cannot assign {} to an instance of {}", v.type ? v.type->name : "a number", type->name));
    Val c = convert(v, type, span, false);
    if (type->kind == TypeKind::Subrange) {
      if (c.isConst) {
        if (c.constant.i < type->lower || c.constant.i > type->upper)
          fail(span, fmt::format("{} is outside {}", static_cast<int64_t>(c.constant.i), type->name));
        return read(c, span);
      }
      const Prim p = primOf(*type->base);
      Node* n = newNode(NodeKind::Scalar, span);
      n->scalar = chkFn(p);
      n->prim = p;
      n->a = read(c, span);
      n->lo = type->lower;
      n->hi = type->upper;
      return n;
    }
    if (type->kind == TypeKind::String) {
      Node* n = stringNode(strTruncFn(), type->capacity, span, false);
      n->a = read(c, span);
      return n;
    }
    return read(c, span);
  }

  // ---------------------------------------------------------------- names

  Val variablePlace(const Variable& v, bool inFrame, bool inInstance, const SourceSpan& span) {
    Val r;
    if (v.absolute) {
      r = basePlace(PlaceBase::Abs, v.offset, v.type, span);
      if (v.bit >= 0) {
        Node* n = placeNode(placeBitFn(), span);
        n->a = r.node;
        n->k = static_cast<uint64_t>(v.bit);
        r.node = n;
      }
    } else {
      Val slot;
      if (inFrame)
        slot = basePlace(PlaceBase::Frame, v.offset, v.type, span);
      else if (inInstance && mode_ == Mode::Program)
        slot = basePlace(PlaceBase::Abs, uint64_t{programBase_} + v.offset, v.type, span);
      else
        slot = basePlace(PlaceBase::This, v.offset, v.type, span);
      if (v.byReference) {
        Val ref = valueOf(slot.node, elem(TypeKind::UDInt));
        ref.isPlace = true;
        r = valueOf(derefPlace(read(ref, span), 0, v.type, span), v.type);
      } else {
        r = slot;
      }
    }
    r.type = v.type;
    r.storage = true;
    r.readOnly = v.constant;
    return r;
  }

  const Variable* instanceField(const std::string& name) const {
    return instanceType_ ? instanceType_->field(name) : nullptr;
  }
  const Variable* findGlobal(const std::string& name) const {
    for (const Variable& g : program_.globals)
      if (equalsIgnoreCase(g.name, name)) return &g;
    return nullptr;
  }
  const ProgramInstanceInfo* findInstance(const std::string& name) const {
    for (const ProgramInstanceInfo& i : program_.instances)
      if (equalsIgnoreCase(i.name, name)) return &i;
    return nullptr;
  }
  bool isVariable(const std::string& key, const std::string& name) const {
    return frameVars_.count(key) || instanceField(name) || findGlobal(name);
  }

  // A constant of the POU's own declaration the compiler folds (frame constants are read instead:
  // their values are in memory, but not in the program's symbol information).
  std::optional<Val> localConstant(const std::string& key, const std::string& name) {
    if (frameVars_.count(key)) return std::nullopt;
    const Variable* f = instanceField(name);
    if (!f || !foldableField(*f) || f->offset + f->type->size > instanceType_->init.size()) return std::nullopt;
    Val v;
    v.type = f->type;
    v.isConst = true;
    v.constant = constFromBytes(f->type, instanceType_->init.data() + f->offset);
    return v;
  }

  std::optional<Val> globalConstant(const Variable& g) {
    if (!foldableGlobal(g) || g.offset + g.type->size > program_.initialImage.size()) return std::nullopt;
    Val v;
    v.type = g.type;
    v.isConst = true;
    v.constant = constFromBytes(g.type, program_.initialImage.data() + g.offset);
    return v;
  }

  std::string scopeDescription() const {
    std::string out;
    if (pouInfo_) {
      if (mode_ == Mode::Function || mode_ == Mode::Method || !pouInfo_->frameVariables.empty())
        out += fmt::format("a local variable of {}, ", pouInfo_->name);
      if (instanceType_)
        out += fmt::format("an instance variable of {}, ", mode_ == Mode::Program && !pouInfo_->instanceName.empty()
                                                               ? pouInfo_->instanceName
                                                               : instanceType_->name);
    }
    return out + "a global variable, a program instance or an enumeration value";
  }

  Val genName(const ast::Expr& e) {
    const std::string key = upperCase(e.text);
    if (key == "THIS") {
      if (mode_ == Mode::FbBody || mode_ == Mode::Method) {
        Val r = basePlace(PlaceBase::This, 0, instanceType_, e.span);
        r.type = instanceType_;
        return r;
      }
      fail(e.span, "THIS is only available in function blocks and their methods");
    }
    if (std::optional<Val> c = localConstant(key, e.text)) return *c;
    if (auto it = frameVars_.find(key); it != frameVars_.end()) return variablePlace(*it->second, true, false, e.span);
    if (const Variable* v = instanceField(e.text)) return variablePlace(*v, false, true, e.span);
    if (const Variable* g = findGlobal(e.text)) {
      if (std::optional<Val> c = globalConstant(*g)) return *c;
      Val r = variablePlace(*g, false, false, e.span);
      return r;
    }
    if (const ProgramInstanceInfo* inst = findInstance(e.text)) {
      Val r = basePlace(PlaceBase::Abs, inst->offset, inst->type, e.span);
      r.type = inst->type;
      return r;
    }
    if (std::optional<Val> c = constantOf(e)) return *c;
    if (findPou(key) || isNativeFb(key)) fail(e.span, fmt::format("'{}' is a POU; call it with ( )", e.text));
    fail(e.span, fmt::format("unknown name '{}': not {}", e.text, scopeDescription()));
  }

  Val genMember(const ast::Expr& e) {
    Val base = gen(*e.operand);
    if (base.isConst || !base.type) fail(e.span, fmt::format("'{}' has no members", e.operand->text));
    const Type* t = base.type;
    if (t->kind == TypeKind::Ref) fail(e.span, "dereference the reference with ^ before selecting a member");
    if (t->kind != TypeKind::Struct && t->kind != TypeKind::FunctionBlock)
      fail(e.span, fmt::format("{} has no member '{}'", t->name, e.text));
    const Variable* f = t->field(e.text);
    if (!f || f->hidden) {
      if (findMethod(t, e.text)) fail(e.span, fmt::format("method '{}' must be called with ( )", e.text));
      fail(e.span, fmt::format("{} has no member '{}'", t->name, e.text));
    }
    Val r = subPlace(base, *f, e.span);
    r.storage = base.storage || f->absolute;
    return r;
  }

  // A field (or a constant-index element: a pseudo field) of the place `base`.
  Val subPlace(const Val& base, const Variable& field, const SourceSpan& span) {
    Val r;
    if (field.absolute) {
      r = variablePlace(field, false, false, span);
      r.readOnly = base.readOnly || field.constant;
      return r;
    }
    if (!base.isPlace) fail(span, "internal error: a member of a value that is not in memory");
    if (field.byReference) {
      Val slot = valueOf(offsetPlace(base.node, field.offset, elem(TypeKind::UDInt), span), elem(TypeKind::UDInt));
      r = valueOf(derefPlace(read(slot, span), 0, field.type, span), field.type);
    } else {
      r = valueOf(offsetPlace(base.node, field.offset, field.type, span), field.type);
    }
    r.type = field.type;
    r.storage = true;
    r.readOnly = base.readOnly || field.constant;
    return r;
  }

  Val genIndex(const ast::Expr& e) {
    Val base = gen(*e.operand);
    const Type* t = base.type;
    if (base.isConst || !t || t->kind != TypeKind::Array) fail(e.span, "only arrays can be indexed");
    if (e.indices.size() != t->dims.size())
      fail(e.span, fmt::format("{} needs {} index(es), got {}", t->name, t->dims.size(), e.indices.size()));
    std::vector<uint64_t> stride(t->dims.size());
    uint64_t s = t->base->size;
    for (size_t i = t->dims.size(); i-- > 0;) {
      stride[i] = s;
      s *= t->dims[i].count;
    }
    std::vector<Val> idx;
    bool allConst = true;
    for (const auto& ie : e.indices) {
      Val v = gen(*ie);
      if (v.isConst && v.constant.kind != ConstValue::Kind::Int && v.constant.kind != ConstValue::Kind::Bool)
        fail(ie->span, "an array index must be an integer");
      if (!v.isConst && v.type && !(valueBase(v.type)->isInteger() || valueBase(v.type)->kind == TypeKind::Enum))
        fail(ie->span, fmt::format("an array index must be an integer, not {}", v.type->name));
      allConst = allConst && v.isConst;
      idx.push_back(std::move(v));
    }
    if (!base.isPlace) fail(e.span, "internal error: an element of a value that is not in memory");
    if (allConst) {
      uint64_t off = 0;
      for (size_t i = 0; i < idx.size(); ++i) {
        const int64_t k = static_cast<int64_t>(idx[i].constant.i);
        if (k < t->dims[i].lower || k >= t->dims[i].lower + static_cast<int64_t>(t->dims[i].count))
          fail(e.indices[i]->span, fmt::format("index {} is outside {}..{}", k, t->dims[i].lower,
                                               t->dims[i].lower + static_cast<int64_t>(t->dims[i].count) - 1));
        off += static_cast<uint64_t>(k - t->dims[i].lower) * stride[i];
      }
      Variable pseudo;
      pseudo.type = t->base;
      pseudo.offset = static_cast<uint32_t>(off);
      Val r = subPlace(base, pseudo, e.span);
      r.storage = base.storage;
      r.readOnly = base.readOnly;
      return r;
    }
    const Type* i32 = elem(TypeKind::DInt);
    Node* n = placeNode(placeIndexFn(), e.span);
    n->a = base.node;
    n->lazy = idx.size() == 1 && isDirect(base.node);
    n->dims = t->dims;
    n->strides = stride;
    n->size = t->base->size;
    n->text = sourceText(e.operand->span);
    for (size_t i = 0; i < idx.size(); ++i) {
      Val& v = idx[i];
      const SourceSpan& span = e.indices[i]->span;
      if (v.isConst) {
        n->list.push_back(constNode(i32, ConstValue::ofInt(static_cast<int32_t>(v.constant.i)), span));
        continue;
      }
      const Type* vt = valueBase(v.type);
      if (vt->kind == TypeKind::Enum) vt = vt->base;
      const Prim p = primOf(*vt);
      if (p == Prim::I32) {
        n->list.push_back(read(v, span));
      } else if (p == Prim::I8 || p == Prim::I16 || p == Prim::U8 || p == Prim::U16) {
        n->list.push_back(operandAs(v, i32, span, true));
      } else {
        const Node* wide = operandAs(v, elem(TypeKind::LInt), span, true);
        n->list.push_back(scalarNode(idx64Fn(), Prim::I32, wide, nullptr, span));
      }
    }
    Val r = valueOf(n, t->base);
    r.storage = base.storage;
    r.readOnly = base.readOnly;
    return r;
  }

  Val genDeref(const ast::Expr& e) {
    if (e.operand->kind == ast::ExprKind::Name && equalsIgnoreCase(e.operand->text, "THIS")) return genName(*e.operand);
    Val v = gen(*e.operand);
    if (!v.type || v.type->kind != TypeKind::Ref) fail(e.span, "only a REF_TO value can be dereferenced with ^");
    Val r = valueOf(derefPlace(read(v, e.span), 0, v.type->base, e.span), v.type->base);
    r.storage = true;
    return r;
  }

  Val genBitAccess(const ast::Expr& e) {
    Val base = gen(*e.operand);
    const Type* t = base.type ? valueBase(base.type) : nullptr;
    if (base.isConst || !t || !t->isInteger()) fail(e.span, "bit access needs an integer or bit string variable");
    if (e.intValue >= t->size * 8) fail(e.span, fmt::format("{} has no bit {}", t->name, e.intValue));
    const Type* boolType = elem(TypeKind::Bool);
    if (!base.isPlace) {
      Node* n = newNode(NodeKind::Scalar, e.span);
      n->scalar = getBitFn(t->size);
      n->prim = Prim::U8;
      n->a = base.node;
      n->k = e.intValue;
      return valueOf(n, boolType);
    }
    Node* n = placeNode(placeBitFn(), e.span);
    n->a = base.node;
    n->k = e.intValue;
    Val r = valueOf(n, boolType);
    r.storage = base.storage;
    r.readOnly = base.readOnly;
    return r;
  }

  // ---------------------------------------------------------------- literals and folding

  Val genLiteral(const ast::Expr& e) {
    Val v;
    v.isConst = true;
    switch (e.kind) {
      case ast::ExprKind::IntLiteral: {
        Int128 value = static_cast<Int128>(e.intValue);
        if (e.negative) value = -value;
        v.constant = ConstValue::ofInt(value);
        if (!e.typePrefix.empty()) {
          const Type* t = program_.types->findElementary(e.typePrefix);
          if (!t) t = declaredType(e.typePrefix);
          if (!t) fail(e.span, fmt::format("unknown type '{}' in literal", e.typePrefix));
          if (t->isReal())
            v.constant = ConstValue::ofReal(static_cast<double>(value));
          else if (!fitsLiteral(v.constant, t))
            fail(e.span, fmt::format("{} does not fit {}", static_cast<int64_t>(value), t->name));
          if (t->kind == TypeKind::Bool) v.constant = ConstValue::ofBool(value != 0);
          v.type = t;
        }
        return v;
      }
      case ast::ExprKind::RealLiteral:
        v.constant = ConstValue::ofReal(e.realValue);
        if (!e.typePrefix.empty()) {
          const Type* t = program_.types->findElementary(e.typePrefix);
          if (!t || !t->isReal()) fail(e.span, fmt::format("{}# cannot hold a real number", e.typePrefix));
          v.type = t;
          if (t->kind == TypeKind::Real) v.constant.r = static_cast<float>(e.realValue);
        }
        return v;
      case ast::ExprKind::BoolLiteral:
        v.constant = ConstValue::ofBool(e.boolValue);
        v.type = elem(TypeKind::Bool);
        return v;
      case ast::ExprKind::StringLiteral:
        v.constant = ConstValue::ofString(e.text);
        v.type = stringType(static_cast<uint32_t>(std::clamp<size_t>(e.text.size(), 1, 65535)));
        return v;
      case ast::ExprKind::TimeLiteral:
        v.constant = ConstValue::ofInt(static_cast<int64_t>(e.intValue));
        v.type = elem(e.typePrefix == "LTIME" ? TypeKind::LTime : TypeKind::Time);
        return v;
      case ast::ExprKind::DateLiteral:
        v.constant = ConstValue::ofInt(static_cast<int64_t>(e.intValue));
        v.type = elem(TypeKind::Date);
        return v;
      case ast::ExprKind::TodLiteral:
        v.constant = ConstValue::ofInt(static_cast<int64_t>(e.intValue));
        v.type = elem(TypeKind::Tod);
        return v;
      case ast::ExprKind::DtLiteral:
        v.constant = ConstValue::ofInt(static_cast<int64_t>(e.intValue));
        v.type = elem(TypeKind::Dt);
        return v;
      default: break;
    }
    return v;
  }

  std::optional<ConstValue> foldBinary(ast::BinaryOp op, const ConstValue& a, const ConstValue& b, const Type* t,
                                       const SourceSpan& span) {
    using K = ConstValue::Kind;
    if (a.kind == K::String || b.kind == K::String) {
      if (a.kind != b.kind) return std::nullopt;
      switch (op) {
        case ast::BinaryOp::Eq: return ConstValue::ofBool(a.s == b.s);
        case ast::BinaryOp::Ne: return ConstValue::ofBool(a.s != b.s);
        case ast::BinaryOp::Lt: return ConstValue::ofBool(a.s < b.s);
        case ast::BinaryOp::Gt: return ConstValue::ofBool(a.s > b.s);
        case ast::BinaryOp::Le: return ConstValue::ofBool(a.s <= b.s);
        case ast::BinaryOp::Ge: return ConstValue::ofBool(a.s >= b.s);
        default: return std::nullopt;
      }
    }
    const bool real = a.kind == K::Real || b.kind == K::Real || (t && valueBase(t)->isReal());
    if (op == ast::BinaryOp::Power) {
      const double x = a.kind == K::Real ? a.r : static_cast<double>(a.i);
      const double y = b.kind == K::Real ? b.r : static_cast<double>(b.i);
      return ConstValue::ofReal(std::pow(x, y));
    }
    if (real) {
      const double x = a.kind == K::Real ? a.r : static_cast<double>(a.i);
      const double y = b.kind == K::Real ? b.r : static_cast<double>(b.i);
      const bool single = t && valueBase(t)->kind == TypeKind::Real;
      auto r = [&](double v) { return ConstValue::ofReal(single ? static_cast<float>(v) : v); };
      switch (op) {
        case ast::BinaryOp::Add: return r(x + y);
        case ast::BinaryOp::Sub: return r(x - y);
        case ast::BinaryOp::Mul: return r(x * y);
        case ast::BinaryOp::Div:
          if (y == 0.0) fail(span, "division by zero in a constant expression");
          return r(x / y);
        case ast::BinaryOp::Lt: return ConstValue::ofBool(x < y);
        case ast::BinaryOp::Gt: return ConstValue::ofBool(x > y);
        case ast::BinaryOp::Le: return ConstValue::ofBool(x <= y);
        case ast::BinaryOp::Ge: return ConstValue::ofBool(x >= y);
        case ast::BinaryOp::Eq: return ConstValue::ofBool(x == y);
        case ast::BinaryOp::Ne: return ConstValue::ofBool(x != y);
        default: return std::nullopt;
      }
    }
    const Int128 x = a.i, y = b.i;
    auto w = [&](Int128 v) {
      const Type* base = t ? valueBase(t) : nullptr;
      if (base && base->kind == TypeKind::Enum) base = base->base;
      return ConstValue::ofInt(base && base->isScalar() && !base->isReal() ? wrapTo(v, base) : v);
    };
    const bool boolish = a.kind == K::Bool && b.kind == K::Bool;
    // Untyped integer literals fold without limits (in 128 bits, as the compiler does); only
    // products of huge literals could leave those 128 bits.
    Int128 r = 0;
    switch (op) {
      case ast::BinaryOp::Add:
        if (__builtin_add_overflow(x, y, &r)) fail(span, "constant expression overflows");
        return w(r);
      case ast::BinaryOp::Sub:
        if (__builtin_sub_overflow(x, y, &r)) fail(span, "constant expression overflows");
        return w(r);
      case ast::BinaryOp::Mul:
        if (__builtin_mul_overflow(x, y, &r)) fail(span, "constant expression overflows");
        return w(r);
      case ast::BinaryOp::Div:
        if (y == 0) fail(span, "division by zero in a constant expression");
        return w(x / y);
      case ast::BinaryOp::Mod:
        if (y == 0) fail(span, "division by zero in a constant expression");
        return w(x % y);
      case ast::BinaryOp::Lt: return ConstValue::ofBool(x < y);
      case ast::BinaryOp::Gt: return ConstValue::ofBool(x > y);
      case ast::BinaryOp::Le: return ConstValue::ofBool(x <= y);
      case ast::BinaryOp::Ge: return ConstValue::ofBool(x >= y);
      case ast::BinaryOp::Eq: return ConstValue::ofBool(x == y);
      case ast::BinaryOp::Ne: return ConstValue::ofBool(x != y);
      case ast::BinaryOp::And: return boolish ? ConstValue::ofBool(x && y) : w(x & y);
      case ast::BinaryOp::Or: return boolish ? ConstValue::ofBool(x || y) : w(x | y);
      case ast::BinaryOp::Xor: return boolish ? ConstValue::ofBool((x != 0) != (y != 0)) : w(x ^ y);
      default: return std::nullopt;
    }
  }

  std::optional<Val> constantOf(const ast::Expr& e, const Type* hint = nullptr) {
    switch (e.kind) {
      case ast::ExprKind::IntLiteral:
      case ast::ExprKind::RealLiteral:
      case ast::ExprKind::BoolLiteral:
      case ast::ExprKind::StringLiteral:
      case ast::ExprKind::TimeLiteral:
      case ast::ExprKind::DateLiteral:
      case ast::ExprKind::TodLiteral:
      case ast::ExprKind::DtLiteral: return genLiteral(e);
      case ast::ExprKind::Name: {
        const std::string key = upperCase(e.text);
        const size_t hash = key.find('#');
        if (hash != std::string::npos) {  // Color#Red
          const std::string typeName = key.substr(0, hash);
          const std::string member = key.substr(hash + 1);
          const Type* t = resolveNamedType(typeName, e.span);
          if (t->kind != TypeKind::Enum) fail(e.span, fmt::format("'{}' is not an enumeration", typeName));
          for (const EnumMember& m : t->members)
            if (upperCase(m.name) == member) return constOf(t, ConstValue::ofInt(m.value));
          fail(e.span, fmt::format("{} has no value '{}'", t->name, e.text.substr(hash + 1)));
        }
        // Variables shadow enumeration values; constants fold.
        if (frameVars_.count(key) || instanceField(e.text)) return localConstant(key, e.text);
        if (const Variable* g = findGlobal(e.text)) return globalConstant(*g);
        collectTypes();
        std::vector<std::pair<const Type*, int64_t>> candidates;
        for (const Type* t : enums_)
          for (const EnumMember& m : t->members)
            if (upperCase(m.name) == key) candidates.push_back({t, m.value});
        if (!candidates.empty()) {
          if (hint) {
            for (const auto& [t, value] : candidates)
              if (t == valueBase(hint)) return constOf(t, ConstValue::ofInt(value));
          }
          if (candidates.size() > 1)
            fail(e.span, fmt::format("'{}' names values of several enumerations; write Type#{}", e.text, e.text));
          return constOf(candidates[0].first, ConstValue::ofInt(candidates[0].second));
        }
        return std::nullopt;
      }
      case ast::ExprKind::Unary: {
        std::optional<Val> v = constantOf(*e.operand, hint);
        if (!v || !v->isConst) return std::nullopt;
        if (e.unaryOp == ast::UnaryOp::Plus) return v;
        if (e.unaryOp == ast::UnaryOp::Negate) {
          if (v->type && !(valueBase(v->type)->isNumeric() || v->type->isTimeLike())) return std::nullopt;
          if (v->constant.kind == ConstValue::Kind::Real)
            v->constant.r = -v->constant.r;
          else if (v->constant.kind == ConstValue::Kind::Int)
            v->constant.i = v->type && valueBase(v->type)->isInteger() ? wrapTo(-v->constant.i, valueBase(v->type))
                                                                       : -v->constant.i;
          else
            return std::nullopt;
          return v;
        }
        if (v->constant.kind == ConstValue::Kind::Bool) {
          v->constant.i = !v->constant.i;
          return v;
        }
        if (v->type && valueBase(v->type)->isInteger()) {
          v->constant.i = wrapTo(~v->constant.i, valueBase(v->type));
          return v;
        }
        return std::nullopt;
      }
      case ast::ExprKind::Binary: {
        std::optional<Val> a = constantOf(*e.operand, hint);
        if (!a || !a->isConst) return std::nullopt;
        std::optional<Val> b = constantOf(*e.rhs, hint);
        if (!b || !b->isConst) return std::nullopt;
        if ((a->type && a->type->isTimeLike()) || (b->type && b->type->isTimeLike())) return std::nullopt;
        if ((a->type && a->type->kind == TypeKind::Enum) || (b->type && b->type->kind == TypeKind::Enum)) {
          if (!isComparison(e.binaryOp)) return std::nullopt;
        }
        const Type* t = nullptr;
        if (a->constant.kind == ConstValue::Kind::String || b->constant.kind == ConstValue::Kind::String) {
          t = nullptr;
        } else if (a->type || b->type) {
          t = commonType(*a, *b, e.span);
          *a = convert(*a, t, e.span, false);
          *b = convert(*b, t, e.span, false);
        }
        std::optional<ConstValue> c = foldBinary(e.binaryOp, a->constant, b->constant, t, e.span);
        if (!c) return std::nullopt;
        Val r;
        r.isConst = true;
        r.constant = *c;
        if (isComparison(e.binaryOp) || c->kind == ConstValue::Kind::Bool)
          r.type = elem(TypeKind::Bool);
        else if (e.binaryOp == ast::BinaryOp::Power)
          r.type = t && t->kind == TypeKind::Real ? t : (t ? elem(TypeKind::LReal) : nullptr);
        else
          r.type = t;
        return r;
      }
      default: return std::nullopt;
    }
  }

  static Val constOf(const Type* t, ConstValue c) {
    Val v;
    v.type = t;
    v.isConst = true;
    v.constant = std::move(c);
    return v;
  }

  // ---------------------------------------------------------------- operators

  Val genUnary(const ast::Expr& e, const Type* hint) {
    Val v = gen(*e.operand, hint);
    if (v.isConst || !v.type) fail(e.span, "operator needs a typed operand");
    const Type* t = valueBase(v.type);
    if (e.unaryOp == ast::UnaryOp::Plus) {
      v.storage = false;
      return v;
    }
    if (e.unaryOp == ast::UnaryOp::Negate) {
      if (!t->isNumeric() && t->kind != TypeKind::Time && t->kind != TypeKind::LTime)
        fail(e.span, fmt::format("cannot negate a {}", t->name));
      return valueOf(scalarNode(unaryFn(Unop::Neg, primOf(*t)), primOf(*t), read(v, e.span), nullptr, e.span), t);
    }
    if (t->kind == TypeKind::Bool)
      return valueOf(scalarNode(boolNotFn(), Prim::U8, read(v, e.span), nullptr, e.span), t);
    if (t->isInteger()) return valueOf(scalarNode(notBitsFn(t->size), primOf(*t), read(v, e.span), nullptr, e.span), t);
    fail(e.span, fmt::format("NOT needs a BOOL or bit string, not {}", t->name));
  }

  // Evaluating `e` cannot fault, so skipping it cannot change a result or a fault.
  static bool safeToSkip(const ast::Expr& e) {
    switch (e.kind) {
      case ast::ExprKind::Name:
      case ast::ExprKind::IntLiteral:
      case ast::ExprKind::RealLiteral:
      case ast::ExprKind::BoolLiteral:
      case ast::ExprKind::StringLiteral:
      case ast::ExprKind::TimeLiteral:
      case ast::ExprKind::DateLiteral:
      case ast::ExprKind::TodLiteral:
      case ast::ExprKind::DtLiteral: return true;
      case ast::ExprKind::Member:
      case ast::ExprKind::BitAccess: return safeToSkip(*e.operand);
      case ast::ExprKind::Unary: return safeToSkip(*e.operand);
      case ast::ExprKind::Binary:
        return e.binaryOp != ast::BinaryOp::Div && e.binaryOp != ast::BinaryOp::Mod && safeToSkip(*e.operand) &&
               safeToSkip(*e.rhs);
      default: return false;
    }
  }

  Val genBinary(const ast::Expr& e, const Type* hint) {
    if (std::optional<Val> c = constantOf(e, hint)) return *c;
    Val a, b;
    Val r = genBinaryOperation(e, a, b);
    r.node = ordered(r.node, {&a, &b}, e.span);
    return r;
  }

  Val genBinaryOperation(const ast::Expr& e, Val& a, Val& b) {
    const ast::BinaryOp op = e.binaryOp;
    a = gen(*e.operand, nullptr);
    b = gen(*e.rhs, a.type);
    if (a.isConst && !a.type && b.type) a = gen(*e.operand, b.type);
    const Type* ta = a.type ? valueBase(a.type) : nullptr;
    const Type* tb = b.type ? valueBase(b.type) : nullptr;
    const Type* boolType = elem(TypeKind::Bool);
    const Type* i64 = elem(TypeKind::LInt);
    const Type* f64 = elem(TypeKind::LReal);
    const SourceSpan& span = e.span;

    if ((ta && ta->kind == TypeKind::String) || (tb && tb->kind == TypeKind::String) ||
        (a.isConst && a.constant.kind == ConstValue::Kind::String) ||
        (b.isConst && b.constant.kind == ConstValue::Kind::String)) {
      if (!isComparison(op) || !ta || !tb || ta->kind != TypeKind::String || tb->kind != TypeKind::String)
        fail(span, fmt::format("operator {} cannot be applied to {} and {}", opText(op), ta ? ta->name : "?",
                               tb ? tb->name : "?"));
      const Node* x = read(a, span);
      const Node* y = read(b, span);
      StrCmp sop = StrCmp::Eq;
      switch (op) {
        case ast::BinaryOp::Eq: sop = StrCmp::Eq; break;
        case ast::BinaryOp::Ne: sop = StrCmp::Ne; break;
        case ast::BinaryOp::Lt: sop = StrCmp::Lt; break;
        case ast::BinaryOp::Le: sop = StrCmp::Le; break;
        case ast::BinaryOp::Gt:
          sop = StrCmp::Lt;
          std::swap(x, y);
          break;
        case ast::BinaryOp::Ge:
          sop = StrCmp::Le;
          std::swap(x, y);
          break;
        default: break;
      }
      return valueOf(scalarNode(strCmpFn(sop), Prim::U8, x, y, span), boolType);
    }

    const bool timeA = ta && ta->isTimeLike();
    const bool timeB = tb && tb->isTimeLike();
    if ((timeA || timeB) && !isComparison(op)) {
      auto kindOf = [](const Type* t) { return t ? t->kind : TypeKind::Void; };
      const TypeKind ka = kindOf(ta), kb = kindOf(tb);
      auto isDur = [](TypeKind k) { return k == TypeKind::Time || k == TypeKind::LTime; };
      auto cannot = [&]() {
        return fmt::format("operator {} cannot be applied to {} and {}", opText(op), ta ? ta->name : "a number",
                           tb ? tb->name : "a number");
      };
      if (op == ast::BinaryOp::Add || op == ast::BinaryOp::Sub) {
        const Type* result = nullptr;
        if (isDur(ka) && isDur(kb))
          result = (ka == TypeKind::LTime || kb == TypeKind::LTime) ? elem(TypeKind::LTime) : ta;
        else if ((ka == TypeKind::Tod || ka == TypeKind::Dt) && isDur(kb))
          result = ta;
        else if (op == ast::BinaryOp::Add && isDur(ka) && (kb == TypeKind::Tod || kb == TypeKind::Dt))
          result = tb;
        else if (op == ast::BinaryOp::Sub && ka == kb &&
                 (ka == TypeKind::Date || ka == TypeKind::Tod || ka == TypeKind::Dt))
          result = elem(TypeKind::Time);
        if (!result) fail(span, cannot());
        const Node* x = operandAs(a, ta, span);
        const Node* y = operandAs(b, tb, span);
        return valueOf(
            scalarNode(arithFn(op == ast::BinaryOp::Add ? Arith::Add : Arith::Sub, Prim::I64), Prim::I64, x, y, span),
            result);
      }
      if ((op == ast::BinaryOp::Mul || op == ast::BinaryOp::Div) && isDur(ka) && !timeB) {
        const bool realFactor = (b.isConst && b.constant.kind == ConstValue::Kind::Real) || (tb && tb->isReal());
        const Arith ar = op == ast::BinaryOp::Mul ? Arith::Mul : Arith::Div;
        if (realFactor) {
          const Node* x = operandAs(a, f64, span, true);
          const Node* y = operandAs(b, f64, span, true);
          const Node* t = scalarNode(arithFn(ar, Prim::F64), Prim::F64, x, y, span);
          return valueOf(scalarNode(cvtFn(Prim::F64, Prim::I64), Prim::I64, t, nullptr, span), ta);
        }
        const Node* x = read(a, span);
        const Node* y = operandAs(b, i64, span, !b.isConst);
        return valueOf(scalarNode(arithFn(ar, Prim::I64), Prim::I64, x, y, span), ta);
      }
      if (op == ast::BinaryOp::Mul && isDur(kb) && !timeA) {
        const Node* x = read(b, span);
        const Node* y = operandAs(a, i64, span, !a.isConst);
        return valueOf(scalarNode(arithFn(Arith::Mul, Prim::I64), Prim::I64, x, y, span), tb);
      }
      fail(span, cannot());
    }

    if (op == ast::BinaryOp::And || op == ast::BinaryOp::Or || op == ast::BinaryOp::Xor) {
      const Type* t = commonType(a, b, span);
      if (t->kind != TypeKind::Bool && !t->isInteger())
        fail(span, fmt::format("operator {} needs BOOL or bit strings, not {}", opText(op), t->name));
      const Node* x = operandAs(a, t, span);
      const Node* y = operandAs(b, t, span);
      if (op == ast::BinaryOp::And && t->kind == TypeKind::Bool && safeToSkip(*e.rhs))
        return valueOf(scalarNode(boolAndFn(), Prim::U8, x, y, span), t);
      const BitOp bop = op == ast::BinaryOp::And ? BitOp::And : op == ast::BinaryOp::Or ? BitOp::Or : BitOp::Xor;
      return valueOf(scalarNode(bitFn(bop, t->size), primOf(*t), x, y, span), t);
    }

    if (op == ast::BinaryOp::Power) {
      const Type* t = commonType(a, b, span);
      const Type* rt = t->kind == TypeKind::Real ? t : f64;
      if (!t->isNumeric()) fail(span, fmt::format("** needs numbers, not {}", t->name));
      const Node* x = operandAs(a, rt, span, true);
      const Node* y = operandAs(b, rt, span, true);
      return valueOf(scalarNode(arithFn(Arith::Expt, primOf(*rt)), primOf(*rt), x, y, span), rt);
    }

    const Type* t = commonType(a, b, span);
    if (isComparison(op)) {
      const Type* ct = valueBase(t);
      if (ct->kind == TypeKind::Enum) ct = ct->base;
      if (!ct->isScalar()) fail(span, fmt::format("{} values cannot be compared", t->name));
      if (ct->kind == TypeKind::Ref && op != ast::BinaryOp::Eq && op != ast::BinaryOp::Ne)
        fail(span, "references can only be compared with = and <>");
      const Node* x = operandAs(a, ct, span);
      const Node* y = operandAs(b, ct, span);
      Cmp c = Cmp::Eq;
      switch (op) {
        case ast::BinaryOp::Eq: c = Cmp::Eq; break;
        case ast::BinaryOp::Ne: c = Cmp::Ne; break;
        case ast::BinaryOp::Lt: c = Cmp::Lt; break;
        case ast::BinaryOp::Le: c = Cmp::Le; break;
        case ast::BinaryOp::Gt:
          c = Cmp::Lt;
          std::swap(x, y);
          break;
        case ast::BinaryOp::Ge:
          c = Cmp::Le;
          std::swap(x, y);
          break;
        default: break;
      }
      return valueOf(scalarNode(cmpFn(c, primOf(*ct)), Prim::U8, x, y, span), boolType);
    }
    const Type* at = valueBase(t);
    if (!at->isNumeric() || at->kind == TypeKind::Enum)
      fail(span, fmt::format("operator {} cannot be applied to {}", opText(op), t->name));
    if (op == ast::BinaryOp::Mod && !at->isInteger()) fail(span, fmt::format("MOD needs integers, not {}", t->name));
    Arith ar = Arith::Add;
    switch (op) {
      case ast::BinaryOp::Add: ar = Arith::Add; break;
      case ast::BinaryOp::Sub: ar = Arith::Sub; break;
      case ast::BinaryOp::Mul: ar = Arith::Mul; break;
      case ast::BinaryOp::Div: ar = Arith::Div; break;
      default: ar = Arith::Mod; break;
    }
    const Node* x = operandAs(a, at, span);
    const Node* y = operandAs(b, at, span);
    return valueOf(scalarNode(arithFn(ar, primOf(*at)), primOf(*at), x, y, span), at);
  }

  // ---------------------------------------------------------------- calls

  [[noreturn]] void rejectCall(const ast::Expr& callee) {
    std::string name = sourceText(callee.span);
    if (name.empty()) name = callee.text;
    fail(callee.span,
         fmt::format("calling {} is not allowed here: evaluating must not change the program state", name));
  }

  Val genCall(const ast::Expr& e, const Type* hint) {
    const ast::Expr& callee = *e.operand;
    if (callee.kind == ast::ExprKind::Name) {
      const std::string key = upperCase(callee.text);
      if (isVariable(key, callee.text)) {
        Val v = genName(callee);
        if (v.type && v.type->kind == TypeKind::FunctionBlock) rejectCall(callee);
        fail(callee.span, fmt::format("'{}' is a variable of type {}, not something to call", callee.text,
                                      v.type ? v.type->name : "?"));
      }
      if (findPou(key, true)) rejectCall(callee);
      if ((mode_ == Mode::FbBody || mode_ == Mode::Method) && findMethod(instanceType_, callee.text))
        rejectCall(callee);
      if (std::optional<Val> b = genBuiltin(e, key, hint)) return *b;
      if (const PouInfo* p = findPou(key))
        fail(callee.span,
             fmt::format("'{}' is a {}: declare an instance and call that", callee.text, pouKindName(p->kind)));
      if (isNativeFb(key))
        fail(callee.span, fmt::format("'{}' is a FUNCTION_BLOCK: declare an instance and call that", callee.text));
      fail(callee.span, fmt::format("unknown function '{}'", callee.text));
    }
    if (callee.kind == ast::ExprKind::Member) {
      Val base = gen(*callee.operand);
      if (!base.isConst && base.type && base.type->kind == TypeKind::FunctionBlock) {
        if (findMethod(base.type, callee.text)) rejectCall(callee);
        if (const Variable* f = base.type->field(callee.text);
            f && !f->hidden && f->type->kind == TypeKind::FunctionBlock)
          rejectCall(callee);
      } else if (!base.isConst && base.type && base.type->kind == TypeKind::Struct) {
        const Variable* f = base.type->field(callee.text);
        if (f && f->type->kind == TypeKind::FunctionBlock) rejectCall(callee);
      }
      fail(callee.span, fmt::format("'{}' cannot be called", callee.text));
    }
    Val v = gen(callee);
    if (!v.isConst && v.type && v.type->kind == TypeKind::FunctionBlock) rejectCall(callee);
    fail(callee.span, "only functions, methods and function block instances can be called");
  }

  // Arguments by position, or by their standard names.
  std::vector<const ast::Expr*> args(const ast::Expr& call, const std::string& name,
                                     std::initializer_list<const char*> names, bool variadic = false) {
    std::vector<const ast::Expr*> out(names.size(), nullptr);
    std::vector<std::string> nameList(names.begin(), names.end());
    size_t pos = 0;
    for (const ast::Argument& a : call.args) {
      if (a.isOutput) fail(a.span, fmt::format("{} has no outputs", name));
      if (a.name.empty()) {
        if (pos >= out.size()) {
          if (variadic) {
            out.push_back(a.value.get());
            ++pos;
            continue;
          }
          fail(a.span, fmt::format("too many arguments for {} ({} expected)", name, names.size()));
        }
        out[pos++] = a.value.get();
        continue;
      }
      size_t k = 0;
      for (; k < nameList.size(); ++k)
        if (equalsIgnoreCase(nameList[k], a.name)) break;
      if (k == nameList.size()) fail(a.span, fmt::format("{} has no parameter '{}'", name, a.name));
      out[k] = a.value.get();
    }
    for (size_t k = 0; k < out.size(); ++k)
      if (!out[k])
        fail(call.span, fmt::format("{} needs its argument {}", name, nameList.size() > k ? nameList[k] : "?"));
    return out;
  }

  Val genConversion(const ast::Expr& call, Val arg, const Type* from, const Type* to) {
    const SourceSpan& span = call.span;
    const Type* i64 = elem(TypeKind::LInt);
    const Type* f64 = elem(TypeKind::LReal);
    auto scaled = [&](const Val& v, const Type* vt, Arith op, int64_t factor) -> Val {
      const Node* src = operandAs(v, vt, span, true);
      const Node* k = constNode(
          vt, vt->isReal() ? ConstValue::ofReal(static_cast<double>(factor)) : ConstValue::ofInt(factor), span);
      return valueOf(scalarNode(arithFn(op, primOf(*vt)), primOf(*vt), src, k, span), vt);
    };
    from = from ? valueBase(from) : nullptr;
    const Type* toBase = valueBase(to);
    if (!from) {
      if (toBase->isTimeLike() || toBase->kind == TypeKind::String) {
        const Type* lt = literalType(arg.constant);
        arg = convert(arg, lt, span, true);
        from = lt;
      } else {
        return convert(arg, to, span, true);
      }
    }
    if (from->kind == TypeKind::Enum) from = from->base;
    if (toBase->kind == TypeKind::String) {
      SFrom op;
      const Type* operandType = from;
      switch (from->kind) {
        case TypeKind::Bool: op = SFrom::Bool; break;
        case TypeKind::Real: op = SFrom::F32; break;
        case TypeKind::LReal: op = SFrom::F64; break;
        case TypeKind::Time: op = SFrom::Time; break;
        case TypeKind::LTime: op = SFrom::LTime; break;
        case TypeKind::Date: op = SFrom::Date; break;
        case TypeKind::Tod: op = SFrom::Tod; break;
        case TypeKind::Dt: op = SFrom::Dt; break;
        case TypeKind::String: return convert(arg, to, span, true);
        default:
          if (!from->isInteger()) fail(span, fmt::format("cannot convert {} to STRING", from->name));
          op = from->isSigned() ? SFrom::I64 : SFrom::U64;
          operandType = from->isSigned() ? i64 : elem(TypeKind::ULInt);
          break;
      }
      const Node* src = operandAs(arg, operandType, span, true);
      Node* n = stringNode(sfromFn(op), toBase->capacity, span, true);
      n->a = src;
      return valueOf(n, to);
    }
    if (from->kind == TypeKind::String) {
      const Node* src = read(arg, span);
      if (toBase->kind == TypeKind::Bool)
        return valueOf(scalarNode(stoFn(STo::Bool), Prim::U8, src, nullptr, span), to);
      if (toBase->isReal()) {
        Val t = valueOf(scalarNode(stoFn(STo::F64), Prim::F64, src, nullptr, span), f64);
        return convert(t, to, span, true);
      }
      if (toBase->isInteger() || toBase->kind == TypeKind::Enum) {
        const bool sign = toBase->isSigned();
        Val t = valueOf(scalarNode(stoFn(sign ? STo::I64 : STo::U64), sign ? Prim::I64 : Prim::U64, src, nullptr, span),
                        sign ? i64 : elem(TypeKind::ULInt));
        return convert(t, to, span, true);
      }
      fail(span, fmt::format("cannot convert STRING to {}", to->name));
    }
    auto unitOf = [](const Type* t) -> int64_t {
      switch (t->kind) {
        case TypeKind::Time: return kNsPerMs;
        case TypeKind::LTime: return 1;
        case TypeKind::Date: return kNsPerS;
        case TypeKind::Dt: return kNsPerS;
        case TypeKind::Tod: return kNsPerMs;
        default: return 0;
      }
    };
    if (from->isTimeLike() && toBase->isTimeLike()) {
      if (from->kind == TypeKind::Dt && toBase->kind == TypeKind::Date) {
        Val d = scaled(arg, i64, Arith::Div, kNsPerDay);
        Val r = scaled(d, i64, Arith::Mul, kNsPerDay);
        r.type = to;
        return r;
      }
      if (from->kind == TypeKind::Dt && toBase->kind == TypeKind::Tod) {
        Val r = scaled(arg, i64, Arith::Mod, kNsPerDay);
        r.type = to;
        return r;
      }
      const bool compatible = (from->kind == TypeKind::Time || from->kind == TypeKind::LTime) ==
                                  (toBase->kind == TypeKind::Time || toBase->kind == TypeKind::LTime) &&
                              !(from->kind == TypeKind::Tod) == !(toBase->kind == TypeKind::Tod);
      if (!compatible && !(from->kind == TypeKind::Date && toBase->kind == TypeKind::Dt))
        fail(span, fmt::format("cannot convert {} to {}", from->name, to->name));
      Val r = arg;
      r.type = to;
      r.storage = false;
      return r;
    }
    if (from->isTimeLike()) {
      if (!toBase->isNumeric()) fail(span, fmt::format("cannot convert {} to {}", from->name, to->name));
      const int64_t unit = unitOf(from);
      if (toBase->isReal()) {
        Val x = convert(arg, i64, span, true);
        Val f = convert(x, f64, span, true);
        Val r = unit == 1 ? f : scaled(f, f64, Arith::Div, unit);
        return convert(r, to, span, true);
      }
      Val x = convert(arg, i64, span, true);
      Val r = unit == 1 ? x : scaled(x, i64, Arith::Div, unit);
      return convert(r, to, span, true);
    }
    if (toBase->isTimeLike()) {
      if (!from->isNumeric()) fail(span, fmt::format("cannot convert {} to {}", from->name, to->name));
      const int64_t unit = unitOf(toBase);
      Val r;
      if (from->isReal()) {
        Val f = convert(arg, f64, span, true);
        Val m = unit == 1 ? f : scaled(f, f64, Arith::Mul, unit);
        r = convert(m, i64, span, true);
      } else {
        Val x = convert(arg, i64, span, true);
        r = unit == 1 ? x : scaled(x, i64, Arith::Mul, unit);
      }
      r.type = to;
      r.storage = false;
      return r;
    }
    if (!(from->isScalar() && toBase->isScalar()) || from->kind == TypeKind::Ref || toBase->kind == TypeKind::Ref)
      fail(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    Val r = convert(arg, to, span, true);
    r.storage = false;
    return r;
  }

  std::optional<Val> genBuiltin(const ast::Expr& call, const std::string& name, const Type* hint) {
    const SourceSpan& span = call.span;
    const Type* boolType = elem(TypeKind::Bool);
    const Type* i64 = elem(TypeKind::LInt);
    const Type* intType = elem(TypeKind::Int);
    const Type* f64 = elem(TypeKind::LReal);
    const Type* f32 = elem(TypeKind::Real);

    auto literalsFitHint = [&](const std::vector<Val>& vals) -> const Type* {
      if (!hint) return nullptr;
      const Type* h = valueBase(hint);
      if (!h->isNumeric()) return nullptr;
      for (const Val& v : vals)
        if (!v.isConst || v.type || !fitsLiteral(v.constant, h)) return nullptr;
      return h;
    };
    auto realTypeFor = [&](const Val& v) -> const Type* {
      if (!v.type) return hint && valueBase(hint)->kind == TypeKind::Real ? f32 : f64;
      const Type* t = valueBase(v.type);
      if (t->isReal()) return t;
      return implicitlyConvertible(t, f32) ? f32 : f64;
    };
    auto stringArg = [&](const ast::Expr* e) -> std::pair<const Node*, const Type*> {
      Val v = gen(*e);
      const Type* t = v.type ? valueBase(v.type) : nullptr;
      if (!t || t->kind != TypeKind::String) fail(e->span, fmt::format("{} needs a STRING here", name));
      return {read(v, e->span), t};
    };
    auto intArg = [&](const ast::Expr* e) -> const Node* {
      Val v = gen(*e, i64);
      if (!v.isConst && (!v.type || !valueBase(v.type)->isInteger()))
        fail(e->span, fmt::format("{} needs an integer here", name));
      return operandAs(v, i64, e->span, true);
    };
    auto stringResult = [&](StrFn fn, uint64_t capacity) {
      impl_.stringFunctions = true;
      const uint32_t cap = static_cast<uint32_t>(std::clamp<uint64_t>(capacity, 1, 65535));
      return stringNode(strFuncFn(fn), cap, span, true);
    };

    // ---- conversions: X_TO_Y, TO_Y, TRUNC, X_TRUNC_Y
    if (name == "TRUNC" || name.find("_TRUNC_") != std::string::npos) {
      const Type* to = elem(TypeKind::DInt);
      if (name != "TRUNC") {
        to = program_.types->findElementary(name.substr(name.find("_TRUNC_") + 7));
        if (!to || !to->isInteger()) return std::nullopt;
      }
      auto a = args(call, name, {"IN"});
      Val v = gen(*a[0]);
      if (v.isConst && !v.type) v = convert(v, f64, span, false);
      if (!v.type || !valueBase(v.type)->isReal()) fail(a[0]->span, "TRUNC needs a REAL or LREAL");
      const Node* src = read(v, span);
      Val t = valueOf(scalarNode(truncFn(primOf(*valueBase(v.type))), Prim::I64, src, nullptr, span), i64);
      return convert(t, to, span, true);
    }
    {
      const Type* from = nullptr;
      const Type* to = nullptr;
      bool conversion = false;
      if (name.rfind("TO_", 0) == 0) {
        to = declaredType(name.substr(3));
        if (!to) to = program_.types->findElementary(name.substr(3));
        if (!to && name.substr(3) == "STRING") to = stringType(80);
        conversion = to != nullptr;
      } else {
        for (size_t at = name.find("_TO_"); at != std::string::npos; at = name.find("_TO_", at + 1)) {
          const std::string left = name.substr(0, at), right = name.substr(at + 4);
          const Type* l = left == "STRING" ? stringType(80) : program_.types->findElementary(left);
          const Type* r = right == "STRING" ? stringType(80) : program_.types->findElementary(right);
          if (l && r) {
            from = l;
            to = r;
            conversion = true;
            break;
          }
        }
      }
      if (conversion) {
        auto a = args(call, name, {"IN"});
        Val v = gen(*a[0], from);
        if (from && v.type && valueBase(v.type) != from) {
          const Type* vt = valueBase(v.type);
          const bool stringsMatch = vt->kind == TypeKind::String && from->kind == TypeKind::String;
          const bool enumOk = vt->kind == TypeKind::Enum && vt->base == from;
          if (!stringsMatch && !enumOk && !implicitlyConvertible(vt, from))
            fail(a[0]->span, fmt::format("{} expects a {}, not {}", name, from->name, v.type->name));
          if (!stringsMatch && !enumOk) v = convert(v, from, span, false);
        }
        if (from && !v.type && v.isConst) v = convert(v, from, span, false);
        Val r = genConversion(call, v, v.type, to);
        r.storage = false;
        return r;
      }
    }

    // ---- numeric
    static const std::map<std::string, Unop> kMath = {
        {"SQRT", Unop::Sqrt}, {"LN", Unop::Ln},   {"LOG", Unop::Log},   {"EXP", Unop::Exp},   {"SIN", Unop::Sin},
        {"COS", Unop::Cos},   {"TAN", Unop::Tan}, {"ASIN", Unop::Asin}, {"ACOS", Unop::Acos}, {"ATAN", Unop::Atan},
    };
    if (auto it = kMath.find(name); it != kMath.end()) {
      auto a = args(call, name, {"IN"});
      Val v = gen(*a[0], hint);
      if (v.isConst && v.constant.kind == ConstValue::Kind::String)
        fail(a[0]->span, fmt::format("{} needs a number", name));
      if (v.type && !valueBase(v.type)->isNumeric())
        fail(a[0]->span, fmt::format("{} needs a number, not {}", name, v.type->name));
      const Type* rt = realTypeFor(v);
      const Node* src = operandAs(v, rt, span, true);
      return valueOf(scalarNode(unaryFn(it->second, primOf(*rt)), primOf(*rt), src, nullptr, span), rt);
    }
    if (name == "EXPT") {
      auto a = args(call, name, {"IN1", "IN2"});
      Val x = gen(*a[0], hint);
      Val y = gen(*a[1]);
      const Type* rt = realTypeFor(x);
      const Node* ox = operandAs(x, rt, span, true);
      const Node* oy = operandAs(y, rt, span, true);
      return valueOf(ordered(scalarNode(arithFn(Arith::Expt, primOf(*rt)), primOf(*rt), ox, oy, span), {&x, &y}, span),
                     rt);
    }
    if (name == "ABS") {
      auto a = args(call, name, {"IN"});
      Val v = gen(*a[0], hint);
      if (v.isConst && !v.type)
        v = convert(v, hint && valueBase(hint)->isNumeric() ? valueBase(hint) : literalType(v.constant), span, false);
      const Type* t = v.type ? valueBase(v.type) : nullptr;
      if (!t || !(t->isNumeric() || t->kind == TypeKind::Time || t->kind == TypeKind::LTime))
        fail(a[0]->span, "ABS needs a number");
      return valueOf(scalarNode(unaryFn(Unop::Abs, primOf(*t)), primOf(*t), read(v, span), nullptr, span), t);
    }
    if (name == "MIN" || name == "MAX" || name == "LIMIT") {
      const bool limit = name == "LIMIT";
      auto a = limit ? args(call, name, {"MN", "IN", "MX"}) : args(call, name, {"IN1", "IN2"}, true);
      std::vector<Val> vals;
      for (const ast::Expr* x : a) vals.push_back(gen(*x, hint));
      Val acc = vals[0];
      const Type* t = nullptr;
      for (size_t i = 1; i < vals.size(); ++i) {
        t = commonType(acc, vals[i], span);
        acc = Val{};
        acc.type = t;
      }
      if (const Type* h = literalsFitHint(vals)) t = h;
      if (!t) t = literalType(vals[0].constant);
      t = valueBase(t);
      if (t->kind == TypeKind::Enum) t = t->base;
      if (!t->isScalar() || t->kind == TypeKind::Ref) fail(span, fmt::format("{} needs numbers or times", name));
      const Prim p = primOf(*t);
      if (limit) {
        const Node* mn = operandAs(vals[0], t, span);
        const Node* in = operandAs(vals[1], t, span);
        const Node* mx = operandAs(vals[2], t, span);
        const Node* tmp = scalarNode(arithFn(Arith::Min, p), p, in, mx, span);
        return valueOf(ordered(scalarNode(arithFn(Arith::Max, p), p, mn, tmp, span), vals, span), t);
      }
      const Node* cur = operandAs(vals[0], t, span);
      for (size_t i = 1; i < vals.size(); ++i) {
        const Node* next = operandAs(vals[i], t, span);
        cur = scalarNode(arithFn(name == "MIN" ? Arith::Min : Arith::Max, p), p, cur, next, span);
      }
      return valueOf(ordered(cur, vals, span), t);
    }
    if (name == "SEL") {
      auto a = args(call, name, {"G", "IN0", "IN1"});
      Val g = gen(*a[0], boolType);
      Val x = gen(*a[1], hint);
      Val y = gen(*a[2], hint);
      const Node* og = operandAs(g, boolType, span);
      const Type* t = (x.type && y.type) ? commonType(x, y, span)
                                         : (x.type   ? x.type
                                            : y.type ? y.type
                                                     : commonType(x, y, span));
      if (const Type* h = literalsFitHint({x, y})) t = h;
      if (valueBase(t)->kind == TypeKind::String)
        t = stringType(std::max(x.type ? valueBase(x.type)->capacity : 1u, y.type ? valueBase(y.type)->capacity : 1u));
      return select(g, og, {x, y}, t, span, false);
    }
    if (name == "MUX") {
      auto a = args(call, name, {"K", "IN0", "IN1"}, true);
      Val k = gen(*a[0], elem(TypeKind::DInt));
      std::vector<Val> vals;
      for (size_t i = 1; i < a.size(); ++i) vals.push_back(gen(*a[i], hint));
      const Type* t = vals[0].type;
      for (Val& v : vals) {
        if (!v.type) continue;
        if (t) {
          Val tv;
          tv.type = t;
          t = commonType(tv, v, span);
        } else {
          t = v.type;
        }
      }
      if (const Type* h = literalsFitHint(vals)) t = h;
      if (!t) t = literalType(vals[0].constant);
      if (valueBase(t)->kind == TypeKind::String) t = stringType(80);
      const Type* dint = elem(TypeKind::DInt);
      const Node* ok = operandAs(k, dint, span, true);
      Node* chk = newNode(NodeKind::Scalar, span);
      chk->scalar = chkFn(Prim::I32);
      chk->prim = Prim::I32;
      chk->a = ok;
      chk->lo = 0;
      chk->hi = static_cast<int64_t>(vals.size()) - 1;
      return select(k, chk, vals, t, span, true);
    }
    if (name == "SHL" || name == "SHR" || name == "ROL" || name == "ROR") {
      auto a = args(call, name, {"IN", "N"});
      Val v = gen(*a[0], hint);
      if (v.isConst && !v.type)
        v = convert(v, hint && valueBase(hint)->isInteger() ? valueBase(hint) : elem(TypeKind::DWord), span, false);
      const Type* t = v.type ? valueBase(v.type) : nullptr;
      if (!t || !t->isInteger()) fail(a[0]->span, fmt::format("{} needs a bit string or integer", name));
      const Node* src = read(v, span);
      const Node* n = intArg(a[1]);
      const BitOp op = name == "SHL"   ? BitOp::Shl
                       : name == "SHR" ? BitOp::Shr
                       : name == "ROL" ? BitOp::Rol
                                       : BitOp::Ror;
      return valueOf(scalarNode(bitFn(op, t->size), primOf(*t), src, n, span), t);
    }
    if (name == "MOVE") {
      auto a = args(call, name, {"IN"});
      Val v = gen(*a[0], hint);
      v.storage = false;
      return v;
    }
    if (name == "REF" || name == "ADR") {
      auto a = args(call, name, {"IN"});
      Val v = gen(*a[0]);
      if (v.isConst) fail(a[0]->span, "REF needs a variable");
      if (!v.isPlace) fail(a[0]->span, "REF needs a variable: this value has no address");
      const Node& p = *v.node;
      if (p.place == placeBitFn()) fail(a[0]->span, "a single bit has no address");
      const Type* rt = refTo(v.type);
      if (p.place == placeDerefFn()) {
        // The address through a reference is the reference plus the offset, unchecked (ADD_U32).
        const Node* k = constNode(elem(TypeKind::UDInt), ConstValue::ofInt(p.k), span);
        return valueOf(scalarNode(arithFn(Arith::Add, Prim::U32), Prim::U32, p.a, k, span), rt);
      }
      return valueOf(scalarNode(addrFn(), Prim::U32, v.node, nullptr, span), rt);
    }

    // ---- strings
    if (name == "LEN") {
      auto a = args(call, name, {"IN"});
      auto [s, st] = stringArg(a[0]);
      return valueOf(scalarNode(strLenFn(), Prim::I16, s, nullptr, span), intType);
    }
    if (name == "LEFT" || name == "RIGHT") {
      auto a = args(call, name, {"IN", "L"});
      auto [s, st] = stringArg(a[0]);
      const Node* n = intArg(a[1]);
      Node* r = stringResult(name == "LEFT" ? StrFn::Left : StrFn::Right, st->capacity);
      r->a = s;
      r->b = n;
      return valueOf(r, stringType(r->cap));
    }
    if (name == "MID") {
      auto a = args(call, name, {"IN", "L", "P"});
      auto [s, st] = stringArg(a[0]);
      const Node* l = intArg(a[1]);
      const Node* p = intArg(a[2]);
      Node* r = stringResult(StrFn::Mid, st->capacity);
      r->a = s;
      r->b = l;
      r->c = p;
      return valueOf(r, stringType(r->cap));
    }
    if (name == "CONCAT") {
      auto a = args(call, name, {"IN1", "IN2"}, true);
      std::vector<std::pair<const Node*, const Type*>> parts;
      uint64_t cap = 0;
      for (const ast::Expr* x : a) {
        parts.push_back(stringArg(x));
        cap += parts.back().second->capacity;
      }
      const uint32_t inner = static_cast<uint32_t>(std::min<uint64_t>(cap, 65535));
      const Node* acc = parts[0].first;
      for (size_t i = 1; i < parts.size(); ++i) {
        Node* r = stringResult(StrFn::Concat, i + 1 == parts.size() ? cap : inner);
        r->a = acc;
        r->b = parts[i].first;
        acc = r;
      }
      if (parts.size() == 1) {
        Node* r = stringNode(strTruncFn(), static_cast<uint32_t>(std::clamp<uint64_t>(cap, 1, 65535)), span, false);
        r->a = acc;
        acc = r;
      }
      return valueOf(acc, stringType(acc->cap));
    }
    if (name == "INSERT") {
      auto a = args(call, name, {"IN1", "IN2", "P"});
      auto [x, xt] = stringArg(a[0]);
      auto [y, yt] = stringArg(a[1]);
      const Node* p = intArg(a[2]);
      Node* r = stringResult(StrFn::Insert, uint64_t{xt->capacity} + yt->capacity);
      r->a = x;
      r->b = y;
      r->c = p;
      return valueOf(r, stringType(r->cap));
    }
    if (name == "DELETE") {
      auto a = args(call, name, {"IN", "L", "P"});
      auto [s, st] = stringArg(a[0]);
      const Node* l = intArg(a[1]);
      const Node* p = intArg(a[2]);
      Node* r = stringResult(StrFn::Delete, st->capacity);
      r->a = s;
      r->b = l;
      r->c = p;
      return valueOf(r, stringType(r->cap));
    }
    if (name == "REPLACE") {
      auto a = args(call, name, {"IN1", "IN2", "L", "P"});
      auto [x, xt] = stringArg(a[0]);
      auto [y, yt] = stringArg(a[1]);
      const Node* l = intArg(a[2]);
      const Node* p = intArg(a[3]);
      Node* r = stringResult(StrFn::Replace, uint64_t{xt->capacity} + yt->capacity);
      r->a = x;
      r->b = y;
      r->list = {l, p};
      return valueOf(r, stringType(r->cap));
    }
    if (name == "FIND") {
      auto a = args(call, name, {"IN1", "IN2"});
      auto [x, xt] = stringArg(a[0]);
      auto [y, yt] = stringArg(a[1]);
      return valueOf(scalarNode(strFindFn(), Prim::I16, x, y, span), intType);
    }

    // ---- time and date functions
    struct TimeFn {
      const char* name;
      TypeKind a, b, result;
      Arith op;
    };
    static const TimeFn kTimeFns[] = {
        {"ADD_TIME", TypeKind::Time, TypeKind::Time, TypeKind::Time, Arith::Add},
        {"SUB_TIME", TypeKind::Time, TypeKind::Time, TypeKind::Time, Arith::Sub},
        {"ADD_LTIME", TypeKind::LTime, TypeKind::LTime, TypeKind::LTime, Arith::Add},
        {"SUB_LTIME", TypeKind::LTime, TypeKind::LTime, TypeKind::LTime, Arith::Sub},
        {"ADD_TOD_TIME", TypeKind::Tod, TypeKind::Time, TypeKind::Tod, Arith::Add},
        {"ADD_DT_TIME", TypeKind::Dt, TypeKind::Time, TypeKind::Dt, Arith::Add},
        {"SUB_TOD_TIME", TypeKind::Tod, TypeKind::Time, TypeKind::Tod, Arith::Sub},
        {"SUB_DT_TIME", TypeKind::Dt, TypeKind::Time, TypeKind::Dt, Arith::Sub},
        {"SUB_DATE_DATE", TypeKind::Date, TypeKind::Date, TypeKind::Time, Arith::Sub},
        {"SUB_TOD_TOD", TypeKind::Tod, TypeKind::Tod, TypeKind::Time, Arith::Sub},
        {"SUB_DT_DT", TypeKind::Dt, TypeKind::Dt, TypeKind::Time, Arith::Sub},
        {"CONCAT_DATE_TOD", TypeKind::Date, TypeKind::Tod, TypeKind::Dt, Arith::Add},
    };
    for (const TimeFn& fn : kTimeFns) {
      if (name != fn.name) continue;
      auto a = args(call, name, {"IN1", "IN2"});
      const Type* rt = elem(fn.result);
      Val x = gen(*a[0], elem(fn.a));
      Val y = gen(*a[1], elem(fn.b));
      const Node* ox = operandAs(x, elem(fn.a), span);
      const Node* oy = operandAs(y, elem(fn.b), span);
      return valueOf(ordered(scalarNode(arithFn(fn.op, Prim::I64), Prim::I64, ox, oy, span), {&x, &y}, span), rt);
    }
    if (name == "MUL_TIME" || name == "DIV_TIME" || name == "MUL_LTIME" || name == "DIV_LTIME") {
      auto a = args(call, name, {"IN1", "IN2"});
      const Type* tt = elem(name.find("LTIME") != std::string::npos ? TypeKind::LTime : TypeKind::Time);
      Val x = gen(*a[0], tt);
      Val y = gen(*a[1]);
      const Node* ox = operandAs(x, tt, span);
      const Arith op = name[0] == 'M' ? Arith::Mul : Arith::Div;
      if ((y.isConst && y.constant.kind == ConstValue::Kind::Real) || (y.type && valueBase(y.type)->isReal())) {
        const Node* fx = operandAs(valueOf(ox, tt), f64, span, true);
        const Node* fy = operandAs(y, f64, span, true);
        const Node* t = scalarNode(arithFn(op, Prim::F64), Prim::F64, fx, fy, span);
        return valueOf(ordered(scalarNode(cvtFn(Prim::F64, Prim::I64), Prim::I64, t, nullptr, span), {&x, &y}, span),
                       tt);
      }
      const Node* oy = operandAs(y, i64, span, !y.isConst);
      return valueOf(ordered(scalarNode(arithFn(op, Prim::I64), Prim::I64, ox, oy, span), {&x, &y}, span), tt);
    }
    return std::nullopt;
  }

  // SEL and MUX: `selector` (computed from `choice`) picks one of `vals`, stored into a temporary
  // of type `t`. The inputs are computed before the choice, as the compiler's code does (a fault
  // in any input faults, see collectEager); only reading the chosen input's storage (and checking
  // a subrange) happens after it.
  Val select(const Val& choice, const Node* selector, const std::vector<Val>& vals, const Type* t,
             const SourceSpan& span, bool mux) {
    std::vector<const Node*> branches;
    std::vector<const Node*> eager;
    auto computed = [&](const Val& v) {
      if (v.isConst || !v.node) return;
      if (v.isPlace)
        collectEager(v.node, eager);
      else
        eager.push_back(v.node);
    };
    computed(choice);
    for (const Val& v : vals) {
      computed(v);
      branches.push_back(storeAs(v, t, span));
    }
    const Type* base = valueBase(t);
    Node* n;
    if (base->kind == TypeKind::String) {
      n = newNode(NodeKind::String, span);
      n->string = mux ? muxStringFn() : selStringFn();
      n->cap = base->capacity;
    } else if (base->isScalar()) {
      n = newNode(NodeKind::Scalar, span);
      n->scalar = mux ? muxScalarFn() : selScalarFn();
      n->prim = primOf(*base);
    } else {
      n = newNode(NodeKind::Place, span);
      n->place = mux ? muxPlaceFn() : selPlaceFn();
      n->size = t->size;
    }
    n->a = selector;
    if (mux) {
      n->list = branches;
    } else {
      n->b = branches[0];
      n->c = branches[1];
    }
    if (eager.empty()) return valueOf(n, t);
    // Computed inputs first (their faults come first), then the choice.
    Node* seq = newNode(n->kind, span);
    *seq = *n;
    seq->a = sequence(eager, selector, span);
    return valueOf(seq, t);
  }

  // A node that evaluates `first` (results unused) and then yields `last`.
  const Node* sequence(const std::vector<const Node*>& first, const Node* last, const SourceSpan& span) {
    Node* n = newNode(last->kind, span);
    n->scalar = &sequenceScalar;
    n->string = &sequenceString;
    n->place = &sequencePlace;
    n->prim = last->prim;
    n->cap = last->cap;
    n->size = last->size;
    n->list = first;
    n->a = last;
    return n;
  }

  // The reads of an operation's operands that can fault where the value is read (a dereference:
  // NULL; an element of a one-dimensional array: its bounds), rather than where it is computed.
  bool lazyFaulting(const Node* place) const {
    return place->place == placeDerefFn() || (place->place == placeIndexFn() && place->lazy);
  }

  // The compiler's code computes every operand (collectEager) before it reads the first: when an
  // earlier operand's read can fault and a later operand's computation too, compute them all
  // first, so that the fault reported is the one the VM reports.
  const Node* ordered(const Node* node, std::initializer_list<const Val*> operands, const SourceSpan& span) {
    std::vector<const Node*> eager;
    bool lazyBefore = false, needed = false;
    for (const Val* v : operands) {
      if (v->isConst || !v->node) continue;
      const size_t before = eager.size();
      if (v->isPlace)
        collectEager(v->node, eager);
      else
        eager.push_back(v->node);
      if (lazyBefore && eager.size() > before) needed = true;
      if (v->isPlace && lazyFaulting(v->node)) lazyBefore = true;
    }
    return needed ? sequence(eager, node, span) : node;
  }
  const Node* ordered(const Node* node, const std::vector<Val>& operands, const SourceSpan& span) {
    std::vector<const Node*> eager;
    bool lazyBefore = false, needed = false;
    for (const Val& v : operands) {
      if (v.isConst || !v.node) continue;
      const size_t before = eager.size();
      if (v.isPlace)
        collectEager(v.node, eager);
      else
        eager.push_back(v.node);
      if (lazyBefore && eager.size() > before) needed = true;
      if (v.isPlace && lazyFaulting(v.node)) lazyBefore = true;
    }
    return needed ? sequence(eager, node, span) : node;
  }

  static bool runFirst(const Node& n, Ctx& c) {
    for (const Node* f : n.list) {
      switch (f->kind) {
        case NodeKind::Scalar: {
          uint64_t ignored;
          if (!evalScalar(*f, c, ignored)) return false;
          break;
        }
        case NodeKind::String: {
          std::string_view ignored;
          if (!evalString(*f, c, ignored)) return false;
          break;
        }
        case NodeKind::Place: {
          Loc ignored;
          if (!evalPlace(*f, c, ignored)) return false;
          break;
        }
      }
    }
    return true;
  }
  static bool sequenceScalar(const Node& n, Ctx& c, uint64_t& out) {
    return runFirst(n, c) && evalScalar(*n.a, c, out);
  }
  static bool sequenceString(const Node& n, Ctx& c, std::string_view& out) {
    return runFirst(n, c) && evalString(*n.a, c, out);
  }
  static bool sequencePlace(const Node& n, Ctx& c, Loc& out) { return runFirst(n, c) && evalPlace(*n.a, c, out); }

  // ---------------------------------------------------------------- dispatch

 public:
  Val gen(const ast::Expr& e, const Type* hint = nullptr) {
    switch (e.kind) {
      case ast::ExprKind::IntLiteral:
      case ast::ExprKind::RealLiteral:
      case ast::ExprKind::BoolLiteral:
      case ast::ExprKind::StringLiteral:
      case ast::ExprKind::TimeLiteral:
      case ast::ExprKind::DateLiteral:
      case ast::ExprKind::TodLiteral:
      case ast::ExprKind::DtLiteral: return genLiteral(e);
      case ast::ExprKind::Name: {
        if (e.text.find('#') != std::string::npos) return *constantOf(e, hint);
        if (hint && valueBase(hint)->kind == TypeKind::Enum && !isVariable(upperCase(e.text), e.text))
          if (std::optional<Val> c = constantOf(e, hint)) return *c;
        return genName(e);
      }
      case ast::ExprKind::Member: return genMember(e);
      case ast::ExprKind::BitAccess: return genBitAccess(e);
      case ast::ExprKind::Index: return genIndex(e);
      case ast::ExprKind::Deref: return genDeref(e);
      case ast::ExprKind::Unary: {
        if (std::optional<Val> c = constantOf(e, hint)) return *c;
        return genUnary(e, hint);
      }
      case ast::ExprKind::Binary: return genBinary(e, hint);
      case ast::ExprKind::Call: return genCall(e, hint);
    }
    fail(e.span, "unsupported expression");
  }

 private:
  const Program& program_;
  Expression::Impl& impl_;
  std::string_view text_;
  std::vector<size_t> lineStarts_;

  Mode mode_ = Mode::Global;
  const PouInfo* pouInfo_ = nullptr;
  const Type* instanceType_ = nullptr;
  uint32_t programBase_ = 0;
  std::map<std::string, const Variable*> frameVars_;

  std::map<uint32_t, const Type*> strings_;
  std::map<const Type*, const Type*> refs_;
  bool typesCollected_ = false;
  std::map<std::string, const Type*> namedTypes_;
  std::vector<const Type*> enums_;
};

}  // namespace

std::unique_ptr<Expression::Impl> compileExpression(const Program& program, uint32_t pou, std::string_view text,
                                                    std::string& error) {
  auto impl = std::make_unique<Expression::Impl>();
  impl->program = &program;
  impl->pou = pou;
  impl->text = std::string(text);
  Builder builder(program, *impl, impl->text);
  auto columnText = [&](const SourceSpan& span, const std::string& message) {
    const uint32_t column = builder.columnOf(span);
    return column ? fmt::format("column {}: {}", column, message) : message;
  };

  SourceSet sources;
  sources.add("<expression>", impl->text);
  Diagnostics diags;
  ast::ExprPtr e = parseExpression(sources, 0, diags);
  if (!e || diags.hasErrors()) {
    for (const Diagnostic& d : diags.items()) {
      if (d.severity != Severity::Error) continue;
      error = columnText(d.span, d.message);
      return nullptr;
    }
    error = "not an expression";
    return nullptr;
  }
  try {
    builder.setScope(pou);
    Val v = builder.compileRoot(*e);
    impl->root = v.node;
    impl->type = v.type;
    impl->storage = v.isPlace && v.storage;
    impl->readOnly = impl->storage && v.readOnly;
  } catch (const CompileError& err) {
    error = columnText(err.span, err.message);
    return nullptr;
  }
  return impl;
}

}  // namespace scanback::debug::detail
