// Expressions: names, members, indexes, literals, operators, conversions and constant folding.
#include <fmt/format.h>

#include <algorithm>

#include "vm/sema/analyzer.h"

namespace scanback::sema {

namespace {

std::string constantText(const ConstValue& c) {
  return c.kind == ConstValue::Kind::Real ? fmt::format("{}", c.r) : int128Text(c.i);
}

bool untyped(const Expr* e) { return e->kind == ExprKind::Constant && !e->type; }

}  // namespace

Analyzer::Analyzer(Scope& scope, Diagnostics& diagnostics, Arena& arena, Options options)
    : scope_(scope), diags_(diagnostics), arena_(arena), options_(std::move(options)) {}

// ---------------------------------------------------------------- nodes

Expr* Analyzer::make(ExprKind kind, const Type* type, const SourceSpan& span) {
  Expr* e = arena_.expr();
  e->kind = kind;
  e->type = type;
  e->span = span;
  return e;
}

Expr* Analyzer::constantNode(const Type* type, ConstValue c, const SourceSpan& span) {
  Expr* e = make(ExprKind::Constant, type, span);
  e->constant = std::move(c);
  return e;
}

Expr* Analyzer::invalid(const Type* type, const SourceSpan& span) { return make(ExprKind::Invalid, type, span); }

Expr* Analyzer::operation(Op op, const Type* type, const SourceSpan& span,
                          std::initializer_list<const Expr*> operands) {
  Expr* e = make(ExprKind::Operation, type, span);
  e->op = op;
  e->a = operands;
  const Type* base = valueBase(type);
  if (base && base->isScalar()) {
    e->prim = primOf(*base);
    e->size = base->size;
  }
  return e;
}

const Type* Analyzer::literalType(const ConstValue& c) const { return elementary(literalKind(c)); }

// ---------------------------------------------------------------- types

const Type* Analyzer::commonType(const Expr* a, const Expr* b, const SourceSpan& span) {
  const Type* ta = a->type;
  const Type* tb = b->type;
  const Type* errorType = types().errorType();
  if (ta == errorType || tb == errorType) return errorType;
  if (!ta && !tb) {
    if (a->constant.kind == ConstValue::Kind::Real || b->constant.kind == ConstValue::Kind::Real)
      return elementary(TypeKind::LReal);
    const Type* la = literalType(a->constant);
    const Type* lb = literalType(b->constant);
    return intRank(la) >= intRank(lb) ? la : lb;
  }
  if (!ta || !tb) {
    const Expr* lit = ta ? b : a;
    const Type* other = valueBase(ta ? ta : tb);
    if (other->kind == TypeKind::Enum) other = other->base;
    if (fitsLiteral(lit->constant, other)) return other;
    if (lit->constant.kind == ConstValue::Kind::Real && other->isInteger())
      return implicitlyConvertible(other, elementary(TypeKind::Real)) ? elementary(TypeKind::Real)
                                                                      : elementary(TypeKind::LReal);
    const Type* lt = literalType(lit->constant);
    if (implicitlyConvertible(other, lt)) return lt;
    error(span, fmt::format("constant {} does not fit {}", constantText(lit->constant), other->name));
    return other;
  }
  ta = valueBase(ta);
  tb = valueBase(tb);
  if (ta->kind == TypeKind::Enum && tb->kind == TypeKind::Enum) {
    if (ta != tb) error(span, fmt::format("{} and {} are different enumerations", ta->name, tb->name));
    return ta;
  }
  if (ta->kind == TypeKind::Enum) ta = ta->base;
  if (tb->kind == TypeKind::Enum) tb = tb->base;
  if (ta == tb) return ta;
  if (implicitlyConvertible(ta, tb)) return tb;
  if (implicitlyConvertible(tb, ta)) return ta;
  for (TypeKind k : {TypeKind::Int, TypeKind::DInt, TypeKind::LInt, TypeKind::Real, TypeKind::LReal}) {
    const Type* c = elementary(k);
    if (implicitlyConvertible(ta, c) && implicitlyConvertible(tb, c)) return c;
  }
  // CODESYS mixes bit strings and numbers: a bit string counts as the unsigned integer of its width,
  // and what has no common type then is computed in LINT or LREAL (each operand's conversion warns).
  if (scope_.declarations().codesysConversions() && codesysConvertible(ta, tb)) {
    auto number = [&](const Type* t) {
      if (!t->isBitString()) return t;
      static constexpr TypeKind kUnsigned[] = {TypeKind::USInt, TypeKind::UInt, TypeKind::UDInt, TypeKind::ULInt};
      return elementary(kUnsigned[intRank(t) - 1]);
    };
    const Type* na = number(ta);
    const Type* nb = number(tb);
    if (na == nb) return na;
    if (implicitlyConvertible(na, nb)) return nb;
    if (implicitlyConvertible(nb, na)) return na;
    for (TypeKind k : {TypeKind::Int, TypeKind::DInt, TypeKind::LInt, TypeKind::Real, TypeKind::LReal}) {
      const Type* c = elementary(k);
      if (implicitlyConvertible(na, c) && implicitlyConvertible(nb, c)) return c;
    }
    return elementary(na->isReal() || nb->isReal() ? TypeKind::LReal : TypeKind::LInt);
  }
  error(span, fmt::format("no common type for {} and {}; convert one of them explicitly", ta->name, tb->name));
  return ta;
}

const Type* Analyzer::typeNamedQuietly(const std::string& key, bool elementaryOnly) {
  TypeSource& t = types();
  if (key == "TOD") return t.elementary(TypeKind::Tod);
  if (key == "DT") return t.elementary(TypeKind::Dt);
  for (int k = 0; k < static_cast<int>(TypeKind::String); ++k)
    if (key == t.elementary(static_cast<TypeKind>(k))->name) return t.elementary(static_cast<TypeKind>(k));
  if (elementaryOnly) return nullptr;
  std::optional<const Type*> declared = scope_.declarations().declaredType(key, SourceSpan{});
  return declared ? *declared : nullptr;
}

const Type* Analyzer::typeNamed(const std::string& name, const SourceSpan& span) {
  const std::string key = upperCase(name);
  if (const Type* t = typeNamedQuietly(key, true)) return t;
  if (key == "STRING") return types().string(80);
  if (key == "WSTRING") return types().wideString(80);
  Declarations& d = scope_.declarations();
  if (std::optional<const Type*> declared = d.declaredType(key, span)) return *declared;
  if (std::optional<PouKind> kind = d.pouKind(key)) {
    if (*kind == PouKind::FunctionBlock || *kind == PouKind::Native) return d.functionBlockType(key);
    if (*kind == PouKind::Program && scope_.inTest())
      if (const Type* t = d.programBlockType(key)) return t;
    error(span, fmt::format("'{}' is a {}, not a type", name, pouKindName(*kind)));
    return nullptr;
  }
  if (const Type* t = systemLibraryType(key)) return t;
  error(span, fmt::format("unknown type '{}'", name));
  return nullptr;
}

// TwinCAT's system library (Tc2_System) declares these, and libraries written for TwinCAT use
// them without declaring them (Beckhoff Infosys: "T_MaxString", "PVOID"); a project's own
// declaration of the name comes first (docs/language.md, "Dialects").
const Type* Analyzer::systemLibraryType(const std::string& upperName) {
  if (upperName == "T_MAXSTRING") return types().string(255);
  // An address as an unsigned integer of a pointer's size: 4 bytes here (as on a 32-bit PLC).
  if (upperName == "PVOID") return elementary(TypeKind::UDInt);
  return nullptr;
}

Expr* Analyzer::systemLibraryConstant(const std::string& upperName, const SourceSpan& span) {
  if (upperName == "MAX_STRING_LENGTH") return constantNode(elementary(TypeKind::UDInt), ConstValue::ofInt(255), span);
  return nullptr;
}

// ---------------------------------------------------------------- conversions

Expr* Analyzer::convert(Expr* v, const Type* to, const SourceSpan& span, bool explicitConversion) {
  if (!to) return v;
  if (v->type == to) return v;
  // An expression that already failed: its error was reported once; stay quiet from here on.
  if (isPoison(v)) return invalid(to, span);
  if (to == types().errorType()) return v;
  if (to->isInterface() || (v->type && v->type->isInterface())) return interfaceValue(v, to, span);
  if (to->kind == TypeKind::Void) {
    error(span, "expression has no value");
    return v;
  }
  if (v->kind == ExprKind::Constant) {
    const ConstValue& c = v->constant;
    if (!v->type) {  // an untyped literal
      const Type* target = valueBase(to);
      if (target->kind == TypeKind::WChar && !explicitConversion) {
        error(span, "a number is not a WCHAR; write WCHAR#\"x\" or use WORD_TO_WCHAR");
        return constantNode(to, ConstValue::ofInt(0), span);
      }
      if (target->kind == TypeKind::Enum) {
        if (!explicitConversion) {
          error(span, fmt::format("a number is not a value of {}; use its names", to->name));
          return v;
        }
        target = target->base;
      }
      if (!fitsLiteral(c, target) && !(explicitConversion && target->isScalar())) {
        if (c.kind == ConstValue::Kind::Real && target->isInteger() && scope_.declarations().codesysConversions()) {
          diags_.warning(span, fmt::format("implicit conversion of a real number to {} (CODESYS; --strict makes "
                                           "it an error)",
                                           to->name));
          return constantNode(to, convertConst(c, to), span);
        }
        if (c.kind == ConstValue::Kind::Real)
          error(span, fmt::format("a real number cannot be converted implicitly to {}", to->name));
        else
          error(span, fmt::format("constant {} does not fit {}", int128Text(c.i), to->name));
        return constantNode(to, convertConst(ConstValue::ofInt(0), to), span);
      }
      return constantNode(to, convertConst(c, to), span);
    }
    if (c.kind == ConstValue::Kind::String) {
      if (to->kind == TypeKind::String && to->wide == c.wide) return constantNode(to, c, span);
    } else if (to->isScalar() && v->type->isScalar() && !v->type->isTimeLike() && !to->isTimeLike() &&
               to->kind != TypeKind::Ref && v->type->kind != TypeKind::Ref &&
               (explicitConversion || implicitlyConvertible(v->type, to) || codesysImplicit(v->type, to, span))) {
      Expr* r = constantNode(to, convertConst(c, to), span);
      if (to->kind == TypeKind::Subrange && (r->constant.i < to->lower || r->constant.i > to->upper))
        error(span, fmt::format("{} is outside {}", int128Text(r->constant.i), to->name));
      return r;
    } else if (v->type->isTimeLike() && to->isTimeLike() &&
               (explicitConversion || implicitlyConvertible(v->type, to))) {
      return constantNode(to, c, span);
    }
    // Other typed constants convert through code, as variables do.
  }
  const Type* from = v->type;
  // ruSTy converts between REF_TO types as between pointers (a REF_TO DWORD from REF(x) of a REAL).
  if (from && from->kind == TypeKind::Ref && to->kind == TypeKind::Ref && scope_.declarations().refPointers())
    return relabel(v, to, span);
  if (!explicitConversion && !implicitlyConvertible(from, to) && !codesysImplicit(from, to, span)) {
    if (from->isInteger() && to->isInteger())
      error(span, fmt::format("implicit conversion from {} to {} may lose data; use {}_TO_{}", from->name, to->name,
                              valueBase(from)->name, valueBase(to)->name));
    else if (from->kind == TypeKind::String && to->kind == TypeKind::String)
      error(span, fmt::format("cannot convert {} to {}; use {}_TO_{}", from->name, to->name,
                              from->wide ? "WSTRING" : "STRING", to->wide ? "WSTRING" : "STRING"));
    else if (from->kind == TypeKind::Ref && to->kind == TypeKind::Ref && !from->isInterface())
      error(span, referenceMismatch(from, to));
    else
      error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    return invalid(to, span);
  }
  const bool strings = to->kind == TypeKind::String || from->kind == TypeKind::String;
  if (strings && !(to->kind == TypeKind::String && from->kind == TypeKind::String && to->wide == from->wide)) {
    error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    return invalid(to, span);
  }
  if (!strings && (!from->isScalar() || !to->isScalar()) && !implicitlyConvertible(from, to)) {
    error(span, fmt::format("cannot convert {} to {}", from->name, to->name));
    return invalid(to, span);
  }
  if (strings || !from->isScalar() || !to->isScalar()) return relabel(v, to, span);
  const Prim pf = primOf(*from);
  const Prim pt = primOf(*to);
  const bool sameWidthIntegers = !primIsFloat(pf) && !primIsFloat(pt) && primSize(pf) == primSize(pt);
  const bool toBool = valueBase(to)->kind == TypeKind::Bool && from->kind != TypeKind::Bool;
  // Same storage, or a wrapping conversion between same-width integers: a reinterpretation.
  if (!toBool && (pf == pt || sameWidthIntegers)) return relabel(v, to, span);
  Expr* r = make(ExprKind::Convert, to, span);
  r->a = {v};
  r->prim = pf;
  r->to = pt;
  r->conversion = toBool ? Conversion::NotZero : Conversion::Convert;
  return r;
}

bool Analyzer::codesysImplicit(const Type* from, const Type* to, const SourceSpan& span) {
  if (!scope_.declarations().codesysConversions() || !codesysConvertible(from, to)) return false;
  diags_.warning(span, fmt::format("implicit conversion from {} to {} (CODESYS; IEC needs {}_TO_{}, and --strict "
                                   "makes it an error)",
                                   from->name, to->name, valueBase(from)->name, valueBase(to)->name));
  return true;
}

Expr* Analyzer::relabel(Expr* v, const Type* to, const SourceSpan& span) {
  if (v->kind == ExprKind::Constant) return constantNode(to, v->constant, span);
  Expr* r = make(ExprKind::Convert, to, span);
  r->a = {v};
  r->conversion = Conversion::Relabel;
  r->readOnly = v->readOnly;
  r->named = v->named;
  if (v->type && v->type->isScalar()) r->prim = r->to = primOf(*v->type);
  return r;
}

Expr* Analyzer::operandAs(Expr* v, const Type* to, const SourceSpan& span, bool explicitConversion) {
  Expr* r = convert(v, to, span, explicitConversion);
  if (r != v && r->kind == ExprKind::Convert) r->atRead = true;
  return r;
}

Expr* Analyzer::stored(Expr* v, const Type* type, const SourceSpan& span) {
  if (isPoison(v) || !type || type == types().errorType()) return v;
  if (isOpenArray(type) || isOpenArray(v->type)) {  // its size is known at run time only
    error(span, "an ARRAY[*] is never copied as a whole; copy its elements");
    return invalid(type, span);
  }
  if (type->kind == TypeKind::FunctionBlock && v->type != type) {
    error(span, fmt::format("cannot assign {} to an instance of {}", v->type ? v->type->name : "a number", type->name));
    return invalid(type, span);
  }
  Expr* c = operandAs(v, type, span);
  if (type->kind != TypeKind::Subrange) return c;
  if (c->kind == ExprKind::Constant) {
    if (c->constant.i < type->lower || c->constant.i > type->upper)
      error(span, fmt::format("{} is outside {}", int128Text(c->constant.i), type->name));
    return c;
  }
  if (c->kind == ExprKind::Invalid) return c;
  Expr* checked = make(ExprKind::RangeCheck, type, span);
  checked->a = {c};
  checked->atRead = true;
  return checked;
}

// ---------------------------------------------------------------- names

bool Analyzer::isVariable(std::string_view name) { return scope_.local(name) || scope_.declarations().global(name); }

Expr* Analyzer::variable(const VariableSymbol& symbol, const SourceSpan& span) {
  const Variable& v = *symbol.variable;
  if (symbol.value && options_.foldNamedConstants) return constantNode(v.type, *symbol.value, span);
  Expr* e = make(ExprKind::Variable, v.type, span);
  e->variable = &v;
  e->storage = v.absolute ? Storage::Global : symbol.storage;
  e->readOnly = v.constant;
  e->named = true;
  return dereferenced(e);
}

Expr* Analyzer::name(const ast::Expr& e) {
  if (equalsIgnoreCase(e.text, "THIS")) {
    if (scope_.code() == Code::FunctionBlock || scope_.code() == Code::Method) {
      Expr* r = make(ExprKind::This, scope_.instanceType(), e.span);
      r->named = true;
      return r;
    }
    error(e.span, "THIS is only available in function blocks and their methods");
    return poison(e.span);
  }
  if (std::optional<VariableSymbol> v = scope_.local(e.text)) return variable(*v, e.span);
  if (isSuper(e)) {
    error(e.span, "SUPER^ stands only before a method call (SUPER^.Method()) or as SUPER^() (the base's body)");
    return poison(e.span);
  }
  Declarations& d = scope_.declarations();
  if ((scope_.code() == Code::FunctionBlock || scope_.code() == Code::Method || scope_.code() == Code::Program) &&
      scope_.instanceType())
    if (Expr* get = propertyGet(e, thisNode(e.span), e.text, true)) return get;
  if (std::optional<VariableSymbol> g = d.global(e.text)) {
    if (!g->variable->type) return poison(e.span);
    if (g->qualifiedOnly) {
      error(e.span, fmt::format("'{}' is a global of the list {}, which is {{attribute 'qualified_only'}}: write {}.{}",
                                e.text, *g->list, *g->list, e.text));
      return poison(e.span);
    }
    return variable(*g, e.span);
  }
  if (const ProgramInstanceInfo* inst = d.programInstance(e.text)) {
    Expr* r = make(ExprKind::ProgramInstance, inst->type, e.span);
    r->offset = inst->offset;
    r->named = true;
    return r;
  }
  if (Expr* c = constant(e)) return c;
  if (equalsIgnoreCase(e.text, "NULL")) return constantNode(nullptr, ConstValue::ofInt(0), e.span);
  if (d.pouKind(upperCase(e.text)))
    error(e.span, fmt::format("'{}' is a POU; call it with ( )", e.text));
  else
    error(e.span, scope_.unknownName(e.text));
  return poison(e.span);
}

Expr* Analyzer::field(Expr* base, const Variable& f, const SourceSpan& span) {
  Expr* r = make(ExprKind::Field, f.type, span);
  r->a = {base};
  r->variable = &f;
  r->readOnly = base->readOnly || f.constant;
  r->named = base->named || f.absolute;
  return dereferenced(r);
}

// `Color.Red`: a value of the enumeration `Color` when `Color` names no variable or instance.
Expr* Analyzer::enumMember(const ast::Expr& e) {
  if (e.kind != ast::ExprKind::Member || e.operand->kind != ast::ExprKind::Name) return nullptr;
  const std::string& typeName = e.operand->text;
  if (scope_.local(typeName)) return nullptr;
  Declarations& d = scope_.declarations();
  if (d.global(typeName) || d.programInstance(typeName)) return nullptr;
  const Type* t = typeNamedQuietly(upperCase(typeName));
  if (!t || t->kind != TypeKind::Enum) return nullptr;
  for (const EnumMember& m : t->members)
    if (equalsIgnoreCase(m.name, e.text)) return constantNode(t, ConstValue::ofInt(m.value), e.span);
  error(e.span, fmt::format("{} has no value '{}'", t->name, e.text));
  return constantNode(t, ConstValue::ofInt(0), e.span);
}

// `GVL` in `GVL.Eps`: a global list, when the name is no variable, program instance or type
// (those come first, so that a list named like one of them changes no meaning).
const std::string* Analyzer::globalListNamed(const ast::Expr& e) {
  if (e.kind != ast::ExprKind::Name || scope_.local(e.text)) return nullptr;
  Declarations& d = scope_.declarations();
  const std::string* list = d.globalList(e.text);
  if (!list || d.global(e.text) || d.programInstance(e.text) || typeNamedQuietly(upperCase(e.text))) return nullptr;
  return list;
}

// `GVL.Eps`: the global Eps of the global list GVL. Null when `e` is no such name; with
// `constantOnly`, also when the global is not a CONSTANT known at compile time (the caller then
// analyses the expression in full, which reports what is wrong).
Expr* Analyzer::listMember(const ast::Expr& e, bool constantOnly) {
  if (e.kind != ast::ExprKind::Member) return nullptr;
  const std::string* list = globalListNamed(*e.operand);
  if (!list) return nullptr;
  std::optional<VariableSymbol> g = scope_.declarations().global(e.text);
  const bool found = g && g->list && equalsIgnoreCase(*g->list, *list);
  if (constantOnly) {
    if (!found || !g->variable->type || !g->value || !options_.foldNamedConstants) return nullptr;
    return constantNode(g->variable->type, *g->value, e.span);
  }
  if (!found) {
    error(e.span, fmt::format("the global list {} has no variable '{}'", *list, e.text));
    return poison(e.span);
  }
  if (!g->variable->type) return poison(e.span);
  return variable(*g, e.span);
}

Expr* Analyzer::member(const ast::Expr& e) {
  if (Expr* global = listMember(e, false)) return global;
  if (Expr* value = enumMember(e)) return value;
  Expr* base = expression(*e.operand);
  if (isPoison(base)) return base;
  if (base->kind == ExprKind::Constant || !base->type) {
    error(e.span, fmt::format("'{}' has no members", e.operand->text));
    return poison(e.span);
  }
  const Type* t = base->type;
  if (t->isInterface() || (t->kind == TypeKind::FunctionBlock && !t->field(e.text))) {
    if (Expr* get = propertyGet(e, base, e.text, base->kind == ExprKind::This)) return get;
    if (t->isInterface()) {
      error(e.span, scope_.declarations().method(t, upperCase(e.text))
                        ? fmt::format("method '{}' must be called with ( )", e.text)
                        : fmt::format("interface {} has no method or property '{}'", t->name, e.text));
      return poison(e.span);
    }
  }
  if (t->kind == TypeKind::Ref) {
    error(e.span, "dereference the reference with ^ before selecting a member");
    return poison(e.span);
  }
  if (t->kind != TypeKind::Struct && t->kind != TypeKind::FunctionBlock) {
    error(e.span, fmt::format("{} has no member '{}'", t->name, e.text));
    return poison(e.span);
  }
  const Variable* f = t->field(e.text);
  if (!f || f->hidden) {
    if (scope_.declarations().method(t, upperCase(e.text)))
      error(e.span, fmt::format("method '{}' must be called with ( )", e.text));
    else
      error(e.span, fmt::format("{} has no member '{}'", t->name, e.text));
    return poison(e.span);
  }
  return field(base, *f, e.span);
}

Expr* Analyzer::index(const ast::Expr& e) {
  Expr* base = expression(*e.operand);
  if (isPoison(base)) return base;
  const Type* t = base->type;
  if (base->kind != ExprKind::Constant && t && t->kind == TypeKind::Ref && t->pointer) return pointerIndex(e, base);
  if (base->kind == ExprKind::Constant || !t || t->kind != TypeKind::Array) {
    error(e.span, "only arrays and pointers can be indexed");
    return poison(e.span);
  }
  if (e.indices.size() != t->dims.size()) {
    error(e.span, fmt::format("{} needs {} index(es), got {}", t->name, t->dims.size(), e.indices.size()));
    return invalid(t->base, e.span);
  }
  // ARRAY[*]: its bounds are in its slot, which only the parameter's own name reaches.
  const bool open = isOpenArray(t);
  if (open && base->kind != ExprKind::Variable) {
    error(e.span, "an ARRAY[*] is indexed by the name of its VAR_IN_OUT only");
    return invalid(t->base, e.span);
  }
  std::vector<Expr*> idx;
  bool allConst = true;
  for (const auto& ie : e.indices) {
    Expr* v = expression(*ie);
    if (v->kind == ExprKind::Constant && v->constant.kind != ConstValue::Kind::Int &&
        v->constant.kind != ConstValue::Kind::Bool) {
      error(ie->span, "an array index must be an integer");
      v = constantNode(v->type, ConstValue::ofInt(0), ie->span);
    }
    if (v->kind != ExprKind::Constant && v->type &&
        !(valueBase(v->type)->isInteger() || valueBase(v->type)->kind == TypeKind::Enum))
      error(ie->span, fmt::format("an array index must be an integer, not {}", v->type->name));
    allConst = allConst && v->kind == ExprKind::Constant;
    idx.push_back(v);
  }
  if (allConst && !open) {
    const std::vector<uint64_t> stride = t->strides();
    uint64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      const int64_t k = static_cast<int64_t>(idx[i]->constant.i);
      const ArrayDim& dim = t->dims[i];
      if (k < dim.lower || k >= dim.lower + static_cast<int64_t>(dim.count)) {
        error(e.indices[i]->span,
              fmt::format("index {} is outside {}..{}", k, dim.lower, dim.lower + static_cast<int64_t>(dim.count) - 1));
        return invalid(t->base, e.span);
      }
      off += static_cast<uint64_t>(k - dim.lower) * stride[i];
    }
    Expr* r = make(ExprKind::Offset, t->base, e.span);
    r->a = {base};
    r->offset = static_cast<uint32_t>(off);
    r->readOnly = base->readOnly;
    r->named = base->named;
    return r;
  }
  Expr* r = make(ExprKind::Element, t->base, e.span);
  r->a = {base};
  r->readOnly = base->readOnly;
  r->named = base->named;
  const Type* i32 = elementary(TypeKind::DInt);
  for (size_t i = 0; i < idx.size(); ++i) {
    Expr* v = idx[i];
    const SourceSpan& span = e.indices[i]->span;
    if (v->kind == ExprKind::Constant) {
      r->a.push_back(constantNode(i32, ConstValue::ofInt(static_cast<int32_t>(v->constant.i)), span));
      continue;
    }
    const Type* vt = valueBase(v->type);
    if (vt->kind == TypeKind::Enum) vt = vt->base;
    const Prim p = primOf(*vt);
    if (p == Prim::I32) {
      r->a.push_back(v);
    } else if (p == Prim::I8 || p == Prim::I16 || p == Prim::U8 || p == Prim::U16) {
      r->a.push_back(operandAs(v, i32, span, true));
    } else {
      // Wider types are clamped so that a huge index still faults instead of wrapping into range.
      Expr* clamped = operation(Op::Idx64, i32, span, {operandAs(v, elementary(TypeKind::LInt), span, true)});
      clamped->atRead = true;
      r->a.push_back(clamped);
    }
  }
  return r;
}

