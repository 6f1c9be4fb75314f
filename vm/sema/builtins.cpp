// Standard functions of IEC 61131-3: conversions, numeric, selection, bit shift, string and time
// functions, typed here and lowered by each backend (the compiler's opcodes, the debugger's nodes).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "vm/sema/analyzer.h"

namespace scanback::sema {

namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerS = 1'000'000'000;
constexpr int64_t kNsPerDay = 86'400 * kNsPerS;

// Durations and dates as numbers: TIME counts milliseconds, LTIME nanoseconds, DATE and DT
// seconds, TOD milliseconds.
int64_t unitOf(const Type* t) {
  switch (t->kind) {
    case TypeKind::Time: return kNsPerMs;
    case TypeKind::LTime: return 1;
    case TypeKind::Date: return kNsPerS;
    case TypeKind::Dt: return kNsPerS;
    case TypeKind::Tod: return kNsPerMs;
    default: return 0;
  }
}

}  // namespace

// One call of a standard function being typed: its arguments and the helpers every function uses.
class BuiltinAnalysis {
 public:
  BuiltinAnalysis(Analyzer& analyzer, const ast::Expr& call, const std::string& name, const Type* hint)
      : an_(analyzer), call_(call), name_(name), hint_(hint), span_(call.span) {}

  Expr* run();

 private:
  Analyzer& an_;
  const ast::Expr& call_;
  const std::string& name_;
  const Type* hint_;
  const SourceSpan& span_;

  const Type* elem(TypeKind k) const { return an_.elementary(k); }
  Expr* invalid(const Type* t) { return an_.invalid(t, span_); }

  // Arguments by position, or by their standard names.
  std::vector<const ast::Expr*> args(std::initializer_list<const char*> names, bool variadic = false) {
    std::vector<const ast::Expr*> out(names.size(), nullptr);
    const std::vector<std::string> nameList(names.begin(), names.end());
    size_t pos = 0;
    bool misnamed = false;
    for (const ast::Argument& a : call_.args) {
      if (a.isOutput) {
        an_.error(a.span, fmt::format("{} has no outputs", name_));
        continue;
      }
      if (a.name.empty()) {
        if (pos >= out.size()) {
          if (variadic) {
            out.push_back(a.value.get());
            ++pos;
            continue;
          }
          an_.error(a.span, fmt::format("too many arguments for {} ({} expected)", name_, names.size()));
          continue;
        }
        out[pos++] = a.value.get();
        continue;
      }
      size_t k = 0;
      for (; k < nameList.size(); ++k)
        if (namedBy(nameList[k], a.name)) break;
      if (k == nameList.size()) {
        an_.error(a.span, fmt::format("{} has no parameter '{}'", name_, a.name));
        misnamed = true;
        continue;
      }
      if (out[k]) {  // LEFT(IN := a, STR := b): one parameter by two of its names
        an_.error(a.span,
                  fmt::format("{} gets its argument {} twice", name_, nameList[k].substr(0, nameList[k].find('|'))));
        continue;
      }
      out[k] = a.value.get();
    }
    for (size_t k = 0; k < out.size() && !misnamed; ++k)  // LEN(S := s): one error, at S
      if (!out[k])
        an_.error(span_, fmt::format("{} needs its argument {}", name_,
                                     k < nameList.size() ? nameList[k].substr(0, nameList[k].find('|')) : "?"));
    return out;
  }

  // `STRING(n)`, `STRING[n]`, `WSTRING(n)`, `WSTRING[n]` written as SIZEOF's operand: a type, as
  // in a declaration (SIZEOF(STRING(10)) is 11). Null inside when n is not a constant in
  // 1..65535 (reported); nullopt when the operand is not written so.
  std::optional<const Type*> sizedStringType(const ast::Expr& e) {
    const bool call =
        e.kind == ast::ExprKind::Call && e.args.size() == 1 && e.args[0].name.empty() && !e.args[0].isOutput;
    const bool index = e.kind == ast::ExprKind::Index && e.indices.size() == 1;
    if ((!call && !index) || !e.operand || e.operand->kind != ast::ExprKind::Name) return std::nullopt;
    const std::string upper = upperCase(e.operand->text);
    if (upper != "STRING" && upper != "WSTRING") return std::nullopt;
    // A variable named `string` is indexed, not a type (SIZEOF(string[2]) is its element's size).
    if (an_.scope().local(e.operand->text) || an_.scope().declarations().global(e.operand->text)) return std::nullopt;
    const ast::Expr& length = call ? *e.args[0].value : *e.indices[0];
    Expr* n = an_.constant(length);
    if (!n || n->constant.kind != ConstValue::Kind::Int) {
      an_.error(length.span, "expected a constant integer expression");
      return nullptr;
    }
    if (n->constant.i < 1 || n->constant.i > 65535) {
      an_.error(length.span,
                fmt::format("string length {} is outside 1..65535",
                            static_cast<int64_t>(std::clamp<Int128>(n->constant.i, INT64_MIN, INT64_MAX))));
      return nullptr;
    }
    const auto cap = static_cast<uint32_t>(n->constant.i);
    return upper == "WSTRING" ? an_.types().wideString(cap) : an_.types().string(cap);
  }

  // `names` is a parameter's names separated by '|': IEC's first, then another vendor's
  // ("IN|STR": TwinCAT and CODESYS call LEN's input STR).
  static bool namedBy(std::string_view names, std::string_view name) {
    for (;;) {
      const size_t bar = names.find('|');
      if (equalsIgnoreCase(names.substr(0, bar), name)) return true;
      if (bar == std::string_view::npos) return false;
      names.remove_prefix(bar + 1);
    }
  }

