// Evaluation of expression nodes: one small function per operation and storage type, computing
// with the VM's own arithmetic (vm/exec/arith.h) and string functions (vm/exec/strings.h), so that
// results match the VM's bit for bit.
#include "vm/debug/nodes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "vm/exec/arith.h"
#include "vm/exec/iec_text.h"
#include "vm/exec/strings.h"

namespace scanback::debug::detail {

bool fault(const Node& n, Ctx& c, std::string message) {
  if (c.error) *c.error = n.column ? fmt::format("column {}: {}", n.column, message) : std::move(message);
  return false;
}

bool inMemory(const Node& n, Ctx& c, uint64_t offset, uint64_t size) {
  if (offset + size <= c.size && offset + size >= offset) return true;
  return fault(n, c,
               fmt::format("{} byte(s) at offset {} are outside the memory ({} bytes): the context or a "
                           "reference is not valid",
                           size, offset, c.size));
}

namespace {

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for the C++ type of a storage type.
template <class F>
auto byPrim(Prim p, F f) {
  switch (p) {
    case Prim::I8: return f(Tag<int8_t>{});
    case Prim::I16: return f(Tag<int16_t>{});
    case Prim::I32: return f(Tag<int32_t>{});
    case Prim::I64: return f(Tag<int64_t>{});
    case Prim::U8: return f(Tag<uint8_t>{});
    case Prim::U16: return f(Tag<uint16_t>{});
    case Prim::U32: return f(Tag<uint32_t>{});
    case Prim::U64: return f(Tag<uint64_t>{});
    case Prim::F32: return f(Tag<float>{});
    case Prim::F64: return f(Tag<double>{});
  }
  return f(Tag<int32_t>{});
}

// Calls f(Tag<U>{}) for the unsigned type of `size` bytes.
template <class F>
auto bySize(uint32_t size, F f) {
  switch (size) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    default: return f(Tag<uint64_t>{});
  }
}

template <class T>
bool loadAt(const Node& n, Ctx& c, uint64_t offset, uint64_t& out) {
  if (!inMemory(n, c, offset, sizeof(T))) return false;
  T v;
  std::memcpy(&v, c.mem + offset, sizeof v);
  out = put<T>(v);
  return true;
}

// ---------------------------------------------------------------- scalars

bool konst(const Node& n, Ctx&, uint64_t& out) {
  out = n.k;
  return true;
}

template <class T, PlaceBase base>
bool loadBase(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t at = n.k;
  if constexpr (base == PlaceBase::This) at += c.thisOffset;
  if constexpr (base == PlaceBase::Frame) at += c.frameOffset;
  return loadAt<T>(n, c, at, out);
}

template <class T>
bool loadPlace(const Node& n, Ctx& c, uint64_t& out) {
  Loc l;
  if (!evalPlace(*n.a, c, l)) return false;
  if (l.bit >= 0) {
    if (!inMemory(n, c, l.offset, 1)) return false;
    out = (c.mem[l.offset] >> l.bit) & 1u;
    return true;
  }
  return loadAt<T>(n, c, l.offset, out);
}

template <class T, Arith op>
bool arithOp(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x, y;
  if (!evalScalar(*n.a, c, x) || !evalScalar(*n.b, c, y)) return false;
  const T a = get<T>(x), b = get<T>(y);
  T r{};
  if constexpr (op == Arith::Add) {
    r = arith::opAdd<T>(a, b);
  } else if constexpr (op == Arith::Sub) {
    r = arith::opSub<T>(a, b);
  } else if constexpr (op == Arith::Mul) {
    r = arith::opMul<T>(a, b);
  } else if constexpr (op == Arith::Div) {
    if (!arith::opDiv<T>(a, b, r)) return fault(n, c, "division by zero");
  } else if constexpr (op == Arith::Mod) {
    if constexpr (std::is_integral_v<T>) {
      if (!arith::opMod<T>(a, b, r)) return fault(n, c, "division by zero");
    }
  } else if constexpr (op == Arith::Min) {
    r = std::min<T>(a, b);
  } else if constexpr (op == Arith::Max) {
    r = std::max<T>(a, b);
  } else if constexpr (op == Arith::Expt) {
    if constexpr (std::is_floating_point_v<T>) r = std::pow(a, b);
  } else if constexpr (op == Arith::Atan2) {
    if constexpr (std::is_floating_point_v<T>) r = std::atan2(a, b);
  }
  out = put<T>(r);
  return true;
}

template <class T, Cmp op>
bool cmpOp(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x, y;
  if (!evalScalar(*n.a, c, x) || !evalScalar(*n.b, c, y)) return false;
  const T a = get<T>(x), b = get<T>(y);
  bool r;
  if constexpr (op == Cmp::Eq)
    r = a == b;
  else if constexpr (op == Cmp::Ne)
    r = a != b;
  else if constexpr (op == Cmp::Lt)
    r = a < b;
  else
    r = a <= b;
  out = r ? 1 : 0;
  return true;
}

template <class U, BitOp op>
bool bitOp(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x, y;
  if (!evalScalar(*n.a, c, x) || !evalScalar(*n.b, c, y)) return false;
  const U a = get<U>(x);
  U r;
  if constexpr (op == BitOp::And)
    r = static_cast<U>(a & get<U>(y));
  else if constexpr (op == BitOp::Or)
    r = static_cast<U>(a | get<U>(y));
  else if constexpr (op == BitOp::Xor)
    r = static_cast<U>(a ^ get<U>(y));
  else if constexpr (op == BitOp::Shl)
    r = arith::opShl<U>(a, get<int64_t>(y));
  else if constexpr (op == BitOp::Shr)
    r = arith::opShr<U>(a, get<int64_t>(y));
  else if constexpr (op == BitOp::Rol)
    r = arith::opRol<U>(a, get<int64_t>(y));
  else
    r = arith::opRor<U>(a, get<int64_t>(y));
  out = put<U>(r);
  return true;
}

template <class U>
bool notBits(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x;
  if (!evalScalar(*n.a, c, x)) return false;
  out = put<U>(static_cast<U>(~get<U>(x)));
  return true;
}

bool boolOr(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x, y;
  if (!evalScalar(*n.a, c, x)) return false;
  if (get<uint8_t>(x) != 0) {  // the result is TRUE whatever b is
    out = 1;
    return true;
  }
  if (!evalScalar(*n.b, c, y)) return false;
  out = static_cast<uint8_t>(get<uint8_t>(y) != 0);
  return true;
}

bool boolNot(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x;
  if (!evalScalar(*n.a, c, x)) return false;
  out = get<uint8_t>(x) ? 0 : 1;
  return true;
}

bool boolAnd(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x, y;
  if (!evalScalar(*n.a, c, x)) return false;
  if (get<uint8_t>(x) == 0) {  // the result is FALSE whatever b is, and b cannot fault
    out = 0;
    return true;
  }
  if (!evalScalar(*n.b, c, y)) return false;
  out = static_cast<uint8_t>(get<uint8_t>(x) & get<uint8_t>(y));
  return true;
}

template <class U>
bool getBit(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x;
  if (!evalScalar(*n.a, c, x)) return false;
  out = (get<U>(x) >> n.k) & 1u;
  return true;
}

template <class T, Unop op>
bool unaryOp(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x;
  if (!evalScalar(*n.a, c, x)) return false;
  const T a = get<T>(x);
  if constexpr (op == Unop::NeZero) {
    out = a != 0 ? 1 : 0;
    return true;
  } else {
    T r{};
    if constexpr (op == Unop::Neg)
      r = arith::opNeg<T>(a);
    else if constexpr (op == Unop::Abs)
      r = arith::opAbs<T>(a);
    else if constexpr (std::is_floating_point_v<T>) {
      if constexpr (op == Unop::Sqrt)
        r = std::sqrt(a);
      else if constexpr (op == Unop::Ln)
        r = std::log(a);
      else if constexpr (op == Unop::Log)
        r = std::log10(a);
      else if constexpr (op == Unop::Exp)
        r = std::exp(a);
      else if constexpr (op == Unop::Sin)
        r = std::sin(a);
      else if constexpr (op == Unop::Cos)
        r = std::cos(a);
      else if constexpr (op == Unop::Tan)
        r = std::tan(a);
      else if constexpr (op == Unop::Asin)
        r = std::asin(a);
      else if constexpr (op == Unop::Acos)
        r = std::acos(a);
      else if constexpr (op == Unop::Atan)
        r = std::atan(a);
    }
    out = put<T>(r);
    return true;
  }
}

template <class T>
bool truncOp(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x;
  if (!evalScalar(*n.a, c, x)) return false;
  if constexpr (std::is_floating_point_v<T>) out = put<int64_t>(arith::truncateToI64<T>(get<T>(x)));
  return true;
}

template <class From, class To>
bool cvtOp(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x;
  if (!evalScalar(*n.a, c, x)) return false;
  out = put<To>(arith::convert<To, From>(get<From>(x)));
  return true;
}

bool idx64(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t x;
  if (!evalScalar(*n.a, c, x)) return false;
  out = put<int32_t>(static_cast<int32_t>(std::clamp<int64_t>(get<int64_t>(x), INT32_MIN, INT32_MAX)));
  return true;
}

template <class T>
bool chk(const Node& n, Ctx& c, uint64_t& out) {
  if (!evalScalar(*n.a, c, out)) return false;
  const T v = get<T>(out);
  const T lo = static_cast<T>(n.lo), hi = static_cast<T>(n.hi);
  if (v < lo || v > hi) return fault(n, c, fmt::format("subrange violation: value {} outside {}..{}", +v, +lo, +hi));
  return true;
}

bool selScalar(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t g;
  if (!evalScalar(*n.a, c, g)) return false;
  const Node& chosen = get<uint8_t>(g) ? *n.c : *n.b;
  return evalScalar(chosen, c, out);
}

bool muxScalar(const Node& n, Ctx& c, uint64_t& out) {
  uint64_t k;
  if (!evalScalar(*n.a, c, k)) return false;  // already checked against the inputs
  const int32_t i = get<int32_t>(k);
  if (i < 0 || static_cast<size_t>(i) >= n.list.size()) return fault(n, c, "MUX selector out of range");
  return evalScalar(*n.list[static_cast<size_t>(i)], c, out);
}

bool addr(const Node& n, Ctx& c, uint64_t& out) {
  Loc l;
  if (!evalPlace(*n.a, c, l)) return false;
  out = static_cast<uint32_t>(l.offset);
  return true;
}

// A string node's value is bytes; a WSTRING's are its UTF-16 units (2-aligned wherever they are:
// memory, scratch, a node's text).
inline std::u16string_view unitsOf(std::string_view bytes) {
  return {reinterpret_cast<const char16_t*>(bytes.data()), bytes.size() / 2};
}
inline std::string_view bytesOf(std::u16string_view units) {
  return {reinterpret_cast<const char*>(units.data()), units.size() * 2};
}
template <class C>
std::basic_string_view<C> charsOf(std::string_view bytes) {
  if constexpr (sizeof(C) == 1)
    return bytes;
  else
    return unitsOf(bytes);
}

template <StrCmp op, class C>
bool compareStrings(std::basic_string_view<C> x, std::basic_string_view<C> y) {
  if constexpr (op == StrCmp::Eq)
    return x == y;
  else if constexpr (op == StrCmp::Ne)
    return x != y;
  else if constexpr (op == StrCmp::Lt)
    return x < y;
  else
    return x <= y;
}

template <StrCmp op>
bool strCmp(const Node& n, Ctx& c, uint64_t& out) {
  std::string_view x, y;
  if (!evalString(*n.a, c, x) || !evalString(*n.b, c, y)) return false;
  const bool r = n.a->wide ? compareStrings<op>(unitsOf(x), unitsOf(y)) : compareStrings<op>(x, y);
  out = r ? 1 : 0;
  return true;
}

bool strLen(const Node& n, Ctx& c, uint64_t& out) {
  std::string_view s;
  if (!evalString(*n.a, c, s)) return false;
  out = put<int16_t>(static_cast<int16_t>(n.a->wide ? s.size() / 2 : s.size()));
  return true;
}

bool strFind(const Node& n, Ctx& c, uint64_t& out) {
  std::string_view x, y;
  if (!evalString(*n.a, c, x) || !evalString(*n.b, c, y)) return false;
  out = put<int16_t>(static_cast<int16_t>(n.a->wide ? stringFind(unitsOf(x), unitsOf(y)) : stringFind(x, y)));
  return true;
}

bool wcharFromWide(const Node& n, Ctx& c, uint64_t& out) {
  std::string_view s;
  if (!evalString(*n.a, c, s)) return false;
  const std::u16string_view u = unitsOf(s);
  out = u.empty() ? 0 : u[0];
  return true;
}

template <STo to>
bool sto(const Node& n, Ctx& c, uint64_t& out) {
  std::string_view s;
  if (!evalString(*n.a, c, s)) return false;
  if constexpr (to == STo::I64)
    out = put<int64_t>(parseStringInteger(s));
  else if constexpr (to == STo::U64)
    out = put<uint64_t>(static_cast<uint64_t>(parseStringInteger(s)));
  else if constexpr (to == STo::F64)
    out = put<double>(parseStringReal(s));
  else
    out = parseStringBool(s) ? 1 : 0;
  return true;
}

// ---------------------------------------------------------------- strings

bool strConst(const Node& n, Ctx&, std::string_view& out) {
  out = n.text;
  return true;
}

bool strLoad(const Node& n, Ctx& c, std::string_view& out) {
  Loc l;
  if (!evalPlace(*n.a, c, l)) return false;
  const size_t unit = n.wide ? 2 : 1;
  if (!inMemory(n, c, l.offset, unit)) return false;
  // A WSTRING is 2-aligned wherever the program puts it; only a pointer moved by an odd number
  // of bytes reaches one at an odd address.
  if (n.wide && l.offset % 2 != 0) return fault(n, c, fmt::format("a WSTRING at an odd address ({})", l.offset));
  // Up to the first 0, as the VM reads it (vm/exec/strings.h): past the variable when its 0 was
  // overwritten, up to the end of memory (where the VM's zero bytes after it stop it too).
  const uint8_t* p = c.mem + l.offset;
  const size_t most = std::min<uint64_t>((c.size - l.offset) / unit, kMaxStringUnits);
  size_t len = 0;
  if (!n.wide) {
    len = strnlen(reinterpret_cast<const char*>(p), most);
  } else {
    for (char16_t u; len < most; ++len) {
      std::memcpy(&u, p + 2 * len, 2);
      if (u == 0) break;
    }
  }
  out = std::string_view(reinterpret_cast<const char*>(p), len * unit);
  return true;
}

inline std::string_view truncated(std::string_view s, const Node& n) {
  const size_t unit = n.wide ? 2 : 1;
  return s.substr(0, std::min<size_t>({s.size(), n.cap * unit, 65535 * unit}));
}

bool strTrunc(const Node& n, Ctx& c, std::string_view& out) {
  if (!evalString(*n.a, c, out)) return false;
  out = truncated(out, n);
  return true;
}

template <StrFn fn, class C>
bool strFuncOf(const Node& n, Ctx& c, std::string_view& out);

template <StrFn fn>
bool strFunc(const Node& n, Ctx& c, std::string_view& out) {
  return n.wide ? strFuncOf<fn, char16_t>(n, c, out) : strFuncOf<fn, char>(n, c, out);
}

template <StrFn fn, class C>
bool strFuncOf(const Node& n, Ctx& c, std::string_view& out) {
  uint8_t* d = c.scratch + n.buf;
  std::string_view sBytes;
  if (!evalString(*n.a, c, sBytes)) return false;
  const std::basic_string_view<C> s = charsOf<C>(sBytes);
  if constexpr (fn == StrFn::Concat) {
    std::string_view t;
    if (!evalString(*n.b, c, t)) return false;
    stringConcat(d, n.cap, s, charsOf<C>(t), c.fnScratch);
  } else if constexpr (fn == StrFn::Left || fn == StrFn::Right) {
    uint64_t k;
    if (!evalScalar(*n.b, c, k)) return false;
    if constexpr (fn == StrFn::Left)
      stringLeft(d, n.cap, s, get<int64_t>(k), c.fnScratch);
    else
      stringRight(d, n.cap, s, get<int64_t>(k), c.fnScratch);
  } else if constexpr (fn == StrFn::Mid || fn == StrFn::Delete) {
    uint64_t len, pos;
    if (!evalScalar(*n.b, c, len) || !evalScalar(*n.c, c, pos)) return false;
    if constexpr (fn == StrFn::Mid)
      stringMid(d, n.cap, s, get<int64_t>(len), get<int64_t>(pos), c.fnScratch);
    else
      stringDelete(d, n.cap, s, get<int64_t>(len), get<int64_t>(pos), c.fnScratch);
  } else if constexpr (fn == StrFn::Insert) {
    std::string_view t;
    uint64_t pos;
    if (!evalString(*n.b, c, t) || !evalScalar(*n.c, c, pos)) return false;
    stringInsert(d, n.cap, s, charsOf<C>(t), get<int64_t>(pos), c.fnScratch);
  } else {  // Replace: a, b, list[0] = L, list[1] = P
    std::string_view t;
    uint64_t len, pos;
    if (!evalString(*n.b, c, t) || !evalScalar(*n.list[0], c, len) || !evalScalar(*n.list[1], c, pos)) return false;
    stringReplace(d, n.cap, s, charsOf<C>(t), get<int64_t>(len), get<int64_t>(pos), c.fnScratch);
  }
  if constexpr (sizeof(C) == 1)
    out = stringView(d);
  else
    out = bytesOf(wideStringView(d));
  return true;
}

bool wideFromStr(const Node& n, Ctx& c, std::string_view& out) {
  std::string_view s;
  if (!evalString(*n.a, c, s)) return false;
  uint8_t* d = c.scratch + n.buf;
  wideFromString(d, n.cap, s, c.fnScratch);
  out = bytesOf(wideStringView(d));
  return true;
}

template <Narrowing how>
bool strFromWide(const Node& n, Ctx& c, std::string_view& out) {
  std::string_view s;
  if (!evalString(*n.a, c, s)) return false;
  uint8_t* d = c.scratch + n.buf;
  stringFromWide(d, n.cap, unitsOf(s), how, c.fnScratch);
  out = stringView(d);
  return true;
}

bool wideFromWChar(const Node& n, Ctx& c, std::string_view& out) {
  uint64_t unit;
  if (!evalScalar(*n.a, c, unit)) return false;
  uint8_t* d = c.scratch + n.buf;
  const char16_t u = static_cast<char16_t>(unit);
  stringAssign(d, n.cap, std::u16string_view(&u, 1));
  out = bytesOf(wideStringView(d));
  return true;
}

template <SFrom from>
bool sfrom(const Node& n, Ctx& c, std::string_view& out) {
  uint64_t x;
  if (!evalScalar(*n.a, c, x)) return false;
  char buf[64];
  size_t len = 0;
  if constexpr (from == SFrom::I64)
    len = formatInteger(buf, get<int64_t>(x));
  else if constexpr (from == SFrom::U64)
    len = formatUnsigned(buf, get<uint64_t>(x));
  else if constexpr (from == SFrom::F32)
    len = copyText(buf, formatReal(get<float>(x), true));
  else if constexpr (from == SFrom::F64)
    len = copyText(buf, formatReal(get<double>(x), false));
  else if constexpr (from == SFrom::Bool)
    len = copyText(buf, get<uint8_t>(x) ? "TRUE" : "FALSE");
  else if constexpr (from == SFrom::Time)
    len = copyText(buf, formatDuration(get<int64_t>(x), false));
  else if constexpr (from == SFrom::LTime)
    len = copyText(buf, formatDuration(get<int64_t>(x), true));
  else if constexpr (from == SFrom::Date)
    len = copyText(buf, formatDate(get<int64_t>(x)));
  else if constexpr (from == SFrom::Tod)
    len = copyText(buf, formatTimeOfDay(get<int64_t>(x)));
  else
    len = copyText(buf, formatDateAndTime(get<int64_t>(x)));
  uint8_t* d = c.scratch + n.buf;
  stringAssign(d, n.cap, std::string_view(buf, len));
  out = stringView(d);
  return true;
}

bool selString(const Node& n, Ctx& c, std::string_view& out) {
  uint64_t g;
  if (!evalScalar(*n.a, c, g)) return false;
  if (!evalString(get<uint8_t>(g) ? *n.c : *n.b, c, out)) return false;
  out = truncated(out, n);
  return true;
}

bool muxString(const Node& n, Ctx& c, std::string_view& out) {
  uint64_t k;
  if (!evalScalar(*n.a, c, k)) return false;
  const int32_t i = get<int32_t>(k);
  if (i < 0 || static_cast<size_t>(i) >= n.list.size()) return fault(n, c, "MUX selector out of range");
  if (!evalString(*n.list[static_cast<size_t>(i)], c, out)) return false;
  out = truncated(out, n);
  return true;
}

// ---------------------------------------------------------------- places

template <PlaceBase base>
bool placeBase(const Node& n, Ctx& c, Loc& out) {
  out.offset = n.k;
  if constexpr (base == PlaceBase::This) out.offset += c.thisOffset;
  if constexpr (base == PlaceBase::Frame) out.offset += c.frameOffset;
  out.bit = -1;
  return true;
}

bool placeDeref(const Node& n, Ctx& c, Loc& out) {
  uint64_t r;
  if (!evalScalar(*n.a, c, r)) return false;
  const uint32_t ref = get<uint32_t>(r);
  if (ref == 0)  // `text`: the REFERENCE TO this is a use of (compile.cpp), which the program would name too
    return fault(n, c,
                 n.text.empty()
                     ? std::string("null reference")
                     : fmt::format("invalid reference: REFERENCE TO '{}' is not bound; REF= binds it", n.text));
  if (uint64_t{ref} + n.k + n.size > c.size)
    return fault(n, c,
                 fmt::format("dangling reference: {} + {} bytes is past the end of memory ({} bytes)", ref,
                             n.k + n.size, c.size));
  out.offset = uint64_t{ref} + n.k;
  out.bit = -1;
  return true;
}

// An element of an ARRAY[*] parameter: place a is its slot, which holds the REF of the first
// element and each dimension's lower bound, count and stride (vm/bytecode/open_arrays.h).
bool placeOpenIndex(const Node& n, Ctx& c, Loc& out) {
  Loc slot;
  if (!evalPlace(*n.a, c, slot)) return false;
  if (!inMemory(n, c, slot.offset, 4 + 12 * n.list.size())) return false;
  const uint8_t* s = c.mem + slot.offset;
  uint32_t ref;
  std::memcpy(&ref, s, 4);
  if (ref == 0) return fault(n, c, "null reference");
  uint64_t offset = ref;
  for (size_t i = 0; i < n.list.size(); ++i) {
    uint64_t v;
    if (!evalScalar(*n.list[i], c, v)) return false;
    const int32_t index = get<int32_t>(v);
    int32_t lower;
    uint32_t count, stride;
    std::memcpy(&lower, s + 4 + 12 * i, 4);
    std::memcpy(&count, s + 8 + 12 * i, 4);
    std::memcpy(&stride, s + 12 + 12 * i, 4);
    const int64_t rel = int64_t{index} - lower;
    if (static_cast<uint64_t>(rel) >= count)
      return fault(
          n, c,
          fmt::format("array index out of range: index {} outside {}..{}{}", index, lower, int64_t{lower} + count - 1,
                      n.text.empty() ? std::string() : fmt::format(" ({})", n.text)));
    offset += static_cast<uint64_t>(rel) * stride;
  }
  if (!inMemory(n, c, offset, n.size)) return false;
  out.offset = offset;
  out.bit = -1;
  return true;
}

bool placeOffset(const Node& n, Ctx& c, Loc& out) {
  if (!evalPlace(*n.a, c, out)) return false;
  out.offset += n.k;
  return true;
}

bool placeIndex(const Node& n, Ctx& c, Loc& out) {
  if (!evalPlace(*n.a, c, out)) return false;
  for (size_t i = 0; i < n.list.size(); ++i) {
    uint64_t v;
    if (!evalScalar(*n.list[i], c, v)) return false;
    const int32_t index = get<int32_t>(v);
    const ArrayDim& d = n.dims[i];
    const int64_t rel = int64_t{index} - static_cast<int32_t>(d.lower);
    if (static_cast<uint64_t>(rel) >= d.count)
      return fault(n, c,
                   fmt::format("array index out of range: index {} outside {}..{}{}", index, d.lower,
                               d.lower + static_cast<int64_t>(d.count) - 1,
                               n.text.empty() ? std::string() : fmt::format(" ({})", n.text)));
    out.offset += static_cast<uint64_t>(rel) * n.strides[i];
  }
  return true;
}

bool placeBit(const Node& n, Ctx& c, Loc& out) {
  if (!evalPlace(*n.a, c, out)) return false;
  out.offset += n.k / 8;
  out.bit = static_cast<int>(n.k % 8);
  return true;
}

bool selPlace(const Node& n, Ctx& c, Loc& out) {
  uint64_t g;
  if (!evalScalar(*n.a, c, g)) return false;
  return evalPlace(get<uint8_t>(g) ? *n.c : *n.b, c, out);
}

bool muxPlace(const Node& n, Ctx& c, Loc& out) {
  uint64_t k;
  if (!evalScalar(*n.a, c, k)) return false;
  const int32_t i = get<int32_t>(k);
  if (i < 0 || static_cast<size_t>(i) >= n.list.size()) return fault(n, c, "MUX selector out of range");
  return evalPlace(*n.list[static_cast<size_t>(i)], c, out);
}

}  // namespace

