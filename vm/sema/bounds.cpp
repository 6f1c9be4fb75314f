// LOWER_BOUND(array, dimension) and UPPER_BOUND(array, dimension) (DINT; dimensions count from 1):
// constants for an array whose bounds its type fixes, read from the slot for an ARRAY[*]
// VAR_IN_OUT (docs/language.md).
#include <fmt/format.h>

#include "vm/sema/analyzer.h"

namespace scanback::sema {

Expr* Analyzer::boundsBuiltin(const ast::Expr& call, const std::string& upperName) {
  const bool lower = upperName == "LOWER_BOUND";
  if (!lower && upperName != "UPPER_BOUND") return nullptr;
  const SourceSpan& span = call.span;
  const Type* dint = elementary(TypeKind::DInt);
  if (call.args.size() != 2 || !call.args[0].name.empty() || !call.args[1].name.empty() || call.args[0].isOutput ||
      call.args[1].isOutput) {
    error(span, fmt::format("{} needs two arguments by position: an array and a dimension", upperName));
    return poison(span);
  }
  Expr* array = expression(*call.args[0].value);
  if (isPoison(array)) return poison(span);
  const Type* t = array->kind == ExprKind::Constant ? nullptr : array->type;
  if (!t || t->kind != TypeKind::Array) {
    error(call.args[0].span, fmt::format("{} needs an array", upperName));
    return poison(span);
  }
  Expr* dimension = constant(*call.args[1].value);
  if (!dimension || dimension->constant.kind != ConstValue::Kind::Int || dimension->constant.i < 1 ||
      dimension->constant.i > static_cast<int64_t>(t->dims.size())) {
    error(call.args[1].span, fmt::format("{} needs a constant dimension from 1 to {}", upperName, t->dims.size()));
    return poison(span);
  }
  const size_t dim = static_cast<size_t>(dimension->constant.i - 1);
  if (!isOpenArray(t)) {
    const ArrayDim& d = t->dims[dim];
    const int64_t bound = lower ? d.lower : d.lower + static_cast<int64_t>(d.count) - 1;
    return constantNode(dint, ConstValue::ofInt(bound), span);
  }
  if (array->kind != ExprKind::Variable) {
    error(call.args[0].span, "the bounds of an ARRAY[*] are read by the name of its VAR_IN_OUT only");
    return poison(span);
  }
  Expr* r = operation(lower ? Op::LowerBound : Op::UpperBound, dint, span, {array});
  r->bit = static_cast<uint32_t>(dim);
  r->fresh = true;
  return r;
}

}  // namespace scanback::sema