  // Untyped literals only (SEL(g, 0.0, 12.0)): take the type the context expects when they fit it.
  const Type* literalsFitHint(const std::vector<Expr*>& vals) const {
    if (!hint_) return nullptr;
    const Type* h = valueBase(hint_);
    if (!h->isNumeric()) return nullptr;
    for (const Expr* v : vals)
      if (v->kind != ExprKind::Constant || v->type || !fitsLiteral(v->constant, h)) return nullptr;
    return h;
  }

  const Type* realTypeFor(const Expr* v) const {
    if (!v->type)
      return hint_ && valueBase(hint_)->kind == TypeKind::Real ? elem(TypeKind::Real) : elem(TypeKind::LReal);
    const Type* t = valueBase(v->type);
    if (t->isReal()) return t;
    return implicitlyConvertible(t, elem(TypeKind::Real)) ? elem(TypeKind::Real) : elem(TypeKind::LReal);
  }

  // A STRING or WSTRING argument (read where it is computed); a function's string arguments all
  // have the width of its first.
  Expr* stringArg(const ast::Expr* e) {
    Expr* v = an_.expression(*e);
    const Type* t = v->type ? valueBase(v->type) : nullptr;
    const bool wide = wide_.value_or(t && t->wide);
    if (!t || t->kind != TypeKind::String || t->wide != wide) {
      an_.error(e->span,
                t && t->kind == TypeKind::String
                    ? fmt::format("{} needs a {} here, not {}; convert with {}", name_, wide ? "WSTRING" : "STRING",
                                  t->name, wide ? "STRING_TO_WSTRING" : "WSTRING_TO_STRING")
                    : fmt::format("{} needs a STRING or WSTRING here", name_));
      wide_ = wide;
      return an_.constantNode(an_.stringType(wide, 1), wide ? ConstValue::ofWideString("") : ConstValue::ofString(""),
                              e->span);
    }
    wide_ = wide;
    return v;
  }
  std::optional<bool> wide_;  // the width of the string arguments seen so far

  // An integer argument, as LINT.
  Expr* intArg(const ast::Expr* e) {
    const Type* i64 = elem(TypeKind::LInt);
    Expr* v = an_.expression(*e, i64);
    if (v->kind != ExprKind::Constant && (!v->type || !valueBase(v->type)->isInteger())) {
      an_.error(e->span, fmt::format("{} needs an integer here", name_));
      return an_.constantNode(i64, ConstValue::ofInt(0), e->span);
    }
    return an_.operandAs(v, i64, e->span, true);
  }

  // A string function's result: STRING[capacity] (the compiler writes it into the destination
  // when that is a string).
  Expr* stringResult(Op op, uint64_t capacity, std::initializer_list<const Expr*> operands) {
    const Type* t = an_.stringType(wide_.value_or(false), capacity);
    Expr* r = an_.operation(op, t, span_, operands);
    r->readEach = true;
    return r;
  }

  static uint32_t capacityOf(const Expr* s) { return valueBase(s->type)->capacity; }

  Expr* shortCircuit();
  Expr* truncation();
  Expr* conversion();
  Expr* numeric();
  Expr* selection();
  Expr* strings();
  Expr* times();
};

Expr* BuiltinAnalysis::run() {
  if (Expr* r = shortCircuit()) return r;
  if (Expr* r = truncation()) return r;
  if (Expr* r = conversion()) return r;
  if (Expr* r = numeric()) return r;
  if (Expr* r = selection()) return r;
  if (Expr* r = strings()) return r;
  return times();
}

// ---- a AND_THEN b, a OR_ELSE b (the parser makes them calls of these names)
Expr* BuiltinAnalysis::shortCircuit() {
  const bool andThen = name_ == "AND_THEN";
  if (!andThen && name_ != "OR_ELSE") return nullptr;
  const Type* boolType = elem(TypeKind::Bool);
  auto a = args({"IN1", "IN2"});
  if (!a[0] || !a[1]) return invalid(boolType);
  Expr* x = an_.expression(*a[0], boolType);
  Expr* y = an_.expression(*a[1], boolType);
  if (an_.isPoison(x) || an_.isPoison(y)) return an_.poison(span_);
  for (auto [v, source] : {std::pair{x, a[0]}, std::pair{y, a[1]}}) {
    const bool isBool =
        v->type ? valueBase(v->type)->kind == TypeKind::Bool : v->constant.kind == ConstValue::Kind::Bool;
    if (!isBool) {
      an_.error(source->span, fmt::format("{} needs BOOL operands, not {}", andThen ? "AND_THEN" : "OR_ELSE",
                                          v->type ? v->type->name : "a number"));
      return invalid(boolType);
    }
  }
  Expr* r = an_.operation(andThen ? Op::And : Op::Or, boolType, span_,
                          {an_.operandAs(x, boolType, span_), an_.operandAs(y, boolType, span_)});
  r->shortCircuit = true;
  return r;
}