// ---------------------------------------------------------------- factories

ScalarFn constFn() { return &konst; }

namespace {
bool cycleTime(const Node&, Ctx& c, uint64_t& out) {
  out = static_cast<uint64_t>(c.cycleTime);
  return true;
}
}  // namespace

ScalarFn cycleTimeFn() { return &cycleTime; }

ScalarFn loadFn(PlaceBase base, Prim p) {
  return byPrim(p, [base](auto t) -> ScalarFn {
    using T = typename decltype(t)::type;
    switch (base) {
      case PlaceBase::Abs: return &loadBase<T, PlaceBase::Abs>;
      case PlaceBase::This: return &loadBase<T, PlaceBase::This>;
      case PlaceBase::Frame: return &loadBase<T, PlaceBase::Frame>;
    }
    return &loadBase<T, PlaceBase::Abs>;
  });
}

ScalarFn loadPlaceFn(Prim p) {
  return byPrim(p, [](auto t) -> ScalarFn { return &loadPlace<typename decltype(t)::type>; });
}

ScalarFn arithFn(Arith op, Prim p) {
  return byPrim(p, [op](auto t) -> ScalarFn {
    using T = typename decltype(t)::type;
    switch (op) {
      case Arith::Add: return &arithOp<T, Arith::Add>;
      case Arith::Sub: return &arithOp<T, Arith::Sub>;
      case Arith::Mul: return &arithOp<T, Arith::Mul>;
      case Arith::Div: return &arithOp<T, Arith::Div>;
      case Arith::Mod: return &arithOp<T, Arith::Mod>;
      case Arith::Min: return &arithOp<T, Arith::Min>;
      case Arith::Max: return &arithOp<T, Arith::Max>;
      case Arith::Expt: return &arithOp<T, Arith::Expt>;
      case Arith::Atan2: return &arithOp<T, Arith::Atan2>;
    }
    return nullptr;
  });
}

