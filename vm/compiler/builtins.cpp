// Standard functions of IEC 61131-3: conversions, numeric, selection, bit shift, string and
// time functions. Each is typed at compile time and becomes typed opcodes.
#include <fmt/format.h>

#include <algorithm>

#include "vm/compiler/compiler_impl.h"

namespace scanback::compiler {

namespace {

const Type* baseOf(const Type* t) {
  while (t && (t->kind == TypeKind::Subrange)) t = t->base;
  return t;
}

Op fltOp(Op firstF32, Prim p) { return static_cast<Op>(static_cast<uint32_t>(firstF32) + (p == Prim::F64 ? 1 : 0)); }
Op bitsOp(Op first8, uint32_t size) {
  return static_cast<Op>(static_cast<uint32_t>(first8) + (size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3));
}

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerS = 1'000'000'000;
constexpr int64_t kNsPerDay = 86'400 * kNsPerS;

}  // namespace

Value Compiler::genConversion(const ast::Expr& call, Value arg, const Type* from, const Type* to) {
  const SourceSpan& span = call.span;
  const Type* i64 = types_->elementary(TypeKind::LInt);
  const Type* f64 = types_->elementary(TypeKind::LReal);
  auto scaled = [&](Value v, const Type* vt, Op op, int64_t factor) -> Value {
    const uint32_t src = operandAs(v, vt, span, true);
    Value r = tempValue(vt);
    emit(op,
         {o(r.place.operand), o(src),
          o(constOperand(vt, vt->isReal() ? ConstValue::ofReal(static_cast<double>(factor)) : ConstValue::ofInt(factor),
                         span))});
    return r;
  };
  from = from ? baseOf(from) : nullptr;
  const Type* toBase = baseOf(to);
  if (!from) {  // untyped literal
    if (toBase->isTimeLike() || toBase->kind == TypeKind::String) {
      const Type* lt = literalType(arg.constant);
      arg = convertValue(arg, lt, span, true);
      from = lt;
    } else {
      return convertValue(arg, to, span, true);
    }
  }
  if (from->kind == TypeKind::Enum) from = from->base;
  // to STRING
  if (toBase->kind == TypeKind::String) {
    Op op;
    const Type* operandType = from;
    switch (from->kind) {
      case TypeKind::Bool: op = Op::SFROM_BOOL; break;
      case TypeKind::Real: op = Op::SFROM_F32; break;
      case TypeKind::LReal: op = Op::SFROM_F64; break;
      case TypeKind::Time: op = Op::SFROM_TIME; break;
      case TypeKind::LTime: op = Op::SFROM_LTIME; break;
      case TypeKind::Date: op = Op::SFROM_DATE; break;
      case TypeKind::Tod: op = Op::SFROM_TOD; break;
      case TypeKind::Dt: op = Op::SFROM_DT; break;
      case TypeKind::String: return convertValue(arg, to, span, true);
      default:
        if (!from->isInteger()) {
          error(span, fmt::format("cannot convert {} to STRING", from->name));
          return tempValue(to);
        }
        op = from->isSigned() ? Op::SFROM_I64 : Op::SFROM_U64;
        operandType = from->isSigned() ? i64 : types_->elementary(TypeKind::ULInt);
        break;
    }
    const uint32_t src = operandAs(arg, operandType, span, true);
    Value r = tempValue(to);
    emit(op, {o(r.place.operand), o(to->capacity), o(src)});
    return r;
  }
  // from STRING
  if (from->kind == TypeKind::String) {
    const uint32_t src = readOperand(arg, span);
    if (toBase->kind == TypeKind::Bool) {
      Value r = tempValue(to);
      emit(Op::STO_BOOL, {o(r.place.operand), o(src)});
      return r;
    }
    if (toBase->isReal()) {
      Value t = tempValue(f64);
      emit(Op::STO_F64, {o(t.place.operand), o(src)});
      return convertValue(t, to, span, true);
    }
    if (toBase->isInteger() || toBase->kind == TypeKind::Enum) {
      const bool sign = toBase->isSigned();
      Value t = tempValue(sign ? i64 : types_->elementary(TypeKind::ULInt));
      emit(sign ? Op::STO_I64 : Op::STO_U64, {o(t.place.operand), o(src)});
      return convertValue(t, to, span, true);
    }
    error(span, fmt::format("cannot convert STRING to {}", to->name));
    return tempValue(to);
  }
  // durations and dates: TIME counts milliseconds, LTIME nanoseconds, DATE/DT seconds, TOD milliseconds
  auto unitOf = [](const Type* t) -> int64_t {
    switch (t->kind) {
      case TypeKind::Time: return kNsPerMs;
      case TypeKind::LTime: return 1;
      case TypeKind::Date: return kNsPerS;
      case TypeKind::Dt: return kNsPerS;
      case TypeKind::Tod: return kNsPerMs;
      default: return 0;
    }
  };
  if (from->isTimeLike() && toBase->isTimeLike()) {
    if (from->kind == TypeKind::Dt && toBase->kind == TypeKind::Date) {
      Value d = scaled(arg, i64, Op::DIV_I64, kNsPerDay);
      Value r = scaled(d, i64, Op::MUL_I64, kNsPerDay);
      r.type = to;
      r.place.type = to;
      return r;
    }
    if (from->kind == TypeKind::Dt && toBase->kind == TypeKind::Tod) {
      Value r = scaled(arg, i64, Op::MOD_I64, kNsPerDay);
      r.type = to;
      r.place.type = to;
      return r;
    }
    const bool compatible = (from->kind == TypeKind::Time || from->kind == TypeKind::LTime) ==
                                (toBase->kind == TypeKind::Time || toBase->kind == TypeKind::LTime) &&
                            !(from->kind == TypeKind::Tod) == !(toBase->kind == TypeKind::Tod);
    if (!compatible && !(from->kind == TypeKind::Date && toBase->kind == TypeKind::Dt)) {
      error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
      return tempValue(to);
    }
    Value r = arg;
    if (r.isConst) {
      r.type = to;
      return r;
    }
    r.type = to;
    r.place.type = to;
    return r;
  }
  if (from->isTimeLike()) {
    if (!toBase->isNumeric()) {
      error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
      return tempValue(to);
    }
    const int64_t unit = unitOf(from);
    if (toBase->isReal()) {
      Value x = convertValue(arg, i64, span, true);
      Value f = convertValue(x, f64, span, true);
      Value r = unit == 1 ? f : scaled(f, f64, Op::DIV_F64, unit);
      return convertValue(r, to, span, true);
    }
    Value x = convertValue(arg, i64, span, true);
    Value r = unit == 1 ? x : scaled(x, i64, Op::DIV_I64, unit);
    return convertValue(r, to, span, true);
  }
  if (toBase->isTimeLike()) {
    if (!from->isNumeric()) {
      error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
      return tempValue(to);
    }
    const int64_t unit = unitOf(toBase);
    Value r;
    if (from->isReal()) {
      Value f = convertValue(arg, f64, span, true);
      Value m = unit == 1 ? f : scaled(f, f64, Op::MUL_F64, unit);
      r = convertValue(m, i64, span, true);
    } else {
      Value x = convertValue(arg, i64, span, true);
      r = unit == 1 ? x : scaled(x, i64, Op::MUL_I64, unit);
    }
    if (r.isConst) {
      r.type = to;
      return r;
    }
    r.type = to;
    r.place.type = to;
    return r;
  }
  if (!(from->isScalar() && toBase->isScalar()) || from->kind == TypeKind::Ref || toBase->kind == TypeKind::Ref) {
    error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    return tempValue(to);
  }
  return convertValue(arg, to, span, true);
}

std::optional<Value> Compiler::genBuiltin(const ast::Expr& call, const std::string& name, const Type* hint,
                                          const Place* dest) {
  const SourceSpan& span = call.span;
  const Type* boolType = types_->elementary(TypeKind::Bool);
  const Type* i64 = types_->elementary(TypeKind::LInt);
  const Type* intType = types_->elementary(TypeKind::Int);
  const Type* f64 = types_->elementary(TypeKind::LReal);
  const Type* f32 = types_->elementary(TypeKind::Real);

  // Arguments by position, or by their standard names.
  auto args = [&](std::initializer_list<const char*> names, bool variadic = false) {
    std::vector<const ast::Expr*> out(names.size(), nullptr);
    std::vector<std::string> nameList(names.begin(), names.end());
    size_t pos = 0;
    for (const ast::Argument& a : call.args) {
      if (a.isOutput) {
        error(a.span, fmt::format("{} has no outputs", name));
        continue;
      }
      if (a.name.empty()) {
        if (pos >= out.size()) {
          if (variadic) {
            out.push_back(a.value.get());
            ++pos;
            continue;
          }
          error(a.span, fmt::format("too many arguments for {} ({} expected)", name, names.size()));
          continue;
        }
        out[pos++] = a.value.get();
        continue;
      }
      size_t k = 0;
      for (; k < nameList.size(); ++k)
        if (equalsIgnoreCase(nameList[k], a.name)) break;
      if (k == nameList.size()) {
        // variadic names IN1, IN2, ... beyond the list
        error(a.span, fmt::format("{} has no parameter '{}'", name, a.name));
        continue;
      }
      out[k] = a.value.get();
    }
    for (size_t k = 0; k < out.size(); ++k)
      if (!out[k]) error(span, fmt::format("{} needs its argument {}", name, nameList.size() > k ? nameList[k] : "?"));
    return out;
  };
  auto target = [&](const Type* rt) { return resultPlace(rt, dest); };
  // Untyped literals only (SEL(g, 0.0, 12.0)): take the type the context expects when they fit it.
  auto literalsFitHint = [&](const std::vector<Value>& vals) -> const Type* {
    if (!hint) return nullptr;
    const Type* h = baseOf(hint);
    if (!h->isNumeric()) return nullptr;
    for (const Value& v : vals)
      if (!v.isConst || v.type || !fitsLiteral(v.constant, h)) return nullptr;
    return h;
  };
  auto realTypeFor = [&](const Value& v) -> const Type* {
    if (!v.type) return hint && baseOf(hint)->kind == TypeKind::Real ? f32 : f64;
    const Type* t = baseOf(v.type);
    if (t->isReal()) return t;
    return implicitlyConvertible(t, f32) ? f32 : f64;
  };
  auto stringArg = [&](const ast::Expr* e) -> std::pair<uint32_t, const Type*> {
    Value v = genExpr(*e);
    const Type* t = v.type ? baseOf(v.type) : nullptr;
    if (!t || t->kind != TypeKind::String) {
      error(e->span, fmt::format("{} needs a STRING here", name));
      return {constOperand(types_->string(1), ConstValue::ofString(""), e->span), types_->string(1)};
    }
    return {readOperand(v, e->span), t};
  };
  auto intArg = [&](const ast::Expr* e) -> uint32_t {
    Value v = genExpr(*e, i64);
    if (!v.isConst && (!v.type || !baseOf(v.type)->isInteger())) {
      error(e->span, fmt::format("{} needs an integer here", name));
      return constOperand(i64, ConstValue::ofInt(0), e->span);
    }
    return operandAs(v, i64, e->span, true);
  };
  auto stringResult = [&](uint64_t capacity) -> Value {
    if (dest && dest->kind == Place::Kind::Direct && dest->type && dest->type->kind == TypeKind::String) {
      Value r;
      r.type = dest->type;
      r.place = *dest;
      return r;
    }
    return tempValue(types_->string(static_cast<uint32_t>(std::clamp<uint64_t>(capacity, 1, 65535))));
  };

  // ---- conversions: X_TO_Y, TO_Y, TRUNC, X_TRUNC_Y
  if (name == "TRUNC" || name.find("_TRUNC_") != std::string::npos) {
    const Type* to = types_->elementary(TypeKind::DInt);
    if (name != "TRUNC") {
      to = types_->findElementary(name.substr(name.find("_TRUNC_") + 7));
      if (!to || !to->isInteger()) return std::nullopt;
    }
    auto a = args({"IN"});
    if (!a[0]) return tempValue(to);
    Value v = genExpr(*a[0]);
    if (v.isConst && !v.type) v = convertValue(v, f64, span, false);
    if (!v.type || !baseOf(v.type)->isReal()) {
      error(a[0]->span, "TRUNC needs a REAL or LREAL");
      return tempValue(to);
    }
    const uint32_t src = readOperand(v, span);
    Value t = tempValue(i64);
    emit(fltOp(Op::TRUNC_F32, primOf(*baseOf(v.type))), {o(t.place.operand), o(src)});
    return convertValue(t, to, span, true);
  }
  {
    const Type* from = nullptr;
    const Type* to = nullptr;
    bool conversion = false;
    if (name.rfind("TO_", 0) == 0) {
      to = resolvedTypes_.count(name.substr(3)) ? resolvedTypes_[name.substr(3)]
                                                : types_->findElementary(name.substr(3));
      if (!to && name.substr(3) == "STRING") to = types_->string(80);
      conversion = to != nullptr;
    } else {
      for (size_t at = name.find("_TO_"); at != std::string::npos; at = name.find("_TO_", at + 1)) {
        const std::string left = name.substr(0, at), right = name.substr(at + 4);
        const Type* l = left == "STRING" ? types_->string(80) : types_->findElementary(left);
        const Type* r = right == "STRING" ? types_->string(80) : types_->findElementary(right);
        if (l && r) {
          from = l;
          to = r;
          conversion = true;
          break;
        }
      }
    }
    if (conversion) {
      auto a = args({"IN"});
      if (!a[0]) return tempValue(to);
      Value v = genExpr(*a[0], from);
      if (from && v.type && baseOf(v.type) != from) {
        const Type* vt = baseOf(v.type);
        const bool stringsMatch = vt->kind == TypeKind::String && from->kind == TypeKind::String;
        const bool enumOk = vt->kind == TypeKind::Enum && vt->base == from;
        if (!stringsMatch && !enumOk && !implicitlyConvertible(vt, from)) {
          error(a[0]->span, fmt::format("{} expects a {}, not {}", name, from->name, v.type->name));
          return tempValue(to);
        }
        if (!stringsMatch && !enumOk) v = convertValue(v, from, span, false);
      }
      if (from && !v.type && v.isConst) v = convertValue(v, from, span, false);
      return genConversion(call, v, v.type, to);
    }
  }

  // ---- numeric
  static const std::map<std::string, Op> kMath = {
      {"SQRT", Op::SQRT_F32}, {"LN", Op::LN_F32},     {"LOG", Op::LOG_F32}, {"EXP", Op::EXP_F32},
      {"SIN", Op::SIN_F32},   {"COS", Op::COS_F32},   {"TAN", Op::TAN_F32}, {"ASIN", Op::ASIN_F32},
      {"ACOS", Op::ACOS_F32}, {"ATAN", Op::ATAN_F32},
  };
  if (auto it = kMath.find(name); it != kMath.end()) {
    auto a = args({"IN"});
    if (!a[0]) return tempValue(f64);
    Value v = genExpr(*a[0], hint);
    if (v.isConst && v.constant.kind == ConstValue::Kind::String) {
      error(a[0]->span, fmt::format("{} needs a number", name));
      return tempValue(f64);
    }
    if (v.type && !baseOf(v.type)->isNumeric()) {
      error(a[0]->span, fmt::format("{} needs a number, not {}", name, v.type->name));
      return tempValue(f64);
    }
    const Type* rt = realTypeFor(v);
    const uint32_t src = operandAs(v, rt, span, true);
    Value r = target(rt);
    emit(fltOp(it->second, primOf(*rt)), {o(r.place.operand), o(src)});
    return r;
  }
  if (name == "EXPT") {
    auto a = args({"IN1", "IN2"});
    if (!a[0] || !a[1]) return tempValue(f64);
    Value x = genExpr(*a[0], hint);
    Value y = genExpr(*a[1]);
    const Type* rt = realTypeFor(x);
    const uint32_t ox = operandAs(x, rt, span, true), oy = operandAs(y, rt, span, true);
    Value r = target(rt);
    emit(fltOp(Op::EXPT_F32, primOf(*rt)), {o(r.place.operand), o(ox), o(oy)});
    return r;
  }
  if (name == "ABS") {
    auto a = args({"IN"});
    if (!a[0]) return tempValue(intType);
    Value v = genExpr(*a[0], hint);
    if (v.isConst && !v.type)
      v = convertValue(v, hint && baseOf(hint)->isNumeric() ? baseOf(hint) : literalType(v.constant), span, false);
    const Type* t = v.type ? baseOf(v.type) : nullptr;
    if (!t || !(t->isNumeric() || t->kind == TypeKind::Time || t->kind == TypeKind::LTime)) {
      error(a[0]->span, "ABS needs a number");
      return tempValue(intType);
    }
    const uint32_t src = readOperand(v, span);
    Value r = target(t);
    emit(opFor(Op::ABS_I8, primOf(*t)), {o(r.place.operand), o(src)});
    return r;
  }
  if (name == "MIN" || name == "MAX" || name == "LIMIT") {
    const bool limit = name == "LIMIT";
    auto a = limit ? args({"MN", "IN", "MX"}) : args({"IN1", "IN2"}, true);
    std::vector<Value> vals;
    for (const ast::Expr* x : a)
      if (x) vals.push_back(genExpr(*x, hint));
    if (vals.size() < (limit ? 3u : 2u)) return tempValue(intType);  // an argument is missing (reported)
    // The common type of all arguments, folded left to right (each pair once, so each
    // mismatch is reported once).
    Value acc = vals[0];
    const Type* t = nullptr;
    for (size_t i = 1; i < vals.size(); ++i) {
      t = commonType(acc, vals[i], span);
      acc = Value{t, false, {}, {}};
    }
    if (const Type* h = literalsFitHint(vals)) t = h;
    if (!t) t = literalType(vals[0].constant);
    t = baseOf(t);
    if (t->kind == TypeKind::Enum) t = t->base;
    if (!t->isScalar() || t->kind == TypeKind::Ref) {
      error(span, fmt::format("{} needs numbers or times", name));
      return tempValue(t);
    }
    const Prim p = primOf(*t);
    if (limit) {
      const uint32_t mn = operandAs(vals[0], t, span), in = operandAs(vals[1], t, span),
                     mx = operandAs(vals[2], t, span);
      const uint32_t tmp = allocTemp(t);
      emit(opFor(Op::MIN_I8, p), {o(tmp), o(in), o(mx)});
      Value r = target(t);
      emit(opFor(Op::MAX_I8, p), {o(r.place.operand), o(mn), o(tmp)});
      return r;
    }
    uint32_t cur = operandAs(vals[0], t, span);
    Value r = target(t);
    for (size_t i = 1; i < vals.size(); ++i) {
      const uint32_t next = operandAs(vals[i], t, span);
      const uint32_t out = i + 1 == vals.size() ? r.place.operand : allocTemp(t);
      emit(opFor(name == "MIN" ? Op::MIN_I8 : Op::MAX_I8, p), {o(out), o(cur), o(next)});
      cur = out;
    }
    return r;
  }
  if (name == "SEL") {
    auto a = args({"G", "IN0", "IN1"});
    if (!a[0] || !a[1] || !a[2]) return tempValue(intType);
    Value g = genExpr(*a[0], boolType);
    Value x = genExpr(*a[1], hint);
    Value y = genExpr(*a[2], hint);
    const uint32_t og = operandAs(g, boolType, span);
    const Type* t = (x.type && y.type) ? commonType(x, y, span)
                                       : (x.type   ? x.type
                                          : y.type ? y.type
                                                   : commonType(x, y, span));
    if (const Type* h = literalsFitHint({x, y})) t = h;
    if (baseOf(t)->kind == TypeKind::String)
      t = types_->string(std::max(x.type ? baseOf(x.type)->capacity : 1u, y.type ? baseOf(y.type)->capacity : 1u));
    Value r = tempValue(t);
    Label second = newLabel(), done = newLabel();
    emit(Op::JT, {o(og), lab(second)});
    store(r.place, x, span);
    emit(Op::JMP, {lab(done)});
    bind(second);
    store(r.place, y, span);
    bind(done);
    return r;
  }
  if (name == "MUX") {
    auto a = args({"K", "IN0", "IN1"}, true);
    if (a.size() < 2 || !a[0]) return tempValue(intType);
    Value k = genExpr(*a[0], types_->elementary(TypeKind::DInt));
    std::vector<Value> vals;
    for (size_t i = 1; i < a.size(); ++i)
      if (a[i]) vals.push_back(genExpr(*a[i], hint));
    if (vals.empty()) return tempValue(intType);  // MUX(k) without inputs (reported by args)
    const Type* t = vals[0].type;
    for (Value& v : vals)
      if (v.type) t = t ? commonType(Value{t, false, {}, {}}, v, span) : v.type;
    if (const Type* h = literalsFitHint(vals)) t = h;
    if (!t) t = literalType(vals[0].constant);
    if (baseOf(t)->kind == TypeKind::String) t = types_->string(80);
    const Type* dint = types_->elementary(TypeKind::DInt);
    const uint32_t ok = operandAs(k, dint, span, true);
    emit(Op::CHK_I32, {o(ok), o(constOperand(dint, ConstValue::ofInt(0), span)),
                       o(constOperand(dint, ConstValue::ofInt(static_cast<int64_t>(vals.size()) - 1), span))});
    Value r = tempValue(t);
    Label done = newLabel();
    std::vector<Label> cases;
    std::vector<Opnd> ops = {o(ok), o(0), o(static_cast<uint32_t>(vals.size())), lab(done)};
    for (size_t i = 0; i < vals.size(); ++i) {
      cases.push_back(newLabel());
      ops.push_back(lab(cases.back()));
    }
    emitVec(Op::JTAB, ops);
    for (size_t i = 0; i < vals.size(); ++i) {
      bind(cases[i]);
      store(r.place, vals[i], span);
      emit(Op::JMP, {lab(done)});
    }
    bind(done);
    return r;
  }
  if (name == "SHL" || name == "SHR" || name == "ROL" || name == "ROR") {
    auto a = args({"IN", "N"});
    if (!a[0] || !a[1]) return tempValue(types_->elementary(TypeKind::DWord));
    Value v = genExpr(*a[0], hint);
    if (v.isConst && !v.type)
      v = convertValue(v, hint && baseOf(hint)->isInteger() ? baseOf(hint) : types_->elementary(TypeKind::DWord), span,
                       false);
    const Type* t = v.type ? baseOf(v.type) : nullptr;
    if (!t || !t->isInteger()) {
      error(a[0]->span, fmt::format("{} needs a bit string or integer", name));
      return tempValue(types_->elementary(TypeKind::DWord));
    }
    const uint32_t src = readOperand(v, span);
    const uint32_t n = intArg(a[1]);
    const Op family = name == "SHL" ? Op::SHL_8 : name == "SHR" ? Op::SHR_8 : name == "ROL" ? Op::ROL_8 : Op::ROR_8;
    Value r = target(t);
    emit(bitsOp(family, t->size), {o(r.place.operand), o(src), o(n)});
    return r;
  }
  if (name == "MOVE") {
    auto a = args({"IN"});
    if (!a[0]) return tempValue(intType);
    return genExpr(*a[0], hint);
  }
  if (name == "REF" || name == "ADR") {
    auto a = args({"IN"});
    if (!a[0]) return tempValue(types_->refTo(intType));
    Value v = genExpr(*a[0]);
    if (v.isConst) {
      error(a[0]->span, "REF needs a variable");
      return tempValue(types_->refTo(intType));
    }
    if (operandBase(v.place.operand) == Base::Frame && v.place.kind == Place::Kind::Direct &&
        ctx_->mode != BodyContext::Mode::Function && ctx_->mode != BodyContext::Mode::Method) {
      // VAR_TEMP lives only during the call; a reference to it dangles afterwards. Allowed, as in IEC.
    }
    const uint32_t addr = addressOf(v.place, a[0]->span);
    Value r;
    r.type = types_->refTo(v.type);
    r.place.kind = Place::Kind::Direct;
    r.place.type = r.type;
    r.place.operand = addr;
    return r;
  }

  // ---- strings
  if (name == "LEN") {
    auto a = args({"IN"});
    if (!a[0]) return tempValue(intType);
    auto [s, st] = stringArg(a[0]);
    Value r = target(intType);
    emit(Op::SLEN, {o(r.place.operand), o(s)});
    return r;
  }
  if (name == "LEFT" || name == "RIGHT") {
    auto a = args({"IN", "L"});
    if (!a[0] || !a[1]) return tempValue(types_->string(80));
    auto [s, st] = stringArg(a[0]);
    const uint32_t n = intArg(a[1]);
    Value r = stringResult(st->capacity);
    emit(name == "LEFT" ? Op::SLEFT : Op::SRIGHT, {o(r.place.operand), o(baseOf(r.type)->capacity), o(s), o(n)});
    return r;
  }
  if (name == "MID") {
    auto a = args({"IN", "L", "P"});
    if (!a[0] || !a[1] || !a[2]) return tempValue(types_->string(80));
    auto [s, st] = stringArg(a[0]);
    const uint32_t l = intArg(a[1]), p = intArg(a[2]);
    Value r = stringResult(st->capacity);
    emit(Op::SMID, {o(r.place.operand), o(baseOf(r.type)->capacity), o(s), o(l), o(p)});
    return r;
  }
  if (name == "CONCAT") {
    auto a = args({"IN1", "IN2"}, true);
    for (const ast::Expr* x : a)
      if (!x) return tempValue(types_->string(80));
    std::vector<std::pair<uint32_t, const Type*>> parts;
    uint64_t cap = 0;
    for (const ast::Expr* x : a) {
      parts.push_back(stringArg(x));
      cap += parts.back().second->capacity;
    }
    Value r = stringResult(cap);
    uint32_t acc = parts[0].first;
    for (size_t i = 1; i < parts.size(); ++i) {
      const bool last = i + 1 == parts.size();
      const uint32_t out =
          last ? r.place.operand : allocTemp(types_->string(static_cast<uint32_t>(std::min<uint64_t>(cap, 65535))));
      const uint32_t outCap = last ? baseOf(r.type)->capacity : static_cast<uint32_t>(std::min<uint64_t>(cap, 65535));
      emit(Op::SCAT, {o(out), o(outCap), o(acc), o(parts[i].first)});
      acc = out;
    }
    if (parts.size() == 1) emit(Op::SMOV, {o(r.place.operand), o(baseOf(r.type)->capacity), o(acc)});
    return r;
  }
  if (name == "INSERT") {
    auto a = args({"IN1", "IN2", "P"});
    if (!a[0] || !a[1] || !a[2]) return tempValue(types_->string(80));
    auto [x, xt] = stringArg(a[0]);
    auto [y, yt] = stringArg(a[1]);
    const uint32_t p = intArg(a[2]);
    Value r = stringResult(uint64_t{xt->capacity} + yt->capacity);
    emit(Op::SINS, {o(r.place.operand), o(baseOf(r.type)->capacity), o(x), o(y), o(p)});
    return r;
  }
  if (name == "DELETE") {
    auto a = args({"IN", "L", "P"});
    if (!a[0] || !a[1] || !a[2]) return tempValue(types_->string(80));
    auto [s, st] = stringArg(a[0]);
    const uint32_t l = intArg(a[1]), p = intArg(a[2]);
    Value r = stringResult(st->capacity);
    emit(Op::SDEL, {o(r.place.operand), o(baseOf(r.type)->capacity), o(s), o(l), o(p)});
    return r;
  }
  if (name == "REPLACE") {
    auto a = args({"IN1", "IN2", "L", "P"});
    if (!a[0] || !a[1] || !a[2] || !a[3]) return tempValue(types_->string(80));
    auto [x, xt] = stringArg(a[0]);
    auto [y, yt] = stringArg(a[1]);
    const uint32_t l = intArg(a[2]), p = intArg(a[3]);
    Value r = stringResult(uint64_t{xt->capacity} + yt->capacity);
    emit(Op::SREPL, {o(r.place.operand), o(baseOf(r.type)->capacity), o(x), o(y), o(l), o(p)});
    return r;
  }
  if (name == "FIND") {
    auto a = args({"IN1", "IN2"});
    if (!a[0] || !a[1]) return tempValue(intType);
    auto [x, xt] = stringArg(a[0]);
    auto [y, yt] = stringArg(a[1]);
    Value r = target(intType);
    emit(Op::SFIND, {o(r.place.operand), o(x), o(y)});
    return r;
  }

  // ---- time and date functions
  struct TimeFn {
    const char* name;
    TypeKind a, b, result;
    Op op;
  };
  static const TimeFn kTimeFns[] = {
      {"ADD_TIME", TypeKind::Time, TypeKind::Time, TypeKind::Time, Op::ADD_I64},
      {"SUB_TIME", TypeKind::Time, TypeKind::Time, TypeKind::Time, Op::SUB_I64},
      {"ADD_LTIME", TypeKind::LTime, TypeKind::LTime, TypeKind::LTime, Op::ADD_I64},
      {"SUB_LTIME", TypeKind::LTime, TypeKind::LTime, TypeKind::LTime, Op::SUB_I64},
      {"ADD_TOD_TIME", TypeKind::Tod, TypeKind::Time, TypeKind::Tod, Op::ADD_I64},
      {"ADD_DT_TIME", TypeKind::Dt, TypeKind::Time, TypeKind::Dt, Op::ADD_I64},
      {"SUB_TOD_TIME", TypeKind::Tod, TypeKind::Time, TypeKind::Tod, Op::SUB_I64},
      {"SUB_DT_TIME", TypeKind::Dt, TypeKind::Time, TypeKind::Dt, Op::SUB_I64},
      {"SUB_DATE_DATE", TypeKind::Date, TypeKind::Date, TypeKind::Time, Op::SUB_I64},
      {"SUB_TOD_TOD", TypeKind::Tod, TypeKind::Tod, TypeKind::Time, Op::SUB_I64},
      {"SUB_DT_DT", TypeKind::Dt, TypeKind::Dt, TypeKind::Time, Op::SUB_I64},
      {"CONCAT_DATE_TOD", TypeKind::Date, TypeKind::Tod, TypeKind::Dt, Op::ADD_I64},
  };
  for (const TimeFn& fn : kTimeFns) {
    if (name != fn.name) continue;
    auto a = args({"IN1", "IN2"});
    const Type* rt = types_->elementary(fn.result);
    if (!a[0] || !a[1]) return tempValue(rt);
    Value x = genExpr(*a[0], types_->elementary(fn.a));
    Value y = genExpr(*a[1], types_->elementary(fn.b));
    const uint32_t ox = operandAs(x, types_->elementary(fn.a), span);
    const uint32_t oy = operandAs(y, types_->elementary(fn.b), span);
    Value r = target(rt);
    emit(fn.op, {o(r.place.operand), o(ox), o(oy)});
    return r;
  }
  if (name == "MUL_TIME" || name == "DIV_TIME" || name == "MUL_LTIME" || name == "DIV_LTIME") {
    auto a = args({"IN1", "IN2"});
    const Type* tt = types_->elementary(name.find("LTIME") != std::string::npos ? TypeKind::LTime : TypeKind::Time);
    if (!a[0] || !a[1]) return tempValue(tt);
    Value x = genExpr(*a[0], tt);
    Value y = genExpr(*a[1]);
    const uint32_t ox = operandAs(x, tt, span);
    const bool mul = name[0] == 'M';
    Value r = target(tt);
    if ((y.isConst && y.constant.kind == ConstValue::Kind::Real) || (y.type && baseOf(y.type)->isReal())) {
      const uint32_t fx = operandAs(Value{tt, false, {}, Place{Place::Kind::Direct, tt, ox}}, f64, span, true);
      const uint32_t fy = operandAs(y, f64, span, true);
      const uint32_t t = allocTemp(f64);
      emit(mul ? Op::MUL_F64 : Op::DIV_F64, {o(t), o(fx), o(fy)});
      emit(Op::CVT_F64_I64, {o(r.place.operand), o(t)});
    } else {
      const uint32_t oy = operandAs(y, i64, span, !y.isConst);
      emit(mul ? Op::MUL_I64 : Op::DIV_I64, {o(r.place.operand), o(ox), o(oy)});
    }
    return r;
  }
  return std::nullopt;
}

}  // namespace scanback::compiler