// ---- TRUNC, X_TRUNC_Y
Expr* BuiltinAnalysis::truncation() {
  // TRUNC gives a DINT; REAL_TRUNC_INT and CODESYS's TRUNC_INT (OSCAT uses it) the type named.
  const size_t infix = name_.find("_TRUNC_");
  const bool prefix = name_.rfind("TRUNC_", 0) == 0;
  if (name_ != "TRUNC" && infix == std::string::npos && !prefix) return nullptr;
  const Type* to = elem(TypeKind::DInt);
  if (name_ != "TRUNC") {
    to = an_.typeNamedQuietly(name_.substr(prefix ? 6 : infix + 7), true);
    if (!to || !to->isInteger()) return nullptr;
  }
  auto a = args({"IN"});
  if (!a[0]) return invalid(to);
  Expr* v = an_.expression(*a[0]);
  if (v->kind == ExprKind::Constant && !v->type) v = an_.convert(v, elem(TypeKind::LReal), span_);
  if (!v->type || !valueBase(v->type)->isReal()) {
    an_.error(a[0]->span, "TRUNC needs a REAL or LREAL");
    return invalid(to);
  }
  Expr* t = an_.operation(Op::Trunc, elem(TypeKind::LInt), span_, {v});
  t->prim = primOf(*valueBase(v->type));
  t->fresh = true;
  return an_.convert(t, to, span_, true);
}

// ---- X_TO_Y, TO_Y
Expr* BuiltinAnalysis::conversion() {
  const Type* from = nullptr;
  const Type* to = nullptr;
  auto elementaryOrString = [&](const std::string& n) {
    return n == "STRING"    ? an_.types().string(80)
           : n == "WSTRING" ? an_.types().wideString(80)
                            : an_.typeNamedQuietly(n, true);
  };
  if (name_.rfind("TO_", 0) == 0) {
    to = an_.typeNamedQuietly(name_.substr(3));
    if (!to && (name_.substr(3) == "STRING" || name_.substr(3) == "WSTRING")) to = elementaryOrString(name_.substr(3));
  } else {
    for (size_t at = name_.find("_TO_"); at != std::string::npos; at = name_.find("_TO_", at + 1)) {
      const Type* l = elementaryOrString(name_.substr(0, at));
      const Type* r = elementaryOrString(name_.substr(at + 4));
      if (l && r) {
        from = l;
        to = r;
        break;
      }
    }
  }
  if (!to) return nullptr;
  auto a = args({"IN"});
  if (!a[0]) return invalid(to);
  Expr* v = an_.expression(*a[0], from);
  // An argument that already failed was reported once: no second message about its type.
  if (an_.isPoison(v)) return invalid(to);
  if (from && v->type && valueBase(v->type) != from) {
    const Type* vt = valueBase(v->type);
    const bool stringsMatch = vt->kind == TypeKind::String && from->kind == TypeKind::String && vt->wide == from->wide;
    const bool enumOk = vt->kind == TypeKind::Enum && vt->base == from;
    // The argument converts into the function's input type as into a user function's input: a
    // narrowing CODESYS accepts warns (INT_TO_BYTE(d) of a DINT d), --strict makes it an error.
    if (!stringsMatch && !enumOk && !implicitlyConvertible(vt, from) && !an_.codesysImplicit(vt, from, a[0]->span)) {
      an_.error(a[0]->span, fmt::format("{} expects a {}, not {}", name_, from->name, v->type->name));
      return invalid(to);
    }
    // Converted as the conversion function does (the warning above, if any, was the only one).
    if (!stringsMatch && !enumOk) v = an_.convert(v, from, span_, true);
  }
  if (from && !v->type && v->kind == ExprKind::Constant) v = an_.convert(v, from, span_);
  return asValue(an_.conversion(call_, v, v->type, to));
}