// `p[i]` of a POINTER TO T (CODESYS): the i-th T from where p points, `(p + i * SIZEOF(T))^`, in
// the pointer's 32-bit byte arithmetic; the dereference is checked as every other one.
Expr* Analyzer::pointerIndex(const ast::Expr& e, Expr* pointer) {
  const Type* t = pointer->type;
  if (e.indices.size() != 1) {
    error(e.span, fmt::format("a pointer takes one index, not {}", e.indices.size()));
    return poison(e.span);
  }
  Expr* i = expression(*e.indices[0]);
  if (isPoison(i)) return i;
  const bool integer = i->type ? valueBase(i->type)->isInteger() : i->constant.kind == ConstValue::Kind::Int;
  if (!integer) {
    error(e.indices[0]->span, "a pointer's index must be an integer");
    return poison(e.span);
  }
  const Type* udint = elementary(TypeKind::UDInt);
  const SourceSpan& span = e.span;
  const uint64_t size = t->base->size;
  Expr* offset;
  if (i->kind == ExprKind::Constant) {
    offset = constantNode(udint, ConstValue::ofInt((i->constant.i * static_cast<Int128>(size)) & 0xFFFFFFFF), span);
  } else {
    offset = operation(Op::Mul, udint, span,
                       {operandAs(i, udint, span, true), constantNode(udint, ConstValue::ofInt(size), span)});
    offset->prim = Prim::U32;
    offset->fresh = true;
  }
  Expr* moved = operation(Op::Add, udint, span, {relabel(pointer, udint, span), offset});
  moved->prim = Prim::U32;
  moved->fresh = true;
  Expr* r = make(ExprKind::Deref, t->base, span);
  r->a = {relabel(moved, t, span)};
  r->named = true;
  return r;
}

