#include "vm/runtime/values.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstring>

#include "vm/base/int128.h"
#include "vm/base/text.h"
#include "vm/exec/iec_text.h"
#include "vm/exec/strings.h"
#include "vm/runtime/wide_values.h"
#include "vm/sema/analyzer.h"
#include "vm/sema/program_scope.h"
#include "vm/syntax/parser.h"

namespace scanback {

namespace {

const Type* scalarBase(const Type* t) {
  while (t && t->kind == TypeKind::Subrange) t = t->base;
  return t;
}

template <class T>
void put(std::vector<uint8_t>& bytes, T v) {
  bytes.resize(sizeof v);
  std::memcpy(bytes.data(), &v, sizeof v);
}

}  // namespace

namespace {

// The storage a resolved path designates: a variable, a field of one, an element at constant
// indexes, a bit. Null with `error` for anything else (a computed index, a reference, a value).
[[nodiscard]] std::optional<VariableLocation> staticLocation(const Program& program, const sema::Expr& e,
                                                             std::string& error) {
  switch (e.kind) {
    case sema::ExprKind::Variable: {
      const Variable& v = *e.variable;
      return VariableLocation{v.offset, v.bit, v.type, v.constant, v.name};
    }
    case sema::ExprKind::ProgramInstance: {
      VariableLocation loc;
      loc.offset = e.offset;
      loc.type = e.type;
      for (const ProgramInstanceInfo& inst : program.instances)
        if (inst.offset == e.offset && inst.type == e.type) loc.path = inst.name;
      return loc;
    }
    case sema::ExprKind::Field: {
      std::optional<VariableLocation> loc = staticLocation(program, *e.a[0], error);
      if (!loc) return std::nullopt;
      const Variable& f = *e.variable;
      if (f.byReference) {
        error = fmt::format("'{}.{}' is an in-out parameter (a reference)", loc->path, f.name);
        return std::nullopt;
      }
      loc->offset = f.absolute ? f.offset : loc->offset + f.offset;
      loc->bit = f.bit;
      loc->type = f.type;
      loc->constant = loc->constant || f.constant;
      loc->path += "." + f.name;
      return loc;
    }
    case sema::ExprKind::Offset: {
      std::optional<VariableLocation> loc = staticLocation(program, *e.a[0], error);
      if (!loc) return std::nullopt;
      const Type& array = *e.a[0]->type;
      // The element's indexes, row-major, for the canonical spelling.
      uint64_t flat = e.offset / std::max<uint32_t>(array.base->size, 1);
      std::vector<int64_t> index(array.dims.size());
      for (size_t d = array.dims.size(); d-- > 0;) {
        index[d] = array.dims[d].lower + static_cast<int64_t>(flat % array.dims[d].count);
        flat /= array.dims[d].count;
      }
      std::string subscript;
      for (size_t d = 0; d < index.size(); ++d) subscript += fmt::format("{}{}", d ? ", " : "", index[d]);
      loc->offset += e.offset;
      loc->type = e.type;
      loc->path += "[" + subscript + "]";
      return loc;
    }
    case sema::ExprKind::Bit: {
      std::optional<VariableLocation> loc = staticLocation(program, *e.a[0], error);
      if (!loc) return std::nullopt;
      if (loc->bit >= 0) {
        error = fmt::format("'{}' is a single bit", loc->path);
        return std::nullopt;
      }
      loc->offset += e.bit / 8;
      loc->bit = static_cast<int8_t>(e.bit % 8);
      loc->type = e.type;
      loc->path += fmt::format(".{}", e.bit);
      return loc;
    }
    case sema::ExprKind::Element: error = "array indexes in a variable path must be constants"; return std::nullopt;
    case sema::ExprKind::Deref: error = "a variable path cannot go through a reference"; return std::nullopt;
    default: error = "this is a value, not a variable"; return std::nullopt;
  }
}

}  // namespace

std::optional<VariableLocation> findVariable(const Program& program, std::string_view pathText, std::string& error) {
  const std::string path(trimSpace(pathText));
  SourceSet sources;
  sources.add("<variable>", path);
  Diagnostics diags;
  ast::ExprPtr e = path.empty() ? nullptr : parseExpression(sources, 0, diags);
  if (!e || diags.hasErrors()) {
    error = fmt::format("'{}' is not a variable name", path);
    return std::nullopt;
  }
  // The one resolver: the semantic pass over the program's symbol table, in the global scope. A
  // CONSTANT named alone designates its variable, not its value (in indexes it folds).
  sema::ProgramScope scope(program, UINT32_MAX);
  sema::Arena arena;
  sema::Analyzer::Options options;
  options.rejectCalls = true;
  options.foldNamedConstants = e->kind != ast::ExprKind::Name;
  const sema::Expr* ir = sema::Analyzer(scope, diags, arena, options).expression(*e);
  for (const Diagnostic& d : diags.items()) {
    if (d.severity != Severity::Error) continue;
    error = d.message;
    return std::nullopt;
  }
  std::optional<VariableLocation> loc = staticLocation(program, *ir, error);
  if (!loc) error = fmt::format("'{}': {}", path, error);
  return loc;
}

namespace {

bool listed(const Variable& f) {
  return !f.hidden && !f.byReference && f.section != VarSection::Temp && f.section != VarSection::External &&
         f.type != nullptr && !(f.absolute && f.offset == UINT32_MAX);
}

void collectScalars(const VariableLocation& at, std::vector<VariableLocation>& out, int depth) {
  const Type* t = at.type;
  if (!t || depth > 32 || t->kind == TypeKind::Ref) return;  // a reference is an image offset, not a value
  if (t->isScalar() || t->kind == TypeKind::String) {
    out.push_back(at);
    return;
  }
  if (t->kind == TypeKind::Struct || t->kind == TypeKind::FunctionBlock) {
    for (const Variable& f : t->fields) {
      if (!listed(f)) continue;
      VariableLocation member{f.absolute ? f.offset : at.offset + f.offset, f.bit, f.type, at.constant || f.constant,
                              at.path + "." + f.name};
      collectScalars(member, out, depth + 1);
    }
  } else if (t->kind == TypeKind::Array && t->base) {
    const uint64_t count = t->elementCount();
    for (uint64_t flat = 0; flat < count; ++flat) {
      std::string index;
      uint64_t rest = flat;
      std::vector<int64_t> parts(t->dims.size());
      for (size_t d = t->dims.size(); d-- > 0;) {
        parts[d] = t->dims[d].lower + static_cast<int64_t>(rest % t->dims[d].count);
        rest /= t->dims[d].count;
      }
      for (size_t d = 0; d < parts.size(); ++d) index += (d ? "," : "") + std::to_string(parts[d]);
      VariableLocation element{at.offset + static_cast<uint32_t>(flat * t->base->size), -1, t->base, at.constant,
                               at.path + "[" + index + "]"};
      collectScalars(element, out, depth + 1);
    }
  }
}

// `*` any characters, `?` one; case-insensitive.
bool globMatches(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || std::tolower(static_cast<unsigned char>(pattern[p])) ==
                                                        std::tolower(static_cast<unsigned char>(text[t])))) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

SignalKind signalKind(const Type& declared) {
  const Type* t = scalarBase(&declared);
  if (t->kind == TypeKind::Bool) return SignalKind::Bool;
  if (t->isReal()) return SignalKind::Real;
  if (t->kind == TypeKind::Enum) return SignalKind::Enum;
  if (t->kind == TypeKind::String || t->kind == TypeKind::WChar) return SignalKind::String;
  return SignalKind::Integer;  // integers, bit strings, TIME and dates (their nanoseconds)
}

const char* signalKindName(SignalKind kind) {
  switch (kind) {
    case SignalKind::Bool: return "bool";
    case SignalKind::Integer: return "integer";
    case SignalKind::Real: return "real";
    case SignalKind::Enum: return "enum";
    case SignalKind::String: return "string";
  }
  return "integer";
}

std::optional<double> numericValue(const uint8_t* memory, uint32_t offset, int bit, const Type& declared) {
  const Type* t = scalarBase(&declared);
  const uint8_t* p = memory + offset;
  if (bit >= 0) return (p[0] >> bit) & 1;
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  if (t->kind == TypeKind::Bool) return p[0] ? 1 : 0;
  if (t->kind == TypeKind::Real) return get(float{});
  if (t->kind == TypeKind::LReal) return get(double{});
  if (t->kind == TypeKind::String || t->kind == TypeKind::WChar || t->kind == TypeKind::Ref) return std::nullopt;
  const Type* storage = t->kind == TypeKind::Enum ? t->base : t;
  if (t->isTimeLike()) return static_cast<double>(get(int64_t{}));
  switch (primOf(*storage)) {
    case Prim::I8: return get(int8_t{});
    case Prim::I16: return get(int16_t{});
    case Prim::I32: return get(int32_t{});
    case Prim::I64: return static_cast<double>(get(int64_t{}));
    case Prim::U8: return get(uint8_t{});
    case Prim::U16: return get(uint16_t{});
    case Prim::U32: return get(uint32_t{});
    case Prim::U64: return static_cast<double>(get(uint64_t{}));
    default: return std::nullopt;
  }
}

std::vector<VariableLocation> scalarsOf(const Program&, const VariableLocation& root) {
  std::vector<VariableLocation> out;
  collectScalars(root, out, 0);
  return out;
}

std::vector<VariableLocation> allScalars(const Program& program) {
  std::vector<VariableLocation> out;
  for (const ProgramInstanceInfo& inst : program.instances)
    collectScalars(VariableLocation{inst.offset, -1, inst.type, false, inst.name}, out, 0);
  for (const Variable& g : program.globals)
    if (listed(g)) collectScalars(VariableLocation{g.offset, g.bit, g.type, g.constant, g.name}, out, 0);
  return out;
}

std::vector<VariableLocation> selectScalars(const Program& program, std::string_view list, std::string& error) {
  std::vector<VariableLocation> out;
  std::vector<std::pair<uint32_t, int8_t>> seen;
  std::optional<std::vector<VariableLocation>> all;  // built for the first glob
  auto add = [&](const VariableLocation& v) {
    const std::pair<uint32_t, int8_t> key{v.offset, v.bit};
    for (size_t i = 0; i < seen.size(); ++i)
      if (seen[i] == key && out[i].type == v.type) return;
    seen.push_back(key);
    out.push_back(v);
  };
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    // A comma inside [..] separates indexes, not items.
    for (size_t open = list.find('[', start); comma != std::string_view::npos && open < comma;) {
      const size_t close = list.find(']', open);
      if (close == std::string_view::npos || close < comma) break;
      comma = list.find(',', close);
      open = list.find('[', close);
    }
    if (comma == std::string_view::npos) comma = list.size();
    const std::string item(trimSpace(list.substr(start, comma - start)));
    start = comma + 1;
    if (item.empty()) {
      if (comma == list.size() && start > list.size()) break;
      error = "an empty name in the variable list";
      return {};
    }
    if (item.find_first_of("*?") != std::string::npos) {
      if (!all) all = allScalars(program);
      size_t matched = 0;
      for (const VariableLocation& v : *all)
        if (globMatches(item, v.path)) {
          add(v);
          ++matched;
        }
      if (matched == 0) {
        error = fmt::format("'{}' matches no variable", item);
        return {};
      }
      continue;
    }
    std::string why;
    const std::optional<VariableLocation> v =
        item.starts_with('%') ? findAddress(program, item, why) : findVariable(program, item, why);
    if (!v) {
      error = fmt::format("'{}': {}", item, why);
      return {};
    }
    const std::vector<VariableLocation> scalars = scalarsOf(program, *v);
    if (scalars.empty()) {
      error = fmt::format("'{}' ({}) holds no value that can be exported", item, v->type ? v->type->name : "?");
      return {};
    }
    for (const VariableLocation& s : scalars) add(s);
  }
  if (out.empty()) error = "no variable named";
  return out;
}