// ---- numeric functions
Expr* BuiltinAnalysis::numeric() {
  const Type* f64 = elem(TypeKind::LReal);
  const Type* intType = elem(TypeKind::Int);
  static const std::map<std::string, Op> kMath = {
      {"SQRT", Op::Sqrt}, {"LN", Op::Ln},   {"LOG", Op::Log},   {"EXP", Op::Exp},   {"SIN", Op::Sin},
      {"COS", Op::Cos},   {"TAN", Op::Tan}, {"ASIN", Op::Asin}, {"ACOS", Op::Acos}, {"ATAN", Op::Atan},
  };
  if (auto it = kMath.find(name_); it != kMath.end()) {
    auto a = args({"IN"});
    if (!a[0]) return invalid(f64);
    Expr* v = an_.expression(*a[0], hint_);
    if (v->kind == ExprKind::Constant && v->constant.kind == ConstValue::Kind::String) {
      an_.error(a[0]->span, fmt::format("{} needs a number", name_));
      return invalid(f64);
    }
    if (v->type && !valueBase(v->type)->isNumeric()) {
      an_.error(a[0]->span, fmt::format("{} needs a number, not {}", name_, v->type->name));
      return invalid(f64);
    }
    const Type* rt = realTypeFor(v);
    return an_.operation(it->second, rt, span_, {an_.operandAs(v, rt, span_, true)});
  }
  if (name_ == "ATAN2") {  // ATAN2(Y, X) (OSCAT, C's atan2): the angle of the point (X, Y), -pi..pi
    auto a = args({"Y", "X"});
    if (!a[0] || !a[1]) return invalid(f64);
    Expr* y = an_.expression(*a[0], hint_);
    Expr* x = an_.expression(*a[1], hint_);
    for (auto [v, source] : {std::pair{y, a[0]}, std::pair{x, a[1]}}) {
      if (an_.isPoison(v)) return invalid(f64);
      const bool number = v->type ? valueBase(v->type)->isNumeric() : v->constant.kind != ConstValue::Kind::String;
      if (!number) {
        an_.error(source->span, fmt::format("ATAN2 needs numbers, not {}", v->type ? v->type->name : "a string"));
        return invalid(f64);
      }
    }
    // REAL when both are REAL or convert to it (as for the other functions), else LREAL.
    const Type* ry = realTypeFor(y);
    const Type* rt = ry == realTypeFor(x) ? ry : f64;
    return an_.operation(Op::Atan2, rt, span_, {an_.operandAs(y, rt, span_, true), an_.operandAs(x, rt, span_, true)});
  }
  if (name_ == "EXPT") {
    auto a = args({"IN1", "IN2"});
    if (!a[0] || !a[1]) return invalid(f64);
    Expr* x = an_.expression(*a[0], hint_);
    Expr* y = an_.expression(*a[1]);
    const Type* rt = realTypeFor(x);
    return an_.operation(Op::Expt, rt, span_, {an_.operandAs(x, rt, span_, true), an_.operandAs(y, rt, span_, true)});
  }
  if (name_ == "ABS") {
    auto a = args({"IN"});
    if (!a[0]) return invalid(intType);
    Expr* v = an_.expression(*a[0], hint_);
    if (v->kind == ExprKind::Constant && !v->type)
      v = an_.convert(v, hint_ && valueBase(hint_)->isNumeric() ? valueBase(hint_) : an_.literalType(v->constant),
                      span_);
    const Type* t = v->type ? valueBase(v->type) : nullptr;
    if (!t || !(t->isNumeric() || t->kind == TypeKind::Time || t->kind == TypeKind::LTime)) {
      an_.error(a[0]->span, "ABS needs a number");
      return invalid(intType);
    }
    return an_.operation(Op::Abs, t, span_, {v});
  }
  if (name_ == "MIN" || name_ == "MAX" || name_ == "LIMIT") {
    const bool limit = name_ == "LIMIT";
    auto a = limit ? args({"MN", "IN", "MX"}) : args({"IN1", "IN2"}, true);
    std::vector<Expr*> vals;
    for (const ast::Expr* x : a)
      if (x) vals.push_back(an_.expression(*x, hint_));
    if (vals.size() < (limit ? 3u : 2u)) return invalid(intType);  // an argument is missing (reported)
    // The common type of all arguments, folded left to right (each pair once, so each mismatch
    // is reported once).
    const Expr* acc = vals[0];
    const Type* t = nullptr;
    for (size_t i = 1; i < vals.size(); ++i) {
      t = an_.commonType(acc, vals[i], span_);
      acc = an_.invalid(t, span_);
    }
    if (const Type* h = literalsFitHint(vals)) t = h;
    if (!t) t = an_.literalType(vals[0]->constant);
    t = valueBase(t);
    if (t->kind == TypeKind::Enum) t = t->base;
    if (!t->isScalar() || t->kind == TypeKind::Ref) {
      an_.error(span_, fmt::format("{} needs numbers or times", name_));
      return invalid(t);
    }
    Expr* r = an_.make(limit ? ExprKind::Limit : ExprKind::MinMax, t, span_);
    r->op = name_ == "MIN" ? Op::Min : Op::Max;
    r->prim = primOf(*t);
    for (Expr* v : vals) r->a.push_back(an_.operandAs(v, t, span_));
    return r;
  }
  if (name_ == "SHL" || name_ == "SHR" || name_ == "ROL" || name_ == "ROR") {
    const Type* dword = elem(TypeKind::DWord);
    auto a = args({"IN", "N"});
    if (!a[0] || !a[1]) return invalid(dword);
    Expr* v = an_.expression(*a[0], hint_);
    if (v->kind == ExprKind::Constant && !v->type)
      v = an_.convert(v, hint_ && valueBase(hint_)->isInteger() ? valueBase(hint_) : dword, span_);
    const Type* t = v->type ? valueBase(v->type) : nullptr;
    if (!t || !t->isInteger()) {
      an_.error(a[0]->span, fmt::format("{} needs a bit string or integer", name_));
      return invalid(dword);
    }
    const Op op = name_ == "SHL" ? Op::Shl : name_ == "SHR" ? Op::Shr : name_ == "ROL" ? Op::Rol : Op::Ror;
    Expr* r = an_.operation(op, t, span_, {v});
    r->a.push_back(intArg(a[1]));
    r->readEach = true;
    return r;
  }
  if (name_ == "MOVE") {
    auto a = args({"IN"});
    if (!a[0]) return invalid(intType);
    return asValue(an_.expression(*a[0], hint_));
  }
  if (name_ == "REF" || name_ == "ADR") {
    auto a = args({"IN"});
    if (!a[0]) return invalid(an_.types().refTo(intType));
    Expr* v = an_.expression(*a[0]);
    if (v->kind == ExprKind::Constant) {
      an_.error(a[0]->span, "REF needs a variable");
      return invalid(an_.types().refTo(intType));
    }
    // VAR_TEMP lives only during the call; a reference to it dangles afterwards. Allowed, as in IEC.
    const Expr* base = v;
    while (base->kind == ExprKind::Convert && base->conversion == Conversion::Relabel) base = base->a[0];
    if (v->kind == ExprKind::Bit)
      an_.error(a[0]->span, "a single bit has no address");
    else if (base->kind == ExprKind::Constant)
      an_.error(a[0]->span, "a constant has no address; use a variable");
    // ADR gives a POINTER TO (byte arithmetic, converts to DWORD), REF a REF_TO.
    Expr* r = an_.make(ExprKind::AddressOf,
                       name_ == "ADR" ? an_.types().pointerTo(v->type) : an_.types().refTo(v->type), span_);
    r->a = {v};
    return r;
  }
  if (name_ == "SIZEOF") {
    // The bytes of a type or of a variable's type: an untyped integer constant. The operand is
    // not evaluated.
    auto a = args({"IN"});
    if (!a[0]) return an_.constantNode(nullptr, ConstValue::ofInt(0), span_);
    const Type* t = nullptr;
    if (std::optional<const Type*> sized = sizedStringType(*a[0])) {
      if (!*sized) return an_.constantNode(nullptr, ConstValue::ofInt(0), span_);
      t = *sized;
    } else if (a[0]->kind == ast::ExprKind::Name && !an_.scope().local(a[0]->text) &&
               !an_.scope().declarations().global(a[0]->text) &&
               !an_.scope().declarations().programInstance(a[0]->text)) {
      const std::string upper = upperCase(a[0]->text);
      t = an_.typeNamedQuietly(upper);
      if (!t && upper == "STRING") t = an_.types().string(80);
      if (!t && upper == "WSTRING") t = an_.types().wideString(80);
      if (!t) t = an_.scope().declarations().functionBlockType(upper);
    }
    if (!t) {
      Expr* v = an_.expression(*a[0]);
      if (an_.isPoison(v)) return an_.constantNode(nullptr, ConstValue::ofInt(0), span_);
      if (!v->type || v->kind == ExprKind::Constant) {
        an_.error(a[0]->span, "SIZEOF needs a variable or a type");
        return an_.constantNode(nullptr, ConstValue::ofInt(0), span_);
      }
      t = v->type;
    }
    return an_.constantNode(nullptr, ConstValue::ofInt(t->size), span_);
  }
  return nullptr;
}

