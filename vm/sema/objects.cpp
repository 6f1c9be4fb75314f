// Object orientation in the semantic pass (docs/language.md, "Object orientation"): SUPER^,
// calls that dispatch dynamically (through an interface, or on THIS when an extending block may
// override the method), properties (their GET and SET are method calls), access specifiers and
// the conversions to interface values.
#include <fmt/format.h>

#include "vm/sema/analyzer.h"

namespace scanback::sema {

namespace {

const char* accessWord(ast::Access a) {
  switch (a) {
    case ast::Access::Private: return "PRIVATE";
    case ast::Access::Protected: return "PROTECTED";
    case ast::Access::Internal: return "INTERNAL";
    case ast::Access::Public: break;
  }
  return "PUBLIC";
}

}  // namespace

bool Analyzer::isSuper(const ast::Expr& e) {
  const ast::Expr* n = e.kind == ast::ExprKind::Deref ? e.operand.get() : &e;
  return n && n->kind == ast::ExprKind::Name && equalsIgnoreCase(n->text, "SUPER");
}

Expr* Analyzer::thisNode(const SourceSpan& span) {
  Expr* r = make(ExprKind::This, scope_.instanceType(), span);
  r->named = true;
  return r;
}

const Type* Analyzer::superType(const SourceSpan& span) {
  const bool inBlock = scope_.code() == Code::FunctionBlock || scope_.code() == Code::Method;
  const Type* self = inBlock ? scope_.instanceType() : nullptr;
  if (!self || !self->extends) {
    error(span, self ? fmt::format("SUPER^ needs a base: '{}' extends no function block", self->name)
                     : "SUPER^ is only available in function blocks and their methods");
    return nullptr;
  }
  return self->extends;
}

bool Analyzer::accessible(const Callee& m, const std::string& what, const SourceSpan& span) {
  if (m.access == ast::Access::Public || m.access == ast::Access::Internal || !m.owner) return true;
  // A program's own body may use its PRIVATE methods and properties, as a block's may.
  const bool inBlock =
      scope_.code() == Code::FunctionBlock || scope_.code() == Code::Method || scope_.code() == Code::Program;
  const Type* here = inBlock ? scope_.instanceType() : nullptr;
  const bool ok = m.access == ast::Access::Private ? here == m.owner : here && here->derivesFrom(m.owner);
  if (ok) return true;
  error(span,
        fmt::format("{} of '{}' is {}: {}", what, m.owner->name, accessWord(m.access),
                    m.access == ast::Access::Private ? "only its own code may use it"
                                                     : "only its own code and the blocks that extend it may use it"));
  return false;
}

Expr* Analyzer::methodCall(const ast::Expr& e, const Callee& m, Expr* self, bool onThis) {
  Expr* r = functionCall(e, m, self);
  // Through a dereferenced REF_TO or POINTER TO, the instance may be a block that extends the
  // reference's type: the call dispatches as one on THIS does.
  const bool mayExtend = onThis || (self && self->kind == ExprKind::Deref);
  if (m.slot != UINT32_MAX) {
    r->call->slot = m.slot;
  } else if (mayExtend && self && self->type) {
    if (std::optional<uint32_t> slot = scope_.declarations().virtualSlot(self->type, upperCase(e.operand->text)))
      r->call->slot = *slot;
  }
  return r;
}

// `base.Name` or `Name` alone in a block's code, when Name is a property: a call of its GET.
Expr* Analyzer::propertyGet(const ast::Expr& e, Expr* self, const std::string& name, bool onThis) {
  if (!self || !self->type) return nullptr;
  const Type* t = self->type;
  if (t->kind != TypeKind::FunctionBlock && !t->isInterface()) return nullptr;
  Declarations& d = scope_.declarations();
  std::optional<Callee> get = d.method(t, upperCase(name) + ".GET");
  if (!get) {
    if (d.method(t, upperCase(name) + ".SET")) {
      error(e.span, fmt::format("property '{}' of '{}' has no GET: it can only be assigned", name, t->name));
      return poison(e.span);
    }
    return nullptr;
  }
  if (callRejected(e)) return poison(e.span);
  if (!accessible(*get, fmt::format("property '{}'", name), e.span)) return poison(e.span);
  ast::Expr call(ast::ExprKind::Call, e.span);  // no arguments
  Expr* r = functionCall(call, *get, self);
  if (get->slot != UINT32_MAX) {
    r->call->slot = get->slot;
  } else if (onThis || self->kind == ExprKind::Deref) {  // as methodCall()
    if (std::optional<uint32_t> slot = d.virtualSlot(t, upperCase(name) + ".GET")) r->call->slot = *slot;
  }
  return r;
}

// `target := value` where target names a property: a call of its SET; null when it is not one.
const Stmt* Analyzer::propertySet(const ast::Stmt& s) {
  const ast::Expr& target = *s.target;
  Expr* self = nullptr;
  bool onThis = false;
  std::string name;
  if (target.kind == ast::ExprKind::Name) {
    const bool inBlock =
        scope_.code() == Code::FunctionBlock || scope_.code() == Code::Method || scope_.code() == Code::Program;
    if (!inBlock || !scope_.instanceType() || isVariable(target.text)) return nullptr;
    if (!scope_.declarations().method(scope_.instanceType(), upperCase(target.text) + ".SET") &&
        !scope_.declarations().method(scope_.instanceType(), upperCase(target.text) + ".GET"))
      return nullptr;
    self = thisNode(target.span);
    onThis = true;
    name = target.text;
  } else if (target.kind == ast::ExprKind::Member && !isSuper(*target.operand)) {
    // Only when the member is no variable: analysing the operand once more is free of effects.
    const ast::Expr& operand = *target.operand;
    Diagnostics quiet;
    Expr* base = nullptr;
    {
      Arena scratch;
      Analyzer probe(scope_, quiet, scratch, options_);
      base = probe.expression(operand);
      if (!base || !base->type || quiet.hasErrors()) return nullptr;
      const Type* t = base->type;
      if (t->kind != TypeKind::FunctionBlock && !t->isInterface()) return nullptr;
      if (t->kind == TypeKind::FunctionBlock && t->field(target.text)) return nullptr;
      Declarations& d = scope_.declarations();
      if (!d.method(t, upperCase(target.text) + ".SET") && !d.method(t, upperCase(target.text) + ".GET"))
        return nullptr;
    }
    self = expression(operand);
    onThis = self->kind == ExprKind::This || self->kind == ExprKind::Deref;  // may be an extending block
    name = target.text;
  } else {
    return nullptr;
  }
  Stmt* st = arena_.stmt();
  st->kind = StmtKind::Call;
  st->span = s.span;
  Declarations& d = scope_.declarations();
  std::optional<Callee> set = d.method(self->type, upperCase(name) + ".SET");
  if (!set) {
    error(target.span, fmt::format("property '{}' of '{}' has no SET: it cannot be assigned", name, self->type->name));
    return st;
  }
  if (callRejected(target)) return st;
  if (!accessible(*set, fmt::format("property '{}'", name), target.span)) return st;
  // The SET's input has the property's name: pass the value to it by name.
  ast::Expr call(ast::ExprKind::Call, s.span);
  Expr* r = functionCall(call, *set, self);
  const Variable* input = nullptr;
  for (const Variable& v : *set->frame)
    if (v.section == VarSection::Input) {
      input = &v;
      break;
    }
  if (input) {
    Expr* v = expression(*s.value, input->type);
    r->call->inputs.push_back(
        Binding{Binding::Role::Input, input, stored(v, input->type, s.value->span), nullptr, s.value->span});
  }
  if (set->slot != UINT32_MAX) {
    r->call->slot = set->slot;
  } else if (onThis) {
    if (std::optional<uint32_t> slot = d.virtualSlot(self->type, upperCase(name) + ".SET")) r->call->slot = *slot;
  }
  st->value = r;
  return st;
}

// `v` where an interface value is expected, or an interface value where something else is.
Expr* Analyzer::interfaceValue(Expr* v, const Type* to, const SourceSpan& span) {
  const Type* from = v->type;
  if (!to->isInterface()) {
    error(span, fmt::format("cannot convert interface {} to {}", from ? from->name : "?", to->name));
    return invalid(to, span);
  }
  if (v->kind == ExprKind::Constant) {
    if (!from && v->constant.kind == ConstValue::Kind::Int && v->constant.i == 0)
      return constantNode(to, ConstValue::ofInt(0), span);
    error(span, fmt::format("an interface holds an instance or 0 (NULL), not a constant"));
    return invalid(to, span);
  }
  if (from && from->kind == TypeKind::FunctionBlock) {
    if (!from->implements(to)) {
      error(span, fmt::format("'{}' does not implement interface '{}'", from->name, to->name));
      return invalid(to, span);
    }
    Expr* r = make(ExprKind::AddressOf, to, span);
    r->a = {v};
    return r;
  }
  if (from && from->isInterface() && from->implements(to)) return relabel(v, to, span);
  error(span, fmt::format("cannot convert {} to interface {}", from ? from->name : "a number", to->name));
  return invalid(to, span);
}

}  // namespace scanback::sema
