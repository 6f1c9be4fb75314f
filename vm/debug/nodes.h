// Internals of the expression evaluator: the tree of typed operations an Expression is compiled
// into (compile.cpp builds it, nodes.cpp evaluates it).
//
// Every node produces one of three kinds of result:
//   Scalar  a machine value of the node's Prim, held in 64 bits (see get/put)
//   String  a view of [length][bytes], in memory, in a string constant, or in the per-evaluation
//           scratch buffer at the node's `buf` offset (2 + cap bytes)
//   Place   an absolute memory offset (and a bit), for storage and for aggregates
// Each node carries the function that evaluates it, chosen at compile time for its operation and
// storage type, so that evaluating is a walk of direct calls without any allocation.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "vm/bytecode/opcodes.h"
#include "vm/bytecode/types.h"

namespace scanback::debug::detail {

struct Node;

struct Loc {
  uint64_t offset = 0;
  int bit = -1;
};

struct Ctx {
  const uint8_t* mem = nullptr;
  uint64_t size = 0;
  uint64_t thisOffset = 0;
  uint64_t frameOffset = 0;
  int64_t cycleTime = 0;       // TIME(), LTIME()
  uint8_t* scratch = nullptr;  // string results, Impl::scratchSize bytes
  char* fnScratch = nullptr;   // the string functions' work area (kStringScratchBytes)
  std::string* error = nullptr;
};

using ScalarFn = bool (*)(const Node&, Ctx&, uint64_t&);
using StringFn = bool (*)(const Node&, Ctx&, std::string_view&);
using PlaceFn = bool (*)(const Node&, Ctx&, Loc&);

enum class NodeKind : uint8_t { Scalar, String, Place };

struct Node {
  NodeKind kind = NodeKind::Scalar;
  Prim prim = Prim::I32;  // Scalar: storage type of the result
  ScalarFn scalar = nullptr;
  StringFn string = nullptr;
  PlaceFn place = nullptr;
  const Node* a = nullptr;
  const Node* b = nullptr;
  const Node* c = nullptr;
  std::vector<const Node*> list;  // MUX inputs, index expressions, ...
  uint64_t k = 0;                 // constant bits, offset, bit number, immediate
  int64_t lo = 0, hi = 0;         // CHK bounds
  uint32_t size = 0;              // bytes a place designates (dereference checks)
  uint32_t cap = 0;               // String: capacity of the result (in characters)
  bool wide = false;              // String: a WSTRING, its value the bytes of its UTF-16 units
  uint32_t buf = 0;               // String: scratch offset of the result
  uint32_t column = 0;            // 1-based column in the expression text, for runtime errors
  bool lazy = false;              // index: the compiler computes this address only when it reads
  std::vector<ArrayDim> dims;     // index: bounds
  std::vector<uint64_t> strides;  // index: bytes per step of each dimension
  std::string text;               // string constant; what a message names
};

// ---- 64-bit holder of a scalar of any storage type

template <class T>
inline T get(uint64_t bits) {
  if constexpr (std::is_same_v<T, float>) {
    float f;
    const uint32_t low = static_cast<uint32_t>(bits);
    std::memcpy(&f, &low, 4);
    return f;
  } else if constexpr (std::is_same_v<T, double>) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  } else {
    return static_cast<T>(bits);
  }
}

template <class T>
inline uint64_t put(T v) {
  if constexpr (std::is_same_v<T, float>) {
    uint32_t low;
    std::memcpy(&low, &v, 4);
    return low;
  } else if constexpr (std::is_same_v<T, double>) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return bits;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    return static_cast<uint64_t>(v);
  }
}

// ---- operation families; nodes.cpp gives the evaluation function of each for a storage type

enum class Arith : uint8_t { Add, Sub, Mul, Div, Mod, Min, Max, Expt, Atan2 };
enum class Cmp : uint8_t { Eq, Ne, Lt, Le };
enum class BitOp : uint8_t { And, Or, Xor, Shl, Shr, Rol, Ror };
enum class Unop : uint8_t { Neg, Abs, Sqrt, Ln, Log, Exp, Sin, Cos, Tan, Asin, Acos, Atan, NeZero };
enum class StrCmp : uint8_t { Eq, Ne, Lt, Le };
enum class StrFn : uint8_t { Left, Right, Mid, Concat, Insert, Delete, Replace };
enum class SFrom : uint8_t { I64, U64, F32, F64, Bool, Time, LTime, Date, Tod, Dt };
enum class STo : uint8_t { I64, U64, F64, Bool };
enum class PlaceBase : uint8_t { Abs, This, Frame };