// ---- SEL, MUX
Expr* BuiltinAnalysis::selection() {
  const Type* boolType = elem(TypeKind::Bool);
  const Type* intType = elem(TypeKind::Int);
  const Type* dint = elem(TypeKind::DInt);
  if (name_ == "SEL") {
    auto a = args({"G", "IN0", "IN1"});
    if (!a[0] || !a[1] || !a[2]) return invalid(intType);
    Expr* g = an_.expression(*a[0], boolType);
    Expr* x = an_.expression(*a[1], hint_);
    Expr* y = an_.expression(*a[2], hint_);
    Expr* choice = an_.operandAs(g, boolType, span_);
    const Type* t = (x->type && y->type) ? an_.commonType(x, y, span_)
                                         : (x->type   ? x->type
                                            : y->type ? y->type
                                                      : an_.commonType(x, y, span_));
    if (const Type* h = literalsFitHint({x, y})) t = h;
    if (valueBase(t)->kind == TypeKind::String)
      t = an_.stringType(valueBase(t)->wide, std::max(x->type ? valueBase(x->type)->capacity : 1u,
                                                      y->type ? valueBase(y->type)->capacity : 1u));
    Expr* r = an_.make(ExprKind::Select, t, span_);
    r->a = {choice, an_.stored(x, t, span_), an_.stored(y, t, span_)};
    return r;
  }
  if (name_ == "MUX") {
    auto a = args({"K", "IN0", "IN1"}, true);
    if (a.size() < 2 || !a[0]) return invalid(intType);
    Expr* k = an_.expression(*a[0], dint);
    std::vector<Expr*> vals;
    for (size_t i = 1; i < a.size(); ++i)
      if (a[i]) vals.push_back(an_.expression(*a[i], hint_));
    if (vals.empty()) return invalid(intType);
    const Type* t = vals[0]->type;
    for (Expr* v : vals)
      if (v->type) t = t ? an_.commonType(an_.invalid(t, span_), v, span_) : v->type;
    if (const Type* h = literalsFitHint(vals)) t = h;
    if (!t) t = an_.literalType(vals[0]->constant);
    if (valueBase(t)->kind == TypeKind::String) t = an_.stringType(valueBase(t)->wide, 80);
    Expr* r = an_.make(ExprKind::Mux, t, span_);
    r->a = {an_.operandAs(k, dint, span_, true)};
    for (Expr* v : vals) r->a.push_back(an_.stored(v, t, span_));
    return r;
  }
  return nullptr;
}