Expr* Analyzer::deref(const ast::Expr& e) {
  if (e.operand->kind == ast::ExprKind::Name && equalsIgnoreCase(e.operand->text, "THIS")) return name(*e.operand);
  Expr* v = expression(*e.operand);
  if (isPoison(v)) return v;
  if (v->type && v->type->isInterface()) {
    error(e.span,
          fmt::format("an interface ({}) is not dereferenced: call its methods, use its properties", v->type->name));
    return poison(e.span);
  }
  if (!v->type || v->type->kind != TypeKind::Ref) {
    error(e.span, "only a REF_TO value can be dereferenced with ^");
    return poison(e.span);
  }
  Expr* r = make(ExprKind::Deref, v->type->base, e.span);
  r->a = {v};
  r->named = true;
  return r;
}

Expr* Analyzer::bitAccess(const ast::Expr& e) {
  Expr* base = expression(*e.operand);
  const Type* t = base->type ? valueBase(base->type) : nullptr;
  if (base->kind == ExprKind::Constant || !t || !t->isInteger()) {
    if (!isPoison(base)) error(e.span, "bit access needs an integer or bit string variable");
    return poison(e.span);
  }
  if (e.intValue >= t->size * 8) {
    error(e.span, fmt::format("{} has no bit {}", t->name, e.intValue));
    return invalid(elementary(TypeKind::Bool), e.span);
  }
  Expr* r = make(ExprKind::Bit, elementary(TypeKind::Bool), e.span);
  r->a = {base};
  r->bit = static_cast<uint32_t>(e.intValue);
  r->readOnly = base->readOnly;
  r->named = base->named;
  return r;
}

