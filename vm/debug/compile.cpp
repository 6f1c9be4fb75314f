// Compiling an expression for the evaluator: the semantic pass (vm/sema) types it in the paused
// frame's scope over the program's symbol table, exactly as the compiler types the program's own
// code; this file lowers the typed IR to evaluation nodes (nodes.h) where the compiler emits
// opcodes. Nodes evaluate in the order the compiler's code computes, so that when an expression
// holds several faults the one reported is the VM's.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "vm/debug/expression_impl.h"
#include "vm/exec/strings.h"
#include "vm/sema/analyzer.h"
#include "vm/sema/program_scope.h"
#include "vm/syntax/parser.h"

namespace scanback::debug::detail {

namespace {

using sema::valueBase;

// The result of lowering an expression: a constant (untyped for ANY_INT/ANY_REAL literals: type
// == nullptr), a value computed by `node`, or storage designated by the place `node`.
struct Val {
  const Type* type = nullptr;
  bool isConst = false;
  ConstValue constant;
  const Node* node = nullptr;
  bool isPlace = false;  // node is a place (NodeKind::Place)
};

struct LoweringError {
  SourceSpan span;
  std::string message;
};

class Lowering {
 public:
  Lowering(Expression::Impl& impl, std::string_view text, sema::TypeSource& types)
      : impl_(impl), text_(text), types_(types) {
    lineStarts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') lineStarts_.push_back(i + 1);
  }

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

  void setScope(const sema::ProgramScope& scope) {
    pou_ = scope.pou();
    if (pou_ && pou_->kind == PouKind::Program) programBase_ = pou_->instanceOffset;
  }

  // The value of the whole expression.
  Val root(const sema::Expr& e) {
    Val v = lower(e);
    if (v.isConst) {
      const Type* t = v.type ? v.type : elem(sema::literalKind(v.constant));
      Val r;
      r.type = t;
      r.node = constNode(t, v.constant, e.span);
      return r;
    }
    if (v.type && v.type->kind == TypeKind::Void) fail(e.span, "expression has no value");
    return v;
  }

 private:
  [[noreturn]] void fail(const SourceSpan& span, std::string message) { throw LoweringError{span, std::move(message)}; }

  const Type* elem(TypeKind k) const { return types_.elementary(k); }

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

  Node* stringNode(StringFn fn, uint32_t cap, const SourceSpan& span, bool buffer, bool wide = false) {
    Node* n = newNode(NodeKind::String, span);
    n->string = fn;
    n->cap = cap;
    n->wide = wide;
    if (buffer) {
      impl_.scratchSize = (impl_.scratchSize + 1) & ~1u;
      n->buf = impl_.scratchSize;
      impl_.scratchSize += stringBytes(cap, wide);
    }
    return n;
  }

  Node* placeNode(PlaceFn fn, const SourceSpan& span) {
    Node* n = newNode(NodeKind::Place, span);
    n->place = fn;
    return n;
  }