// ---- string functions
Expr* BuiltinAnalysis::strings() {
  const Type* intType = elem(TypeKind::Int);
  const Type* string80 = an_.types().string(80);
  if (name_ == "LEN") {
    auto a = args({"IN|STR"});
    if (!a[0]) return invalid(intType);
    Expr* r = an_.operation(Op::StrLen, intType, span_, {stringArg(a[0])});
    r->readEach = true;
    return r;
  }
  if (name_ == "LEFT" || name_ == "RIGHT") {
    auto a = args({"IN|STR", "L|SIZE"});
    if (!a[0] || !a[1]) return invalid(string80);
    Expr* s = stringArg(a[0]);
    Expr* n = intArg(a[1]);
    return stringResult(name_ == "LEFT" ? Op::StrLeft : Op::StrRight, capacityOf(s), {s, n});
  }
  if (name_ == "MID") {
    auto a = args({"IN|STR", "L|LEN", "P|POS"});
    if (!a[0] || !a[1] || !a[2]) return invalid(string80);
    Expr* s = stringArg(a[0]);
    Expr* l = intArg(a[1]);
    Expr* p = intArg(a[2]);
    return stringResult(Op::StrMid, capacityOf(s), {s, l, p});
  }
  if (name_ == "CONCAT") {
    auto a = args({"IN1|STR1", "IN2|STR2"}, true);
    for (const ast::Expr* x : a)
      if (!x) return invalid(string80);
    uint64_t cap = 0;
    Expr* r = stringResult(Op::StrConcat, 1, {});
    for (const ast::Expr* x : a) {
      r->a.push_back(stringArg(x));
      cap += capacityOf(r->a.back());
    }
    r->type = an_.stringType(wide_.value_or(false), cap);
    return r;
  }
  if (name_ == "INSERT") {
    auto a = args({"IN1|STR1", "IN2|STR2", "P|POS"});
    if (!a[0] || !a[1] || !a[2]) return invalid(string80);
    Expr* x = stringArg(a[0]);
    Expr* y = stringArg(a[1]);
    Expr* p = intArg(a[2]);
    return stringResult(Op::StrInsert, uint64_t{capacityOf(x)} + capacityOf(y), {x, y, p});
  }
  if (name_ == "DELETE") {
    auto a = args({"IN|STR", "L|LEN", "P|POS"});
    if (!a[0] || !a[1] || !a[2]) return invalid(string80);
    Expr* s = stringArg(a[0]);
    Expr* l = intArg(a[1]);
    Expr* p = intArg(a[2]);
    return stringResult(Op::StrDelete, capacityOf(s), {s, l, p});
  }
  if (name_ == "REPLACE") {
    auto a = args({"IN1|STR1", "IN2|STR2", "L", "P"});
    if (!a[0] || !a[1] || !a[2] || !a[3]) return invalid(string80);
    Expr* x = stringArg(a[0]);
    Expr* y = stringArg(a[1]);
    Expr* l = intArg(a[2]);
    Expr* p = intArg(a[3]);
    return stringResult(Op::StrReplace, uint64_t{capacityOf(x)} + capacityOf(y), {x, y, l, p});
  }
  if (name_ == "FIND") {
    auto a = args({"IN1|STR1", "IN2|STR2"});
    if (!a[0] || !a[1]) return invalid(intType);
    Expr* x = stringArg(a[0]);
    Expr* y = stringArg(a[1]);
    Expr* r = an_.operation(Op::StrFind, intType, span_, {x, y});
    r->readEach = true;
    return r;
  }
  return nullptr;
}