// ---------------------------------------------------------------- literals and folding

Expr* Analyzer::literal(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::IntLiteral: {
      Int128 value = static_cast<Int128>(e.intValue);
      if (e.negative) value = -value;
      Expr* v = constantNode(nullptr, ConstValue::ofInt(value), e.span);
      if (e.typePrefix.empty()) return v;
      const Type* t = typeNamed(std::string(e.typePrefix.str()), e.span);
      if (!t) return v;
      if (t->isReal())
        v->constant = ConstValue::ofReal(static_cast<double>(value));
      else if (!fitsLiteral(v->constant, t))
        error(e.span, fmt::format("{} does not fit {}", int128Text(value), t->name));
      if (t->kind == TypeKind::Bool) v->constant = ConstValue::ofBool(value != 0);
      v->type = t;
      return v;
    }
    case ast::ExprKind::RealLiteral: {
      Expr* v = constantNode(nullptr, ConstValue::ofReal(e.realValue), e.span);
      if (e.typePrefix.empty()) return v;
      const std::string prefix = upperCase(e.typePrefix);
      const Type* t = prefix == "REAL"    ? elementary(TypeKind::Real)
                      : prefix == "LREAL" ? elementary(TypeKind::LReal)
                                          : nullptr;
      if (!t) {
        error(e.span, fmt::format("{}# cannot hold a real number", e.typePrefix.str()));
        return v;
      }
      v->type = t;
      if (t->kind == TypeKind::Real) v->constant.r = static_cast<float>(e.realValue);
      return v;
    }
    case ast::ExprKind::BoolLiteral:
      return constantNode(elementary(TypeKind::Bool), ConstValue::ofBool(e.boolValue), e.span);
    case ast::ExprKind::StringLiteral: return stringLiteral(e);
    case ast::ExprKind::TimeLiteral:
      return constantNode(elementary(e.typePrefix == "LTIME" ? TypeKind::LTime : TypeKind::Time),
                          ConstValue::ofInt(static_cast<int64_t>(e.intValue)), e.span);
    case ast::ExprKind::DateLiteral:
      return constantNode(elementary(TypeKind::Date), ConstValue::ofInt(static_cast<int64_t>(e.intValue)), e.span);
    case ast::ExprKind::TodLiteral:
      return constantNode(elementary(TypeKind::Tod), ConstValue::ofInt(static_cast<int64_t>(e.intValue)), e.span);
    case ast::ExprKind::DtLiteral:
      return constantNode(elementary(TypeKind::Dt), ConstValue::ofInt(static_cast<int64_t>(e.intValue)), e.span);
    default: break;
  }
  return poison(e.span);
}