ScalarFn cmpFn(Cmp op, Prim p) {
  return byPrim(p, [op](auto t) -> ScalarFn {
    using T = typename decltype(t)::type;
    switch (op) {
      case Cmp::Eq: return &cmpOp<T, Cmp::Eq>;
      case Cmp::Ne: return &cmpOp<T, Cmp::Ne>;
      case Cmp::Lt: return &cmpOp<T, Cmp::Lt>;
      case Cmp::Le: return &cmpOp<T, Cmp::Le>;
    }
    return nullptr;
  });
}

ScalarFn bitFn(BitOp op, uint32_t size) {
  return bySize(size, [op](auto t) -> ScalarFn {
    using U = typename decltype(t)::type;
    switch (op) {
      case BitOp::And: return &bitOp<U, BitOp::And>;
      case BitOp::Or: return &bitOp<U, BitOp::Or>;
      case BitOp::Xor: return &bitOp<U, BitOp::Xor>;
      case BitOp::Shl: return &bitOp<U, BitOp::Shl>;
      case BitOp::Shr: return &bitOp<U, BitOp::Shr>;
      case BitOp::Rol: return &bitOp<U, BitOp::Rol>;
      case BitOp::Ror: return &bitOp<U, BitOp::Ror>;
    }
    return nullptr;
  });
}

