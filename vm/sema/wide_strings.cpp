// WSTRING and WCHAR in the semantic pass: `"..."` literals, and the conversions between WSTRING,
// STRING, WCHAR and the rest. A WSTRING is the STRING type with `wide` set, so everything else
// (functions, comparisons, assignment) is the STRING code, parametrised by the width.
#include <fmt/format.h>

#include <algorithm>

#include "vm/sema/analyzer.h"
#include "vm/sema/rules.h"

namespace scanback::sema {

const Type* Analyzer::stringType(bool wide, uint64_t capacity) {
  const auto n = static_cast<uint32_t>(std::clamp<uint64_t>(capacity, 1, 65535));
  return wide ? types().wideString(n) : types().string(n);
}

Expr* Analyzer::stringLiteral(const ast::Expr& e) {
  if (e.typePrefix != "WSTRING" && e.typePrefix != "WCHAR")
    return constantNode(stringType(false, e.text.size()), ConstValue::ofString(e.text), e.span);
  ConstValue c = ConstValue::ofWideString(e.text);
  if (e.typePrefix == "WSTRING") {
    const Type* type = stringType(true, c.stringUnits());  // before c is moved from
    return constantNode(type, std::move(c), e.span);
  }
  if (c.stringUnits() != 1) {
    error(e.span, fmt::format("WCHAR#\"...\" holds one UTF-16 code unit, not {}", c.stringUnits()));
    return constantNode(elementary(TypeKind::WChar), ConstValue::ofInt(0), e.span);
  }
  const auto unit = static_cast<uint16_t>(static_cast<uint8_t>(e.text[0]) | static_cast<uint8_t>(e.text[1]) << 8);
  return constantNode(elementary(TypeKind::WChar), ConstValue::ofInt(unit), e.span);
}

Expr* Analyzer::wideConversion(const ast::Expr& call, Expr* arg, const Type* from, const Type* to) {
  const SourceSpan& span = call.span;
  const Type* toBase = valueBase(to);
  const bool toWide = toBase->isWideString();
  const bool fromWide = from->isWideString();
  const bool toWChar = toBase->kind == TypeKind::WChar;
  const bool fromWChar = from->kind == TypeKind::WChar;
  if (!toWide && !fromWide && !toWChar && !fromWChar) return nullptr;
  auto op = [&](Op o, const Type* t, Expr* v) {
    Expr* r = operation(o, t, span, {v});
    r->fresh = true;
    return r;
  };
  auto cannot = [&]() {
    error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    return invalid(to, span);
  };
  if (fromWChar && toWChar) return relabel(arg, to, span);
  if (fromWChar) {
    Expr* wide = op(Op::WideFromWChar, toWide ? to : stringType(true, 1), arg);
    if (toWide) return wide;
    if (toBase->kind == TypeKind::String) return op(Op::StrFromWide, to, wide);
    if (toBase->isInteger()) return convert(arg, to, span, true);  // the code unit (WCHAR_TO_WORD)
    return cannot();
  }
  if (toWChar) {
    if (fromWide) return op(Op::WCharFromWide, to, arg);
    if (from->kind == TypeKind::String) return op(Op::WCharFromWide, to, op(Op::WideFromStr, stringType(true, 1), arg));
    if (from->isInteger()) return convert(arg, to, span, true);  // WORD_TO_WCHAR
    return cannot();
  }
  if (fromWide && toWide) return convert(arg, to, span, true);
  if (toWide) {  // from STRING, or from a number through its STRING text
    Expr* text = from->kind == TypeKind::String ? arg : conversion(call, arg, from, stringType(false, 80));
    if (isPoison(text) || text->kind == ExprKind::Invalid) return invalid(to, span);
    return op(Op::WideFromStr, to, text);
  }
  // from WSTRING: to STRING, or to a number through the STRING text
  const Type* asText = toBase->kind == TypeKind::String ? to : stringType(false, from->capacity);
  Expr* text = op(Op::StrFromWide, asText, arg);
  if (toBase->kind == TypeKind::String) return text;
  return conversion(call, text, asText, to);
}

}  // namespace scanback::sema