// A name as a constant: `Color#Red`, a CONSTANT, an enumeration value.
Expr* Analyzer::constantName(const ast::Expr& e, const Type* hint) {
  const std::string key = upperCase(e.text);
  const size_t hash = key.find('#');
  if (hash != std::string::npos) {  // Color#Red
    const std::string typeName = key.substr(0, hash);
    const std::string member = key.substr(hash + 1);
    const Type* t = typeNamed(typeName, e.span);
    if (!t) return constantNode(elementary(TypeKind::Int), ConstValue::ofInt(0), e.span);
    if (t->kind != TypeKind::Enum) {
      error(e.span, fmt::format("'{}' is not an enumeration", typeName));
      return constantNode(t, ConstValue::ofInt(0), e.span);
    }
    for (const EnumMember& m : t->members)
      if (upperCase(m.name) == member) return constantNode(t, ConstValue::ofInt(m.value), e.span);
    error(e.span, fmt::format("{} has no value '{}'", t->name, e.text.substr(hash + 1)));
    return constantNode(t, ConstValue::ofInt(0), e.span);
  }
  // Variables shadow enumeration values; constants fold.
  if (std::optional<VariableSymbol> v = scope_.local(e.text)) {
    if (!v->value || !options_.foldNamedConstants) return nullptr;
    return constantNode(v->variable->type, *v->value, e.span);
  }
  Declarations& d = scope_.declarations();
  if (std::optional<VariableSymbol> g = d.global(e.text)) {
    if (!g->value || !options_.foldNamedConstants || g->qualifiedOnly) return nullptr;
    return constantNode(g->variable->type, *g->value, e.span);
  }
  const std::vector<EnumValueSymbol>* candidates = d.enumValues(key);
  if (!candidates || candidates->empty()) return systemLibraryConstant(key, e.span);
  if (hint) {
    for (const EnumValueSymbol& c : *candidates)
      if (c.type == valueBase(hint)) return constantNode(c.type, ConstValue::ofInt(c.value), e.span);
  }
  if (candidates->size() > 1)
    error(e.span, fmt::format("'{}' names values of several enumerations; write Type#{}", e.text, e.text));
  return constantNode(candidates->front().type, ConstValue::ofInt(candidates->front().value), e.span);
}

