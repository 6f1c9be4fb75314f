// Expressions: name resolution, IEC typing with implicit widening, constant folding and code.
#include <fmt/format.h>

#include <algorithm>

#include <cmath>
#include <cstring>

#include "vm/base/int128.h"
#include "vm/compiler/compiler_impl.h"

namespace scanback::compiler {

Op opFor(Op first, Prim p) { return static_cast<Op>(static_cast<uint32_t>(first) + static_cast<uint32_t>(p)); }

namespace {

Op bitsOp(Op first8, uint32_t size) {
  const uint32_t index = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
  return static_cast<Op>(static_cast<uint32_t>(first8) + index);
}
Op fltOp(Op firstF32, Prim p) { return static_cast<Op>(static_cast<uint32_t>(firstF32) + (p == Prim::F64 ? 1 : 0)); }
Op sizedOp(Op op1, uint32_t size) { return bitsOp(op1, size); }  // LD1/LD2/LD4/LD8 and friends

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

bool scalarSize(uint32_t size) { return size == 1 || size == 2 || size == 4 || size == 8; }

// Rank of an integer or bit-string type within its signedness (1 = 8 bits ... 4 = 64 bits).
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

}  // namespace

// ---------------------------------------------------------------- types

bool Compiler::implicitlyConvertible(const Type* from, const Type* to) const {
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
    // Bit strings and numbers do not mix implicitly (IEC): BYTE -> USINT needs BYTE_TO_USINT.
    if (to->isInteger() && from->isBitString() != to->isBitString()) return false;
    const int rf = intRank(from);
    if (to->kind == TypeKind::Real) return rf <= 2 && !from->isBitString();
    if (to->kind == TypeKind::LReal) return rf <= 3 && !from->isBitString();
    if (!to->isInteger()) return false;
    const int rt = intRank(to);
    if (from->isSigned()) return to->isSigned() && rf <= rt;
    if (to->isSigned()) return rf < rt && !from->isBitString();
    return rf <= rt;  // unsigned and bit strings of the same width convert both ways
  }
  return false;
}

