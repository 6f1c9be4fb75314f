#include "vm/sema/ir.h"

#include <algorithm>

namespace scanback::sema {

const Expr* unconverted(const Expr* e) {
  while (e->atRead) e = e->a[0];
  return e;
}

std::vector<const Expr*> conversionsOf(const Expr* e) {
  std::vector<const Expr*> out;
  for (; e->atRead; e = e->a[0]) out.push_back(e);
  std::reverse(out.begin(), out.end());
  return out;
}

std::string referenceName(const Expr* slot) {
  switch (slot->kind) {
    case ExprKind::Variable:
    case ExprKind::Parameter: return slot->variable->name;
    case ExprKind::Field: {
      const Expr* base = slot->a[0];
      const bool namedBase = base->kind == ExprKind::Variable || base->kind == ExprKind::Field;
      return namedBase ? referenceName(base) + "." + slot->variable->name : slot->variable->name;
    }
    case ExprKind::Convert: return referenceName(slot->a[0]);
    default: return "a call's result";
  }
}

bool isDirect(const Expr* e) {
  switch (e->kind) {
    case ExprKind::Variable: return !e->variable->byReference && e->variable->bit < 0;
    case ExprKind::Field:
      if (e->variable->absolute) return e->variable->bit < 0;
      return !e->variable->byReference && isDirect(e->a[0]);
    case ExprKind::Offset: return isDirect(e->a[0]);
    case ExprKind::Element:
    case ExprKind::Bit:
    case ExprKind::Deref: return false;
    case ExprKind::Convert: return e->conversion != Conversion::Relabel || isDirect(e->a[0]);
    default: return true;  // instances, and values computed into temporaries
  }
}

}  // namespace scanback::sema