// ---- time and date functions
Expr* BuiltinAnalysis::times() {
  // TIME() and LTIME(): the current cycle's virtual start time (deterministic, replays exactly).
  if ((name_ == "TIME" || name_ == "LTIME") && call_.args.empty()) {
    Expr* r = an_.operation(Op::Now, elem(name_ == "TIME" ? TypeKind::Time : TypeKind::LTime), span_, {});
    r->fresh = true;
    return r;
  }
  // TIME_TO_NS ... TIME_TO_D and LTIME_TO_<unit>: the whole units of a duration, truncated
  // toward zero, as LINT (T#1m30s gives 1 for M, 90 for S).
  static const std::pair<const char*, int64_t> kUnits[] = {
      {"NS", 1},           {"US", 1'000},          {"MS", kNsPerMs}, {"S", kNsPerS},
      {"M", 60 * kNsPerS}, {"H", 3'600 * kNsPerS}, {"D", kNsPerDay},
  };
  for (const auto& [unit, ns] : kUnits) {
    const bool ltime = name_ == std::string("LTIME_TO_") + unit;
    if (!ltime && name_ != std::string("TIME_TO_") + unit) continue;
    const Type* from = elem(ltime ? TypeKind::LTime : TypeKind::Time);
    const Type* i64 = elem(TypeKind::LInt);
    auto a = args({"IN"});
    if (!a[0]) return invalid(i64);
    Expr* v = an_.expression(*a[0], from);
    if (an_.isPoison(v)) return invalid(i64);
    Expr* nanoseconds = an_.relabel(an_.operandAs(v, from, span_), i64, span_);
    if (ns == 1) return nanoseconds;
    Expr* r = an_.operation(Op::Div, i64, span_, {nanoseconds, an_.constantNode(i64, ConstValue::ofInt(ns), span_)});
    r->fresh = true;
    return r;
  }
  // DAY_OF_WEEK(DATE or DT) (OSCAT's, which CODESYS libraries use): 1 for Monday to 7 for
  // Sunday, ISO 8601's numbering; 1970-01-01 was a Thursday (4).
  if (name_ == "DAY_OF_WEEK") {
    const Type* intType = elem(TypeKind::Int);
    const Type* i64 = elem(TypeKind::LInt);
    auto a = args({"IDATE"});
    if (!a[0]) return invalid(intType);
    Expr* v = an_.expression(*a[0], elem(TypeKind::Date));
    if (an_.isPoison(v)) return invalid(intType);
    const Type* t = v->type ? valueBase(v->type) : nullptr;
    if (!t || (t->kind != TypeKind::Date && t->kind != TypeKind::Dt)) {
      an_.error(a[0]->span, fmt::format("DAY_OF_WEEK needs a DATE or DT, not {}", t ? t->name : "a number"));
      return invalid(intType);
    }
    auto op = [&](Op o, Expr* x, int64_t k) {
      Expr* r = an_.operation(o, i64, span_, {x, an_.constantNode(i64, ConstValue::ofInt(k), span_)});
      r->fresh = true;
      return r;
    };
    // Whole days since 1970, truncated toward zero: exact for every DATE (midnight) and every DT
    // from 1970 on. ((days MOD 7) + 10) MOD 7 is 0 for Monday .. 6 for Sunday, before 1970 too.
    Expr* days = op(Op::Div, an_.relabel(v, i64, span_), kNsPerDay);
    Expr* dow = op(Op::Add, op(Op::Mod, op(Op::Add, op(Op::Mod, days, 7), 10), 7), 1);
    return an_.convert(dow, intType, span_, true);
  }
  struct TimeFn {
    const char* name;
    TypeKind a, b, result;
    Op op;
  };
  static const TimeFn kTimeFns[] = {
      {"ADD_TIME", TypeKind::Time, TypeKind::Time, TypeKind::Time, Op::Add},
      {"SUB_TIME", TypeKind::Time, TypeKind::Time, TypeKind::Time, Op::Sub},
      {"ADD_LTIME", TypeKind::LTime, TypeKind::LTime, TypeKind::LTime, Op::Add},
      {"SUB_LTIME", TypeKind::LTime, TypeKind::LTime, TypeKind::LTime, Op::Sub},
      {"ADD_TOD_TIME", TypeKind::Tod, TypeKind::Time, TypeKind::Tod, Op::Add},
      {"ADD_DT_TIME", TypeKind::Dt, TypeKind::Time, TypeKind::Dt, Op::Add},
      {"SUB_TOD_TIME", TypeKind::Tod, TypeKind::Time, TypeKind::Tod, Op::Sub},
      {"SUB_DT_TIME", TypeKind::Dt, TypeKind::Time, TypeKind::Dt, Op::Sub},
      {"SUB_DATE_DATE", TypeKind::Date, TypeKind::Date, TypeKind::Time, Op::Sub},
      {"SUB_TOD_TOD", TypeKind::Tod, TypeKind::Tod, TypeKind::Time, Op::Sub},
      {"SUB_DT_DT", TypeKind::Dt, TypeKind::Dt, TypeKind::Time, Op::Sub},
      {"CONCAT_DATE_TOD", TypeKind::Date, TypeKind::Tod, TypeKind::Dt, Op::Add},
  };
  for (const TimeFn& fn : kTimeFns) {
    if (name_ != fn.name) continue;
    auto a = args({"IN1", "IN2"});
    const Type* rt = elem(fn.result);
    if (!a[0] || !a[1]) return invalid(rt);
    Expr* x = an_.expression(*a[0], elem(fn.a));
    Expr* y = an_.expression(*a[1], elem(fn.b));
    Expr* r =
        an_.operation(fn.op, rt, span_, {an_.operandAs(x, elem(fn.a), span_), an_.operandAs(y, elem(fn.b), span_)});
    r->prim = Prim::I64;
    return r;
  }
  if (name_ == "CONCAT_TOD") {
    // CONCAT_TOD(HOUR, MINUTE, SECOND, MILLISECOND): the time of day they give (no range check, as
    // the sum of its parts).
    auto a = args({"HOUR", "MINUTE", "SECOND", "MILLISECOND"});
    const Type* tod = elem(TypeKind::Tod);
    const Type* i64 = elem(TypeKind::LInt);
    if (!a[0] || !a[1] || !a[2] || !a[3]) return invalid(tod);
    Expr* total = nullptr;
    const int64_t unitNs[] = {3'600'000'000'000, 60'000'000'000, 1'000'000'000, 1'000'000};
    for (size_t i = 0; i < 4; ++i) {
      Expr* v = an_.expression(*a[i], i64);
      if (an_.isPoison(v)) return invalid(tod);
      if (v->type && !valueBase(v->type)->isInteger()) {
        an_.error(a[i]->span, fmt::format("CONCAT_TOD needs integers, not {}", v->type->name));
        return invalid(tod);
      }
      Expr* part =
          an_.operation(Op::Mul, i64, span_,
                        {an_.operandAs(v, i64, span_), an_.constantNode(i64, ConstValue::ofInt(unitNs[i]), span_)});
      part->prim = Prim::I64;
      part->fresh = true;
      if (total) {
        total = an_.operation(Op::Add, i64, span_, {total, part});
        total->prim = Prim::I64;
        total->fresh = true;
      } else {
        total = part;
      }
    }
    return an_.relabel(total, tod, span_);
  }
  if (name_ == "MUL_TIME" || name_ == "DIV_TIME" || name_ == "MUL_LTIME" || name_ == "DIV_LTIME") {
    auto a = args({"IN1", "IN2"});
    const Type* tt = elem(name_.find("LTIME") != std::string::npos ? TypeKind::LTime : TypeKind::Time);
    if (!a[0] || !a[1]) return invalid(tt);
    Expr* x = an_.expression(*a[0], tt);
    Expr* y = an_.expression(*a[1]);
    Expr* r = an_.make(ExprKind::ScaleDuration, tt, span_);
    r->op = name_[0] == 'M' ? Op::Mul : Op::Div;
    r->form = ScaleForm::Builtin;
    Expr* duration = an_.operandAs(x, tt, span_);
    r->real = (y->kind == ExprKind::Constant && y->constant.kind == ConstValue::Kind::Real) ||
              (y->type && valueBase(y->type)->isReal());
    r->a = {duration, r->real ? an_.operandAs(y, elem(TypeKind::LReal), span_, true)
                              : an_.operandAs(y, elem(TypeKind::LInt), span_, y->kind != ExprKind::Constant)};
    return r;
  }
  return nullptr;
}

Expr* Analyzer::builtin(const ast::Expr& call, const std::string& upperName, const Type* hint) {
  if (Expr* t = testBuiltin(call, upperName)) return t;
  if (Expr* b = boundsBuiltin(call, upperName)) return b;
  if (Expr* b = pointerBuiltin(call, upperName)) return b;
  return BuiltinAnalysis(*this, call, upperName, hint).run();
}

// ---------------------------------------------------------------- conversions

Expr* Analyzer::conversion(const ast::Expr& call, Expr* arg, const Type* from, const Type* to) {
  const SourceSpan& span = call.span;
  const Type* i64 = elementary(TypeKind::LInt);
  const Type* f64 = elementary(TypeKind::LReal);
  auto scaled = [&](Expr* v, const Type* vt, Op op, int64_t factor) -> Expr* {
    Expr* k = constantNode(
        vt, vt->isReal() ? ConstValue::ofReal(static_cast<double>(factor)) : ConstValue::ofInt(factor), span);
    Expr* r = operation(op, vt, span, {operandAs(v, vt, span, true), k});
    r->fresh = true;
    return r;
  };
  auto cannot = [&](const Type* f) {
    error(span, fmt::format("cannot convert {} to {}", f->name, to->name));
    return invalid(to, span);
  };
  from = from ? valueBase(from) : nullptr;
  const Type* toBase = valueBase(to);
  if (!from) {  // an untyped literal
    if (!toBase->isTimeLike() && toBase->kind != TypeKind::String && toBase->kind != TypeKind::WChar)
      return convert(arg, to, span, true);
    from = literalType(arg->constant);
    arg = convert(arg, from, span, true);
  }
  if (from->kind == TypeKind::Enum) from = from->base;
  if (Expr* r = wideConversion(call, arg, from, to)) return r;
  // to STRING
  if (toBase->kind == TypeKind::String) {
    Op op;
    const Type* operandType = from;
    switch (from->kind) {
      case TypeKind::Bool: op = Op::FromBool; break;
      case TypeKind::Real: op = Op::FromF32; break;
      case TypeKind::LReal: op = Op::FromF64; break;
      case TypeKind::Time: op = Op::FromTime; break;
      case TypeKind::LTime: op = Op::FromLTime; break;
      case TypeKind::Date: op = Op::FromDate; break;
      case TypeKind::Tod: op = Op::FromTod; break;
      case TypeKind::Dt: op = Op::FromDt; break;
      case TypeKind::String: return convert(arg, to, span, true);
      default:
        if (!from->isInteger()) {
          error(span, fmt::format("cannot convert {} to STRING", from->name));
          return invalid(to, span);
        }
        op = from->isSigned() ? Op::FromI64 : Op::FromU64;
        operandType = from->isSigned() ? i64 : elementary(TypeKind::ULInt);
        break;
    }
    Expr* r = operation(op, to, span, {operandAs(arg, operandType, span, true)});
    r->fresh = true;
    return r;
  }
  // from STRING
  if (from->kind == TypeKind::String) {
    auto parse = [&](Op op, const Type* t) {
      Expr* r = operation(op, t, span, {arg});
      r->fresh = true;
      return r;
    };
    if (toBase->kind == TypeKind::Bool) return parse(Op::ToBool, to);
    if (toBase->isReal()) return convert(parse(Op::ToF64, f64), to, span, true);
    if (toBase->isInteger() || toBase->kind == TypeKind::Enum) {
      const bool sign = toBase->isSigned();
      return convert(parse(sign ? Op::ToI64 : Op::ToU64, sign ? i64 : elementary(TypeKind::ULInt)), to, span, true);
    }
    error(span, fmt::format("cannot convert STRING to {}", to->name));
    return invalid(to, span);
  }
  if (from->isTimeLike() && toBase->isTimeLike()) {
    if (from->kind == TypeKind::Dt && toBase->kind == TypeKind::Date)
      return relabel(scaled(scaled(arg, i64, Op::Div, kNsPerDay), i64, Op::Mul, kNsPerDay), to, span);
    if (from->kind == TypeKind::Dt && toBase->kind == TypeKind::Tod)
      return relabel(scaled(arg, i64, Op::Mod, kNsPerDay), to, span);
    const bool duration = from->kind == TypeKind::Time || from->kind == TypeKind::LTime;
    const bool toDuration = toBase->kind == TypeKind::Time || toBase->kind == TypeKind::LTime;
    // TOD_TO_TIME and TIME_TO_TOD (CODESYS): the time since midnight.
    const bool todAndDuration =
        (from->kind == TypeKind::Tod && toDuration) || (duration && toBase->kind == TypeKind::Tod);
    const bool compatible = todAndDuration || (duration == toDuration &&
                                               !(from->kind == TypeKind::Tod) == !(toBase->kind == TypeKind::Tod));
    if (!compatible && !(from->kind == TypeKind::Date && toBase->kind == TypeKind::Dt)) return cannot(from);
    return relabel(arg, to, span);
  }
  if (from->isTimeLike()) {
    if (toBase->kind == TypeKind::Bool) return convert(convert(arg, i64, span, true), to, span, true);
    if (!toBase->isNumeric()) return cannot(from);
    const int64_t unit = unitOf(from);
    Expr* x = convert(arg, i64, span, true);
    if (toBase->isReal()) {
      Expr* f = convert(x, f64, span, true);
      return convert(unit == 1 ? f : scaled(f, f64, Op::Div, unit), to, span, true);
    }
    return convert(unit == 1 ? x : scaled(x, i64, Op::Div, unit), to, span, true);
  }
  if (toBase->isTimeLike()) {
    if (!from->isNumeric()) return cannot(from);
    const int64_t unit = unitOf(toBase);
    Expr* r;
    if (from->isReal()) {
      Expr* f = convert(arg, f64, span, true);
      r = convert(unit == 1 ? f : scaled(f, f64, Op::Mul, unit), i64, span, true);
    } else {
      Expr* x = convert(arg, i64, span, true);
      r = unit == 1 ? x : scaled(x, i64, Op::Mul, unit);
    }
    return relabel(r, to, span);
  }
  if (!(from->isScalar() && toBase->isScalar()) || from->kind == TypeKind::Ref || toBase->kind == TypeKind::Ref)
    return cannot(from);
  return convert(arg, to, span, true);
}

}  // namespace scanback::sema