bool Compiler::fitsLiteral(const ConstValue& c, const Type* t) const {
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

const Type* Compiler::literalType(const ConstValue& c) const {
  if (c.kind == ConstValue::Kind::Real) return types_->elementary(TypeKind::LReal);
  if (c.kind == ConstValue::Kind::Bool) return types_->elementary(TypeKind::Bool);
  if (c.i >= INT32_MIN && c.i <= INT32_MAX) return types_->elementary(TypeKind::DInt);
  if (c.i >= INT64_MIN && c.i <= INT64_MAX) return types_->elementary(TypeKind::LInt);
  return types_->elementary(TypeKind::ULInt);
}

const Type* Compiler::commonType(const Value& a, const Value& b, const SourceSpan& span) {
  const Type* ta = a.type;
  const Type* tb = b.type;
  if (ta == errorType_ || tb == errorType_) return errorType_;
  if (!ta && !tb) {
    if (a.constant.kind == ConstValue::Kind::Real || b.constant.kind == ConstValue::Kind::Real)
      return types_->elementary(TypeKind::LReal);
    const Type* la = literalType(a.constant);
    const Type* lb = literalType(b.constant);
    return intRank(la) >= intRank(lb) ? la : lb;
  }
  if (!ta || !tb) {
    const Value& lit = ta ? b : a;
    const Type* other = valueBase(ta ? ta : tb);
    if (other->kind == TypeKind::Enum) other = other->base;
    if (fitsLiteral(lit.constant, other)) return other;
    if (lit.constant.kind == ConstValue::Kind::Real && other->isInteger())
      return implicitlyConvertible(other, types_->elementary(TypeKind::Real)) ? types_->elementary(TypeKind::Real)
                                                                              : types_->elementary(TypeKind::LReal);
    const Type* lt = literalType(lit.constant);
    if (implicitlyConvertible(other, lt)) return lt;
    error(span, fmt::format("constant {} does not fit {}", static_cast<int64_t>(lit.constant.i), other->name));
    return other;
  }
  ta = valueBase(ta);
  tb = valueBase(tb);
  if (ta->kind == TypeKind::Enum && tb->kind == TypeKind::Enum) {
    if (ta != tb) error(span, fmt::format("{} and {} are different enumerations", ta->name, tb->name));
    return ta;
  }
  if (ta->kind == TypeKind::Enum) ta = ta->base;
  if (tb->kind == TypeKind::Enum) tb = tb->base;
  if (ta == tb) return ta;
  if (implicitlyConvertible(ta, tb)) return tb;
  if (implicitlyConvertible(tb, ta)) return ta;
  for (TypeKind k : {TypeKind::Int, TypeKind::DInt, TypeKind::LInt, TypeKind::Real, TypeKind::LReal}) {
    const Type* c = types_->elementary(k);
    if (implicitlyConvertible(ta, c) && implicitlyConvertible(tb, c)) return c;
  }
  error(span, fmt::format("no common type for {} and {}; convert one of them explicitly", ta->name, tb->name));
  return ta;
}

// ---------------------------------------------------------------- operands and temporaries

uint32_t Compiler::constBytes(const std::vector<uint8_t>& bytes, uint32_t align) {
  auto it = constPool_.find(bytes);
  if (it != constPool_.end() && it->second % std::max<uint32_t>(align, 1) == 0) return it->second;
  auto& pool = program_->constants;
  const uint32_t at = alignUp(static_cast<uint32_t>(pool.size()), std::max<uint32_t>(align, 1));
  pool.resize(at, 0);
  pool.insert(pool.end(), bytes.begin(), bytes.end());
  constPool_[bytes] = at;
  return at;
}

uint32_t Compiler::constOperand(const Type* type, const ConstValue& c, const SourceSpan& span) {
  std::vector<uint8_t> bytes(type->size, 0);
  if (type->kind == TypeKind::String) {
    // A string constant needs only its own length of capacity.
    bytes.assign(2 + c.s.size(), 0);
    const uint16_t n = static_cast<uint16_t>(std::min<size_t>(c.s.size(), 65535));
    std::memcpy(bytes.data(), &n, 2);
    std::memcpy(bytes.data() + 2, c.s.data(), n);
  } else {
    writeConst(bytes, 0, type, c, span);
  }
  return operand(Base::Const, constBytes(bytes, std::min<uint32_t>(type->align, 8)));
}

uint32_t Compiler::allocTemp(const Type* type) {
  if (!ctx_) return operand(Base::Frame, 0);  // outside a body (initial values): only on error paths
  const uint32_t align = std::max<uint32_t>(type->align, 1);
  const uint32_t at = alignUp(ctx_->tempTop, align);
  ctx_->tempTop = at + std::max<uint32_t>(type->size, 1);
  ctx_->frameMax = std::max(ctx_->frameMax, ctx_->tempTop);
  return operand(Base::Frame, at);
}

Value Compiler::resultPlace(const Type* type, const Place* dest) {
  if (dest && dest->kind == Place::Kind::Direct && dest->type == type) {
    Value r;
    r.type = type;
    r.place = *dest;
    return r;
  }
  return tempValue(type);
}

Value Compiler::tempValue(const Type* type) {
  Value v;
  v.type = type;
  v.place.kind = Place::Kind::Direct;
  v.place.type = type;
  v.place.operand = allocTemp(type);
  return v;
}

void Compiler::move(uint32_t dst, uint32_t src, const Type* type) {
  if (dst == src) return;
  switch (type->size) {
    case 1: emit(Op::MOV1, {o(dst), o(src)}); break;
    case 2: emit(Op::MOV2, {o(dst), o(src)}); break;
    case 4: emit(Op::MOV4, {o(dst), o(src)}); break;
    case 8: emit(Op::MOV8, {o(dst), o(src)}); break;
    default: emit(Op::MOVN, {o(dst), o(src), o(type->size)}); break;
  }
}

uint32_t Compiler::readOperand(const Value& v, const SourceSpan& span) {
  const Type* type = v.type;
  if (v.isConst) {
    if (!type) type = literalType(v.constant);
    return constOperand(type, v.constant, span);
  }
  const Place& p = v.place;
  switch (p.kind) {
    case Place::Kind::Direct: return p.operand;
    case Place::Kind::Bit: {
      const uint32_t t = allocTemp(types_->elementary(TypeKind::Bool));
      emit(bitsOp(Op::GETBIT_8, p.width), {o(t), o(p.operand), o(p.bit)});
      return t;
    }
    case Place::Kind::Indirect:
    case Place::Kind::Element: {
      // A string converted to another capacity (convertValue relabels it) is still stored with its own.
      const Type* stored = p.type && p.type->kind == TypeKind::String && type->kind == TypeKind::String ? p.type : type;
      const uint32_t t = allocTemp(stored->size > type->size ? stored : type);
      if (p.kind == Place::Kind::Indirect) {
        if (scalarSize(stored->size))
          emit(sizedOp(Op::LD1, stored->size), {o(t), o(p.operand), o(p.offset)});
        else
          emit(Op::LDN, {o(t), o(p.operand), o(p.offset), o(stored->size)});
      } else if (scalarSize(stored->size)) {
        emit(sizedOp(Op::ELD1, stored->size),
             {o(t), o(p.operand), o(p.index), o(static_cast<uint32_t>(p.lower)), o(p.count)});
      } else {
        const uint32_t ref = allocTemp(types_->elementary(TypeKind::UDInt));
        emit(Op::ELEM,
             {o(ref), o(p.operand), o(p.index), o(static_cast<uint32_t>(p.lower)), o(p.count), o(stored->size)});
        emit(Op::LDN, {o(t), o(ref), o(0), o(stored->size)});
      }
      return t;
    }
  }
  return 0;
}

uint32_t Compiler::addressOf(const Place& p, const SourceSpan& span) {
  const Type* refType = types_->elementary(TypeKind::UDInt);
  switch (p.kind) {
    case Place::Kind::Direct:
      if (operandBase(p.operand) == Base::Image)
        return constOperand(refType, ConstValue::ofInt(operandOffset(p.operand)), span);
      if (operandBase(p.operand) == Base::Const) {
        error(span, "a constant has no address; use a variable");
        return 0;
      }
      {
        const uint32_t t = allocTemp(refType);
        emit(Op::ADDR, {o(t), o(p.operand)});
        return t;
      }
    case Place::Kind::Indirect:
      if (p.offset == 0) return p.operand;
      {
        const uint32_t t = allocTemp(refType);
        emit(Op::ADD_U32, {o(t), o(p.operand), o(constOperand(refType, ConstValue::ofInt(p.offset), span))});
        return t;
      }
    case Place::Kind::Element: {
      const uint32_t t = allocTemp(refType);
      emit(Op::ELEM, {o(t), o(p.operand), o(p.index), o(static_cast<uint32_t>(p.lower)), o(p.count), o(p.type->size)});
      return t;
    }
    case Place::Kind::Bit: error(span, "a single bit has no address"); return 0;
  }
  return 0;
}

Place Compiler::subPlace(const Place& base, const Variable& field) {
  Place p;
  p.type = field.type;
  p.readOnly = base.readOnly || field.constant;
  if (field.absolute) {
    p.operand = operand(Base::Image, field.offset);
    if (field.bit >= 0) {
      p.kind = Place::Kind::Bit;
      p.bit = static_cast<uint8_t>(field.bit);
      p.width = 1;
    }
    return p;
  }
  Place b = base;
  if (b.kind == Place::Kind::Element) {
    const uint32_t ref = addressOf(b, {});
    b = Place{};
    b.kind = Place::Kind::Indirect;
    b.operand = ref;
    b.type = base.type;
  }
  if (field.byReference) {
    // The slot holds a REF to the actual variable.
    uint32_t refOperand;
    if (b.kind == Place::Kind::Direct) {
      refOperand = b.operand + field.offset;
    } else {
      refOperand = allocTemp(types_->elementary(TypeKind::UDInt));
      emit(Op::LD4, {o(refOperand), o(b.operand), o(b.offset + field.offset)});
    }
    p.kind = Place::Kind::Indirect;
    p.operand = refOperand;
    p.offset = 0;
    return p;
  }
  if (b.kind == Place::Kind::Direct) {
    p.kind = Place::Kind::Direct;
    p.operand = b.operand + field.offset;
  } else {
    p.kind = Place::Kind::Indirect;
    p.operand = b.operand;
    p.offset = b.offset + field.offset;
  }
  return p;
}

// ---------------------------------------------------------------- conversions

namespace {
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
}  // namespace

Value Compiler::convertValue(Value v, const Type* to, const SourceSpan& span, bool explicitConversion) {
  if (!to) return v;
  if (v.type == to) return v;
  // An expression that already failed: its error was reported once; stay quiet from here on.
  if (isPoison(v)) return tempValue(to);
  if (to == errorType_) return v;
  if (to->kind == TypeKind::Void) {
    error(span, "expression has no value");
    return v;
  }
  if (v.isConst) {
    if (!v.type) {  // untyped literal
      const Type* target = valueBase(to);
      if (target->kind == TypeKind::Enum) {
        if (!explicitConversion) {
          error(span, fmt::format("a number is not a value of {}; use its names", to->name));
          return v;
        }
        target = target->base;
      }
      if (!fitsLiteral(v.constant, target) && !(explicitConversion && target->isScalar())) {
        if (v.constant.kind == ConstValue::Kind::Real)
          error(span, fmt::format("a real number cannot be converted implicitly to {}", to->name));
        else
          error(span, fmt::format("constant {} does not fit {}", static_cast<int64_t>(v.constant.i), to->name));
        return Value{to, true, convertConst(ConstValue::ofInt(0), to), {}};
      }
      Value r;
      r.type = to;
      r.isConst = true;
      r.constant = convertConst(v.constant, to);
      return r;
    }
    if (v.constant.kind == ConstValue::Kind::String) {
      if (to->kind == TypeKind::String) {
        Value r = v;
        r.type = to;
        return r;
      }
    } else if (to->isScalar() && v.type->isScalar() && !v.type->isTimeLike() && !to->isTimeLike() &&
               to->kind != TypeKind::Ref && v.type->kind != TypeKind::Ref &&
               (explicitConversion || implicitlyConvertible(v.type, to))) {
      Value r;
      r.type = to;
      r.isConst = true;
      r.constant = convertConst(v.constant, to);
      if (to->kind == TypeKind::Subrange && (r.constant.i < to->lower || r.constant.i > to->upper)) {
        error(span, fmt::format("{} is outside {}", static_cast<int64_t>(r.constant.i), to->name));
      }
      return r;
    } else if (v.type->isTimeLike() && to->isTimeLike() && (explicitConversion || implicitlyConvertible(v.type, to))) {
      Value r = v;
      r.type = to;
      return r;
    }
    // Other typed constants convert through code like variables do.
    Value placed;
    placed.type = v.type;
    placed.place.kind = Place::Kind::Direct;
    placed.place.type = v.type;
    placed.place.operand = readOperand(v, span);
    placed.place.readOnly = true;
    return convertValue(placed, to, span, explicitConversion);
  }
  const Type* from = v.type;
  if (!explicitConversion && !implicitlyConvertible(from, to)) {
    if (from->isInteger() && to->isInteger())
      error(span, fmt::format("implicit conversion from {} to {} may lose data; use {}_TO_{}", from->name, to->name,
                              valueBase(from)->name, valueBase(to)->name));
    else
      error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    return tempValue(to);
  }
  if (to->kind == TypeKind::String || from->kind == TypeKind::String) {
    if (to->kind == TypeKind::String && from->kind == TypeKind::String) {
      Value r = v;
      r.type = to;  // capacity differences are handled when stored
      return r;
    }
    error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    return tempValue(to);
  }
  if (!from->isScalar() || !to->isScalar()) {
    if (implicitlyConvertible(from, to)) {
      Value r = v;
      r.type = to;
      r.place.type = to;
      return r;
    }
    error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    return tempValue(to);
  }
  const Prim pf = primOf(*from);
  const Prim pt = primOf(*to);
  const Type* toBase = valueBase(to);
  if (toBase->kind == TypeKind::Bool && from->kind != TypeKind::Bool) {
    // number -> BOOL: <> 0
    const uint32_t src = readOperand(v, span);
    Value r = tempValue(to);
    const Type* ft = valueBase(from)->kind == TypeKind::Enum ? valueBase(from)->base : valueBase(from);
    emit(opFor(Op::NE_I8, pf), {o(r.place.operand), o(src), o(constOperand(ft, ConstValue::ofInt(0), span))});
    return r;
  }
  const bool sameWidthIntegers = !primIsFloat(pf) && !primIsFloat(pt) && primSize(pf) == primSize(pt);
  if (pf == pt || sameWidthIntegers) {
    Value r = v;  // same storage, or a wrapping conversion between same-width integers: a reinterpretation
    r.type = to;
    r.place.type = to;
    return r;
  }
  const uint32_t src = readOperand(v, span);
  Value r = tempValue(to);
  emit(static_cast<Op>(static_cast<uint32_t>(Op::CVT_I8_I8) + static_cast<uint32_t>(pf) * kPrimCount +
                       static_cast<uint32_t>(pt)),
       {o(r.place.operand), o(src)});
  return r;
}

uint32_t Compiler::operandAs(Value v, const Type* type, const SourceSpan& span, bool explicitConversion) {
  return readOperand(convertValue(std::move(v), type, span, explicitConversion), span);
}

void Compiler::store(const Place& dst, Value v, const SourceSpan& span) {
  if (isPoison(v) || dst.type == errorType_) return;
  if (dst.readOnly) {
    error(span, "cannot assign to a constant");
    return;
  }
  const Type* type = dst.type;
  if (!type) return;
  if (type->kind == TypeKind::FunctionBlock && v.type != type) {
    error(span, fmt::format("cannot assign {} to an instance of {}", v.type ? v.type->name : "a number", type->name));
    return;
  }
  Value c = convertValue(std::move(v), type, span, false);
  if (type->kind == TypeKind::Subrange) {
    const Type* base = type->base;
    if (c.isConst) {
      if (c.constant.i < type->lower || c.constant.i > type->upper)
        error(span, fmt::format("{} is outside {}", static_cast<int64_t>(c.constant.i), type->name));
    } else {
      const uint32_t src = readOperand(c, span);
      emit(opFor(Op::CHK_I8, primOf(*base)), {o(src), o(constOperand(base, ConstValue::ofInt(type->lower), span)),
                                              o(constOperand(base, ConstValue::ofInt(type->upper), span))});
      c.isConst = false;
      c.place = Place{};
      c.place.kind = Place::Kind::Direct;
      c.place.operand = src;
      c.place.type = type;
    }
  }
  if (type->kind == TypeKind::String) {
    const uint32_t src = readOperand(c, span);
    if (dst.kind == Place::Kind::Direct) {
      if (src != dst.operand) emit(Op::SMOV, {o(dst.operand), o(type->capacity), o(src)});
      return;
    }
    // Through a reference: truncate into a temporary of the target's size, then copy it.
    const uint32_t t = allocTemp(type);
    emit(Op::SMOV, {o(t), o(type->capacity), o(src)});
    Value tv;
    tv.type = type;
    tv.place.kind = Place::Kind::Direct;
    tv.place.operand = t;
    tv.place.type = type;
    c = tv;
  }
  const uint32_t src = readOperand(c, span);
  switch (dst.kind) {
    case Place::Kind::Direct: move(dst.operand, src, type); return;
    case Place::Kind::Bit: emit(bitsOp(Op::SETBIT_8, dst.width), {o(dst.operand), o(dst.bit), o(src)}); return;
    case Place::Kind::Indirect:
      if (scalarSize(type->size))
        emit(sizedOp(Op::ST1, type->size), {o(dst.operand), o(dst.offset), o(src)});
      else
        emit(Op::STN, {o(dst.operand), o(dst.offset), o(src), o(type->size)});
      return;
    case Place::Kind::Element:
      if (scalarSize(type->size)) {
        emit(sizedOp(Op::EST1, type->size),
             {o(dst.operand), o(dst.index), o(static_cast<uint32_t>(dst.lower)), o(dst.count), o(src)});
      } else {
        const uint32_t ref = addressOf(dst, span);
        emit(Op::STN, {o(ref), o(0), o(src), o(type->size)});
      }
      return;
  }
}

// ---------------------------------------------------------------- names

const ConstValue* Compiler::localConstant(const std::string& upperName) {
  auto look = [&](PouDecl* d) -> const ConstValue* {
    if (!d) return nullptr;
    auto it = d->constants.find(upperName);
    return it == d->constants.end() ? nullptr : &it->second;
  };
  PouDecl* d = ctx_ ? ctx_->decl : layoutDecl_;
  if (const ConstValue* c = look(d)) return c;
  if (d && d->kind == PouKind::Method && d->owner) return look(findPou(d->owner->name));
  return nullptr;
}

Value Compiler::variablePlace(const Variable& v, bool inFrame, bool inInstance) {
  Value r;
  r.type = v.type;
  Place& p = r.place;
  p.type = v.type;
  p.readOnly = v.constant;
  if (v.absolute) {
    p.operand = operand(Base::Image, v.offset);
    if (v.bit >= 0) {
      p.kind = Place::Kind::Bit;
      p.bit = static_cast<uint8_t>(v.bit);
      p.width = 1;
    }
    return r;
  }
  uint32_t slot;
  if (inFrame)
    slot = operand(Base::Frame, v.offset);
  else if (inInstance && ctx_->mode == BodyContext::Mode::Program)
    slot = operand(Base::Image, ctx_->programBase + v.offset);
  else
    slot = operand(Base::This, v.offset);
  if (v.byReference) {
    p.kind = Place::Kind::Indirect;
    p.operand = slot;
    p.offset = 0;
  } else {
    p.operand = slot;
  }
  return r;
}

Value Compiler::genName(const ast::Expr& e) {
  const std::string key = upperCase(e.text);
  if (ctx_) {
    if (key == "THIS") {
      if (ctx_->mode == BodyContext::Mode::FbBody || ctx_->mode == BodyContext::Mode::Method) {
        Value r;
        r.type = ctx_->instanceType;
        r.place.operand = operand(Base::This, 0);
        r.place.type = ctx_->instanceType;
        return r;
      }
      error(e.span, "THIS is only available in function blocks and their methods");
      return poison();
    }
    if (const ConstValue* c = localConstant(key)) {
      const Variable* v = ctx_->frameVars.count(key) ? ctx_->frameVars[key]
                          : ctx_->instanceType       ? ctx_->instanceType->field(e.text)
                                                     : nullptr;
      if (v) return Value{v->type, true, *c, {}};
    }
    if (auto it = ctx_->frameVars.find(key); it != ctx_->frameVars.end())
      return variablePlace(*it->second, true, false);
    if (ctx_->instanceType) {
      if (const Variable* v = ctx_->instanceType->field(e.text)) return variablePlace(*v, false, true);
    }
  }
  if (auto it = globals_.find(key); it != globals_.end()) {
    GlobalDecl& g = *it->second;
    resolveGlobal(g);
    if (!g.var.type) return poison();
    if (g.constant) return Value{g.var.type, true, *g.constant, {}};
    Value r = variablePlace(g.var, false, false);
    r.place.operand = operand(Base::Image, g.var.offset);
    return r;
  }
  if (auto it = instanceIndex_.find(key); it != instanceIndex_.end() && !program_->instances.empty()) {
    const ProgramInstanceInfo& inst = program_->instances[it->second];
    Value r;
    r.type = inst.type;
    r.place.operand = operand(Base::Image, inst.offset);
    r.place.type = inst.type;
    return r;
  }
  if (std::optional<Value> c = constantOf(e)) return *c;
  if (findPou(key)) {
    error(e.span, fmt::format("'{}' is a POU; call it with ( )", e.text));
  } else {
    error(e.span, fmt::format("undeclared identifier '{}'", e.text));
  }
  return poison();
}

Value Compiler::genMember(const ast::Expr& e) {
  Value base = genExpr(*e.operand);
  if (isPoison(base)) return base;
  if (base.isConst || !base.type) {
    error(e.span, fmt::format("'{}' has no members", e.operand->text));
    return poison();
  }
  const Type* t = base.type;
  if (t->kind == TypeKind::Ref) {
    error(e.span, "dereference the reference with ^ before selecting a member");
    return poison();
  }
  if (t->kind != TypeKind::Struct && t->kind != TypeKind::FunctionBlock) {
    error(e.span, fmt::format("{} has no member '{}'", t->name, e.text));
    return poison();
  }
  const Variable* f = t->field(e.text);
  if (!f || f->hidden) {
    PouDecl* fb = fbDeclOf(t);
    if (fb && fb->methods.count(upperCase(e.text)))
      error(e.span, fmt::format("method '{}' must be called with ( )", e.text));
    else
      error(e.span, fmt::format("{} has no member '{}'", t->name, e.text));
    return poison();
  }
  Value r;
  r.type = f->type;
  r.place = subPlace(base.place, *f);
  return r;
}

Value Compiler::genIndex(const ast::Expr& e) {
  Value base = genExpr(*e.operand);
  if (isPoison(base)) return base;
  const Type* t = base.type;
  if (base.isConst || !t || t->kind != TypeKind::Array) {
    error(e.span, "only arrays can be indexed");
    return poison();
  }
  if (e.indices.size() != t->dims.size()) {
    error(e.span, fmt::format("{} needs {} index(es), got {}", t->name, t->dims.size(), e.indices.size()));
    return tempValue(t->base);
  }
  // Strides: dimension i advances by the product of the later dimensions.
  std::vector<uint64_t> stride(t->dims.size());
  uint64_t s = t->base->size;
  for (size_t i = t->dims.size(); i-- > 0;) {
    stride[i] = s;
    s *= t->dims[i].count;
  }
  std::vector<Value> idx;
  bool allConst = true;
  for (const auto& ie : e.indices) {
    Value v = genExpr(*ie);
    if (v.isConst && v.constant.kind != ConstValue::Kind::Int && v.constant.kind != ConstValue::Kind::Bool) {
      error(ie->span, "an array index must be an integer");
      v.constant = ConstValue::ofInt(0);
    }
    if (!v.isConst && v.type && !(valueBase(v.type)->isInteger() || valueBase(v.type)->kind == TypeKind::Enum)) {
      error(ie->span, fmt::format("an array index must be an integer, not {}", v.type->name));
    }
    allConst = allConst && v.isConst;
    idx.push_back(std::move(v));
  }
  Place result;
  result.type = t->base;
  result.readOnly = base.place.readOnly;
  if (allConst) {
    uint64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      const int64_t k = static_cast<int64_t>(idx[i].constant.i);
      if (k < t->dims[i].lower || k >= t->dims[i].lower + static_cast<int64_t>(t->dims[i].count)) {
        error(e.indices[i]->span, fmt::format("index {} is outside {}..{}", k, t->dims[i].lower,
                                              t->dims[i].lower + static_cast<int64_t>(t->dims[i].count) - 1));
        return tempValue(t->base);
      }
      off += static_cast<uint64_t>(k - t->dims[i].lower) * stride[i];
    }
    Variable pseudo;
    pseudo.type = t->base;
    pseudo.offset = static_cast<uint32_t>(off);
    Value r;
    r.type = t->base;
    r.place = subPlace(base.place, pseudo);
    return r;
  }
  auto indexOperand = [&](Value& v, const SourceSpan& span) -> uint32_t {
    const Type* i32 = types_->elementary(TypeKind::DInt);
    if (v.isConst) return constOperand(i32, ConstValue::ofInt(static_cast<int32_t>(v.constant.i)), span);
    const Type* vt = valueBase(v.type);
    if (vt->kind == TypeKind::Enum) vt = vt->base;
    const Prim p = primOf(*vt);
    if (p == Prim::I32) return readOperand(v, span);
    if (p == Prim::I8 || p == Prim::I16 || p == Prim::U8 || p == Prim::U16) return operandAs(v, i32, span, true);
    // Wider types are clamped so that a huge index still faults instead of wrapping into range.
    const uint32_t wide = operandAs(v, types_->elementary(TypeKind::LInt), span, true);
    const uint32_t t32 = allocTemp(i32);
    emit(Op::IDX64, {o(t32), o(wide)});
    return t32;
  };
  if (idx.size() == 1 && base.place.kind == Place::Kind::Direct) {
    result.kind = Place::Kind::Element;
    result.operand = base.place.operand;
    result.index = indexOperand(idx[0], e.indices[0]->span);
    result.lower = static_cast<int32_t>(t->dims[0].lower);
    result.count = t->dims[0].count;
    Value r;
    r.type = t->base;
    r.place = result;
    return r;
  }
  const Type* refType = types_->elementary(TypeKind::UDInt);
  uint32_t ref = 0;
  uint32_t refOffset = 0;
  size_t first = 0;
  if (base.place.kind == Place::Kind::Direct) {
    ref = allocTemp(refType);
    emit(Op::ELEM,
         {o(ref), o(base.place.operand), o(indexOperand(idx[0], e.indices[0]->span)),
          o(static_cast<uint32_t>(t->dims[0].lower)), o(t->dims[0].count), o(static_cast<uint32_t>(stride[0]))});
    first = 1;
  } else if (base.place.kind == Place::Kind::Indirect) {
    ref = base.place.operand;
    refOffset = base.place.offset;
  } else {
    ref = addressOf(base.place, e.span);
  }
  for (size_t i = first; i < idx.size(); ++i) {
    const uint32_t next = allocTemp(refType);
    emit(Op::ELEMP,
         {o(next), o(ref), o(refOffset), o(indexOperand(idx[i], e.indices[i]->span)),
          o(static_cast<uint32_t>(t->dims[i].lower)), o(t->dims[i].count), o(static_cast<uint32_t>(stride[i]))});
    ref = next;
    refOffset = 0;
  }
  result.kind = Place::Kind::Indirect;
  result.operand = ref;
  result.offset = refOffset;
  Value r;
  r.type = t->base;
  r.place = result;
  return r;
}