  // The bits of a typed constant (the compiler's constant pool entry).
  const Node* constNode(const Type* type, const ConstValue& c, const SourceSpan& span) {
    const Type* base = valueBase(type);
    if (base->kind == TypeKind::String) {
      const size_t units = std::min<size_t>(c.stringUnits(), 65535);
      Node* n = stringNode(strConstFn(), static_cast<uint32_t>(units), span, false, c.wide);
      n->text = c.s.substr(0, c.wide ? 2 * units : units);
      return n;
    }
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

  // A node computing the value of v (a place of an aggregate stays a place).
  const Node* read(const Val& v, const SourceSpan& span) {
    if (v.isConst) return constNode(v.type ? v.type : elem(sema::literalKind(v.constant)), v.constant, span);
    if (!v.isPlace) return v.node;
    const Type* t = valueBase(v.type);
    if (t->kind == TypeKind::String) {
      Node* n = stringNode(strLoadFn(), t->capacity, span, false, t->wide);
      n->a = v.node;
      return n;
    }
    if (!t->isScalar()) return v.node;
    const Prim p = primOf(*t);
    const Node& pl = *v.node;
    Node* n = newNode(NodeKind::Scalar, span);
    n->prim = p;
    if (isDirect(&pl)) {
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
    return valueOf(n, type);
  }

  // The place `offset` bytes further into the place `base` (its field or element), of `type`.
  const Node* offsetPlace(const Node* base, uint64_t offset, const Type* type, const SourceSpan& span) {
    if (offset == 0 && base->place != placeDerefFn()) return base;
    const PlaceFn f = base->place;
    if (isDirect(base) || f == placeDerefFn()) {
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

  static bool isDirect(const Node* place) {
    return place->place == placeFn(PlaceBase::Abs) || place->place == placeFn(PlaceBase::This) ||
           place->place == placeFn(PlaceBase::Frame);
  }

  // A REF read from `ref`, dereferenced: the target designates `type`.
  const Node* derefPlace(const Node* ref, uint64_t offset, const Type* type, const SourceSpan& span) {
    Node* n = placeNode(placeDerefFn(), span);
    n->a = ref;
    n->k = offset;
    n->size = type ? type->size : 0;
    return n;
  }

  // ---------------------------------------------------------------- places

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
      else if (inInstance && pou_ && pou_->kind == PouKind::Program)
        slot = basePlace(PlaceBase::Abs, uint64_t{programBase_} + v.offset, v.type, span);
      else
        slot = basePlace(PlaceBase::This, v.offset, v.type, span);
      if (v.byReference) {
        Val ref = valueOf(slot.node, elem(TypeKind::UDInt));
        r = valueOf(derefPlace(read(ref, span), 0, v.type, span), v.type);
        if (isOpenArray(v.type)) openArraySlots_[r.node] = slot.node;
      } else {
        r = slot;
      }
    }
    r.type = v.type;
    return r;
  }

  // A field (or a constant-index element: a pseudo field) of the place `base`.
  Val subPlace(const Val& base, const Variable& field, const SourceSpan& span) {
    if (field.absolute) return variablePlace(field, false, false, span);
    if (!base.isPlace) fail(span, "internal error: a member of a value that is not in memory");
    Val r;
    if (field.byReference) {
      Val slot = valueOf(offsetPlace(base.node, field.offset, elem(TypeKind::UDInt), span), elem(TypeKind::UDInt));
      r = valueOf(derefPlace(read(slot, span), 0, field.type, span), field.type);
      if (isOpenArray(field.type)) openArraySlots_[r.node] = slot.node;
    } else {
      r = valueOf(offsetPlace(base.node, field.offset, field.type, span), field.type);
    }
    r.type = field.type;
    return r;
  }

  Val element(const sema::Expr& e) {
    const Val base = lower(*e.a[0]);
    const Type* t = e.a[0]->type;
    if (!base.isPlace) fail(e.span, "internal error: an element of a value that is not in memory");
    std::vector<Val> idx;
    for (size_t i = 1; i < e.a.size(); ++i) idx.push_back(lowerBase(*e.a[i]));
    if (isOpenArray(t)) {  // its bounds arrive with each call, in the parameter's slot
      Node* n = placeNode(placeOpenIndexFn(), e.span);
      n->a = openArraySlot(base, e.span);
      n->size = t->base->size;
      n->text = sourceText(e.a[0]->span);
      for (size_t i = 0; i < idx.size(); ++i) n->list.push_back(readConverted(*e.a[i + 1], idx[i]));
      return valueOf(n, t->base);
    }
    Node* n = placeNode(placeIndexFn(), e.span);
    n->a = base.node;
    n->lazy = idx.size() == 1 && isDirect(base.node);
    n->dims = t->dims;
    n->strides = t->strides();
    n->size = t->base->size;
    n->text = sourceText(e.a[0]->span);
    for (size_t i = 0; i < idx.size(); ++i) n->list.push_back(readConverted(*e.a[i + 1], idx[i]));
    return valueOf(n, t->base);
  }

  Val bit(const sema::Expr& e) {
    const Val base = lower(*e.a[0]);
    const Type* t = valueBase(base.type);
    if (!base.isPlace) {
      Node* n = newNode(NodeKind::Scalar, e.span);
      n->scalar = getBitFn(t->size);
      n->prim = Prim::U8;
      n->a = base.node;
      n->k = e.bit;
      return valueOf(n, e.type);
    }
    Node* n = placeNode(placeBitFn(), e.span);
    n->a = base.node;
    n->k = e.bit;
    return valueOf(n, e.type);
  }

  Val addressOf(const sema::Expr& e) {
    const Val v = lower(*e.a[0]);
    if (!v.isPlace) fail(e.a[0]->span, "REF needs a variable: this value has no address");
    const Node& p = *v.node;
    if (p.place == placeDerefFn()) {
      // The address through a reference is the reference plus the offset, unchecked (ADD_U32).
      const Node* k = constNode(elem(TypeKind::UDInt), ConstValue::ofInt(p.k), e.span);
      return valueOf(scalarNode(arithFn(Arith::Add, Prim::U32), Prim::U32, p.a, k, e.span), e.type);
    }
    return valueOf(scalarNode(addrFn(), Prim::U32, v.node, nullptr, e.span), e.type);
  }

  // ---------------------------------------------------------------- conversions

  Val applyConversion(Val v, const sema::Expr& c) {
    const SourceSpan& span = c.span;
    if (c.kind == sema::ExprKind::RangeCheck) {
      const Prim p = primOf(*c.type->base);
      Node* n = newNode(NodeKind::Scalar, span);
      n->scalar = chkFn(p);
      n->prim = p;
      n->a = read(v, span);
      n->lo = c.type->lower;
      n->hi = c.type->upper;
      return valueOf(n, c.type);
    }
    if (c.kind == sema::ExprKind::Operation)  // Idx64
      return valueOf(scalarNode(idx64Fn(), Prim::I32, read(v, span), nullptr, span), c.type);
    if (v.isConst) v = valueOf(read(v, span), v.type);  // a typed constant converted by code
    switch (c.conversion) {
      case sema::Conversion::Relabel: v.type = c.type; return v;
      case sema::Conversion::NotZero:
        return valueOf(scalarNode(unaryFn(Unop::NeZero, c.prim), Prim::U8, read(v, span), nullptr, span), c.type);
      case sema::Conversion::Convert:
        return valueOf(scalarNode(cvtFn(c.prim, c.to), c.to, read(v, span), nullptr, span), c.type);
    }
    return v;
  }

  Val converted(const sema::Expr& operand, Val base) {
    for (const sema::Expr* c : sema::conversionsOf(&operand)) base = applyConversion(std::move(base), *c);
    return base;
  }
  Val lowerBase(const sema::Expr& operand) { return lower(*sema::unconverted(&operand)); }
  const Node* readConverted(const sema::Expr& operand, const Val& base) {
    return read(converted(operand, base), operand.span);
  }

  // A value as it is stored into a temporary of the operand's type (SEL and MUX inputs): converted,
  // checked, and a string truncated to its capacity.
  const Node* stored(const sema::Expr& operand, const Val& base) {
    Val c = converted(operand, base);
    const Type* type = operand.type;
    if (type->kind == TypeKind::String) {
      Node* n = stringNode(strTruncFn(), type->capacity, operand.span, false, valueBase(type)->wide);
      n->a = read(c, operand.span);
      return n;
    }
    return read(c, operand.span);
  }

  // ---------------------------------------------------------------- operations

  const Node* stringResult(StrFn fn, uint64_t capacity, const SourceSpan& span, bool wide) {
    impl_.stringFunctions = true;
    return stringNode(strFuncFn(fn), static_cast<uint32_t>(std::clamp<uint64_t>(capacity, 1, 65535)), span, true, wide);
  }

  Val operation(const sema::Expr& e) {
    const SourceSpan& span = e.span;
    if (e.shortCircuit) {  // AND_THEN, OR_ELSE: the right side's nodes run only when it is needed
      const Node* x = readConverted(*e.a[0], lowerBase(*e.a[0]));
      const Node* y = readConverted(*e.a[1], lowerBase(*e.a[1]));
      return valueOf(scalarNode(e.op == sema::Op::And ? boolAndFn() : boolOrFn(), Prim::U8, x, y, span), e.type);
    }
    if (e.op == sema::Op::LowerBound || e.op == sema::Op::UpperBound) {
      // From the slot: the dimension's lower bound (DINT) and its count (UDINT).
      const Node* slot = openArraySlot(lower(*e.a[0]), span);
      const Type* dint = elem(TypeKind::DInt);
      const uint64_t at = 4 + 12 * uint64_t{e.bit};
      const Node* lowerBound = read(valueOf(offsetPlace(slot, at, dint, span), dint), span);
      if (e.op == sema::Op::LowerBound) return valueOf(lowerBound, dint);
      const Node* count = read(valueOf(offsetPlace(slot, at + 4, dint, span), dint), span);
      const Node* end = scalarNode(arithFn(Arith::Add, Prim::I32), Prim::I32, lowerBound, count, span);
      const Node* minusOne = constNode(dint, ConstValue::ofInt(-1), span);
      return valueOf(scalarNode(arithFn(Arith::Add, Prim::I32), Prim::I32, end, minusOne, span), dint);
    }
    if (e.op == sema::Op::IsValidRef || e.op == sema::Op::QueryInterface || e.op == sema::Op::QueryPointer)
      fail(span, "__ISVALIDREF, __QUERYINTERFACE and __QUERYPOINTER cannot be evaluated here yet");
    std::vector<Val> bases;
    std::vector<const Node*> x;
    for (const sema::Expr* a : e.a) {
      bases.push_back(lowerBase(*a));
      if (e.readEach) x.push_back(readConverted(*a, bases.back()));
    }
    if (!e.readEach)
      for (size_t i = 0; i < e.a.size(); ++i) x.push_back(readConverted(*e.a[i], bases[i]));
    const Prim p = e.prim;
    auto binary = [&](ScalarFn fn, Prim result, bool swap) {
      const Node* n = scalarNode(fn, result, x[swap ? 1 : 0], x[swap ? 0 : 1], span);
      return valueOf(ordered(n, bases, span), e.type);
    };
    auto unary = [&](ScalarFn fn, Prim result) { return valueOf(scalarNode(fn, result, x[0], nullptr, span), e.type); };
    switch (e.op) {
      case sema::Op::Add: return binary(arithFn(Arith::Add, p), p, false);
      case sema::Op::Sub: return binary(arithFn(Arith::Sub, p), p, false);
      case sema::Op::Mul: return binary(arithFn(Arith::Mul, p), p, false);
      case sema::Op::Div: return binary(arithFn(Arith::Div, p), p, false);
      case sema::Op::Mod: return binary(arithFn(Arith::Mod, p), p, false);
      case sema::Op::Expt: return binary(arithFn(Arith::Expt, p), p, false);
      case sema::Op::Atan2: return binary(arithFn(Arith::Atan2, p), p, false);
      case sema::Op::Eq: return binary(cmpFn(Cmp::Eq, p), Prim::U8, false);
      case sema::Op::Ne: return binary(cmpFn(Cmp::Ne, p), Prim::U8, false);
      case sema::Op::Lt: return binary(cmpFn(Cmp::Lt, p), Prim::U8, false);
      case sema::Op::Le: return binary(cmpFn(Cmp::Le, p), Prim::U8, false);
      case sema::Op::Gt: return binary(cmpFn(Cmp::Lt, p), Prim::U8, true);
      case sema::Op::Ge: return binary(cmpFn(Cmp::Le, p), Prim::U8, true);
      case sema::Op::StrEq: return binary(strCmpFn(StrCmp::Eq), Prim::U8, false);
      case sema::Op::StrNe: return binary(strCmpFn(StrCmp::Ne), Prim::U8, false);
      case sema::Op::StrLt: return binary(strCmpFn(StrCmp::Lt), Prim::U8, false);
      case sema::Op::StrLe: return binary(strCmpFn(StrCmp::Le), Prim::U8, false);
      case sema::Op::StrGt: return binary(strCmpFn(StrCmp::Lt), Prim::U8, true);
      case sema::Op::StrGe: return binary(strCmpFn(StrCmp::Le), Prim::U8, true);
      case sema::Op::And:
        if (e.rhsSafeToSkip) return binary(boolAndFn(), Prim::U8, false);
        return binary(bitFn(BitOp::And, e.size), p, false);
      case sema::Op::Or: return binary(bitFn(BitOp::Or, e.size), p, false);
      case sema::Op::Xor: return binary(bitFn(BitOp::Xor, e.size), p, false);
      case sema::Op::Shl: return unaryShift(BitOp::Shl, e, x);
      case sema::Op::Shr: return unaryShift(BitOp::Shr, e, x);
      case sema::Op::Rol: return unaryShift(BitOp::Rol, e, x);
      case sema::Op::Ror: return unaryShift(BitOp::Ror, e, x);
      case sema::Op::Now: return valueOf(scalarNode(cycleTimeFn(), Prim::I64, nullptr, nullptr, span), e.type);
      case sema::Op::Neg: return unary(unaryFn(Unop::Neg, p), p);
      case sema::Op::Abs: return unary(unaryFn(Unop::Abs, p), p);
      case sema::Op::Sqrt: return unary(unaryFn(Unop::Sqrt, p), p);
      case sema::Op::Ln: return unary(unaryFn(Unop::Ln, p), p);
      case sema::Op::Log: return unary(unaryFn(Unop::Log, p), p);
      case sema::Op::Exp: return unary(unaryFn(Unop::Exp, p), p);
      case sema::Op::Sin: return unary(unaryFn(Unop::Sin, p), p);
      case sema::Op::Cos: return unary(unaryFn(Unop::Cos, p), p);
      case sema::Op::Tan: return unary(unaryFn(Unop::Tan, p), p);
      case sema::Op::Asin: return unary(unaryFn(Unop::Asin, p), p);
      case sema::Op::Acos: return unary(unaryFn(Unop::Acos, p), p);
      case sema::Op::Atan: return unary(unaryFn(Unop::Atan, p), p);
      case sema::Op::BitNot: return unary(notBitsFn(e.size), p);
      case sema::Op::BoolNot: return unary(boolNotFn(), Prim::U8);
      case sema::Op::Trunc: return unary(truncFn(p), Prim::I64);
      case sema::Op::Idx64: return unary(idx64Fn(), Prim::I32);
      case sema::Op::StrLen: return unary(strLenFn(), Prim::I16);
      case sema::Op::StrFind: return valueOf(scalarNode(strFindFn(), Prim::I16, x[0], x[1], span), e.type);
      case sema::Op::ToI64: return unary(stoFn(STo::I64), Prim::I64);
      case sema::Op::ToU64: return unary(stoFn(STo::U64), Prim::U64);
      case sema::Op::ToF64: return unary(stoFn(STo::F64), Prim::F64);
      case sema::Op::ToBool: return unary(stoFn(STo::Bool), Prim::U8);
      case sema::Op::WCharFromWide: return unary(wcharFromWideFn(), Prim::U16);
      default: return text(e, x);
    }
  }

  Val unaryShift(BitOp op, const sema::Expr& e, const std::vector<const Node*>& x) {
    return valueOf(scalarNode(bitFn(op, e.size), e.prim, x[0], x[1], e.span), e.type);
  }

  // String functions and conversions to STRING.
  Val text(const sema::Expr& e, const std::vector<const Node*>& x) {
    const SourceSpan& span = e.span;
    auto capacityOf = [&](size_t i) -> uint64_t { return valueBase(e.a[i]->type)->capacity; };
    auto result = [&](const Node* n) { return valueOf(n, e.type); };
    const bool wide = valueBase(e.type)->wide;
    auto function = [&](StrFn fn, uint64_t capacity, std::initializer_list<const Node*> args) {
      Node* r = const_cast<Node*>(stringResult(fn, capacity, span, wide));
      auto it = args.begin();
      r->a = *it++;
      if (it != args.end()) r->b = *it++;
      if (fn == StrFn::Replace) {
        r->list = {*it, *(it + 1)};
      } else if (it != args.end()) {
        r->c = *it;
      }
      return result(r);
    };
    switch (e.op) {
      case sema::Op::StrLeft: return function(StrFn::Left, capacityOf(0), {x[0], x[1]});
      case sema::Op::StrRight: return function(StrFn::Right, capacityOf(0), {x[0], x[1]});
      case sema::Op::StrMid: return function(StrFn::Mid, capacityOf(0), {x[0], x[1], x[2]});
      case sema::Op::StrInsert: return function(StrFn::Insert, capacityOf(0) + capacityOf(1), {x[0], x[1], x[2]});
      case sema::Op::StrDelete: return function(StrFn::Delete, capacityOf(0), {x[0], x[1], x[2]});
      case sema::Op::StrReplace:
        return function(StrFn::Replace, capacityOf(0) + capacityOf(1), {x[0], x[1], x[2], x[3]});
      case sema::Op::StrConcat: {
        uint64_t cap = 0;
        for (size_t i = 0; i < x.size(); ++i) cap += capacityOf(i);
        const uint32_t inner = static_cast<uint32_t>(std::min<uint64_t>(cap, 65535));
        const Node* acc = x[0];
        for (size_t i = 1; i < x.size(); ++i) {
          Node* r = const_cast<Node*>(stringResult(StrFn::Concat, i + 1 == x.size() ? cap : inner, span, wide));
          r->a = acc;
          r->b = x[i];
          acc = r;
        }
        if (x.size() == 1) {
          Node* r =
              stringNode(strTruncFn(), static_cast<uint32_t>(std::clamp<uint64_t>(cap, 1, 65535)), span, false, wide);
          r->a = acc;
          acc = r;
        }
        return result(acc);
      }
      case sema::Op::WideFromStr:
      case sema::Op::StrFromWide:
      case sema::Op::Utf8FromWide:
      case sema::Op::WideFromWChar: {
        const StringFn fn = e.op == sema::Op::WideFromStr ? wideFromStrFn()
                            : e.op == sema::Op::WideFromWChar
                                ? wideFromWCharFn()
                                : strFromWideFn(e.op == sema::Op::Utf8FromWide ? Narrowing::Utf8 : Narrowing::Ascii);
        impl_.stringFunctions = true;
        Node* n = stringNode(fn, valueBase(e.type)->capacity, span, true, wide);
        n->a = x[0];
        return result(n);
      }
      default: break;
    }
    SFrom from = SFrom::I64;
    switch (e.op) {
      case sema::Op::FromU64: from = SFrom::U64; break;
      case sema::Op::FromF32: from = SFrom::F32; break;
      case sema::Op::FromF64: from = SFrom::F64; break;
      case sema::Op::FromBool: from = SFrom::Bool; break;
      case sema::Op::FromTime: from = SFrom::Time; break;
      case sema::Op::FromLTime: from = SFrom::LTime; break;
      case sema::Op::FromDate: from = SFrom::Date; break;
      case sema::Op::FromTod: from = SFrom::Tod; break;
      case sema::Op::FromDt: from = SFrom::Dt; break;
      default: break;
    }
    Node* n = stringNode(sfromFn(from), valueBase(e.type)->capacity, span, true);
    n->a = x[0];
    return result(n);
  }

  Val scaleDuration(const sema::Expr& e) {
    const SourceSpan& span = e.span;
    const bool reversed = e.form == sema::ScaleForm::Reversed;
    const Val factorBase = reversed ? lowerBase(*e.a[1]) : Val{};
    const Val duration = lowerBase(*e.a[0]);
    const Val factor = reversed ? factorBase : lowerBase(*e.a[1]);
    const Node* x = readConverted(*e.a[0], duration);
    const Node* y = readConverted(*e.a[1], factor);
    const Arith op = e.op == sema::Op::Mul ? Arith::Mul : Arith::Div;
    const Node* r;
    if (e.real) {
      const Node* fx = scalarNode(cvtFn(Prim::I64, Prim::F64), Prim::F64, x, nullptr, span);
      const Node* t = scalarNode(arithFn(op, Prim::F64), Prim::F64, fx, y, span);
      r = scalarNode(cvtFn(Prim::F64, Prim::I64), Prim::I64, t, nullptr, span);
    } else {
      r = scalarNode(arithFn(op, Prim::I64), Prim::I64, x, y, span);
    }
    return valueOf(ordered(r, reversed ? std::vector<Val>{factor, duration} : std::vector<Val>{duration, factor}, span),
                   e.type);
  }

  Val minMax(const sema::Expr& e) {
    const SourceSpan& span = e.span;
    std::vector<Val> vals;
    for (const sema::Expr* a : e.a) vals.push_back(lowerBase(*a));
    auto operandAt = [&](size_t i) { return readConverted(*e.a[i], vals[i]); };
    const Prim p = e.prim;
    if (e.kind == sema::ExprKind::Limit) {
      const Node* mn = operandAt(0);
      const Node* in = operandAt(1);
      const Node* mx = operandAt(2);
      const Node* tmp = scalarNode(arithFn(Arith::Min, p), p, in, mx, span);
      return valueOf(ordered(scalarNode(arithFn(Arith::Max, p), p, mn, tmp, span), vals, span), e.type);
    }
    const Node* cur = operandAt(0);
    for (size_t i = 1; i < vals.size(); ++i)
      cur = scalarNode(arithFn(e.op == sema::Op::Min ? Arith::Min : Arith::Max, p), p, cur, operandAt(i), span);
    return valueOf(ordered(cur, vals, span), e.type);
  }

  // SEL and MUX: the selector picks one of the inputs, stored into a temporary of the result's
  // type. The inputs are computed before the choice, as the compiler's code does (a fault in any
  // input faults, see collectEager); only reading the chosen input's storage (and checking a
  // subrange) happens after it.
  Val select(const sema::Expr& e) {
    const SourceSpan& span = e.span;
    const bool mux = e.kind == sema::ExprKind::Mux;
    std::vector<Val> vals;
    for (const sema::Expr* a : e.a) vals.push_back(lowerBase(*a));
    const Node* selector = readConverted(*e.a[0], vals[0]);
    if (mux) {
      Node* chk = newNode(NodeKind::Scalar, span);
      chk->scalar = chkFn(Prim::I32);
      chk->prim = Prim::I32;
      chk->a = selector;
      chk->lo = 0;
      chk->hi = static_cast<int64_t>(vals.size()) - 2;
      selector = chk;
    }
    std::vector<const Node*> branches;
    std::vector<const Node*> eager;
    for (size_t i = 0; i < vals.size(); ++i) {
      const Val& v = vals[i];
      if (!v.isConst && v.node) {
        if (v.isPlace)
          collectEager(v.node, eager);
        else
          eager.push_back(v.node);
      }
      if (i > 0) branches.push_back(stored(*e.a[i], v));
    }
    const Type* base = valueBase(e.type);
    Node* n;
    if (base->kind == TypeKind::String) {
      n = newNode(NodeKind::String, span);
      n->string = mux ? muxStringFn() : selStringFn();
      n->cap = base->capacity;
      n->wide = base->wide;
    } else if (base->isScalar()) {
      n = newNode(NodeKind::Scalar, span);
      n->scalar = mux ? muxScalarFn() : selScalarFn();
      n->prim = primOf(*base);
    } else {
      n = newNode(NodeKind::Place, span);
      n->place = mux ? muxPlaceFn() : selPlaceFn();
      n->size = e.type->size;
    }
    n->a = selector;
    if (mux) {
      n->list = branches;
    } else {
      n->b = branches[0];
      n->c = branches[1];
    }
    if (eager.empty()) return valueOf(n, e.type);
    // Computed inputs first (their faults come first), then the choice.
    Node* seq = newNode(n->kind, span);
    *seq = *n;
    seq->a = sequence(eager, selector, span);
    return valueOf(seq, e.type);
  }

  // ---------------------------------------------------------------- evaluation order

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
  static bool lazyFaulting(const Node* place) {
    return place->place == placeDerefFn() || (place->place == placeIndexFn() && place->lazy);
  }

  // The compiler's code computes every operand (collectEager) before it reads the first: when an
  // earlier operand's read can fault and a later operand's computation too, compute them all
  // first, so that the fault reported is the one the VM reports.
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

  Val lower(const sema::Expr& e) {
    switch (e.kind) {
      case sema::ExprKind::Constant: {
        Val v;
        v.type = e.type;
        v.isConst = true;
        v.constant = e.constant;
        return v;
      }
      case sema::ExprKind::Variable:
        return variablePlace(*e.variable, e.storage == sema::Storage::Frame, e.storage == sema::Storage::Instance,
                             e.span);
      case sema::ExprKind::ProgramInstance: return basePlace(PlaceBase::Abs, e.offset, e.type, e.span);
      case sema::ExprKind::This: return basePlace(PlaceBase::This, 0, e.type, e.span);
      case sema::ExprKind::Field: return subPlace(lower(*e.a[0]), *e.variable, e.span);
      case sema::ExprKind::Offset: {
        Variable pseudo;
        pseudo.type = e.type;
        pseudo.offset = e.offset;
        return subPlace(lower(*e.a[0]), pseudo, e.span);
      }
      case sema::ExprKind::Element: return element(e);
      case sema::ExprKind::Bit: return bit(e);
      case sema::ExprKind::Deref: {
        const Val v = lower(*e.a[0]);
        const Node* place = derefPlace(read(v, e.span), 0, e.type, e.span);
        // A use of a REFERENCE TO: an unbound one is named in the error (placeDeref).
        if (const sema::Expr* reference = sema::referenceSlot(&e))
          const_cast<Node*>(place)->text = sema::referenceName(reference);
        return valueOf(place, e.type);
      }
      case sema::ExprKind::AddressOf: return addressOf(e);
      case sema::ExprKind::Convert:
      case sema::ExprKind::RangeCheck: return applyConversion(lower(*e.a[0]), e);
      case sema::ExprKind::Operation:
        if (e.op == sema::Op::Idx64 && e.atRead) return applyConversion(lower(*e.a[0]), e);
        return operation(e);
      case sema::ExprKind::ScaleDuration: return scaleDuration(e);
      case sema::ExprKind::MinMax:
      case sema::ExprKind::Limit: return minMax(e);
      case sema::ExprKind::Select:
      case sema::ExprKind::Mux: return select(e);
      case sema::ExprKind::Invalid:
      case sema::ExprKind::Parameter:
      case sema::ExprKind::Call:
      case sema::ExprKind::Assertion:
      case sema::ExprKind::AssertOperand: break;  // the semantic pass reported these
    }
    fail(e.span, "unsupported expression");
  }

  // The slot of an ARRAY[*] parameter whose dereference `place` is (its REF and bounds).
  const Node* openArraySlot(const Val& place, const SourceSpan& span) {
    auto it = place.node ? openArraySlots_.find(place.node) : openArraySlots_.end();
    if (it == openArraySlots_.end()) fail(span, "an ARRAY[*] is read here only by the name of its VAR_IN_OUT");
    return it->second;
  }

  Expression::Impl& impl_;
  std::map<const Node*, const Node*> openArraySlots_;  // ARRAY[*] dereference -> its parameter's slot
  std::string_view text_;
  sema::TypeSource& types_;
  std::vector<size_t> lineStarts_;
  const PouInfo* pou_ = nullptr;
  uint32_t programBase_ = 0;
};

}  // namespace

std::unique_ptr<Expression::Impl> compileExpression(const Program& program, uint32_t pou, std::string_view text,
                                                    std::string& error) {
  auto impl = std::make_unique<Expression::Impl>();
  impl->program = &program;
  impl->pou = pou;
  impl->text = std::string(text);
  if (pou != UINT32_MAX && pou >= program.pous.size()) {
    error = fmt::format("there is no POU {} in the program", pou);
    return nullptr;
  }
  sema::ProgramScope scope(program, pou);
  Lowering lowering(*impl, impl->text, scope.declarations().types());
  auto columnText = [&](const SourceSpan& span, const std::string& message) {
    const uint32_t column = lowering.columnOf(span);
    return column ? fmt::format("column {}: {}", column, message) : message;
  };
  auto firstError = [&](const Diagnostics& diags) {
    for (const Diagnostic& d : diags.items())
      if (d.severity == Severity::Error) return columnText(d.span, d.message);
    return std::string("not an expression");
  };

  SourceSet sources;
  sources.add("<expression>", impl->text);
  Diagnostics diags;
  ast::ExprPtr e = parseExpression(sources, 0, diags);
  if (!e || diags.hasErrors()) {
    error = firstError(diags);
    return nullptr;
  }
  sema::Arena arena;
  sema::Analyzer::Options options;
  options.rejectCalls = true;
  options.sourceText = [&](const SourceSpan& span) { return lowering.sourceText(span); };
  const sema::Expr* ir = sema::Analyzer(scope, diags, arena, options).expression(*e);
  if (diags.hasErrors()) {
    error = firstError(diags);
    return nullptr;
  }
  try {
    lowering.setScope(scope);
    Val v = lowering.root(*ir);
    impl->root = v.node;
    impl->type = v.type;
    impl->storage = v.isPlace && ir->named;
    impl->readOnly = impl->storage && ir->readOnly;
  } catch (const LoweringError& err) {
    error = columnText(err.span, err.message);
    return nullptr;
  }
  return impl;
}

}  // namespace scanback::debug::detail
