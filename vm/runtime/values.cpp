#include "vm/runtime/values.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstring>

#include "vm/base/int128.h"
#include "vm/exec/iec_text.h"
#include "vm/syntax/parser.h"

namespace scanback {

namespace {

const Type* scalarBase(const Type* t) {
  while (t && t->kind == TypeKind::Subrange) t = t->base;
  return t;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

template <class T>
void put(std::vector<uint8_t>& bytes, T v) {
  bytes.resize(sizeof v);
  std::memcpy(bytes.data(), &v, sizeof v);
}

}  // namespace

std::optional<VariableLocation> findVariable(const Program& program, std::string_view pathText, std::string& error) {
  const std::string path = trim(pathText);
  // Split into names and [index] groups.
  size_t i = 0;
  auto readName = [&]() {
    const size_t start = i;
    while (i < path.size() && (std::isalnum(static_cast<unsigned char>(path[i])) || path[i] == '_')) ++i;
    return path.substr(start, i - start);
  };
  const std::string first = readName();
  if (first.empty()) {
    error = fmt::format("'{}' is not a variable name", path);
    return std::nullopt;
  }
  VariableLocation loc;
  bool found = false;
  for (const ProgramInstanceInfo& inst : program.instances) {
    if (equalsIgnoreCase(inst.name, first)) {
      loc.offset = inst.offset;
      loc.type = inst.type;
      loc.path = inst.name;
      found = true;
      break;
    }
  }
  if (!found) {
    for (const Variable& g : program.globals) {
      if (equalsIgnoreCase(g.name, first)) {
        loc.offset = g.offset;
        loc.bit = g.bit;
        loc.type = g.type;
        loc.constant = g.constant;
        loc.path = g.name;
        found = true;
        break;
      }
    }
  }
  if (!found) {
    error = fmt::format("no program instance or global variable is named '{}'", first);
    return std::nullopt;
  }
  while (i < path.size()) {
    if (path[i] == '.') {
      ++i;
      const std::string name = readName();
      const Type* t = loc.type;
      if (t->kind != TypeKind::Struct && t->kind != TypeKind::FunctionBlock) {
        error = fmt::format("'{}' ({}) has no members", loc.path, t->name);
        return std::nullopt;
      }
      const Variable* f = t->field(name);
      if (!f || f->hidden) {
        error = fmt::format("'{}' has no member '{}'", loc.path, name);
        return std::nullopt;
      }
      if (f->byReference) {
        error = fmt::format("'{}.{}' is an in-out parameter (a reference)", loc.path, f->name);
        return std::nullopt;
      }
      loc.offset = f->absolute ? f->offset : loc.offset + f->offset;
      loc.bit = f->bit;
      loc.type = f->type;
      loc.constant = loc.constant || f->constant;
      loc.path += "." + f->name;
    } else if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string::npos) {
        error = fmt::format("missing ']' in '{}'", path);
        return std::nullopt;
      }
      const Type* t = loc.type;
      if (t->kind != TypeKind::Array) {
        error = fmt::format("'{}' is not an array", loc.path);
        return std::nullopt;
      }
      std::vector<int64_t> idx;
      std::string inner = path.substr(i + 1, close - i - 1);
      size_t p = 0;
      while (p <= inner.size()) {
        size_t comma = inner.find(',', p);
        if (comma == std::string::npos) comma = inner.size();
        const std::string part = trim(std::string_view(inner).substr(p, comma - p));
        char* end = nullptr;
        const long long v = std::strtoll(part.c_str(), &end, 10);
        if (part.empty() || *end) {
          error = fmt::format("index '{}' of '{}' is not a number", part, loc.path);
          return std::nullopt;
        }
        idx.push_back(v);
        p = comma + 1;
      }
      if (idx.size() != t->dims.size()) {
        error = fmt::format("'{}' needs {} index(es)", loc.path, t->dims.size());
        return std::nullopt;
      }
      uint64_t flat = 0;
      for (size_t d = 0; d < idx.size(); ++d) {
        if (idx[d] < t->dims[d].lower || idx[d] >= t->dims[d].lower + static_cast<int64_t>(t->dims[d].count)) {
          error = fmt::format("index {} of '{}' is outside {}..{}", idx[d], loc.path, t->dims[d].lower,
                              t->dims[d].lower + static_cast<int64_t>(t->dims[d].count) - 1);
          return std::nullopt;
        }
        flat = flat * t->dims[d].count + static_cast<uint64_t>(idx[d] - t->dims[d].lower);
      }
      loc.offset += static_cast<uint32_t>(flat * t->base->size);
      loc.type = t->base;
      loc.path += "[" + inner + "]";
      i = close + 1;
    } else {
      error = fmt::format("unexpected '{}' in '{}'", path[i], path);
      return std::nullopt;
    }
  }
  return loc;
}

std::optional<VariableLocation> findAddress(const Program& program, std::string_view text, std::string& error) {
  const std::string a = trim(text);
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
  const std::string t = trim(text);
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
    bytes.assign(type->size, 0);
    const uint16_t n = static_cast<uint16_t>(s.size());
    std::memcpy(bytes.data(), &n, 2);
    std::memcpy(bytes.data() + 2, s.data(), s.size());
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
      uint16_t n = get(uint16_t{});
      n = static_cast<uint16_t>(std::min<uint32_t>(n, type->capacity));
      std::string out = "'";
      for (uint16_t i = 0; i < n; ++i) {
        const char c = static_cast<char>(p[2 + i]);
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