Value Compiler::genDeref(const ast::Expr& e) {
  if (e.operand->kind == ast::ExprKind::Name && equalsIgnoreCase(e.operand->text, "THIS")) return genName(*e.operand);
  Value v = genExpr(*e.operand);
  if (isPoison(v)) return v;
  if (!v.type || v.type->kind != TypeKind::Ref) {
    error(e.span, "only a REF_TO value can be dereferenced with ^");
    return poison();
  }
  Value r;
  r.type = v.type->base;
  r.place.kind = Place::Kind::Indirect;
  r.place.type = v.type->base;
  r.place.operand = readOperand(v, e.span);
  r.place.offset = 0;
  return r;
}

// ---------------------------------------------------------------- literals and folding

Value Compiler::genLiteral(const ast::Expr& e, const Type* hint) {
  (void)hint;
  Value v;
  v.isConst = true;
  switch (e.kind) {
    case ast::ExprKind::IntLiteral: {
      Int128 value = static_cast<Int128>(e.intValue);
      if (e.negative) value = -value;
      v.constant = ConstValue::ofInt(value);
      if (!e.typePrefix.empty()) {
        const Type* t = types_->findElementary(e.typePrefix);
        if (!t) t = resolvedTypes_.count(e.typePrefix) ? resolvedTypes_[e.typePrefix] : nullptr;
        if (!t) {
          error(e.span, fmt::format("unknown type '{}' in literal", e.typePrefix));
          return v;
        }
        if (t->isReal())
          v.constant = ConstValue::ofReal(static_cast<double>(value));
        else if (!fitsLiteral(v.constant, t))
          error(e.span, fmt::format("{} does not fit {}", static_cast<int64_t>(value), t->name));
        if (t->kind == TypeKind::Bool) v.constant = ConstValue::ofBool(value != 0);
        v.type = t;
      }
      return v;
    }
    case ast::ExprKind::RealLiteral:
      v.constant = ConstValue::ofReal(e.realValue);
      if (!e.typePrefix.empty()) {
        const Type* t = types_->findElementary(e.typePrefix);
        if (!t || !t->isReal()) {
          error(e.span, fmt::format("{}# cannot hold a real number", e.typePrefix));
          return v;
        }
        v.type = t;
        if (t->kind == TypeKind::Real) v.constant.r = static_cast<float>(e.realValue);
      }
      return v;
    case ast::ExprKind::BoolLiteral:
      v.constant = ConstValue::ofBool(e.boolValue);
      v.type = types_->elementary(TypeKind::Bool);
      return v;
    case ast::ExprKind::StringLiteral:
      v.constant = ConstValue::ofString(e.text);
      v.type = types_->string(static_cast<uint32_t>(std::clamp<size_t>(e.text.size(), 1, 65535)));
      return v;
    case ast::ExprKind::TimeLiteral:
      v.constant = ConstValue::ofInt(static_cast<int64_t>(e.intValue));
      v.type = types_->elementary(e.typePrefix == "LTIME" ? TypeKind::LTime : TypeKind::Time);
      return v;
    case ast::ExprKind::DateLiteral:
      v.constant = ConstValue::ofInt(static_cast<int64_t>(e.intValue));
      v.type = types_->elementary(TypeKind::Date);
      return v;
    case ast::ExprKind::TodLiteral:
      v.constant = ConstValue::ofInt(static_cast<int64_t>(e.intValue));
      v.type = types_->elementary(TypeKind::Tod);
      return v;
    case ast::ExprKind::DtLiteral:
      v.constant = ConstValue::ofInt(static_cast<int64_t>(e.intValue));
      v.type = types_->elementary(TypeKind::Dt);
      return v;
    default: break;
  }
  return v;
}