Expr* Analyzer::constant(const ast::Expr& e, const Type* hint) {
  if (ast::isLiteral(e.kind)) return literal(e);
  switch (e.kind) {
    case ast::ExprKind::Name: return constantName(e, hint);
    case ast::ExprKind::Member: {
      if (Expr* global = listMember(e, true)) return global;
      if (globalListNamed(*e.operand)) return nullptr;
      return enumMember(e);
    }
    case ast::ExprKind::Unary: {
      Expr* v = constant(*e.operand, hint);
      if (!v || v->kind != ExprKind::Constant) return nullptr;
      const Type* t = v->type ? valueBase(v->type) : nullptr;
      ConstValue& c = v->constant;
      v->span = e.span;
      if (e.unaryOp == ast::UnaryOp::Plus) return v;
      if (e.unaryOp == ast::UnaryOp::Negate) {
        if (v->type && !(t->isNumeric() || v->type->isTimeLike())) return nullptr;
        if (c.kind == ConstValue::Kind::Real)
          c.r = -c.r;
        else if (c.kind == ConstValue::Kind::Int)
          c.i = t && t->isInteger() ? wrapTo(-c.i, t) : -c.i;
        else
          return nullptr;
        return v;
      }
      if (c.kind == ConstValue::Kind::Bool) {  // NOT
        c.i = !c.i;
        return v;
      }
      if (t && t->isInteger()) {
        c.i = wrapTo(~c.i, t);
        return v;
      }
      return nullptr;
    }
    case ast::ExprKind::Binary: {
      Expr* a = constant(*e.operand, hint);
      if (!a || a->kind != ExprKind::Constant) return nullptr;
      Expr* b = constant(*e.rhs, hint);
      if (!b || b->kind != ExprKind::Constant) return nullptr;
      if ((a->type && a->type->isTimeLike()) || (b->type && b->type->isTimeLike())) return nullptr;
      if (((a->type && a->type->kind == TypeKind::Enum) || (b->type && b->type->kind == TypeKind::Enum)) &&
          !isComparison(e.binaryOp))
        return nullptr;
      const Type* t = nullptr;
      if (a->constant.kind != ConstValue::Kind::String && b->constant.kind != ConstValue::Kind::String &&
          (a->type || b->type)) {
        t = commonType(a, b, e.span);
        // A conversion that fails has reported its error: fold what is left, and say no more.
        a = convert(a, t, e.span);
        b = convert(b, t, e.span);
      }
      FoldError foldError;
      std::optional<ConstValue> c = foldBinary(e.binaryOp, a->constant, b->constant, t, foldError);
      if (foldError == FoldError::DivisionByZero) error(e.span, "division by zero in a constant expression");
      if (foldError == FoldError::Overflow) error(e.span, "constant expression overflows");
      if (!c) return nullptr;
      const Type* type = t;
      if (isComparison(e.binaryOp) || c->kind == ConstValue::Kind::Bool)
        type = elementary(TypeKind::Bool);
      else if (e.binaryOp == ast::BinaryOp::Power)
        type = t && t->kind == TypeKind::Real ? t : (t ? elementary(TypeKind::LReal) : nullptr);
      return constantNode(type, std::move(*c), e.span);
    }
    default: return nullptr;
  }
}

// ---------------------------------------------------------------- operators