ScalarFn notBitsFn(uint32_t size) {
  return bySize(size, [](auto t) -> ScalarFn { return &notBits<typename decltype(t)::type>; });
}
ScalarFn boolNotFn() { return &boolNot; }
ScalarFn boolAndFn() { return &boolAnd; }
ScalarFn boolOrFn() { return &boolOr; }
ScalarFn getBitFn(uint32_t size) {
  return bySize(size, [](auto t) -> ScalarFn { return &getBit<typename decltype(t)::type>; });
}

ScalarFn unaryFn(Unop op, Prim p) {
  return byPrim(p, [op](auto t) -> ScalarFn {
    using T = typename decltype(t)::type;
    switch (op) {
      case Unop::Neg: return &unaryOp<T, Unop::Neg>;
      case Unop::Abs: return &unaryOp<T, Unop::Abs>;
      case Unop::Sqrt: return &unaryOp<T, Unop::Sqrt>;
      case Unop::Ln: return &unaryOp<T, Unop::Ln>;
      case Unop::Log: return &unaryOp<T, Unop::Log>;
      case Unop::Exp: return &unaryOp<T, Unop::Exp>;
      case Unop::Sin: return &unaryOp<T, Unop::Sin>;
      case Unop::Cos: return &unaryOp<T, Unop::Cos>;
      case Unop::Tan: return &unaryOp<T, Unop::Tan>;
      case Unop::Asin: return &unaryOp<T, Unop::Asin>;
      case Unop::Acos: return &unaryOp<T, Unop::Acos>;
      case Unop::Atan: return &unaryOp<T, Unop::Atan>;
      case Unop::NeZero: return &unaryOp<T, Unop::NeZero>;
    }
    return nullptr;
  });
}