std::optional<ConstValue> Compiler::foldBinary(ast::BinaryOp op, const ConstValue& a, const ConstValue& b,
                                               const Type* t, const SourceSpan& span) {
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
        if (y == 0.0) {
          error(span, "division by zero in a constant expression");
          return std::nullopt;
        }
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
  switch (op) {
    case ast::BinaryOp::Add: return w(x + y);
    case ast::BinaryOp::Sub: return w(x - y);
    case ast::BinaryOp::Mul: return w(x * y);
    case ast::BinaryOp::Div:
      if (y == 0) {
        error(span, "division by zero in a constant expression");
        return std::nullopt;
      }
      return w(x / y);
    case ast::BinaryOp::Mod:
      if (y == 0) {
        error(span, "division by zero in a constant expression");
        return std::nullopt;
      }
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

std::optional<Value> Compiler::constantOf(const ast::Expr& e, const Type* hint) {
  switch (e.kind) {
    case ast::ExprKind::IntLiteral:
    case ast::ExprKind::RealLiteral:
    case ast::ExprKind::BoolLiteral:
    case ast::ExprKind::StringLiteral:
    case ast::ExprKind::TimeLiteral:
    case ast::ExprKind::DateLiteral:
    case ast::ExprKind::TodLiteral:
    case ast::ExprKind::DtLiteral: return genLiteral(e, hint);
    case ast::ExprKind::Name: {
      const std::string key = upperCase(e.text);
      const size_t hash = key.find('#');
      if (hash != std::string::npos) {  // Color#Red
        const std::string typeName = key.substr(0, hash);
        const std::string member = key.substr(hash + 1);
        const Type* t = resolveNamedType(typeName, e.span);
        if (!t) return Value{types_->elementary(TypeKind::Int), true, ConstValue::ofInt(0), {}};
        if (t->kind != TypeKind::Enum) {
          error(e.span, fmt::format("'{}' is not an enumeration", typeName));
          return Value{t, true, ConstValue::ofInt(0), {}};
        }
        for (const EnumMember& m : t->members)
          if (upperCase(m.name) == member) return Value{t, true, ConstValue::ofInt(m.value), {}};
        error(e.span, fmt::format("{} has no value '{}'", t->name, e.text.substr(hash + 1)));
        return Value{t, true, ConstValue::ofInt(0), {}};
      }
      // Variables shadow enumeration values; constants fold.
      if (ctx_) {
        if (ctx_->frameVars.count(key) || (ctx_->instanceType && ctx_->instanceType->field(e.text))) {
          if (const ConstValue* c = localConstant(key)) {
            const Variable* v = ctx_->frameVars.count(key) ? ctx_->frameVars[key] : ctx_->instanceType->field(e.text);
            return Value{v->type, true, *c, {}};
          }
          return std::nullopt;
        }
      } else if (layoutDecl_) {
        if (const ConstValue* c = localConstant(key)) {
          for (const ast::VarDecl& d : layoutDecl_->ast->vars)
            if (equalsIgnoreCase(d.name, e.text) && d.type) return Value{resolveType(*d.type), true, *c, {}};
        }
      }
      if (auto it = globals_.find(key); it != globals_.end()) {
        resolveGlobal(*it->second);
        if (it->second->constant) return Value{it->second->var.type, true, *it->second->constant, {}};
        return std::nullopt;
      }
      auto it = enumValues_.find(key);
      if (it == enumValues_.end()) {
        // An enum type used only here may not be resolved yet: resolve the declared types lazily.
        for (auto& [name, decl] : typeDecls_)
          if (decl->type && decl->type->kind == ast::TypeRefKind::Enum) resolveNamedType(decl->name, decl->span);
        it = enumValues_.find(key);
      }
      if (it != enumValues_.end()) {
        const auto& candidates = it->second;
        if (hint) {
          for (const auto& [t, value] : candidates)
            if (t == valueBase(hint)) return Value{t, true, ConstValue::ofInt(value), {}};
        }
        if (candidates.size() > 1)
          error(e.span, fmt::format("'{}' names values of several enumerations; write Type#{}", e.text, e.text));
        return Value{candidates[0].first, true, ConstValue::ofInt(candidates[0].second), {}};
      }
      return std::nullopt;
    }
    case ast::ExprKind::Unary: {
      std::optional<Value> v = constantOf(*e.operand, hint);
      if (!v || !v->isConst) return std::nullopt;
      if (e.unaryOp == ast::UnaryOp::Plus) return v;
      if (e.unaryOp == ast::UnaryOp::Negate) {
        if (v->type && !(valueBase(v->type)->isNumeric() || v->type->isTimeLike())) return std::nullopt;
        if (v->constant.kind == ConstValue::Kind::Real)
          v->constant.r = -v->constant.r;
        else if (v->constant.kind == ConstValue::Kind::Int)
          v->constant.i =
              v->type && valueBase(v->type)->isInteger() ? wrapTo(-v->constant.i, valueBase(v->type)) : -v->constant.i;
        else
          return std::nullopt;
        return v;
      }
      // NOT
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
      std::optional<Value> a = constantOf(*e.operand, hint);
      if (!a || !a->isConst) return std::nullopt;
      std::optional<Value> b = constantOf(*e.rhs, hint);
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
        *a = convertValue(*a, t, e.span, false);
        *b = convertValue(*b, t, e.span, false);
      }
      std::optional<ConstValue> c = foldBinary(e.binaryOp, a->constant, b->constant, t, e.span);
      if (!c) return std::nullopt;
      Value r;
      r.isConst = true;
      r.constant = *c;
      if (isComparison(e.binaryOp) || c->kind == ConstValue::Kind::Bool)
        r.type = types_->elementary(TypeKind::Bool);
      else if (e.binaryOp == ast::BinaryOp::Power)
        r.type = t && t->kind == TypeKind::Real ? t : (t ? types_->elementary(TypeKind::LReal) : nullptr);
      else
        r.type = t;
      return r;
    }
    default: return std::nullopt;
  }
}

// ---------------------------------------------------------------- operators

Value Compiler::genUnary(const ast::Expr& e, const Type* hint, const Place* dest) {
  Value v = genExpr(*e.operand, hint);
  if (isPoison(v)) return v;
  if (v.isConst || !v.type) {
    error(e.span, "operator needs a typed operand");
    return v;
  }
  const Type* t = valueBase(v.type);
  auto target = [&](const Type* rt) { return resultPlace(rt, dest); };
  if (e.unaryOp == ast::UnaryOp::Plus) return v;
  if (e.unaryOp == ast::UnaryOp::Negate) {
    if (!t->isNumeric() && t->kind != TypeKind::Time && t->kind != TypeKind::LTime) {
      error(e.span, fmt::format("cannot negate a {}", t->name));
      return v;
    }
    const uint32_t src = readOperand(v, e.span);
    Value r = target(t);
    emit(opFor(Op::NEG_I8, primOf(*t)), {o(r.place.operand), o(src)});
    return r;
  }
  if (t->kind == TypeKind::Bool) {
    const uint32_t src = readOperand(v, e.span);
    Value r = target(t);
    emit(Op::BNOT, {o(r.place.operand), o(src)});
    return r;
  }
  if (t->isInteger()) {
    const uint32_t src = readOperand(v, e.span);
    Value r = target(t);
    emit(bitsOp(Op::NOT_8, t->size), {o(r.place.operand), o(src)});
    return r;
  }
  error(e.span, fmt::format("NOT needs a BOOL or bit string, not {}", t->name));
  return v;
}

Value Compiler::genBinary(const ast::Expr& e, const Type* hint, const Place* dest) {
  if (std::optional<Value> c = constantOf(e, hint)) return *c;
  const ast::BinaryOp op = e.binaryOp;
  Value a = genExpr(*e.operand, nullptr);
  Value b = genExpr(*e.rhs, a.type);
  if (isPoison(a) || isPoison(b)) return poison();
  if (a.isConst && !a.type && b.type) a = genExpr(*e.operand, b.type);  // enum names resolved by the other side
  const Type* ta = a.type ? valueBase(a.type) : nullptr;
  const Type* tb = b.type ? valueBase(b.type) : nullptr;
  const Type* boolType = types_->elementary(TypeKind::Bool);
  const Type* i64 = types_->elementary(TypeKind::LInt);
  const Type* f64 = types_->elementary(TypeKind::LReal);

  auto target = [&](const Type* rt) { return resultPlace(rt, dest); };
  auto arith = [&](Op family, const Type* t, const Value& x, const Value& y) -> Value {
    const uint32_t ox = operandAs(x, t, e.span);
    const uint32_t oy = operandAs(y, t, e.span);
    Value r = target(t);
    emit(opFor(family, primOf(*t)), {o(r.place.operand), o(ox), o(oy)});
    return r;
  };
  auto familyOf = [&](ast::BinaryOp bop) {
    switch (bop) {
      case ast::BinaryOp::Add: return Op::ADD_I8;
      case ast::BinaryOp::Sub: return Op::SUB_I8;
      case ast::BinaryOp::Mul: return Op::MUL_I8;
      case ast::BinaryOp::Div: return Op::DIV_I8;
      default: return Op::MOD_I8;
    }
  };

  // Strings compare; nothing else.
  if ((ta && ta->kind == TypeKind::String) || (tb && tb->kind == TypeKind::String) ||
      (a.isConst && a.constant.kind == ConstValue::Kind::String) ||
      (b.isConst && b.constant.kind == ConstValue::Kind::String)) {
    if (!isComparison(op) || !ta || !tb || ta->kind != TypeKind::String || tb->kind != TypeKind::String) {
      error(e.span, fmt::format("operator {} cannot be applied to {} and {}", opText(op), ta ? ta->name : "?",
                                tb ? tb->name : "?"));
      return tempValue(boolType);
    }
    uint32_t x = readOperand(a, e.span), y = readOperand(b, e.span);
    Op sop = Op::SEQ;
    switch (op) {
      case ast::BinaryOp::Eq: sop = Op::SEQ; break;
      case ast::BinaryOp::Ne: sop = Op::SNE; break;
      case ast::BinaryOp::Lt: sop = Op::SLT; break;
      case ast::BinaryOp::Le: sop = Op::SLE; break;
      case ast::BinaryOp::Gt:
        sop = Op::SLT;
        std::swap(x, y);
        break;
      case ast::BinaryOp::Ge:
        sop = Op::SLE;
        std::swap(x, y);
        break;
      default: break;
    }
    Value r = target(boolType);
    emit(sop, {o(r.place.operand), o(x), o(y)});
    return r;
  }

  // Time and date arithmetic.
  const bool timeA = ta && ta->isTimeLike();
  const bool timeB = tb && tb->isTimeLike();
  if ((timeA || timeB) && !isComparison(op)) {
    auto kindOf = [](const Type* t) { return t ? t->kind : TypeKind::Void; };
    const TypeKind ka = kindOf(ta), kb = kindOf(tb);
    auto isDur = [](TypeKind k) { return k == TypeKind::Time || k == TypeKind::LTime; };
    if (op == ast::BinaryOp::Add || op == ast::BinaryOp::Sub) {
      const Type* result = nullptr;
      if (isDur(ka) && isDur(kb))
        result = (ka == TypeKind::LTime || kb == TypeKind::LTime) ? types_->elementary(TypeKind::LTime) : ta;
      else if ((ka == TypeKind::Tod || ka == TypeKind::Dt) && isDur(kb))
        result = ta;
      else if (op == ast::BinaryOp::Add && isDur(ka) && (kb == TypeKind::Tod || kb == TypeKind::Dt))
        result = tb;
      else if (op == ast::BinaryOp::Sub && ka == kb &&
               (ka == TypeKind::Date || ka == TypeKind::Tod || ka == TypeKind::Dt))
        result = types_->elementary(TypeKind::Time);
      if (!result) {
        error(e.span, fmt::format("operator {} cannot be applied to {} and {}", opText(op), ta ? ta->name : "a number",
                                  tb ? tb->name : "a number"));
        return tempValue(ta ? ta : tb);
      }
      const uint32_t x = operandAs(a, ta, e.span), y = operandAs(b, tb, e.span);
      Value r = target(result);
      emit(op == ast::BinaryOp::Add ? Op::ADD_I64 : Op::SUB_I64, {o(r.place.operand), o(x), o(y)});
      return r;
    }
    if ((op == ast::BinaryOp::Mul || op == ast::BinaryOp::Div) && isDur(ka) && !timeB) {
      const bool realFactor = (b.isConst && b.constant.kind == ConstValue::Kind::Real) || (tb && tb->isReal());
      Value r = target(ta);
      if (realFactor) {
        const uint32_t x = operandAs(a, f64, e.span, true);
        const uint32_t y = operandAs(b, f64, e.span, true);
        const uint32_t t = allocTemp(f64);
        emit(op == ast::BinaryOp::Mul ? Op::MUL_F64 : Op::DIV_F64, {o(t), o(x), o(y)});
        emit(Op::CVT_F64_I64, {o(r.place.operand), o(t)});
      } else {
        const uint32_t x = readOperand(a, e.span);
        const uint32_t y = operandAs(b, i64, e.span, !b.isConst);
        emit(op == ast::BinaryOp::Mul ? Op::MUL_I64 : Op::DIV_I64, {o(r.place.operand), o(x), o(y)});
      }
      return r;
    }
    if (op == ast::BinaryOp::Mul && isDur(kb) && !timeA) {
      // n * T#1s
      const uint32_t x = readOperand(b, e.span);
      const uint32_t y = operandAs(a, i64, e.span, !a.isConst);
      Value r = target(tb);
      emit(Op::MUL_I64, {o(r.place.operand), o(x), o(y)});
      return r;
    }
    error(e.span, fmt::format("operator {} cannot be applied to {} and {}", opText(op), ta ? ta->name : "a number",
                              tb ? tb->name : "a number"));
    return tempValue(ta ? ta : tb);
  }

  if (op == ast::BinaryOp::And || op == ast::BinaryOp::Or || op == ast::BinaryOp::Xor) {
    const Type* t = commonType(a, b, e.span);
    if (t->kind != TypeKind::Bool && !t->isInteger()) {
      error(e.span, fmt::format("operator {} needs BOOL or bit strings, not {}", opText(op), t->name));
      return tempValue(boolType);
    }
    const Op family = op == ast::BinaryOp::And ? Op::AND_8 : op == ast::BinaryOp::Or ? Op::OR_8 : Op::XOR_8;
    const uint32_t x = operandAs(a, t, e.span), y = operandAs(b, t, e.span);
    Value r = target(t);
    emit(bitsOp(family, t->size), {o(r.place.operand), o(x), o(y)});
    return r;
  }

  if (op == ast::BinaryOp::Power) {
    const Type* t = commonType(a, b, e.span);
    const Type* rt = t->kind == TypeKind::Real ? t : f64;
    if (!t->isNumeric()) {
      error(e.span, fmt::format("** needs numbers, not {}", t->name));
      return tempValue(rt);
    }
    const uint32_t x = operandAs(a, rt, e.span, true), y = operandAs(b, rt, e.span, true);
    Value r = target(rt);
    emit(fltOp(Op::EXPT_F32, primOf(*rt)), {o(r.place.operand), o(x), o(y)});
    return r;
  }

  const Type* t = commonType(a, b, e.span);
  if (isComparison(op)) {
    const Type* ct = valueBase(t);
    if (ct->kind == TypeKind::Enum) ct = ct->base;
    if (!ct->isScalar()) {
      error(e.span, fmt::format("{} values cannot be compared", t->name));
      return tempValue(boolType);
    }
    if (ct->kind == TypeKind::Ref && op != ast::BinaryOp::Eq && op != ast::BinaryOp::Ne) {
      error(e.span, "references can only be compared with = and <>");
      return tempValue(boolType);
    }
    uint32_t x = operandAs(a, ct, e.span), y = operandAs(b, ct, e.span);
    Op family = Op::EQ_I8;
    switch (op) {
      case ast::BinaryOp::Eq: family = Op::EQ_I8; break;
      case ast::BinaryOp::Ne: family = Op::NE_I8; break;
      case ast::BinaryOp::Lt: family = Op::LT_I8; break;
      case ast::BinaryOp::Le: family = Op::LE_I8; break;
      case ast::BinaryOp::Gt:
        family = Op::LT_I8;
        std::swap(x, y);
        break;
      case ast::BinaryOp::Ge:
        family = Op::LE_I8;
        std::swap(x, y);
        break;
      default: break;
    }
    Value r = target(boolType);
    emit(opFor(family, primOf(*ct)), {o(r.place.operand), o(x), o(y)});
    return r;
  }
  const Type* at = valueBase(t);
  if (!at->isNumeric() || at->kind == TypeKind::Enum) {
    error(e.span, fmt::format("operator {} cannot be applied to {}", opText(op), t->name));
    return tempValue(t);
  }
  if (op == ast::BinaryOp::Mod && !at->isInteger()) {
    error(e.span, fmt::format("MOD needs integers, not {}", t->name));
    return tempValue(t);
  }
  return arith(familyOf(op), at, a, b);
}

// ---------------------------------------------------------------- conditions

bool Compiler::safeToSkip(const ast::Expr& e) const {
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
    default: return false;  // calls, indexing and dereferences may fault or have effects
  }
}