Expr* Analyzer::unary(const ast::Expr& e, const Type* hint) {
  Expr* v = expression(*e.operand, hint);
  if (isPoison(v)) return v;
  if (v->kind == ExprKind::Constant || !v->type) {
    error(e.span, "operator needs a typed operand");
    return v;
  }
  const Type* t = valueBase(v->type);
  if (e.unaryOp == ast::UnaryOp::Plus) return asValue(v);
  if (e.unaryOp == ast::UnaryOp::Negate) {
    if (!t->isNumeric() && t->kind != TypeKind::Time && t->kind != TypeKind::LTime) {
      error(e.span, fmt::format("cannot negate a {}", t->name));
      return v;
    }
    return operation(Op::Neg, t, e.span, {v});
  }
  if (t->kind == TypeKind::Bool) return operation(Op::BoolNot, t, e.span, {v});
  if (t->isInteger()) return operation(Op::BitNot, t, e.span, {v});
  error(e.span, fmt::format("NOT needs a BOOL or bit string, not {}", t->name));
  return v;
}

Expr* Analyzer::binary(const ast::Expr& e, const Type* hint) {
  if (Expr* c = constant(e, hint)) return c;
  Expr* a = expression(*e.operand, nullptr);
  Expr* b = expression(*e.rhs, a->type);
  if (isPoison(a) || isPoison(b)) return poison(e.span);
  if (untyped(a) && b->type) a = expression(*e.operand, b->type);  // enum names resolved by the other side
  Expr* r = binaryOperation(e, a, b);
  if (r->kind == ExprKind::Operation && (r->op == Op::And || r->op == Op::Or) && r->type &&
      r->type->kind == TypeKind::Bool)
    r->rhsSafeToSkip = safeToSkip(*e.rhs);
  return r;
}

namespace {

Op arithmeticOp(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::Add: return Op::Add;
    case ast::BinaryOp::Sub: return Op::Sub;
    case ast::BinaryOp::Mul: return Op::Mul;
    case ast::BinaryOp::Div: return Op::Div;
    case ast::BinaryOp::Mod: return Op::Mod;
    case ast::BinaryOp::Lt: return Op::Lt;
    case ast::BinaryOp::Gt: return Op::Gt;
    case ast::BinaryOp::Le: return Op::Le;
    case ast::BinaryOp::Ge: return Op::Ge;
    case ast::BinaryOp::Eq: return Op::Eq;
    case ast::BinaryOp::Ne: return Op::Ne;
    case ast::BinaryOp::And: return Op::And;
    case ast::BinaryOp::Or: return Op::Or;
    case ast::BinaryOp::Xor: return Op::Xor;
    case ast::BinaryOp::Power: return Op::Expt;
  }
  return Op::Add;
}

Op stringComparison(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::Ne: return Op::StrNe;
    case ast::BinaryOp::Lt: return Op::StrLt;
    case ast::BinaryOp::Le: return Op::StrLe;
    case ast::BinaryOp::Gt: return Op::StrGt;
    case ast::BinaryOp::Ge: return Op::StrGe;
    default: return Op::StrEq;
  }
}

}  // namespace

