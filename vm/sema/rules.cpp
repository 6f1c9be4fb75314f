#include "vm/sema/rules.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace scanback::sema {

const Type* valueBase(const Type* t) {
  while (t && t->kind == TypeKind::Subrange) t = t->base;
  return t;
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

bool implicitlyConvertible(const Type* from, const Type* to) {
  if (!from || !to) return false;
  if (from == to) return true;
  if (to->kind == TypeKind::Subrange) return implicitlyConvertible(from, to->base);
  if (from->kind == TypeKind::Subrange) return implicitlyConvertible(from->base, to);
  if (from->kind == TypeKind::Enum) return to->kind == TypeKind::Enum ? false : implicitlyConvertible(from->base, to);
  // STRING and WSTRING do not mix (IEC has no implicit conversion): STRING_TO_WSTRING and
  // WSTRING_TO_STRING.
  if (from->kind == TypeKind::String && to->kind == TypeKind::String) return from->wide == to->wide;
  if (from->kind == TypeKind::Ref && to->kind == TypeKind::Ref) {
    if (from->base == to->base) return true;
    if (from->isInterface() || to->isInterface()) return false;
    // A pointer converts to every pointer and REF_TO type (its dereference is checked), and a
    // REF_TO to every pointer type; a REF_TO holds its own type or a block that extends it, as in
    // CODESYS (docs/language.md, "Pointers").
    if (from->pointer || to->pointer) return true;
    return from->base && to->base && from->base->kind == TypeKind::FunctionBlock &&
           to->base->kind == TypeKind::FunctionBlock && from->base->derivesFrom(to->base);
  }
  // A pointer is an image offset: it converts to and from the unsigned types that hold one.
  auto holdsAddress = [](const Type* t) {
    return t->kind == TypeKind::DWord || t->kind == TypeKind::UDInt || t->kind == TypeKind::LWord ||
           t->kind == TypeKind::ULInt;
  };
  if (from->kind == TypeKind::Ref && from->pointer) return holdsAddress(to);
  if (to->kind == TypeKind::Ref && to->pointer) return holdsAddress(from);
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

bool codesysConvertible(const Type* from, const Type* to) {
  from = valueBase(from);
  to = valueBase(to);
  return from && to && from->isNumeric() && to->isNumeric();
}

bool fitsLiteral(const ConstValue& c, const Type* t) {
  t = valueBase(t);
  if (!t) return false;
  if (c.kind == ConstValue::Kind::Real) return t->isReal();
  if (c.kind != ConstValue::Kind::Int) return false;
  if (t->isReal()) return true;
  if (t->kind == TypeKind::Bool) return c.i == 0 || c.i == 1;
  if (t->kind == TypeKind::Ref && t->pointer) return c.i >= 0 && c.i <= UINT32_MAX;  // an address (0: NULL)
  if (t->isInterface()) return c.i == 0;                                             // NULL
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

TypeKind literalKind(const ConstValue& c) {
  if (c.kind == ConstValue::Kind::Real) return TypeKind::LReal;
  if (c.kind == ConstValue::Kind::Bool) return TypeKind::Bool;
  if (c.i >= INT32_MIN && c.i <= INT32_MAX) return TypeKind::DInt;
  if (c.i >= INT64_MIN && c.i <= INT64_MAX) return TypeKind::LInt;
  return TypeKind::ULInt;
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

ConstValue convertConst(const ConstValue& c, const Type* to) {
  const Type* base = valueBase(to);
  if (base->kind == TypeKind::Enum) base = base->base;
  if (base->isReal()) {
    double r = c.kind == ConstValue::Kind::Real ? c.r : static_cast<double>(c.i);
    if (base->kind == TypeKind::Real) r = static_cast<float>(r);
    return ConstValue::ofReal(r);
  }
  if (base->kind == TypeKind::Bool) return ConstValue::ofBool(c.kind == ConstValue::Kind::Real ? c.r != 0.0 : c.i != 0);
  if (c.kind == ConstValue::Kind::Real) {
    // Rounds half away from zero and saturates, as CVT does.
    const double r = std::round(c.r);
    const Prim p = primOf(*base);
    const double lo = primIsSigned(p) ? -std::ldexp(1.0, static_cast<int>(primSize(p) * 8 - 1)) : 0.0;
    const double hi = primIsSigned(p) ? std::ldexp(1.0, static_cast<int>(primSize(p) * 8 - 1)) - 1
                                      : std::ldexp(1.0, static_cast<int>(primSize(p) * 8)) - 1;
    Int128 v;
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

namespace {

std::optional<ConstValue> compareConst(ast::BinaryOp op, const auto& x, const auto& y) {
  switch (op) {
    case ast::BinaryOp::Lt: return ConstValue::ofBool(x < y);
    case ast::BinaryOp::Gt: return ConstValue::ofBool(x > y);
    case ast::BinaryOp::Le: return ConstValue::ofBool(x <= y);
    case ast::BinaryOp::Ge: return ConstValue::ofBool(x >= y);
    case ast::BinaryOp::Eq: return ConstValue::ofBool(x == y);
    case ast::BinaryOp::Ne: return ConstValue::ofBool(x != y);
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<ConstValue> foldBinary(ast::BinaryOp op, const ConstValue& a, const ConstValue& b, const Type* t,
                                     FoldError& error) {
  using K = ConstValue::Kind;
  error = FoldError::None;
  if (a.kind == K::String || b.kind == K::String) {
    if (a.kind != b.kind || a.wide != b.wide) return std::nullopt;
    if (!a.wide) return compareConst(op, a.s, b.s);
    // WSTRINGs compare by code units, not by the bytes of their little-endian units.
    auto units = [](const std::string& s) {
      std::u16string u(s.size() / 2, u'\0');
      std::memcpy(u.data(), s.data(), u.size() * 2);
      return u;
    };
    return compareConst(op, units(a.s), units(b.s));
  }
  const bool real = a.kind == K::Real || b.kind == K::Real || (t && valueBase(t)->isReal());
  const double xr = a.kind == K::Real ? a.r : static_cast<double>(a.i);
  const double yr = b.kind == K::Real ? b.r : static_cast<double>(b.i);
  if (op == ast::BinaryOp::Power) return ConstValue::ofReal(std::pow(xr, yr));
  if (real) {
    const bool single = t && valueBase(t)->kind == TypeKind::Real;
    auto r = [&](double v) { return ConstValue::ofReal(single ? static_cast<float>(v) : v); };
    switch (op) {
      case ast::BinaryOp::Add: return r(xr + yr);
      case ast::BinaryOp::Sub: return r(xr - yr);
      case ast::BinaryOp::Mul: return r(xr * yr);
      case ast::BinaryOp::Div:
        if (yr == 0.0) {
          error = FoldError::DivisionByZero;
          return std::nullopt;
        }
        return r(xr / yr);
      default: return compareConst(op, xr, yr);
    }
  }
  const Int128 x = a.i, y = b.i;
  const Type* base = t ? valueBase(t) : nullptr;
  if (base && base->kind == TypeKind::Enum) base = base->base;
  // Typed integers wrap at their width, as the VM's arithmetic does: computed modulo 2^128 (no
  // signed overflow), then cut to the width. Untyped ones fold exactly (their type comes later).
  const bool wraps = base && base->isScalar() && !base->isReal();
  const auto fold = [&](Int128 exact, bool overflowed, Int128 modular) -> std::optional<ConstValue> {
    if (wraps) return ConstValue::ofInt(wrapTo(modular, base));
    if (overflowed) {
      error = FoldError::Overflow;
      return std::nullopt;
    }
    return ConstValue::ofInt(exact);
  };
  const UInt128 ux = static_cast<UInt128>(x), uy = static_cast<UInt128>(y);
  const Int128 minimum = std::numeric_limits<Int128>::min();
  const bool boolish = a.kind == K::Bool && b.kind == K::Bool;
  Int128 r = 0;
  switch (op) {
    case ast::BinaryOp::Add: {
      const bool overflowed = __builtin_add_overflow(x, y, &r);
      return fold(r, overflowed, static_cast<Int128>(ux + uy));
    }
    case ast::BinaryOp::Sub: {
      const bool overflowed = __builtin_sub_overflow(x, y, &r);
      return fold(r, overflowed, static_cast<Int128>(ux - uy));
    }
    case ast::BinaryOp::Mul: {
      const bool overflowed = __builtin_mul_overflow(x, y, &r);
      return fold(r, overflowed, static_cast<Int128>(ux * uy));
    }
    case ast::BinaryOp::Div:
    case ast::BinaryOp::Mod: {
      if (y == 0) {
        error = FoldError::DivisionByZero;
        return std::nullopt;
      }
      const bool isDiv = op == ast::BinaryOp::Div;
      if (x == minimum && y == -1) return fold(isDiv ? x : 0, isDiv, isDiv ? x : 0);
      return fold(isDiv ? x / y : x % y, false, isDiv ? x / y : x % y);
    }
    case ast::BinaryOp::And: return boolish ? ConstValue::ofBool(x && y) : fold(x & y, false, x & y);
    case ast::BinaryOp::Or: return boolish ? ConstValue::ofBool(x || y) : fold(x | y, false, x | y);
    case ast::BinaryOp::Xor: return boolish ? ConstValue::ofBool((x != 0) != (y != 0)) : fold(x ^ y, false, x ^ y);
    default: return compareConst(op, x, y);
  }
}

bool safeToSkip(const ast::Expr& e) {
  if (ast::isLiteral(e.kind)) return true;
  switch (e.kind) {
    case ast::ExprKind::Name: return true;
    case ast::ExprKind::Member:
    case ast::ExprKind::BitAccess:
    case ast::ExprKind::Unary: return safeToSkip(*e.operand);
    case ast::ExprKind::Binary:
      return e.binaryOp != ast::BinaryOp::Div && e.binaryOp != ast::BinaryOp::Mod && safeToSkip(*e.operand) &&
             safeToSkip(*e.rhs);
    default: return false;  // calls, indexing and dereferences may fault or have effects
  }
}

}  // namespace scanback::sema