ScalarFn truncFn(Prim p) {
  return byPrim(p, [](auto t) -> ScalarFn { return &truncOp<typename decltype(t)::type>; });
}

ScalarFn cvtFn(Prim from, Prim to) {
  return byPrim(from, [to](auto f) -> ScalarFn {
    using From = typename decltype(f)::type;
    return byPrim(to, [](auto t) -> ScalarFn { return &cvtOp<From, typename decltype(t)::type>; });
  });
}

ScalarFn idx64Fn() { return &idx64; }
ScalarFn chkFn(Prim p) {
  return byPrim(p, [](auto t) -> ScalarFn { return &chk<typename decltype(t)::type>; });
}
ScalarFn selScalarFn() { return &selScalar; }
ScalarFn muxScalarFn() { return &muxScalar; }
ScalarFn addrFn() { return &addr; }

ScalarFn strCmpFn(StrCmp op) {
  switch (op) {
    case StrCmp::Eq: return &strCmp<StrCmp::Eq>;
    case StrCmp::Ne: return &strCmp<StrCmp::Ne>;
    case StrCmp::Lt: return &strCmp<StrCmp::Lt>;
    case StrCmp::Le: return &strCmp<StrCmp::Le>;
  }
  return nullptr;
}
ScalarFn strLenFn() { return &strLen; }
ScalarFn strFindFn() { return &strFind; }
ScalarFn stoFn(STo to) {
  switch (to) {
    case STo::I64: return &sto<STo::I64>;
    case STo::U64: return &sto<STo::U64>;
    case STo::F64: return &sto<STo::F64>;
    case STo::Bool: return &sto<STo::Bool>;
  }
  return nullptr;
}

