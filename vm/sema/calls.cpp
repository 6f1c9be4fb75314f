// Calls: user functions, methods, function block instances (user and standard).
#include <fmt/format.h>

#include "vm/sema/analyzer.h"

namespace scanback::sema {

namespace {

const char* sectionWord(VarSection s) {
  return s == VarSection::Input ? "input" : s == VarSection::Output ? "output" : "in-out";
}

// Matches call arguments to parameters: positional ones in declaration order, named ones by name.
std::vector<const ast::Argument*> bindArguments(Analyzer& analyzer, const ast::Expr& call,
                                                const std::vector<const Variable*>& params,
                                                const std::string& calleeName) {
  std::vector<const ast::Argument*> bound(params.size(), nullptr);
  size_t position = 0;
  bool sawNamed = false;
  for (const ast::Argument& a : call.args) {
    if (a.name.empty()) {
      if (sawNamed) {
        analyzer.error(a.span, "positional arguments must come before named ones");
        continue;
      }
      if (position >= params.size()) {
        analyzer.error(a.span, fmt::format("too many arguments for '{}' ({} expected)", calleeName, params.size()));
        continue;
      }
      bound[position++] = &a;  // positional outputs receive the output value
      continue;
    }
    sawNamed = true;
    size_t k = 0;
    for (; k < params.size(); ++k)
      if (equalsIgnoreCase(params[k]->name, a.name)) break;
    if (k == params.size()) {
      // IEC spells the counter inputs R and LD; CODESYS spells them RESET and LOAD. Accept both.
      const std::string alias = equalsIgnoreCase(a.name, "R") ? "RESET" : equalsIgnoreCase(a.name, "LD") ? "LOAD" : "";
      for (k = 0; !alias.empty() && k < params.size(); ++k)
        if (equalsIgnoreCase(params[k]->name, alias)) break;
      if (alias.empty()) k = params.size();
    }
    if (k == params.size()) {
      analyzer.error(a.span, fmt::format("'{}' has no parameter '{}'", calleeName, a.name));
      continue;
    }
    const bool isOutput = params[k]->section == VarSection::Output;
    if (a.isOutput != isOutput) {
      analyzer.error(a.span, isOutput ? fmt::format("'{}' is an output: use {} => variable", a.name, a.name)
                                      : fmt::format("'{}' is an {}: use {} := value", a.name,
                                                    sectionWord(params[k]->section), a.name));
      continue;
    }
    if (bound[k]) {
      analyzer.error(a.span, fmt::format("'{}' is passed twice", a.name));
      continue;
    }
    bound[k] = &a;
  }
  return bound;
}

bool isParameter(const Variable& v) {
  return v.section == VarSection::Input || v.section == VarSection::Output || v.section == VarSection::InOut;
}

}  // namespace

// The output arguments, evaluated after the call: each receiving variable and the value stored
// into it.
void Analyzer::outputs(const std::vector<const Variable*>& params, const std::vector<const ast::Argument*>& bound,
                       CallInfo& info) {
  for (size_t i = 0; i < params.size(); ++i) {
    const ast::Argument* a = bound[i];
    if (params[i]->section != VarSection::Output || !a) continue;
    Expr* target = expression(*a->value);
    if (target->kind == ExprKind::Constant) {
      error(a->span, "an output needs a variable");
      continue;
    }
    if (!assignable(target)) {
      error(a->span, "cannot assign to a constant");
      continue;
    }
    Expr* value = stored(dereferenced(outputValue(*params[i], a->negatedOutput, a->span)), target->type, a->span);
    info.outputs.push_back(Binding{Binding::Role::Output, params[i], value, target, a->span});
  }
}

// The value of a callee's output after the call (negated for `NOT out => x`).
Expr* Analyzer::outputValue(const Variable& parameter, bool negated, const SourceSpan& span) {
  Expr* out = make(ExprKind::Parameter, parameter.type, span);
  out->variable = &parameter;
  if (!negated) return out;
  Expr* r = operation(Op::BoolNot, parameter.type, span, {out});
  r->fresh = true;
  return r;
}

// An in-out argument: a variable of the parameter's type, whose address the callee gets. Null when
// it is missing or is not one (reported; function blocks word the mismatch their own way).
Expr* Analyzer::inOutArgument(const ast::Expr& call, const ast::Argument* a, const Variable& p,
                              const std::string& callee, bool functionBlock) {
  if (!a) {
    error(call.span, fmt::format("in-out parameter '{}' of '{}' must be passed", p.name, callee));
    return nullptr;
  }
  Expr* target = expression(*a->value);
  const bool variable = target->kind != ExprKind::Constant;
  const bool fits = target->type == p.type || implicitlyConvertible(target->type, p.type) ||
                    (isOpenArray(p.type) && fitsOpenArray(target->type, p.type));
  if (isOpenArray(target->type) && variable && target->kind != ExprKind::Variable) {
    error(a->span, "an ARRAY[*] is passed on by the name of its VAR_IN_OUT only");
    return nullptr;
  }
  if (functionBlock && (!variable || !fits)) {
    error(a->span, fmt::format("in-out parameter '{}' needs a {} variable", p.name, p.type->name));
    return nullptr;
  }
  if (!variable) {
    error(a->span, fmt::format("in-out parameter '{}' needs a variable", p.name));
    return nullptr;
  }
  if (!fits) {
    error(a->span, fmt::format("in-out parameter '{}' is {}, not {}", p.name, p.type->name,
                               target->type ? target->type->name : "?"));
    return nullptr;
  }
  if (target->kind == ExprKind::Bit) {
    error(a->span, "a single bit has no address");
    return nullptr;
  }
  return target;
}

Expr* Analyzer::functionCall(const ast::Expr& e, const Callee& f, Expr* self) {
  std::vector<const Variable*> params;
  for (const Variable& v : *f.frame)
    if (isParameter(v)) params.push_back(&v);
  const std::vector<const ast::Argument*> bound = bindArguments(*this, e, params, f.name);

  Expr* r = make(ExprKind::Call, f.returnType ? f.returnType : elementary(TypeKind::Void), e.span);
  r->call = std::make_unique<CallInfo>();
  CallInfo& info = *r->call;
  info.kind = f.kind == PouKind::Method ? CallInfo::Kind::Method : CallInfo::Kind::Function;
  info.pou = f.pou;
  info.instance = self;
  // Every argument is evaluated before the callee's frame is filled (an argument may itself call a
  // function whose frame lies at the same place); the inputs are converted as they are stored.
  std::vector<Expr*> values(params.size(), nullptr);
  for (size_t i = 0; i < params.size(); ++i) {
    const Variable& p = *params[i];
    const ast::Argument* a = bound[i];
    if (p.section == VarSection::Output) continue;
    if (p.section == VarSection::InOut) {
      if (Expr* target = inOutArgument(e, a, p, f.name, false))
        info.inputs.push_back(Binding{Binding::Role::InOut, &p, target, nullptr, a->span});
      continue;
    }
    if (!a) continue;  // keeps its initial value
    // An input of a REFERENCE TO type is bound by its argument, as REF= binds (CODESYS, TwinCAT).
    values[i] = p.type->isReference() ? referenceBinding(*a->value, p.type, fmt::format("input '{}'", p.name))
                                      : expression(*a->value, p.type);
    info.inputs.push_back(Binding{Binding::Role::Input, &p, values[i], nullptr, a->span});
  }
  for (Binding& b : info.inputs)
    if (b.role == Binding::Role::Input && !b.parameter->type->isReference())
      b.value = stored(const_cast<Expr*>(b.value), b.parameter->type, e.span);
  outputs(params, bound, info);
  return r;
}

Expr* Analyzer::functionBlockCall(const ast::Expr& e, Expr* instance, const Type* fbType) {
  Expr* none = make(ExprKind::Call, elementary(TypeKind::Void), e.span);
  const std::optional<PouKind> kind = scope_.declarations().instanceKind(fbType);
  if (!kind) {
    error(e.span, fmt::format("{} cannot be called", fbType->name));
    return none;
  }
  if (*kind == PouKind::Program) {
    error(e.span, "programs are run by their task; they cannot be called");
    return none;
  }
  if (fbType->isClass) {
    error(e.span, fmt::format("'{}' is a CLASS: it has no body to call; call its methods", fbType->name));
    return none;
  }
  std::vector<const Variable*> params;
  for (const Variable& v : fbType->fields)
    if (!v.hidden && isParameter(v)) params.push_back(&v);
  const std::vector<const ast::Argument*> bound = bindArguments(*this, e, params, fbType->name);
  none->call = std::make_unique<CallInfo>();
  CallInfo& info = *none->call;
  info.kind = CallInfo::Kind::FunctionBlock;
  info.fbType = fbType;
  info.instance = instance;
  for (size_t i = 0; i < params.size(); ++i) {
    const Variable& p = *params[i];
    const ast::Argument* a = bound[i];
    if (p.section == VarSection::Output) continue;
    if (p.section == VarSection::InOut) {
      if (Expr* target = inOutArgument(e, a, p, fbType->name, true))
        info.inputs.push_back(Binding{Binding::Role::InOut, &p, target, nullptr, a->span});
      continue;
    }
    if (!a) continue;             // inputs not passed keep their previous value
    if (p.type->isReference()) {  // bound by its argument, as REF= binds (CODESYS, TwinCAT)
      info.inputs.push_back(Binding{Binding::Role::Input, &p,
                                    referenceBinding(*a->value, p.type, fmt::format("input '{}'", p.name)), nullptr,
                                    a->span});
      continue;
    }
    Expr* v = expression(*a->value, p.type);
    info.inputs.push_back(Binding{Binding::Role::Input, &p, stored(v, p.type, a->span), nullptr, a->span});
  }
  outputs(params, bound, info);
  return none;
}

bool Analyzer::callRejected(const ast::Expr& callee) {
  if (!options_.rejectCalls) return false;
  std::string text = options_.sourceText ? options_.sourceText(callee.span) : std::string();
  if (text.empty()) text = callee.text;
  error(callee.span, fmt::format("calling {} is not allowed here: evaluating must not change the program state", text));
  return true;
}

namespace {

// The names of IEC's functional forms of the operators (the parser gives a valid call its
// expression with the operator).
bool isOperatorForm(const std::string& upperName) {
  for (const char* n : {"ADD", "MUL", "SUB", "DIV", "MOD", "AND", "OR", "XOR", "GT", "GE", "EQ", "LE", "LT", "NE"})
    if (upperName == n) return true;
  return false;
}

}  // namespace

Expr* Analyzer::call(const ast::Expr& e, const Type* hint, bool statement) {
  const ast::Expr& callee = *e.operand;
  Declarations& d = scope_.declarations();
  Expr* result = nullptr;
  // After an error the call stands for a value that failed: reported once, so neither "this call
  // has no value" nor a message naming the failed value's type follows it.
  auto failed = [&](const SourceSpan& span, std::string message) {
    error(span, std::move(message));
    return poison(e.span);
  };
  if (callee.kind == ast::ExprKind::Name) {
    const std::string key = upperCase(callee.text);
    std::optional<Callee> f, m;
    if (isVariable(callee.text)) {
      Expr* v = name(callee);
      if (v->type && v->type->kind == TypeKind::FunctionBlock) {
        if (callRejected(callee)) return poison(e.span);
        result = functionBlockCall(e, v, v->type);
      } else {
        result = failed(callee.span, fmt::format("'{}' is a variable of type {}, not something to call", callee.text,
                                                 v->type ? v->type->name : "?"));
      }
    } else if ((f = d.function(key))) {
      if (callRejected(callee)) return poison(e.span);
      result = functionCall(e, *f, nullptr);
    } else if ((scope_.code() == Code::FunctionBlock || scope_.code() == Code::Method ||
                scope_.code() == Code::Program) &&
               scope_.instanceType() && (m = d.method(scope_.instanceType(), key))) {
      if (callRejected(callee)) return poison(e.span);
      if (!accessible(*m, fmt::format("method '{}'", callee.text), callee.span)) return poison(e.span);
      result = methodCall(e, *m, thisNode(callee.span), true);
    } else if (e.rhs) {
      // IEC's functional form of an operator (`ADD(a, b, c)`): the expression with the operator.
      return expression(*e.rhs, hint);
    } else if (Expr* b = builtin(e, key, hint)) {
      result = b;
    } else if (std::optional<PouKind> kind = d.pouKind(key)) {
      result = failed(callee.span,
                      fmt::format("'{}' is a {}: declare an instance and call that", callee.text, pouKindName(*kind)));
    } else if (isOperatorForm(key)) {
      result = failed(callee.span, fmt::format("{} is the functional form of an operator: two arguments (ADD, MUL, "
                                               "AND, OR, XOR, GT, GE, EQ, LE and LT take more), positional or IN1, "
                                               "IN2, ... in order; a comparison's middle arguments are names, "
                                               "literals, members or elements with constant indices",
                                               key));
    } else {
      result = failed(callee.span, fmt::format("unknown function '{}'", callee.text));
    }
  } else if (callee.kind == ast::ExprKind::Member && isSuper(*callee.operand)) {
    // SUPER^.Method(): the base's method, statically, on this instance.
    const Type* base = superType(callee.operand->span);
    if (!base) return poison(e.span);
    std::optional<Callee> m = d.method(base, upperCase(callee.text));
    if (!m) return failed(callee.span, fmt::format("'{}' has no method '{}'", base->name, callee.text));
    if (m->abstract)
      return failed(callee.span, fmt::format("method '{}' is ABSTRACT in '{}': it has no body to call", callee.text,
                                             m->owner ? m->owner->name : base->name));
    if (callRejected(callee)) return poison(e.span);
    if (!accessible(*m, fmt::format("method '{}'", callee.text), callee.span)) return poison(e.span);
    result = functionCall(e, *m, thisNode(callee.span));
  } else if (isSuper(callee)) {
    // SUPER^(): the base's body, on this instance.
    const Type* base = superType(callee.span);
    if (!base) return poison(e.span);
    if (callRejected(callee)) return poison(e.span);
    result = functionBlockCall(e, thisNode(callee.span), base);
  } else if (callee.kind == ast::ExprKind::Member && !globalListNamed(*callee.operand)) {
    Expr* base = expression(*callee.operand);
    if (isPoison(base)) return poison(e.span);
    if (base->type && base->type->isInterface() && base->kind != ExprKind::Constant) {
      std::optional<Callee> m = d.method(base->type, upperCase(callee.text));
      if (!m) {
        error(callee.span, fmt::format("interface {} has no method '{}'", base->type->name, callee.text));
        return poison(e.span);
      }
      if (callRejected(callee)) return poison(e.span);
      Expr* r = methodCall(e, *m, base, false);
      if (!statement && r->type && r->type->kind == TypeKind::Void) {
        error(e.span, "this call has no value");
        return poison(e.span);
      }
      return statement ? r : dereferenced(r);  // a method that returns a REFERENCE TO
    }
    const Type* t = base->kind == ExprKind::Constant ? nullptr : base->type;
    const Variable* fbField = nullptr;
    if (t && (t->kind == TypeKind::FunctionBlock || t->kind == TypeKind::Struct)) {
      const Variable* f = t->field(callee.text);
      // An instance, or a REFERENCE TO one (`s.ref(...)` calls the instance it designates).
      const Type* ft = f && f->type->isReference() ? f->type->base : f ? f->type : nullptr;
      if (ft && ft->kind == TypeKind::FunctionBlock && (t->kind == TypeKind::Struct || !f->hidden)) fbField = f;
    }
    std::optional<Callee> m;
    if (t && t->kind == TypeKind::FunctionBlock && (m = d.method(t, upperCase(callee.text)))) {
      if (callRejected(callee)) return poison(e.span);
      if (!accessible(*m, fmt::format("method '{}'", callee.text), callee.span)) return poison(e.span);
      result = methodCall(e, *m, base, base->kind == ExprKind::This);
    } else if (fbField) {
      if (callRejected(callee)) return poison(e.span);
      Expr* instance = field(base, *fbField, callee.span);
      result = functionBlockCall(e, instance, instance->type);
    } else {
      result = failed(callee.span, fmt::format("'{}' cannot be called", callee.text));
    }
  } else {
    Expr* v = expression(callee);
    if (v->kind != ExprKind::Constant && v->type && v->type->kind == TypeKind::FunctionBlock) {
      if (callRejected(callee)) return poison(e.span);
      result = functionBlockCall(e, v, v->type);
    } else {
      result = failed(callee.span, "only functions, methods and function block instances can be called");
    }
  }
  if (!statement && result->type && result->type->kind == TypeKind::Void && !isPoison(result)) {
    error(e.span, "this call has no value");
    return poison(e.span);
  }
  // A function or method that returns a REFERENCE TO: its value is what the reference designates.
  return statement ? result : dereferenced(result);
}

}  // namespace scanback::sema