void Compiler::genCondJump(const ast::Expr& cond, bool jumpIf, Label target) {
  const Type* boolType = types_->elementary(TypeKind::Bool);
  if (std::optional<Value> c = constantOf(cond, boolType)) {
    if (c->constant.kind != ConstValue::Kind::Bool && !(c->type && c->type->kind == TypeKind::Bool)) {
      error(cond.span, "condition must be BOOL");
      return;
    }
    if ((c->constant.i != 0) == jumpIf) emit(Op::JMP, {lab(target)});
    return;
  }
  if (cond.kind == ast::ExprKind::Unary && cond.unaryOp == ast::UnaryOp::Not) {
    // NOT of a comparison flips the jump (NOT on bit strings is arithmetic, handled below).
    if (cond.operand->kind == ast::ExprKind::Binary && isComparison(cond.operand->binaryOp)) {
      genCondJump(*cond.operand, !jumpIf, target);
      return;
    }
  }
  if (cond.kind == ast::ExprKind::Binary &&
      (cond.binaryOp == ast::BinaryOp::And || cond.binaryOp == ast::BinaryOp::Or) && safeToSkip(*cond.rhs)) {
    // Short-circuit only where skipping the right side cannot change a result or a fault.
    const bool isAnd = cond.binaryOp == ast::BinaryOp::And;
    Value left = genExpr(*cond.operand);
    if (left.type && valueBase(left.type)->kind == TypeKind::Bool) {
      if (isAnd != jumpIf) {
        // AND jump-if-false / OR jump-if-true: either side decides alone.
        const uint32_t x = readOperand(left, cond.span);
        emit(jumpIf ? Op::JT : Op::JF, {o(x), lab(target)});
        genCondJump(*cond.rhs, jumpIf, target);
      } else {
        Label skip = newLabel();
        const uint32_t x = readOperand(left, cond.span);
        emit(isAnd ? Op::JF : Op::JT, {o(x), lab(skip)});
        genCondJump(*cond.rhs, jumpIf, target);
        bind(skip);
      }
      return;
    }
  }
  if (cond.kind == ast::ExprKind::Binary && isComparison(cond.binaryOp)) {
    Value a = genExpr(*cond.operand);
    Value b = genExpr(*cond.rhs, a.type);
    if (isPoison(a) || isPoison(b)) return;
    if (a.isConst && !a.type && b.type) a = genExpr(*cond.operand, b.type);
    const Type* ta = a.type ? valueBase(a.type) : nullptr;
    const Type* tb = b.type ? valueBase(b.type) : nullptr;
    const bool stringy = (ta && ta->kind == TypeKind::String) || (tb && tb->kind == TypeKind::String) ||
                         (a.isConst && a.constant.kind == ConstValue::Kind::String);
    if (!stringy) {
      const Type* t = commonType(a, b, cond.span);
      const Type* ct = valueBase(t);
      if (ct->kind == TypeKind::Enum) ct = ct->base;
      if (ct->isScalar()) {
        uint32_t x = operandAs(a, ct, cond.span), y = operandAs(b, ct, cond.span);
        ast::BinaryOp op = cond.binaryOp;
        const Prim p = primOf(*ct);
        const bool flt = primIsFloat(p);
        // Jump when (x op y) == jumpIf.
        Op family = Op::JEQ_I8;
        bool swap = false;
        bool negated = false;  // floats: NaN makes !(x<y) differ from y<=x
        if (!jumpIf) {
          switch (op) {
            case ast::BinaryOp::Eq: op = ast::BinaryOp::Ne; break;
            case ast::BinaryOp::Ne: op = ast::BinaryOp::Eq; break;
            default: negated = true; break;
          }
        }
        switch (op) {
          case ast::BinaryOp::Eq: family = Op::JEQ_I8; break;
          case ast::BinaryOp::Ne: family = Op::JNE_I8; break;
          case ast::BinaryOp::Lt: family = Op::JLT_I8; break;
          case ast::BinaryOp::Le: family = Op::JLE_I8; break;
          case ast::BinaryOp::Gt:
            family = Op::JLT_I8;
            swap = true;
            break;
          case ast::BinaryOp::Ge:
            family = Op::JLE_I8;
            swap = true;
            break;
          default: break;
        }
        if (swap) std::swap(x, y);
        if (negated) {
          if (flt) {
            emit(fltOp(family == Op::JLT_I8 ? Op::JNLT_F32 : Op::JNLE_F32, p), {o(x), o(y), lab(target)});
            return;
          }
          // Integers: !(x < y) == (y <= x), !(x <= y) == (y < x).
          family = family == Op::JLT_I8 ? Op::JLE_I8 : Op::JLT_I8;
          std::swap(x, y);
        }
        emit(opFor(family, p), {o(x), o(y), lab(target)});
        return;
      }
    }
  }
  Value v = genExpr(cond, boolType);
  if (isPoison(v)) return;
  if (!v.type || valueBase(v.type)->kind != TypeKind::Bool) {
    error(cond.span, fmt::format("condition must be BOOL, not {}", v.type ? v.type->name : "a number"));
    return;
  }
  const uint32_t x = readOperand(v, cond.span);
  emit(jumpIf ? Op::JT : Op::JF, {o(x), lab(target)});
}