StringFn strConstFn() { return &strConst; }
StringFn strLoadFn() { return &strLoad; }
StringFn strTruncFn() { return &strTrunc; }
StringFn strFuncFn(StrFn fn) {
  switch (fn) {
    case StrFn::Left: return &strFunc<StrFn::Left>;
    case StrFn::Right: return &strFunc<StrFn::Right>;
    case StrFn::Mid: return &strFunc<StrFn::Mid>;
    case StrFn::Concat: return &strFunc<StrFn::Concat>;
    case StrFn::Insert: return &strFunc<StrFn::Insert>;
    case StrFn::Delete: return &strFunc<StrFn::Delete>;
    case StrFn::Replace: return &strFunc<StrFn::Replace>;
  }
  return nullptr;
}
StringFn sfromFn(SFrom from) {
  switch (from) {
    case SFrom::I64: return &sfrom<SFrom::I64>;
    case SFrom::U64: return &sfrom<SFrom::U64>;
    case SFrom::F32: return &sfrom<SFrom::F32>;
    case SFrom::F64: return &sfrom<SFrom::F64>;
    case SFrom::Bool: return &sfrom<SFrom::Bool>;
    case SFrom::Time: return &sfrom<SFrom::Time>;
    case SFrom::LTime: return &sfrom<SFrom::LTime>;
    case SFrom::Date: return &sfrom<SFrom::Date>;
    case SFrom::Tod: return &sfrom<SFrom::Tod>;
    case SFrom::Dt: return &sfrom<SFrom::Dt>;
  }
  return nullptr;
}
StringFn selStringFn() { return &selString; }
StringFn wideFromStrFn() { return &wideFromStr; }
StringFn strFromWideFn(Narrowing how) {
  return how == Narrowing::Utf8 ? &strFromWide<Narrowing::Utf8> : &strFromWide<Narrowing::Ascii>;
}
StringFn wideFromWCharFn() { return &wideFromWChar; }
ScalarFn wcharFromWideFn() { return &wcharFromWide; }
StringFn muxStringFn() { return &muxString; }

PlaceFn placeFn(PlaceBase base) {
  switch (base) {
    case PlaceBase::Abs: return &placeBase<PlaceBase::Abs>;
    case PlaceBase::This: return &placeBase<PlaceBase::This>;
    case PlaceBase::Frame: return &placeBase<PlaceBase::Frame>;
  }
  return nullptr;
}
PlaceFn placeDerefFn() { return &placeDeref; }
PlaceFn placeOffsetFn() { return &placeOffset; }
PlaceFn placeIndexFn() { return &placeIndex; }
PlaceFn placeOpenIndexFn() { return &placeOpenIndex; }
PlaceFn placeBitFn() { return &placeBit; }
PlaceFn selPlaceFn() { return &selPlace; }
PlaceFn muxPlaceFn() { return &muxPlace; }

}  // namespace scanback::debug::detail