ScalarFn constFn();
ScalarFn cycleTimeFn();                   // the cycle's virtual start time (I64 ns)
ScalarFn loadFn(PlaceBase base, Prim p);  // k = offset from the base
ScalarFn loadPlaceFn(Prim p);             // a = place (may be a bit)
ScalarFn arithFn(Arith op, Prim p);       // a op b
ScalarFn cmpFn(Cmp op, Prim p);           // BOOL = a op b
ScalarFn bitFn(BitOp op, uint32_t size);  // a op b on unsigned of `size` bytes (shift count b is I64)
ScalarFn notBitsFn(uint32_t size);        // bitwise NOT
ScalarFn boolNotFn();                     // BOOL NOT: a ? 0 : 1
ScalarFn boolAndFn();                     // BOOL AND, skipping b when a is FALSE (b is safe to skip)
ScalarFn boolOrFn();                      // BOOL OR, skipping b when a is TRUE (OR_ELSE)
ScalarFn getBitFn(uint32_t size);         // BOOL = bit k of a
ScalarFn unaryFn(Unop op, Prim p);
ScalarFn truncFn(Prim p);            // I64 = a (REAL/LREAL) truncated toward zero, saturated
ScalarFn cvtFn(Prim from, Prim to);  // CVT (REAL to integer rounds half away from zero, saturates)
ScalarFn idx64Fn();                  // I32 = a (I64) clamped
ScalarFn chkFn(Prim p);              // a, faulting unless lo <= a <= hi
ScalarFn selScalarFn();              // a (BOOL) ? c : b
ScalarFn muxScalarFn();              // list[a]
ScalarFn addrFn();                   // U32 = offset of place a
ScalarFn strCmpFn(StrCmp op);        // BOOL = a op b (strings)
ScalarFn strLenFn();                 // I16 = LEN(a)
ScalarFn strFindFn();                // I16 = FIND(a, b)
ScalarFn stoFn(STo to);              // number in string a
ScalarFn wcharFromWideFn();          // U16 = first unit of WSTRING a, 0 when empty

StringFn strConstFn();                  // text
StringFn strLoadFn();                   // a = place
StringFn strTruncFn();                  // a, truncated to cap (SMOV)
StringFn strFuncFn(StrFn fn);           // a, b, c, list per function, into buf
StringFn sfromFn(SFrom from);           // text of scalar a, into buf
StringFn selStringFn();                 // a (BOOL) ? c : b, truncated to cap
StringFn muxStringFn();                 // list[a], truncated to cap
StringFn wideFromStrFn();               // WSTRING of STRING a (UTF-8 decoded), into buf
StringFn strFromWideFn(Narrowing how);  // STRING of WSTRING a, into buf
StringFn wideFromWCharFn();             // WSTRING of the WCHAR a (scalar), into buf

PlaceFn placeFn(PlaceBase base);  // base + k
PlaceFn placeDerefFn();           // REF a (U32) + k; NULL and outside memory fault
PlaceFn placeOffsetFn();          // place a + k
PlaceFn placeIndexFn();           // place a + sum((list[i] - lower) * stride), bounds checked
PlaceFn placeOpenIndexFn();       // ARRAY[*] element: slot a's REF + sum((list[i] - lower) * stride), its bounds
PlaceFn placeBitFn();             // bit k of the word at place a
PlaceFn selPlaceFn();             // a (BOOL) ? place c : place b
PlaceFn muxPlaceFn();             // place list[a]

// Evaluates a node of any kind as a place, scalar or string (dispatch on kind).
inline bool evalScalar(const Node& n, Ctx& c, uint64_t& out) { return n.scalar(n, c, out); }
inline bool evalString(const Node& n, Ctx& c, std::string_view& out) { return n.string(n, c, out); }
inline bool evalPlace(const Node& n, Ctx& c, Loc& out) { return n.place(n, c, out); }

// Sets the error ("column N: message") and returns false.
bool fault(const Node& n, Ctx& c, std::string message);
// Checks [offset, offset + size) against the memory.
bool inMemory(const Node& n, Ctx& c, uint64_t offset, uint64_t size);

}  // namespace scanback::debug::detail