std::optional<VariableLocation> findAddress(const Program& program, std::string_view text, std::string& error) {
  const std::string a(trimSpace(text));
  if (a.size() < 3 || a[0] != '%') {
    error = fmt::format("'{}' is not an address like %IX0.0", a);
    return std::nullopt;
  }
  const char area = static_cast<char>(std::toupper(static_cast<unsigned char>(a[1])));
  if (area != 'I' && area != 'Q' && area != 'M') {
    error = fmt::format("'{}': the area must be I, Q or M", a);
    return std::nullopt;
  }
  char size = static_cast<char>(std::toupper(static_cast<unsigned char>(a[2])));
  size_t p = 3;
  if (std::isdigit(static_cast<unsigned char>(size))) {
    size = 'X';
    p = 2;
  }
  const std::string rest = a.substr(p);
  uint64_t byte = 0;
  int bit = -1;
  unsigned unit = size == 'X' || size == 'B' ? 1 : size == 'W' ? 2 : size == 'D' ? 4 : size == 'L' ? 8 : 0;
  if (!unit) {
    error = fmt::format("'{}': the size must be X, B, W, D or L", a);
    return std::nullopt;
  }
  char* end = nullptr;
  const unsigned long long n = std::strtoull(rest.c_str(), &end, 10);
  if (end == rest.c_str()) {
    error = fmt::format("'{}' has no address number", a);
    return std::nullopt;
  }
  if (size == 'X') {
    if (*end == '.') {
      char* end2 = nullptr;
      const unsigned long b = std::strtoul(end + 1, &end2, 10);
      if (end2 == end + 1 || *end2 || b > 7) {
        error = fmt::format("'{}' has a bad bit number (0..7)", a);
        return std::nullopt;
      }
      byte = n;
      bit = static_cast<int>(b);
    } else if (*end) {
      error = fmt::format("'{}' is not an address like %IX0.0", a);
      return std::nullopt;
    } else {
      byte = n / 8;
      bit = static_cast<int>(n % 8);
    }
  } else {
    if (*end) {
      error = fmt::format("'{}' is not an address like %IW2", a);
      return std::nullopt;
    }
    byte = n * unit;
  }
  const IoArea& io = area == 'I' ? program.input : area == 'Q' ? program.output : program.memory;
  if (byte + unit > io.size) {
    error = fmt::format("'{}' is outside the %{} area the program uses ({} bytes)", a, area, io.size);
    return std::nullopt;
  }
  VariableLocation loc;
  loc.offset = io.offset + static_cast<uint32_t>(byte);
  loc.bit = static_cast<int8_t>(bit);
  const TypeKind kind = size == 'X'   ? TypeKind::Bool
                        : size == 'B' ? TypeKind::Byte
                        : size == 'W' ? TypeKind::Word
                        : size == 'D' ? TypeKind::DWord
                                      : TypeKind::LWord;
  loc.type = program.types->elementary(kind);
  loc.path = a;
  return loc;
}

