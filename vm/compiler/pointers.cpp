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

// The dereference an operand of SEL or MUX designates a place through (`r^`, `r^.x`), if any:
// only the chosen operand is read, so its check waits for the choice (deferredDeref()).
const sema::Expr* Compiler::outermostDeref(const sema::Expr* e) {
  for (;;) {
    switch (e->kind) {
      case sema::ExprKind::Deref: return e;
      case sema::ExprKind::Field:
      case sema::ExprKind::Offset:
      case sema::ExprKind::Bit:
      case sema::ExprKind::Element: e = e->a[0]; break;
      case sema::ExprKind::Convert:
        if (e->conversion != sema::Conversion::Relabel) return nullptr;
        e = e->a[0];
        break;
      default: return nullptr;
    }
  }
}

Value Compiler::lowerDeferringCheck(const sema::Expr& operand, DeferredCheck& check) {
  const sema::Expr* deref = outermostDeref(sema::unconverted(&operand));
  if (!deref || provenInside(*deref)) return lowerBase(operand);
  const sema::Expr* saved = deferredDeref_;
  deferredDeref_ = deref;
  Value v = lowerBase(operand);
  deferredDeref_ = saved;
  check = deferredCheck_;
  return v;
}

void Compiler::emitCheck(const DeferredCheck& check) {
  if (check.size) emit(Op::PCHK, {o(check.ref), o(check.offset), o(check.size), o(check.instance ? 1u : 0u)});
}

Value Compiler::lowerDeref(const sema::Expr& e, bool checked) {
  const Value v = lower(*e.a[0]);
  uint32_t ref = readOperand(v, e.span);
  const sema::Expr* reference = sema::referenceSlot(&e);
  if (checked && reference && &e != deferredDeref_) {
    // A use of a REFERENCE TO: an unbound one faults here, by its name. (An operand of SEL or
    // MUX leaves NULL to the load of the operand chosen, which faults as any NULL dereference.)
    const std::string name = sema::referenceName(reference);
    const uint32_t text = constOperand(types_->string(static_cast<uint32_t>(std::max<size_t>(name.size(), 1))),
                                       ConstValue::ofString(name), e.span);
    emit(Op::RBOUND, {o(ref), o(text)});
  }
  if (&e == narrowedDeref_) {
    // The check follows, of the bytes the field or element designates (lowerNarrowedDeref); the
    // REF is copied all the same, so that the index computed in between cannot move it.
    if (withoutRelabels(e.a[0])->named) {
      const uint32_t copy = allocTemp(types_->elementary(TypeKind::UDInt));
      emit(Op::MOV4, {o(copy), o(ref)});
      ref = copy;
    }
  } else if (checked && !provenInside(e)) {
    // The REF is checked once and then used: a copy, so that what the rest of the statement
    // computes (a call that moves the pointer) cannot move it past the check.
    if (withoutRelabels(e.a[0])->named) {
      const uint32_t copy = allocTemp(types_->elementary(TypeKind::UDInt));
      emit(Op::MOV4, {o(copy), o(ref)});
      ref = copy;
    }
    const DeferredCheck check{ref, 0, e.type->size, e.type->kind == TypeKind::FunctionBlock};
    if (&e == deferredDeref_)
      deferredCheck_ = check;
    else
      emitCheck(check);
  }
  Value r;
  r.type = e.type;
  r.place.kind = Place::Kind::Indirect;
  r.place.type = e.type;
  r.place.operand = ref;
  return r;
}

const sema::Expr* Compiler::narrowableDeref(const sema::Expr& e) const {
  if (narrowedDeref_) return nullptr;  // inside one already: its outermost place is checked
  const sema::Expr* at = &e;
  for (;;) {
    switch (at->kind) {
      case sema::ExprKind::Field:
        // A VAR_IN_OUT's slot holds a REF: what is read through the pointer is the slot.
        if (!at->variable || at->variable->byReference || at->variable->absolute) return nullptr;
        at = at->a[0];
        break;
      case sema::ExprKind::Offset: at = at->a[0]; break;
      case sema::ExprKind::Element:
        if (isOpenArray(at->a[0]->type)) return nullptr;
        at = at->a[0];
        break;
      case sema::ExprKind::Convert:
        if (at->conversion != sema::Conversion::Relabel) return nullptr;
        at = at->a[0];
        break;
      case sema::ExprKind::Deref: return at != &e && !provenInside(*at) ? at : nullptr;
      default: return nullptr;
    }
  }
}

Value Compiler::lowerNarrowedDeref(const sema::Expr& e, const sema::Expr& deref, const Place* dest) {
  narrowedDeref_ = &deref;
  Value v = lower(e, dest);
  narrowedDeref_ = nullptr;
  // A field or element reached through the REF is at REF + offset (Indirect): those bytes are
  // the ones read or written. Any other place checks the whole target, as a plain dereference.
  SB_ASSERT(v.place.kind == Place::Kind::Indirect, "a place through a dereference is not indirect ({})",
            static_cast<int>(v.place.kind));
  const Type* type = v.place.type ? v.place.type : v.type;
  const DeferredCheck check{v.place.operand, v.place.offset, type->size, type->kind == TypeKind::FunctionBlock};
  if (&deref == deferredDeref_)
    deferredCheck_ = check;
  else
    emitCheck(check);
  return v;
}

Value Compiler::lowerPointerOperation(const sema::Expr& e) {
  const Type* boolType = types_->elementary(TypeKind::Bool);
  const Value out = tempValue(boolType);
  const uint32_t source = lowerRead(*e.a[0]);
  if (e.op == sema::Op::IsValidRef) {
    emit(Op::PVALID, {o(out.place.operand), o(source), o(e.size), o(e.bit)});
    return out;
  }
  const uint32_t null = constOperand(types_->elementary(TypeKind::UDInt), ConstValue::ofInt(0), e.span);
  const uint32_t falseValue = constOperand(boolType, ConstValue::ofInt(0), e.span);
  const uint32_t trueValue = constOperand(boolType, ConstValue::ofInt(1), e.span);
  const Value dest = lower(*e.a[1]);
  Label done = newLabel();
  emit(Op::MOV1, {o(out.place.operand), o(falseValue)});
  emit(opFor(Op::JEQ_I8, Prim::U32), {o(source), o(null), lab(done)});
  if (e.op == sema::Op::QueryInterface) {
    // The instance's dispatch id (every instance an interface designates has one) selects TRUE
    // for the blocks that implement the wanted interface.
    const Type* wanted = e.a[1]->type;
    const uint32_t classId = allocTemp(types_->elementary(TypeKind::DInt));
    emit(Op::LD4, {o(classId), o(source), o(0)});
    Label yes = newLabel();
    std::vector<Opnd> ops = {o(classId), o(0), o(static_cast<uint32_t>(classes_.size())), lab(done)};
    for (const PouDecl* c : classes_)
      ops.push_back(lab(c && c->instanceType && c->instanceType->implements(wanted) ? yes : done));
    emitVec(Op::JTAB, ops);
    bind(yes);
  }
  emit(Op::MOV1, {o(out.place.operand), o(trueValue)});
  Value designated = directValue(e.a[1]->type, source);
  store(dest.place, designated);
  bind(done);
  return out;
}

}  // namespace scanback::compiler
