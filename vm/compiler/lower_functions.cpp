// Code for standard functions that are more than one operation (durations scaled, MIN/MAX/LIMIT,
// SEL, MUX, string functions) and for calls of user functions, methods and function blocks.
#include <algorithm>

#include "vm/base/assert.h"
#include "vm/compiler/compiler_impl.h"
#include "vm/compiler/lowering.h"

namespace scanback::compiler {

// A duration times or divided by a number: in LINT, or through LREAL for a REAL factor.
Value Compiler::lowerScaleDuration(const sema::Expr& e, const Place* dest) {
  const Type* f64 = types_->elementary(TypeKind::LReal);
  const bool mul = e.op == sema::Op::Mul;
  const sema::Expr& duration = *e.a[0];
  const sema::Expr& factor = *e.a[1];
  // Both are computed in source order: n * T#1s computes n first.
  Value d, k;
  if (e.form == sema::ScaleForm::Reversed) {
    k = lowerBase(factor);
    d = lowerBase(duration);
  } else {
    d = lowerBase(duration);
    k = lowerBase(factor);
  }
  auto target = [&]() { return e.fresh ? tempValue(e.type) : resultPlace(e.type, dest); };
  auto toReal = [&](uint32_t src) {
    const uint32_t t = allocTemp(f64);
    emit(Op::CVT_I64_F64, {o(t), o(src)});
    return t;
  };
  auto scale = [&](const Value& r, uint32_t x) {
    if (e.real) {
      const uint32_t fx = toReal(x);
      const uint32_t fy = readConverted(factor, k, e.span);
      const uint32_t t = allocTemp(f64);
      emit(mul ? Op::MUL_F64 : Op::DIV_F64, {o(t), o(fx), o(fy)});
      emit(Op::CVT_F64_I64, {o(r.place.operand), o(t)});
    } else {
      const uint32_t y = readConverted(factor, k, e.span);
      emit(mul ? Op::MUL_I64 : Op::DIV_I64, {o(r.place.operand), o(x), o(y)});
    }
  };
  switch (e.form) {
    case sema::ScaleForm::Binary: {
      const Value r = target();
      scale(r, readOperand(d, e.span));
      return r;
    }
    case sema::ScaleForm::Reversed: {
      const uint32_t x = readOperand(d, e.span);
      const uint32_t y = readConverted(factor, k, e.span);
      const Value r = target();
      emit(Op::MUL_I64, {o(r.place.operand), o(x), o(y)});
      return r;
    }
    case sema::ScaleForm::Builtin: {
      const uint32_t x = readConverted(duration, d, e.span);
      const Value r = target();
      scale(r, x);
      return r;
    }
  }
  return Value{};
}

Value Compiler::lowerMinMax(const sema::Expr& e, const Place* dest) {
  std::vector<Value> vals;
  for (const sema::Expr* a : e.a) vals.push_back(lowerBase(*a));
  auto operandAt = [&](size_t i) { return readConverted(*e.a[i], vals[i], e.span); };
  auto target = [&]() { return e.fresh ? tempValue(e.type) : resultPlace(e.type, dest); };
  const Prim p = e.prim;
  if (e.kind == sema::ExprKind::Limit) {
    const uint32_t mn = operandAt(0), in = operandAt(1), mx = operandAt(2);
    const uint32_t tmp = allocTemp(e.type);
    emit(opFor(Op::MIN_I8, p), {o(tmp), o(in), o(mx)});
    const Value r = target();
    emit(opFor(Op::MAX_I8, p), {o(r.place.operand), o(mn), o(tmp)});
    return r;
  }
  uint32_t cur = operandAt(0);
  const Value r = target();
  for (size_t i = 1; i < vals.size(); ++i) {
    const uint32_t next = operandAt(i);
    const uint32_t out = i + 1 == vals.size() ? r.place.operand : allocTemp(e.type);
    emit(opFor(e.op == sema::Op::Min ? Op::MIN_I8 : Op::MAX_I8, p), {o(out), o(cur), o(next)});
    cur = out;
  }
  return r;
}

Value Compiler::lowerSelect(const sema::Expr& e) {
  std::vector<Value> vals;
  std::vector<DeferredCheck> checks(e.a.size());  // only the chosen operand is read
  for (size_t i = 0; i < e.a.size(); ++i) vals.push_back(lowerDeferringCheck(*e.a[i], checks[i]));
  emitCheck(checks[0]);
  const uint32_t choice = readConverted(*e.a[0], vals[0], e.span);
  Value r = tempValue(e.type);
  Label second = newLabel(), done = newLabel();
  emit(Op::JT, {o(choice), lab(second)});
  emitCheck(checks[1]);
  store(r.place, converted(*e.a[1], vals[1]));
  emit(Op::JMP, {lab(done)});
  bind(second);
  emitCheck(checks[2]);
  store(r.place, converted(*e.a[2], vals[2]));
  bind(done);
  return r;
}

// a AND_THEN b, a OR_ELSE b: b is computed only when a does not decide the result.
Value Compiler::lowerShortCircuit(const sema::Expr& e) {
  Value r = tempValue(e.type);
  const Label done = newLabel();
  store(r.place, converted(*e.a[0], lower(*e.a[0])));
  emit(e.op == sema::Op::And ? Op::JF : Op::JT, {o(r.place.operand), lab(done)});
  store(r.place, converted(*e.a[1], lower(*e.a[1])));
  bind(done);
  return r;
}

Value Compiler::lowerMux(const sema::Expr& e) {
  std::vector<Value> vals;
  std::vector<DeferredCheck> checks(e.a.size());  // only the chosen input is read
  for (size_t i = 0; i < e.a.size(); ++i) vals.push_back(lowerDeferringCheck(*e.a[i], checks[i]));
  emitCheck(checks[0]);
  const Type* dint = types_->elementary(TypeKind::DInt);
  const uint32_t inputs = static_cast<uint32_t>(e.a.size() - 1);
  const uint32_t k = readConverted(*e.a[0], vals[0], e.span);
  emit(Op::CHK_I32, {o(k), o(constOperand(dint, ConstValue::ofInt(0), e.span)),
                     o(constOperand(dint, ConstValue::ofInt(static_cast<int64_t>(inputs) - 1), e.span))});
  Value r = tempValue(e.type);
  Label done = newLabel();
  std::vector<Label> cases;
  std::vector<Opnd> ops = {o(k), o(0), o(inputs), lab(done)};
  for (uint32_t i = 0; i < inputs; ++i) {
    cases.push_back(newLabel());
    ops.push_back(lab(cases.back()));
  }
  emitVec(Op::JTAB, ops);
  for (uint32_t i = 0; i < inputs; ++i) {
    bind(cases[i]);
    emitCheck(checks[i + 1]);
    store(r.place, converted(*e.a[i + 1], vals[i + 1]));
    emit(Op::JMP, {lab(done)});
  }
  bind(done);
  return r;
}

// A string function's result, into the destination when that is a string (of any capacity: the
// operation truncates to it).
Value Compiler::lowerString(const sema::Expr& e, const std::vector<uint32_t>& x, const Place* dest) {
  auto capacityOf = [](const sema::Expr* s) -> uint64_t { return sema::valueBase(s->type)->capacity; };
  Value r;
  if (!e.fresh && dest && dest->kind == Place::Kind::Direct && dest->type && dest->type->kind == TypeKind::String) {
    r.type = dest->type;
    r.place = *dest;
  } else {
    r = tempValue(e.type);
  }
  const uint32_t out = r.place.operand;
  const uint32_t cap = sema::valueBase(r.type)->capacity;
  const bool wide = sema::valueBase(r.type)->wide;
  auto op = [wide](Op narrow) { return stringOp(narrow, wide); };
  switch (e.op) {
    case sema::Op::StrLeft: emit(op(Op::SLEFT), {o(out), o(cap), o(x[0]), o(x[1])}); break;
    case sema::Op::StrRight: emit(op(Op::SRIGHT), {o(out), o(cap), o(x[0]), o(x[1])}); break;
    case sema::Op::StrMid: emit(op(Op::SMID), {o(out), o(cap), o(x[0]), o(x[1]), o(x[2])}); break;
    case sema::Op::StrDelete: emit(op(Op::SDEL), {o(out), o(cap), o(x[0]), o(x[1]), o(x[2])}); break;
    case sema::Op::StrInsert: emit(op(Op::SINS), {o(out), o(cap), o(x[0]), o(x[1]), o(x[2])}); break;
    case sema::Op::StrReplace: emit(op(Op::SREPL), {o(out), o(cap), o(x[0]), o(x[1]), o(x[2]), o(x[3])}); break;
    default: {  // CONCAT: pairwise, through temporaries as long as all the parts
      uint64_t total = 0;
      for (const sema::Expr* a : e.a) total += capacityOf(a);
      const uint32_t inner = static_cast<uint32_t>(std::min<uint64_t>(total, 65535));
      uint32_t acc = x[0];
      for (size_t i = 1; i < x.size(); ++i) {
        const bool last = i + 1 == x.size();
        const uint32_t next = last ? out : allocTemp(wide ? types_->wideString(inner) : types_->string(inner));
        emit(op(Op::SCAT), {o(next), o(last ? cap : inner), o(acc), o(x[i])});
        acc = next;
      }
      if (x.size() == 1) emit(op(Op::SMOV), {o(out), o(cap), o(acc)});
      break;
    }
  }
  return r;
}

// ---------------------------------------------------------------- calls

uint32_t Compiler::templateOf(PouDecl& decl) {
  // An all-zero template is not kept (keepInitial): its bytes are made here.
  if (decl.templateConst == UINT32_MAX)
    decl.templateConst =
        constBytes(decl.frameTemplate.empty() ? std::vector<uint8_t>(decl.frameVarsSize, 0) : decl.frameTemplate, 8);
  return decl.templateConst;
}

// The value an output argument receives: the parameter, negated for `NOT out => x`, converted.
Value Compiler::lowerOutput(const sema::Expr& value, Value parameter) {
  const sema::Expr* inner = sema::unconverted(&value);
  if (inner->kind == sema::ExprKind::Operation) {  // NOT out => x
    const uint32_t src = readOperand(parameter, value.span);
    Value negated = tempValue(inner->type);
    emit(Op::BNOT, {o(negated.place.operand), o(src)});
    parameter = negated;
  }
  return converted(value, parameter);
}

Value Compiler::lowerFunctionCall(const sema::Expr& e, const Place* dest) {
  const sema::CallInfo& call = *e.call;
  PouDecl& f = *byPouIndex_.at(call.pou);
  const Value self = call.instance ? lower(*call.instance) : Value{};
  const bool dynamic = call.slot != UINT32_MAX;
  // A dynamic call needs the instance's address: an interface's value, or THIS's address.
  uint32_t instanceRef = 0;
  if (dynamic)
    instanceRef = call.instance->type && call.instance->type->isInterface() ? readOperand(self, call.instance->span)
                                                                            : addressOf(self.place);
  // Every argument is computed before the callee's frame is filled: an argument may itself call
  // a function whose frame lies at the same place.
  struct Pending {
    const sema::Binding* binding;
    Value value;
    uint32_t ref = 0;
  };
  std::vector<Pending> inputs;
  for (const sema::Binding& b : call.inputs) {
    if (b.role == sema::Binding::Role::InOut) {
      Value place = lower(*b.value);
      const uint32_t ref = addressOf(place.place);
      inputs.push_back({&b, std::move(place), ref});
      continue;
    }
    Value v = lowerBase(*b.value);
    if (!v.isConst && v.place.kind != Place::Kind::Direct) {
      // Materialise now: temporaries keep the evaluation order of the source.
      Value t = tempValue(v.type);
      t.place.operand = readOperand(v, b.span);
      v = t;
    }
    inputs.push_back({&b, std::move(v), 0});
  }
  // A dynamic call fills the parameters only; the method it reaches initialises its locals.
  const uint32_t filled = dynamic ? f.paramsSize : f.frameVarsSize;
  if (!dynamic || filled > 0) emit(Op::MOVN, {o(calleeOperand(0)), o(operand(Base::Const, templateOf(f))), o(filled)});
  for (Pending& in : inputs) {
    const Variable& p = *in.binding->parameter;
    if (in.binding->role == sema::Binding::Role::InOut) {
      emit(Op::MOV4, {o(calleeOperand(p.offset)), o(in.ref)});
      if (isOpenArray(p.type)) {
        const uint32_t at = p.offset;
        const Type* udint = types_->elementary(TypeKind::UDInt);
        storeOpenArrayBounds([&](uint32_t k) { return directValue(udint, calleeOperand(at + k)).place; },
                             *in.binding->value, in.value);
      }
      continue;
    }
    Place slot;
    slot.kind = Place::Kind::Direct;
    slot.type = p.type;
    slot.operand = calleeOperand(p.offset);
    store(slot, converted(*in.binding->value, std::move(in.value)));
  }
  ctx_->callees.insert(f.pouIndex);
  if (dynamic) {
    emit(Op::CALLV, {o(call.slot), frameDelta(), o(instanceRef)});
  } else if (f.kind == PouKind::Method) {
    if (self.place.kind == Place::Kind::Direct)
      emit(Op::CALLI, {o(f.pouIndex), frameDelta(), o(self.place.operand)});
    else
      emit(Op::CALLP, {o(f.pouIndex), frameDelta(), o(addressOf(self.place))});
  } else {
    emit(Op::CALLF, {o(f.pouIndex), frameDelta()});
  }
  Value result;
  result.type = types_->elementary(TypeKind::Void);
  if (f.returnType) {
    result = !e.fresh && dest && dest->kind == Place::Kind::Direct && dest->type == f.returnType
                 ? Value{f.returnType, false, {}, *dest}
                 : tempValue(f.returnType);
    move(result.place.operand, calleeOperand(f.returnOffset), f.returnType);
  }
  for (const sema::Binding& b : call.outputs) {
    const Value target = lower(*b.target);
    const Variable& p = *b.parameter;
    store(target.place, lowerOutput(*b.value, directValue(p.type, calleeOperand(p.offset))));
  }
  return result;
}

void Compiler::lowerFbCall(const sema::Expr& e) {
  const sema::CallInfo& call = *e.call;
  PouDecl* fb = fbDeclOf(call.fbType);
  SB_ASSERT(fb, "no function block for {}", call.fbType->name);
  // An element of an array of instances: compute its address once.
  const Place instance = throughAddress(lower(*call.instance).place);
  for (const sema::Binding& b : call.inputs) {
    const Variable& p = *b.parameter;
    if (b.role == sema::Binding::Role::InOut) {
      const Value arg = lower(*b.value);
      const uint32_t ref = addressOf(arg.place);
      Variable slotVar = p;
      slotVar.byReference = false;
      slotVar.type = types_->elementary(TypeKind::UDInt);
      const Place slot = subPlace(instance, slotVar);
      store(slot, directValue(slotVar.type, ref));
      if (isOpenArray(p.type))
        storeOpenArrayBounds(
            [&](uint32_t k) {
              Variable field = slotVar;
              field.offset = p.offset + k;
              return subPlace(instance, field);
            },
            *b.value, arg);
      continue;
    }
    Value v = lowerBase(*b.value);
    const Place slot = subPlace(instance, p);
    store(slot, converted(*b.value, std::move(v)));
  }
  if (fb->kind == PouKind::Native) {
    if (instance.kind == Place::Kind::Direct)
      emit(Op::NATFB, {o(fb->nativeId), o(instance.operand)});
    else
      emit(Op::NATFBP, {o(fb->nativeId), o(addressOf(instance))});
  } else {
    if (instance.kind == Place::Kind::Direct)
      emit(Op::CALLI, {o(fb->pouIndex), frameDelta(), o(instance.operand)});
    else
      emit(Op::CALLP, {o(fb->pouIndex), frameDelta(), o(addressOf(instance))});
  }
  for (const sema::Binding& b : call.outputs) {
    const Value target = lower(*b.target);
    const Variable& p = *b.parameter;
    Value out;
    out.type = p.type;
    out.place = subPlace(instance, p);
    store(target.place, lowerOutput(*b.value, out));
  }
}

Value Compiler::lowerCall(const sema::Expr& e, const Place* dest) {
  SB_ASSERT(e.call, "a call without a callee reached the code generator");
  if (e.call->kind != sema::CallInfo::Kind::FunctionBlock) return lowerFunctionCall(e, dest);
  lowerFbCall(e);
  Value none;
  none.type = types_->elementary(TypeKind::Void);
  return none;
}

}  // namespace scanback::compiler