bool encodeValue(const Program& program, std::string_view text, const Type& declared, std::vector<uint8_t>& bytes,
                 std::string& error) {
  const Type* type = scalarBase(&declared);
  const std::string t(trimSpace(text));
  if (type->isWideString() || type->kind == TypeKind::WChar) return encodeWideValue(text, *type, bytes, error);
  if (type->kind == TypeKind::String) {
    std::string s = t;
    if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') {
      SourceSet src;
      src.add("<value>", s);
      Diagnostics d;
      ast::ExprPtr e = parseExpression(src, 0, d);
      if (d.hasErrors() || !e || e->kind != ast::ExprKind::StringLiteral) {
        error = fmt::format("'{}' is not a string literal", t);
        return false;
      }
      s = e->text;
    }
    if (s.size() > type->capacity) {
      error = fmt::format("the string is longer than {} ({} bytes)", type->name, s.size());
      return false;
    }
    // The characters and their 0: a written value is the whole variable, so the bytes after the
    // 0 become zeros (docs/language.md, "Types and their storage").
    bytes.assign(type->size, 0);
    std::memcpy(bytes.data(), s.data(), s.size());
    return true;
  }
  if (!type->isScalar()) {
    error = fmt::format("{} values cannot be written as text", declared.name);
    return false;
  }
  SourceSet src;
  src.add("<value>", t);
  Diagnostics d;
  ast::ExprPtr e = parseExpression(src, 0, d);
  if (d.hasErrors() || !e) {
    error = fmt::format("'{}' is not a value", t);
    return false;
  }
  bool negate = false;
  const ast::Expr* lit = e.get();
  while (lit->kind == ast::ExprKind::Unary && lit->unaryOp != ast::UnaryOp::Not && lit->operand) {
    if (lit->unaryOp == ast::UnaryOp::Negate) negate = !negate;
    lit = lit->operand.get();
  }
  const Prim prim = primOf(*type);
  auto bad = [&]() {
    error = fmt::format("'{}' is not a valid {}", t, declared.name);
    return false;
  };
  if (type->kind == TypeKind::Enum && lit->kind == ast::ExprKind::Name) {
    std::string name = lit->text;
    const size_t hash = name.find('#');
    if (hash != std::string::npos) name = name.substr(hash + 1);
    for (const EnumMember& m : type->members) {
      if (equalsIgnoreCase(m.name, name)) {
        std::vector<uint8_t> b;
        return encodeValue(program, std::to_string(m.value), *type->base, bytes, error);
      }
    }
    error = fmt::format("{} has no value '{}'", declared.name, name);
    return false;
  }
  if (type->isTimeLike()) {
    const bool ok =
        (lit->kind == ast::ExprKind::TimeLiteral && (type->kind == TypeKind::Time || type->kind == TypeKind::LTime)) ||
        (lit->kind == ast::ExprKind::DateLiteral && type->kind == TypeKind::Date) ||
        (lit->kind == ast::ExprKind::TodLiteral && type->kind == TypeKind::Tod) ||
        (lit->kind == ast::ExprKind::DtLiteral && type->kind == TypeKind::Dt);
    if (!ok) return bad();
    int64_t v = static_cast<int64_t>(lit->intValue);
    if (negate) v = -v;
    put(bytes, v);
    return true;
  }
  if (primIsFloat(prim)) {
    double v;
    if (lit->kind == ast::ExprKind::RealLiteral)
      v = lit->realValue;
    else if (lit->kind == ast::ExprKind::IntLiteral)
      v = static_cast<double>(lit->intValue) * (lit->negative ? -1 : 1);
    else
      return bad();
    if (negate) v = -v;
    if (prim == Prim::F32)
      put(bytes, static_cast<float>(v));
    else
      put(bytes, v);
    return true;
  }
  Int128 v;
  if (lit->kind == ast::ExprKind::BoolLiteral)
    v = lit->boolValue ? 1 : 0;
  else if (lit->kind == ast::ExprKind::IntLiteral)
    v = static_cast<Int128>(lit->intValue) * (lit->negative ? -1 : 1);
  else
    return bad();
  if (negate) v = -v;
  if (type->kind == TypeKind::Bool) {
    if (v != 0 && v != 1) return bad();
    put(bytes, static_cast<uint8_t>(v));
    return true;
  }
  const bool bits = type->isBitString() || declared.isBitString();
  const unsigned width = primSize(prim) * 8;
  const Int128 umax = (static_cast<Int128>(1) << width) - 1;
  const Int128 smin = -(static_cast<Int128>(1) << (width - 1));
  const Int128 smax = (static_cast<Int128>(1) << (width - 1)) - 1;
  const bool fits =
      primIsSigned(prim) ? (v >= smin && v <= smax) : (v >= 0 && v <= umax) || (bits && v >= smin && v < 0);
  if (!fits) {
    error = fmt::format("{} is outside the range of {}", static_cast<long long>(v), declared.name);
    return false;
  }
  if (declared.kind == TypeKind::Subrange && (v < declared.lower || v > declared.upper)) {
    error = fmt::format("{} is outside {}", static_cast<long long>(v), declared.name);
    return false;
  }
  const uint64_t raw = static_cast<uint64_t>(v);
  bytes.resize(primSize(prim));
  std::memcpy(bytes.data(), &raw, primSize(prim));  // little-endian: the low bytes
  return true;
}

