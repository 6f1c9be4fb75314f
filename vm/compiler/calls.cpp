// Calls: user functions, methods, function block instances (user and native).
#include <fmt/format.h>

#include "vm/compiler/compiler_impl.h"

namespace scanback::compiler {

namespace {

struct ArgBinding {
  const ast::Argument* arg = nullptr;
};

const char* sectionWord(VarSection s) {
  return s == VarSection::Input ? "input" : s == VarSection::Output ? "output" : "in-out";
}

}  // namespace

// Matches call arguments to parameters: positional ones in declaration order, named ones by name.
static std::vector<ArgBinding> bindArguments(Compiler& c, const ast::Expr& call,
                                             const std::vector<const Variable*>& params,
                                             const std::string& calleeName) {
  std::vector<ArgBinding> bound(params.size());
  size_t position = 0;
  bool sawNamed = false;
  for (const ast::Argument& a : call.args) {
    if (a.name.empty()) {
      if (sawNamed) {
        c.error(a.span, "positional arguments must come before named ones");
        continue;
      }
      if (position >= params.size()) {
        c.error(a.span, fmt::format("too many arguments for '{}' ({} expected)", calleeName, params.size()));
        continue;
      }
      if (params[position]->section == VarSection::Output) {
        // Positional outputs receive the output value.
        bound[position++].arg = &a;
        continue;
      }
      bound[position++].arg = &a;
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
      c.error(a.span, fmt::format("'{}' has no parameter '{}'", calleeName, a.name));
      continue;
    }
    const bool isOutput = params[k]->section == VarSection::Output;
    if (a.isOutput != isOutput) {
      c.error(a.span, isOutput ? fmt::format("'{}' is an output: use {} => variable", a.name, a.name)
                               : fmt::format("'{}' is an {}: use {} := value", a.name, sectionWord(params[k]->section),
                                             a.name));
      continue;
    }
    if (bound[k].arg) {
      c.error(a.span, fmt::format("'{}' is passed twice", a.name));
      continue;
    }
    bound[k].arg = &a;
  }
  return bound;
}

Value Compiler::genFunctionCall(const ast::Expr& e, PouDecl& f, const Place* thisPlace, const Type* hint,
                                const Place* dest) {
  (void)hint;
  resolveFrame(f);
  std::vector<const Variable*> params;
  for (const Variable& v : f.frameVars)
    if (v.section == VarSection::Input || v.section == VarSection::Output || v.section == VarSection::InOut)
      params.push_back(&v);
  std::vector<ArgBinding> bound = bindArguments(*this, e, params, f.name);

  // Evaluate every argument before the callee's frame is filled: an argument may itself call a
  // function whose frame lies at the same place.
  struct Pending {
    const Variable* param;
    Value value;
    uint32_t ref = 0;
  };
  std::vector<Pending> inputs;
  std::vector<std::pair<const Variable*, const ast::Argument*>> outputs;
  for (size_t i = 0; i < params.size(); ++i) {
    const Variable* p = params[i];
    const ast::Argument* a = bound[i].arg;
    if (p->section == VarSection::Output) {
      if (a) outputs.push_back({p, a});
      continue;
    }
    if (p->section == VarSection::InOut) {
      if (!a) {
        error(e.span, fmt::format("in-out parameter '{}' of '{}' must be passed", p->name, f.name));
        continue;
      }
      Value target = genExpr(*a->value);
      if (target.isConst) {
        error(a->span, fmt::format("in-out parameter '{}' needs a variable", p->name));
        continue;
      }
      if (target.type != p->type && !implicitlyConvertible(target.type, p->type)) {
        error(a->span, fmt::format("in-out parameter '{}' is {}, not {}", p->name, p->type->name, target.type->name));
        continue;
      }
      inputs.push_back({p, {}, addressOf(target.place, a->span)});
      continue;
    }
    if (!a) continue;  // keeps its initial value
    Value v = genExpr(*a->value, p->type);
    if (!v.isConst && v.place.kind != Place::Kind::Direct) {
      // Materialise now: reading later would be after the frame template was copied, which is
      // harmless, but temporaries keep the evaluation order of the source.
      Value t = tempValue(v.type);
      t.place.operand = readOperand(v, a->span);
      v = t;
    }
    inputs.push_back({p, std::move(v), 0});
  }

  emit(Op::MOVN, {o(calleeOperand(0)), o(operand(Base::Const, f.templateConst)), o(f.frameVarsSize)});
  for (Pending& in : inputs) {
    Place slot;
    slot.kind = Place::Kind::Direct;
    slot.type = in.param->type;
    slot.operand = calleeOperand(in.param->offset);
    if (in.param->section == VarSection::InOut) {
      emit(Op::MOV4, {o(slot.operand), o(in.ref)});
    } else {
      store(slot, std::move(in.value), e.span);
    }
  }
  ctx_->callees.insert(f.pouIndex);
  if (f.kind == PouKind::Method) {
    const Place& self = *thisPlace;
    if (self.kind == Place::Kind::Direct) {
      emit(Op::CALLI, {o(f.pouIndex), frameDelta(), o(self.operand)});
    } else {
      const uint32_t ref = addressOf(self, e.span);
      emit(Op::CALLP, {o(f.pouIndex), frameDelta(), o(ref)});
    }
  } else {
    emit(Op::CALLF, {o(f.pouIndex), frameDelta()});
  }

  Value result;
  result.type = types_->elementary(TypeKind::Void);
  if (f.returnType) {
    if (dest && dest->kind == Place::Kind::Direct && dest->type == f.returnType) {
      result.type = f.returnType;
      result.place = *dest;
    } else {
      result = tempValue(f.returnType);
    }
    move(result.place.operand, calleeOperand(f.returnOffset), f.returnType);
  }
  for (auto& [p, a] : outputs) {
    Value target = genExpr(*a->value);
    if (target.isConst) {
      error(a->span, "an output needs a variable");
      continue;
    }
    Value out;
    out.type = p->type;
    out.place.kind = Place::Kind::Direct;
    out.place.type = p->type;
    out.place.operand = calleeOperand(p->offset);
    if (a->negatedOutput) {
      Value neg = tempValue(p->type);
      emit(Op::BNOT, {o(neg.place.operand), o(out.place.operand)});
      out = neg;
    }
    store(target.place, out, a->span);
  }
  return result;
}

Value Compiler::genFbCall(const ast::Expr& e, const Place& instanceIn, const Type* fbType) {
  PouDecl* fb = fbDeclOf(fbType);
  Value none;
  none.type = types_->elementary(TypeKind::Void);
  if (!fb) {
    error(e.span, fmt::format("{} cannot be called", fbType->name));
    return none;
  }
  if (fb->kind == PouKind::Program) {
    error(e.span, "programs are run by their task; they cannot be called");
    return none;
  }
  // An element of an array of instances: compute its address once.
  Place instance = instanceIn;
  if (instance.kind == Place::Kind::Element) {
    const uint32_t ref = addressOf(instance, e.span);
    instance = Place{};
    instance.kind = Place::Kind::Indirect;
    instance.operand = ref;
    instance.type = fbType;
  }
  std::vector<const Variable*> params;
  for (const Variable& v : fbType->fields)
    if (!v.hidden &&
        (v.section == VarSection::Input || v.section == VarSection::Output || v.section == VarSection::InOut))
      params.push_back(&v);
  std::vector<ArgBinding> bound = bindArguments(*this, e, params, fbType->name);
  for (size_t i = 0; i < params.size(); ++i) {
    const Variable* p = params[i];
    const ast::Argument* a = bound[i].arg;
    if (p->section == VarSection::Output) continue;
    if (p->section == VarSection::InOut) {
      if (!a) {
        error(e.span, fmt::format("in-out parameter '{}' of '{}' must be passed", p->name, fbType->name));
        continue;
      }
      Value target = genExpr(*a->value);
      if (target.isConst || (target.type != p->type && !implicitlyConvertible(target.type, p->type))) {
        error(a->span, fmt::format("in-out parameter '{}' needs a {} variable", p->name, p->type->name));
        continue;
      }
      const uint32_t ref = addressOf(target.place, a->span);
      Variable slotVar = *p;
      slotVar.byReference = false;
      slotVar.type = types_->elementary(TypeKind::UDInt);
      Place slot = subPlace(instance, slotVar);
      Value refValue;
      refValue.type = slotVar.type;
      refValue.place.kind = Place::Kind::Direct;
      refValue.place.type = slotVar.type;
      refValue.place.operand = ref;
      store(slot, refValue, a->span);
      continue;
    }
    if (!a) continue;  // inputs not passed keep their previous value
    Value v = genExpr(*a->value, p->type);
    Place slot = subPlace(instance, *p);
    slot.readOnly = false;
    store(slot, std::move(v), a->span);
  }
  if (fb->kind == PouKind::Native) {
    if (instance.kind == Place::Kind::Direct)
      emit(Op::NATFB, {o(fb->nativeId), o(instance.operand)});
    else
      emit(Op::NATFBP, {o(fb->nativeId), o(addressOf(instance, e.span))});
  } else {
    if (instance.kind == Place::Kind::Direct)
      emit(Op::CALLI, {o(fb->pouIndex), frameDelta(), o(instance.operand)});
    else
      emit(Op::CALLP, {o(fb->pouIndex), frameDelta(), o(addressOf(instance, e.span))});
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Variable* p = params[i];
    const ast::Argument* a = bound[i].arg;
    if (p->section != VarSection::Output || !a) continue;
    Value target = genExpr(*a->value);
    if (target.isConst) {
      error(a->span, "an output needs a variable");
      continue;
    }
    Value out;
    out.type = p->type;
    out.place = subPlace(instance, *p);
    if (a->negatedOutput) {
      const uint32_t src = readOperand(out, a->span);
      Value neg = tempValue(p->type);
      emit(Op::BNOT, {o(neg.place.operand), o(src)});
      out = neg;
    }
    store(target.place, out, a->span);
  }
  return none;
}

Value Compiler::genCall(const ast::Expr& e, const Type* hint, const Place* dest, bool statement) {
  const ast::Expr& callee = *e.operand;
  Value result;
  result.type = types_->elementary(TypeKind::Void);
  bool handled = false;
  if (callee.kind == ast::ExprKind::Name) {
    const std::string key = upperCase(callee.text);
    const bool isVariable =
        (ctx_ && (ctx_->frameVars.count(key) || (ctx_->instanceType && ctx_->instanceType->field(callee.text)))) ||
        globals_.count(key);
    if (isVariable) {
      Value v = genName(callee);
      if (v.type && v.type->kind == TypeKind::FunctionBlock) {
        result = genFbCall(e, v.place, v.type);
      } else {
        error(callee.span, fmt::format("'{}' is a variable of type {}, not something to call", callee.text,
                                       v.type ? v.type->name : "?"));
      }
      handled = true;
    } else if (PouDecl* f = findPou(key); f && f->kind == PouKind::Function) {
      result = genFunctionCall(e, *f, nullptr, hint, dest);
      handled = true;
    } else if (PouDecl* own = ctx_ ? ctx_->decl : nullptr;
               own && ctx_->instanceType &&
               (ctx_->mode == BodyContext::Mode::FbBody || ctx_->mode == BodyContext::Mode::Method)) {
      PouDecl* fb = fbDeclOf(ctx_->instanceType);
      if (fb && fb->methods.count(key)) {
        Place self;
        self.kind = Place::Kind::Direct;
        self.type = ctx_->instanceType;
        self.operand = operand(Base::This, 0);
        result = genFunctionCall(e, *fb->methods[key], &self, hint, dest);
        handled = true;
      }
    }
    if (!handled) {
      if (std::optional<Value> b = genBuiltin(e, key, hint, dest)) {
        result = *b;
        handled = true;
      } else if (PouDecl* p = findPou(key)) {
        error(callee.span,
              fmt::format("'{}' is a {}: declare an instance and call that", callee.text, pouKindName(p->kind)));
        handled = true;
      } else {
        error(callee.span, fmt::format("unknown function '{}'", callee.text));
        handled = true;
      }
    }
  } else if (callee.kind == ast::ExprKind::Member) {
    Value base = genExpr(*callee.operand);
    if (!base.isConst && base.type && base.type->kind == TypeKind::FunctionBlock) {
      PouDecl* fb = fbDeclOf(base.type);
      const std::string key = upperCase(callee.text);
      if (fb && fb->methods.count(key)) {
        result = genFunctionCall(e, *fb->methods[key], &base.place, hint, dest);
        handled = true;
      } else if (const Variable* f = base.type->field(callee.text);
                 f && !f->hidden && f->type->kind == TypeKind::FunctionBlock) {
        result = genFbCall(e, subPlace(base.place, *f), f->type);
        handled = true;
      }
    } else if (!base.isConst && base.type && base.type->kind == TypeKind::Struct) {
      const Variable* f = base.type->field(callee.text);
      if (f && f->type->kind == TypeKind::FunctionBlock) {
        result = genFbCall(e, subPlace(base.place, *f), f->type);
        handled = true;
      }
    }
    if (!handled) {
      error(callee.span, fmt::format("'{}' cannot be called", callee.text));
      handled = true;
    }
  } else {
    Value v = genExpr(callee);
    if (!v.isConst && v.type && v.type->kind == TypeKind::FunctionBlock)
      result = genFbCall(e, v.place, v.type);
    else
      error(callee.span, "only functions, methods and function block instances can be called");
  }
  if (!statement && result.type && result.type->kind == TypeKind::Void && result.type != errorType_) {
    error(e.span, "this call has no value");
    return poison();
  }
  return result;
}

}  // namespace scanback::compiler
