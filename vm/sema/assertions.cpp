// The functions of unit tests (TEST_PROGRAM, TEST_FUNCTION_BLOCK): ASSERT_TRUE, ASSERT_FALSE,
// ASSERT_EQUAL, ASSERT_NOT_EQUAL, ASSERT_NEAR, ASSERT_LESS, ASSERT_GREATER and ADVANCE_TIME
// (docs/language.md, "Unit tests"). Typed here once: the comparison follows the rules of the
// operators (`ASSERT_EQUAL(a, b)` compiles where `a = b` does), and each operand's text is its
// conversion to STRING.
#include <fmt/format.h>

#include "vm/sema/analyzer.h"

namespace scanback::sema {

namespace {

ast::BinaryOp comparisonOf(AssertKind kind) {
  switch (kind) {
    case AssertKind::NotEqual: return ast::BinaryOp::Ne;
    case AssertKind::Less: return ast::BinaryOp::Lt;
    case AssertKind::Greater: return ast::BinaryOp::Gt;
    default: return ast::BinaryOp::Eq;
  }
}

}  // namespace

Expr* Analyzer::testBuiltin(const ast::Expr& call, const std::string& upperName) {
  const std::optional<AssertKind> kind = assertKindNamed(upperName);
  const bool advance = upperName == "ADVANCE_TIME";
  if (!kind && !advance) return nullptr;
  const SourceSpan& span = call.span;
  if (callRejected(*call.operand)) return poison(span);
  if (!scope_.inTest()) {
    error(call.operand->span,
          fmt::format("{} may only be used in a TEST_PROGRAM or TEST_FUNCTION_BLOCK", call.operand->text));
    return poison(span);
  }
  const size_t count = advance ? 1 : static_cast<size_t>(assertOperandCount(*kind));
  std::vector<const ast::Expr*> args;
  for (const ast::Argument& a : call.args) {
    if (!a.name.empty() || a.isOutput) {
      error(a.span, fmt::format("{} takes its arguments by position", call.operand->text));
      return poison(span);
    }
    args.push_back(a.value.get());
  }
  if (args.size() != count) {
    error(span,
          fmt::format("{} needs {} argument{}, not {}", call.operand->text, count, count == 1 ? "" : "s", args.size()));
    return poison(span);
  }
  const Type* voidType = elementary(TypeKind::Void);
  const Type* boolType = elementary(TypeKind::Bool);

  if (advance) {
    Expr* by = expression(*args[0], elementary(TypeKind::Time));
    const Type* t = by->type ? valueBase(by->type) : nullptr;
    if (isPoison(by)) return poison(span);
    if (!t || (t->kind != TypeKind::Time && t->kind != TypeKind::LTime)) {
      error(args[0]->span, "ADVANCE_TIME needs a TIME or LTIME");
      return poison(span);
    }
    Expr* r = operation(Op::AdvanceTime, voidType, span, {by});
    r->prim = Prim::I64;
    return r;
  }

  // The operands as written, each evaluated once; the condition and the texts read them.
  std::vector<Expr*> values;
  for (size_t i = 0; i < count; ++i) {
    const Type* hint = *kind == AssertKind::True || *kind == AssertKind::False ? boolType
                       : i > 0 && values[0]->type                              ? values[0]->type
                                                                               : nullptr;
    values.push_back(expression(*args[i], hint));
    if (isPoison(values.back())) return poison(span);
  }
  std::vector<Expr*> reads;  // what the condition and the texts read: the operand's value
  for (size_t i = 0; i < count; ++i) {
    if (values[i]->kind == ExprKind::Constant) {
      reads.push_back(values[i]);
      continue;
    }
    Expr* leaf = make(ExprKind::AssertOperand, values[i]->type, values[i]->span);
    leaf->offset = static_cast<uint32_t>(i);
    reads.push_back(leaf);
  }

  auto info = std::make_unique<AssertInfo>();
  info->kind = *kind;
  for (Expr* v : values) info->operands.push_back(v);
  if (*kind == AssertKind::True || *kind == AssertKind::False) {
    const Type* t = values[0]->type ? valueBase(values[0]->type) : nullptr;
    if (!t || t->kind != TypeKind::Bool) {
      error(args[0]->span, fmt::format("{} needs a BOOL", assertName(*kind)));
      return poison(span);
    }
    info->condition = *kind == AssertKind::True ? reads[0] : operation(Op::BoolNot, boolType, span, {reads[0]});
  } else if (*kind == AssertKind::Near) {
    // |actual - expected| <= tolerance, in LREAL (NaN never holds).
    const Type* f64 = elementary(TypeKind::LReal);
    std::vector<Expr*> reals;
    for (size_t i = 0; i < count; ++i) {
      const Type* t = values[i]->type ? valueBase(values[i]->type) : nullptr;
      const bool number =
          t ? t->isNumeric() && t->kind != TypeKind::Enum : values[i]->constant.kind != ConstValue::Kind::String;
      if (!number) {
        error(args[i]->span, fmt::format("ASSERT_NEAR needs numbers, not {}", t ? t->name : "a string"));
        return poison(span);
      }
      reals.push_back(operandAs(reads[i], f64, span, true));
    }
    Expr* difference = operation(Op::Sub, f64, span, {reals[1], reals[0]});
    difference->fresh = true;
    Expr* distance = operation(Op::Abs, f64, span, {difference});
    distance->fresh = true;
    Expr* holds = operation(Op::Le, boolType, span, {distance, reals[2]});
    holds->prim = Prim::F64;
    holds->fresh = true;
    info->condition = holds;
  } else {
    ast::Expr comparison(ast::ExprKind::Binary, span);
    comparison.binaryOp = comparisonOf(*kind);
    Expr* holds = binaryOperation(comparison, reads[0], reads[1]);
    if (isPoison(holds) || holds->kind == ExprKind::Invalid) return poison(span);
    info->condition = holds;
  }

  if (*kind != AssertKind::True && *kind != AssertKind::False) {
    const Type* text = types().string(80);
    for (Expr* read : reads) {
      const Type* t = read->type ? valueBase(read->type) : nullptr;
      if (t && (t->kind == TypeKind::String || t->kind == TypeKind::WChar)) {
        // Strings in quotes, a WSTRING or WCHAR in double quotes and as UTF-8.
        info->quoted = true;
        info->wide = t->kind == TypeKind::WChar || t->wide;
        if (!info->wide) {
          info->texts.push_back(read);
          continue;
        }
        Expr* wide = read;
        if (t->kind == TypeKind::WChar) {
          wide = operation(Op::WideFromWChar, stringType(true, 1), span, {read});
          wide->fresh = true;
        }
        const uint32_t units = valueBase(wide->type)->capacity;
        Expr* utf8 = operation(Op::Utf8FromWide, stringType(false, uint64_t{units} * 3), span, {wide});
        utf8->fresh = true;
        info->texts.push_back(utf8);
        continue;
      }
      Expr* shown = read;
      if (t && t->kind == TypeKind::Ref) shown = relabel(read, elementary(TypeKind::UDInt), span);  // an address
      info->texts.push_back(conversion(call, shown, shown->type, text));
    }
  }
  Expr* r = make(ExprKind::Assertion, voidType, span);
  r->assertion = std::move(info);
  return r;
}

}  // namespace scanback::sema
