// Dereferences (`p^`, `r^`): the area check that keeps a pointer inside the variable it points
// into (docs/language.md, "Pointers").
#include "vm/compiler/compiler_impl.h"

namespace scanback::compiler {

namespace {

const sema::Expr* withoutRelabels(const sema::Expr* e) {
  while (e->kind == sema::ExprKind::Convert && e->conversion == sema::Conversion::Relabel) e = e->a[0];
  return e;
}

// `ADR(x)^` and `REF(x)^` (through pointer conversions too) designate x, or its first bytes: no
// need to search for x's area at run time.
bool provenInside(const sema::Expr& deref) {
  const sema::Expr* ref = withoutRelabels(deref.a[0]);
  return ref->kind == sema::ExprKind::AddressOf && ref->a[0]->type && deref.type &&
         deref.type->size <= ref->a[0]->type->size;
}

}  // namespace

Value Compiler::lowerDeref(const sema::Expr& e, bool checked) {
  const Value v = lower(*e.a[0]);
  uint32_t ref = readOperand(v, e.span);
  if (checked && !provenInside(e)) {
    // The REF is checked once and then used: a copy, so that what the rest of the statement
    // computes (a call that moves the pointer) cannot move it past the check.
    if (withoutRelabels(e.a[0])->named) {
      const uint32_t copy = allocTemp(types_->elementary(TypeKind::UDInt));
      emit(Op::MOV4, {o(copy), o(ref)});
      ref = copy;
    }
    emit(Op::PCHK, {o(ref), o(e.type->size), o(e.type->kind == TypeKind::FunctionBlock ? 1u : 0u)});
  }
  Value r;
  r.type = e.type;
  r.place.kind = Place::Kind::Indirect;
  r.place.type = e.type;
  r.place.operand = ref;
  return r;
}

}  // namespace scanback::compiler