// ---------------------------------------------------------------- dispatch

Value Compiler::genExpr(const ast::Expr& e, const Type* hint, const Place* dest) {
  switch (e.kind) {
    case ast::ExprKind::IntLiteral:
    case ast::ExprKind::RealLiteral:
    case ast::ExprKind::BoolLiteral:
    case ast::ExprKind::StringLiteral:
    case ast::ExprKind::TimeLiteral:
    case ast::ExprKind::DateLiteral:
    case ast::ExprKind::TodLiteral:
    case ast::ExprKind::DtLiteral: return genLiteral(e, hint);
    case ast::ExprKind::Name: {
      if (e.text.find('#') != std::string::npos) return *constantOf(e, hint);
      if (ctx_ && hint && valueBase(hint)->kind == TypeKind::Enum) {
        // Enum value names win over nothing else: variables shadow them.
        const std::string key = upperCase(e.text);
        const bool isVariable = ctx_->frameVars.count(key) ||
                                (ctx_->instanceType && ctx_->instanceType->field(e.text)) || globals_.count(key);
        if (!isVariable)
          if (std::optional<Value> c = constantOf(e, hint)) return *c;
      }
      return genName(e);
    }
    case ast::ExprKind::Member: return genMember(e);
    case ast::ExprKind::BitAccess: {
      Value base = genExpr(*e.operand);
      const Type* t = base.type ? valueBase(base.type) : nullptr;
      if (base.isConst || !t || !t->isInteger()) {
        if (!isPoison(base)) error(e.span, "bit access needs an integer or bit string variable");
        return poison();
      }
      if (e.intValue >= t->size * 8) {
        error(e.span, fmt::format("{} has no bit {}", t->name, e.intValue));
        return tempValue(types_->elementary(TypeKind::Bool));
      }
      Value r;
      r.type = types_->elementary(TypeKind::Bool);
      Place& p = r.place;
      p.type = r.type;
      p.readOnly = base.place.readOnly;
      if (base.place.kind == Place::Kind::Direct) {
        p.kind = Place::Kind::Bit;
        p.operand = base.place.operand;
        p.bit = static_cast<uint8_t>(e.intValue);
        p.width = static_cast<uint8_t>(t->size);
        return r;
      }
      // Through a reference or array element: the byte holding the bit is addressable directly.
      const uint32_t ref = addressOf(base.place, e.span);
      p.kind = Place::Kind::Indirect;
      // A Bit place needs a direct word; read-modify-write through a temporary word otherwise.
      const uint32_t word = allocTemp(t);
      emit(sizedOp(Op::LD1, t->size), {o(word), o(ref), o(0)});
      Value bitValue = tempValue(r.type);
      emit(bitsOp(Op::GETBIT_8, t->size), {o(bitValue.place.operand), o(word), o(static_cast<uint32_t>(e.intValue))});
      bitValue.place.readOnly = true;  // writing a bit through a reference is not supported
      return bitValue;
    }
    case ast::ExprKind::Index: return genIndex(e);
    case ast::ExprKind::Deref: return genDeref(e);
    case ast::ExprKind::Unary: {
      if (std::optional<Value> c = constantOf(e, hint)) return *c;
      return genUnary(e, hint, dest);
    }
    case ast::ExprKind::Binary: return genBinary(e, hint, dest);
    case ast::ExprKind::Call: return genCall(e, hint, dest, false);
  }
  return poison();
}

}  // namespace scanback::compiler
