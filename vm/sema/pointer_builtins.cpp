// CODESYS's operators on references and interfaces (docs/language.md, "Pointers" and "Object
// orientation"): __ISVALIDREF(r), __QUERYINTERFACE(itfSource, itfDest), __QUERYPOINTER(itf, p);
// and what a rejected conversion between references says (the rule is implicitlyConvertible).
#include <fmt/format.h>

#include "vm/sema/analyzer.h"

namespace scanback::sema {

std::string Analyzer::referenceMismatch(const Type* from, const Type* to) {
  const Type* f = from->base;
  const Type* t = to->base;
  if (f && t && f->kind == TypeKind::FunctionBlock && t->kind == TypeKind::FunctionBlock && t->derivesFrom(f))
    return fmt::format(
        "cannot convert {} to {}: '{}' extends '{}', not the reverse (a reference to a base may "
        "designate an extending block, never the other way)",
        from->name, to->name, t->name, f->name);
  return fmt::format(
      "cannot convert {} to {}: a REF_TO holds its own type (or a block that extends it), as in "
      "CODESYS; to read the bytes as another type, use a POINTER TO (ADR(x)), which converts to "
      "every pointer and REF_TO type (or compile with --dialect rusty, where REF_TO types convert as ruSTy "
      "converts them)",
      from->name, to->name);
}

Expr* Analyzer::pointerBuiltin(const ast::Expr& call, const std::string& upperName) {
  const bool isValidRef = upperName == "__ISVALIDREF";
  const bool queryInterface = upperName == "__QUERYINTERFACE";
  const bool queryPointer = upperName == "__QUERYPOINTER";
  if (!isValidRef && !queryInterface && !queryPointer) return nullptr;
  const SourceSpan& span = call.span;
  const Type* boolType = elementary(TypeKind::Bool);
  const size_t wanted = isValidRef ? 1 : 2;
  bool byPosition = call.args.size() == wanted;
  for (const ast::Argument& a : call.args) byPosition = byPosition && a.name.empty() && !a.isOutput;
  if (!byPosition) {
    error(span,
          isValidRef
              ? "__ISVALIDREF needs one argument by position: a REFERENCE TO, a REF_TO, a POINTER TO or an interface"
              : fmt::format("{} needs two arguments by position: an interface and {}", upperName,
                            queryInterface ? "an interface variable" : "a POINTER TO variable"));
    return poison(span);
  }
  Expr* source = expression(*call.args[0].value);
  if (isPoison(source)) return poison(span);
  // A REFERENCE TO is tested itself, not what it designates.
  if (Expr* slot = isValidRef ? referenceSlot(source) : nullptr) source = slot;
  const Type* st = source->kind == ExprKind::Constant ? nullptr : source->type;

  if (isValidRef) {
    if (!st || st->kind != TypeKind::Ref) {
      error(call.args[0].span,
            fmt::format("__ISVALIDREF needs a REFERENCE TO, a REF_TO, a POINTER TO or an interface, not {}",
                        st ? st->name : "a constant"));
      return poison(span);
    }
    Expr* r = operation(Op::IsValidRef, boolType, span, {source});
    // An interface designates an instance: its first bytes, where the dispatch id is.
    const bool instance = st->isInterface() || (st->base && st->base->kind == TypeKind::FunctionBlock);
    r->size = st->isInterface() ? 4 : st->base ? std::max<uint32_t>(st->base->size, 1) : 1;
    r->bit = instance ? 1 : 0;
    r->fresh = true;
    return r;
  }

  if (!st || !st->isInterface()) {
    error(call.args[0].span,
          fmt::format("{} needs an interface as its first argument, not {}{}", upperName, st ? st->name : "a constant",
                      st && st->kind == TypeKind::FunctionBlock ? " (an instance converts to an interface it "
                                                                  "implements by assignment)"
                                                                : ""));
    return poison(span);
  }
  Expr* dest = expression(*call.args[1].value);
  if (isPoison(dest)) return poison(span);
  const Type* dt = dest->kind == ExprKind::Constant ? nullptr : dest->type;
  const bool fits = queryInterface ? dt && dt->isInterface() : dt && dt->kind == TypeKind::Ref && dt->pointer;
  if (!fits || !dest->named) {
    error(call.args[1].span, fmt::format("{} needs {} as its second argument", upperName,
                                         queryInterface ? "a variable of an interface type" : "a POINTER TO variable"));
    return poison(span);
  }
  if (dest->readOnly) {
    error(call.args[1].span, fmt::format("{} cannot write its second argument: it is a constant", upperName));
    return poison(span);
  }
  Expr* r = operation(queryInterface ? Op::QueryInterface : Op::QueryPointer, boolType, span, {source, dest});
  r->fresh = true;
  return r;
}

}  // namespace scanback::sema