std::string formatValue(const Program& program, const uint8_t* memory, uint32_t offset, int bit, const Type& declared) {
  (void)program;
  const Type* type = scalarBase(&declared);
  const uint8_t* p = memory + offset;
  if (bit >= 0) return (p[0] >> bit) & 1 ? "TRUE" : "FALSE";
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  if (type->isWideString() || type->kind == TypeKind::WChar) return wideLiteralText(p, *type);
  switch (type->kind) {
    case TypeKind::Bool: return p[0] ? "TRUE" : "FALSE";
    case TypeKind::Real: return formatReal(get(float{}), true);
    case TypeKind::LReal: return formatReal(get(double{}), false);
    case TypeKind::Time: return formatDuration(get(int64_t{}), false);
    case TypeKind::LTime: return formatDuration(get(int64_t{}), true);
    case TypeKind::Date: return formatDate(get(int64_t{}));
    case TypeKind::Tod: return formatTimeOfDay(get(int64_t{}));
    case TypeKind::Dt: return formatDateAndTime(get(int64_t{}));
    case TypeKind::String: {
      const size_t n = stringLengthWithin(p, type->capacity, false);
      std::string out = "'";
      for (size_t i = 0; i < n; ++i) {
        const char c = static_cast<char>(p[i]);
        if (c == '\'')
          out += "$'";
        else if (c == '$')
          out += "$$";
        else if (c == '\n')
          out += "$N";
        else if (c == '\t')
          out += "$T";
        else if (c == '\r')
          out += "$R";
        else if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("${:02X}", static_cast<unsigned char>(c));
        else
          out += c;
      }
      return out + "'";
    }
    case TypeKind::Enum: {
      int64_t v = 0;
      switch (primOf(*type->base)) {
        case Prim::I8: v = get(int8_t{}); break;
        case Prim::I16: v = get(int16_t{}); break;
        case Prim::I32: v = get(int32_t{}); break;
        case Prim::I64: v = get(int64_t{}); break;
        case Prim::U8: v = get(uint8_t{}); break;
        case Prim::U16: v = get(uint16_t{}); break;
        case Prim::U32: v = get(uint32_t{}); break;
        default: v = static_cast<int64_t>(get(uint64_t{})); break;
      }
      for (const EnumMember& m : type->members)
        if (m.value == v) return m.name;
      return fmt::format("{}#{}", declared.name, v);
    }
    case TypeKind::Ref: {
      const uint32_t r = get(uint32_t{});
      return r == 0 ? "NULL" : fmt::format("REF(@{})", r);
    }
    default: break;
  }
  if (type->isInteger()) {
    switch (primOf(*type)) {
      case Prim::I8: return std::to_string(get(int8_t{}));
      case Prim::I16: return std::to_string(get(int16_t{}));
      case Prim::I32: return std::to_string(get(int32_t{}));
      case Prim::I64: return std::to_string(get(int64_t{}));
      case Prim::U8: return std::to_string(get(uint8_t{}));
      case Prim::U16: return std::to_string(get(uint16_t{}));
      case Prim::U32: return std::to_string(get(uint32_t{}));
      default: return std::to_string(get(uint64_t{}));
    }
  }
  return declared.name;
}

}  // namespace scanback