Expr* Analyzer::binaryOperation(const ast::Expr& e, Expr* a, Expr* b) {
  const ast::BinaryOp op = e.binaryOp;
  const SourceSpan& span = e.span;
  const Type* ta = a->type ? valueBase(a->type) : nullptr;
  const Type* tb = b->type ? valueBase(b->type) : nullptr;
  const Type* boolType = elementary(TypeKind::Bool);
  const Type* i64 = elementary(TypeKind::LInt);
  const Type* f64 = elementary(TypeKind::LReal);
  auto cannot = [&]() {
    error(span, fmt::format("operator {} cannot be applied to {} and {}", opText(op), ta ? ta->name : "a number",
                            tb ? tb->name : "a number"));
  };

  // Strings compare; nothing else.
  if ((ta && ta->kind == TypeKind::String) || (tb && tb->kind == TypeKind::String) ||
      (a->kind == ExprKind::Constant && a->constant.kind == ConstValue::Kind::String) ||
      (b->kind == ExprKind::Constant && b->constant.kind == ConstValue::Kind::String)) {
    if (isComparison(op) && ta && tb && ta->kind == TypeKind::String && tb->kind == TypeKind::String &&
        ta->wide != tb->wide) {
      error(span, fmt::format("cannot compare {} and {}; convert one with STRING_TO_WSTRING or WSTRING_TO_STRING",
                              ta->name, tb->name));
      return invalid(boolType, span);
    }
    if (!isComparison(op) || !ta || !tb || ta->kind != TypeKind::String || tb->kind != TypeKind::String) {
      error(span, fmt::format("operator {} cannot be applied to {} and {}", opText(op), ta ? ta->name : "?",
                              tb ? tb->name : "?"));
      return invalid(boolType, span);
    }
    return operation(stringComparison(op), boolType, span, {a, b});
  }

  // Pointer arithmetic, in bytes as CODESYS does it: p + n, n + p and p - n move n bytes (so
  // p + SIZEOF(T) is the next element), p - q is a distance in bytes (DINT).
  // ruSTy's REF_TO moves the same way (the rusty dialect).
  const bool refPointers = scope_.declarations().refPointers();
  const bool pa = ta && ta->kind == TypeKind::Ref && !ta->isInterface() && (ta->pointer || refPointers);
  const bool pb = tb && tb->kind == TypeKind::Ref && !tb->isInterface() && (tb->pointer || refPointers);
  if (!refPointers && (op == ast::BinaryOp::Add || op == ast::BinaryOp::Sub) &&
      ((ta && ta->kind == TypeKind::Ref && !ta->pointer && !ta->isInterface()) ||
       (tb && tb->kind == TypeKind::Ref && !tb->pointer && !tb->isInterface()))) {
    error(span, fmt::format("a REF_TO has no arithmetic in IEC 61131-3 and CODESYS: use a POINTER TO, or "
                            "--dialect rusty, where a REF_TO moves in bytes as ruSTy moves it"));
    return poison(span);
  }
  if ((pa || pb) && (op == ast::BinaryOp::Add || op == ast::BinaryOp::Sub)) {
    const Type* udint = elementary(TypeKind::UDInt);
    const Type* dint = elementary(TypeKind::DInt);
    if (pa && pb) {
      if (op != ast::BinaryOp::Sub) {
        cannot();
        return poison(span);
      }
      Expr* r = operation(Op::Sub, dint, span, {relabel(a, dint, span), relabel(b, dint, span)});
      r->prim = Prim::I32;
      return r;
    }
    Expr* p = pa ? a : b;
    Expr* n = pa ? b : a;
    const Type* tn = pa ? tb : ta;
    const bool integer = tn ? tn->isInteger() : n->constant.kind == ConstValue::Kind::Int;
    if (!integer || (pb && op == ast::BinaryOp::Sub)) {
      cannot();
      return invalid(p->type, span);
    }
    Expr* offset = n->kind == ExprKind::Constant && !n->type
                       ? constantNode(udint, ConstValue::ofInt(n->constant.i & 0xFFFFFFFF), span)
                       : operandAs(n, udint, span, true);
    Expr* moved = operation(arithmeticOp(op), udint, span, {relabel(p, udint, span), offset});
    moved->prim = Prim::U32;
    moved->fresh = true;
    return relabel(moved, p->type, span);
  }

  // Time and date arithmetic.
  const bool timeA = ta && ta->isTimeLike();
  const bool timeB = tb && tb->isTimeLike();
  if ((timeA || timeB) && !isComparison(op)) {
    auto kindOf = [](const Type* t) { return t ? t->kind : TypeKind::Void; };
    const TypeKind ka = kindOf(ta), kb = kindOf(tb);
    auto isDuration = [](TypeKind k) { return k == TypeKind::Time || k == TypeKind::LTime; };
    if (op == ast::BinaryOp::Add || op == ast::BinaryOp::Sub) {
      const Type* result = nullptr;
      if (isDuration(ka) && isDuration(kb))
        result = (ka == TypeKind::LTime || kb == TypeKind::LTime) ? elementary(TypeKind::LTime) : ta;
      else if ((ka == TypeKind::Tod || ka == TypeKind::Dt) && isDuration(kb))
        result = ta;
      else if (op == ast::BinaryOp::Add && isDuration(ka) && (kb == TypeKind::Tod || kb == TypeKind::Dt))
        result = tb;
      else if (op == ast::BinaryOp::Sub && ka == kb &&
               (ka == TypeKind::Date || ka == TypeKind::Tod || ka == TypeKind::Dt))
        result = elementary(TypeKind::Time);
      if (!result) {
        cannot();
        return invalid(ta ? ta : tb, span);
      }
      Expr* r = operation(op == ast::BinaryOp::Add ? Op::Add : Op::Sub, result, span,
                          {operandAs(a, ta, span), operandAs(b, tb, span)});
      r->prim = Prim::I64;
      return r;
    }
    Expr* r = nullptr;
    if ((op == ast::BinaryOp::Mul || op == ast::BinaryOp::Div) && isDuration(ka) && !timeB) {
      r = make(ExprKind::ScaleDuration, ta, span);
      r->real = (b->kind == ExprKind::Constant && b->constant.kind == ConstValue::Kind::Real) || (tb && tb->isReal());
      r->a = {a, r->real ? operandAs(b, f64, span, true) : operandAs(b, i64, span, b->kind != ExprKind::Constant)};
      r->form = ScaleForm::Binary;
    } else if (op == ast::BinaryOp::Mul && isDuration(kb) && !timeA) {  // n * T#1s
      r = make(ExprKind::ScaleDuration, tb, span);
      r->a = {b, operandAs(a, i64, span, a->kind != ExprKind::Constant)};
      r->form = ScaleForm::Reversed;
    } else {
      cannot();
      return invalid(ta ? ta : tb, span);
    }
    r->op = op == ast::BinaryOp::Mul ? Op::Mul : Op::Div;
    return r;
  }

  if (op == ast::BinaryOp::And || op == ast::BinaryOp::Or || op == ast::BinaryOp::Xor) {
    const Type* t = commonType(a, b, span);
    if (t->kind != TypeKind::Bool && !t->isInteger()) {
      error(span, fmt::format("operator {} needs BOOL or bit strings, not {}", opText(op), t->name));
      return invalid(boolType, span);
    }
    return operation(arithmeticOp(op), t, span, {operandAs(a, t, span), operandAs(b, t, span)});
  }

  if (op == ast::BinaryOp::Power) {
    const Type* t = commonType(a, b, span);
    const Type* rt = t->kind == TypeKind::Real ? t : f64;
    if (!t->isNumeric()) {
      error(span, fmt::format("** needs numbers, not {}", t->name));
      return invalid(rt, span);
    }
    return operation(Op::Expt, rt, span, {operandAs(a, rt, span, true), operandAs(b, rt, span, true)});
  }

  const Type* t = commonType(a, b, span);
  if (isComparison(op)) {
    const Type* ct = valueBase(t);
    if (ct->kind == TypeKind::Enum) ct = ct->base;
    if (!ct->isScalar()) {
      error(span, fmt::format("{} values cannot be compared", t->name));
      return invalid(boolType, span);
    }
    if (ct->kind == TypeKind::Ref && !ct->pointer && op != ast::BinaryOp::Eq && op != ast::BinaryOp::Ne) {
      error(span, "references can only be compared with = and <>");
      return invalid(boolType, span);
    }
    Expr* r = operation(arithmeticOp(op), boolType, span, {operandAs(a, ct, span), operandAs(b, ct, span)});
    r->prim = primOf(*ct);
    return r;
  }
  const Type* at = valueBase(t);
  if (!at->isNumeric() || at->kind == TypeKind::Enum) {
    error(span, fmt::format("operator {} cannot be applied to {}", opText(op), t->name));
    return invalid(t, span);
  }
  if (op == ast::BinaryOp::Mod && !at->isInteger()) {
    error(span, fmt::format("MOD needs integers, not {}", t->name));
    return invalid(t, span);
  }
  return operation(arithmeticOp(op), at, span, {operandAs(a, at, span), operandAs(b, at, span)});
}

// ---------------------------------------------------------------- dispatch

Expr* Analyzer::expression(const ast::Expr& e, const Type* hint) {
  if (ast::isLiteral(e.kind)) return literal(e);
  switch (e.kind) {
    case ast::ExprKind::Name: {
      if (e.text.find('#') != std::string::npos) return constant(e, hint);
      // Enumeration value names win over nothing else: variables shadow them.
      if (hint && valueBase(hint)->kind == TypeKind::Enum && !isVariable(e.text))
        if (Expr* c = constant(e, hint)) return c;
      return name(e);
    }
    case ast::ExprKind::Member: return member(e);
    case ast::ExprKind::BitAccess: return bitAccess(e);
    case ast::ExprKind::Index: return index(e);
    case ast::ExprKind::Deref: return deref(e);
    case ast::ExprKind::Unary: {
      if (Expr* c = constant(e, hint)) return c;
      return unary(e, hint);
    }
    case ast::ExprKind::Binary: return binary(e, hint);
    case ast::ExprKind::Call: return call(e, hint, false);
    default: break;  // literals, above
  }
  return poison(e.span);
}

}  // namespace scanback::sema
