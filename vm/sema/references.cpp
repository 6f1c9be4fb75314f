// CODESYS's REFERENCE TO (docs/language.md, "REFERENCE TO"): a reference is stored as an address,
// 4 bytes as a REF_TO, and every use of it is a dereference of that address, so `r := 5` writes
// and `y := r` reads the variable it is bound to; `r REF= x` binds it (and an input of a
// reference type is bound by its argument in a call). Written here once, for the compiler, the
// debugger's evaluator and the language server alike.
#include <fmt/format.h>

#include "vm/sema/analyzer.h"

namespace scanback::sema {

Expr* Analyzer::dereferenced(Expr* e) {
  if (!e || !e->type || !e->type->isReference() || isPoison(e)) return e;
  Expr* r = make(ExprKind::Deref, e->type->base, e->span);
  r->a = {e};
  r->named = true;
  return r;
}

// `from` may be bound to a REFERENCE TO `to`: the same type or, for a function block, one that
// extends it (as a REF_TO: CODESYS checks a reference's base type, and a base may designate an
// extending block).
static bool bindsToReference(const Type* from, const Type* to) {
  if (from == to) return true;
  return from && to && from->kind == TypeKind::FunctionBlock && to->kind == TypeKind::FunctionBlock &&
         from->derivesFrom(to);
}

Expr* Analyzer::referenceBinding(const ast::Expr& value, const Type* reference, const std::string& what) {
  const Type* target = reference->base;
  const SourceSpan& span = value.span;
  Expr* v = expression(value, target);
  if (isPoison(v)) return v;
  if (v->kind == ExprKind::Constant) {
    // `r REF= 0` unbinds r (as a NULL pointer: __ISVALIDREF(r) is then FALSE).
    if (v->constant.kind == ConstValue::Kind::Int && v->constant.i == 0 && value.kind != ast::ExprKind::Name)
      return constantNode(reference, ConstValue::ofInt(0), span);
    if (value.kind == ast::ExprKind::Name && equalsIgnoreCase(value.text, "NULL"))
      return constantNode(reference, ConstValue::ofInt(0), span);
    error(span, fmt::format("{} needs a variable of type {} (or 0), not a constant: a constant has no address", what,
                            target->name));
    return poison(span);
  }
  if (Expr* slot = referenceSlot(v)) {
    // Another reference (or a call that returns one): bound to what it designates, its address
    // copied as it is (an unbound one unbinds).
    if (!bindsToReference(slot->type->base, target)) {
      error(span, fmt::format("{} binds a {}, not a {}", what, reference->name, slot->type->name));
      return poison(span);
    }
    return slot->type == reference ? slot : relabel(slot, reference, span);
  }
  if (!designatesPlace(v)) {
    error(span,
          fmt::format("{} needs a variable of type {}: the value of an expression has no address", what, target->name));
    return poison(span);
  }
  if (v->kind == ExprKind::Bit) {
    error(span, fmt::format("{} needs a variable of type {}: a single bit has no address", what, target->name));
    return poison(span);
  }
  if (v->readOnly) {
    error(span, fmt::format("{} cannot bind a CONSTANT: a reference writes what it designates", what));
    return poison(span);
  }
  if (!bindsToReference(v->type, target)) {
    error(span, fmt::format("{} binds a {} to a variable of type {}, not {}", what, reference->name, target->name,
                            v->type ? v->type->name : "?"));
    return poison(span);
  }
  Expr* r = make(ExprKind::AddressOf, reference, span);
  r->a = {v};
  return r;
}

const Stmt* Analyzer::refAssignment(const ast::Stmt& s) {
  Stmt* st = arena_.stmt();
  st->kind = StmtKind::Assign;
  st->span = s.span;
  Expr* target = expression(*s.target);
  if (isPoison(target)) return st;
  Expr* slot = referenceSlot(target);
  if (!slot) {
    error(s.target->span,
          fmt::format(
              "REF= binds a REFERENCE TO; the left side is {}{}", target->type ? target->type->name : "a constant",
              target->type && target->type->kind == TypeKind::Ref && !target->type->interface ? " (assign a REF_TO or "
                                                                                                "POINTER TO with := "
                                                                                                "REF(x) or ADR(x))"
                                                                                              : ""));
    return st;
  }
  if (!designatesPlace(slot)) {
    error(s.target->span, "REF= binds a REFERENCE TO variable; a call's result cannot be bound");
    return st;
  }
  if (slot->readOnly) {
    error(s.target->span, "cannot bind a reference inside a constant");
    return st;
  }
  st->target = slot;
  st->value = referenceBinding(*s.value, slot->type, "REF=");
  return st;
}

}  // namespace scanback::sema
