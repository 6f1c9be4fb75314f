// The arithmetic of the VM's typed opcodes: integer operations that wrap at the type's width,
// division and MOD (false on a zero divisor), conversions (REAL to integer rounds half away from
// zero and saturates), truncation and shifts/rotates. Shared by the VM's dispatch loop and the
// debugger's expression evaluator (vm/debug/), so that both compute exactly the same values.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace scanback::arith {

// Unsigned type wide enough that integer arithmetic on T never overflows into UB.
template <class T>
using Wide = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

template <class T>
inline T opAdd(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a + b;
  else
    return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
}
template <class T>
inline T opSub(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a - b;
  else
    return static_cast<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b));
}
template <class T>
inline T opMul(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a * b;
  else
    return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
}
template <class T>
inline T opNeg(T a) {
  if constexpr (std::is_floating_point_v<T>)
    return -a;
  else
    return static_cast<T>(Wide<T>(0) - static_cast<Wide<T>>(a));
}
template <class T>
inline T opAbs(T a) {
  if constexpr (std::is_floating_point_v<T>)
    return std::fabs(a);
  else if constexpr (std::is_signed_v<T>)
    return a < 0 ? opNeg(a) : a;
  else
    return a;
}
// False on division by zero.
template <class T>
inline bool opDiv(T a, T b, T& r) {
  if (b == 0) return false;
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    if (b == -1) {
      r = opNeg(a);  // MIN / -1 wraps instead of trapping
      return true;
    }
  }
  r = static_cast<T>(a / b);
  return true;
}
template <class T>
inline bool opMod(T a, T b, T& r) {
  if (b == 0) return false;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) {
      r = 0;
      return true;
    }
  }
  r = static_cast<T>(a % b);
  return true;
}

template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return 0;
    long double r = std::round(static_cast<long double>(v));  // half away from zero
    if (r <= static_cast<long double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (r >= static_cast<long double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(r);
  } else {
    return static_cast<To>(v);
  }
}

template <class From>
inline int64_t truncateToI64(From v) {
  if (std::isnan(v)) return 0;
  long double r = std::trunc(static_cast<long double>(v));
  if (r <= static_cast<long double>(INT64_MIN)) return INT64_MIN;
  if (r >= static_cast<long double>(INT64_MAX)) return INT64_MAX;
  return static_cast<int64_t>(r);
}

template <class U>
inline U opShl(U a, int64_t n) {
  return (n < 0 || n >= static_cast<int64_t>(sizeof(U) * 8)) ? U(0) : static_cast<U>(static_cast<Wide<U>>(a) << n);
}
template <class U>
inline U opShr(U a, int64_t n) {
  return (n < 0 || n >= static_cast<int64_t>(sizeof(U) * 8)) ? U(0) : static_cast<U>(a >> n);
}
template <class U>
inline U opRol(U a, int64_t n) {
  constexpr int64_t bits = sizeof(U) * 8;
  n = ((n % bits) + bits) % bits;
  if (n == 0) return a;
  return static_cast<U>(static_cast<U>(static_cast<Wide<U>>(a) << n) | static_cast<U>(a >> (bits - n)));
}
template <class U>
inline U opRor(U a, int64_t n) {
  constexpr int64_t bits = sizeof(U) * 8;
  n = ((n % bits) + bits) % bits;
  if (n == 0) return a;
  return static_cast<U>(static_cast<U>(a >> n) | static_cast<U>(static_cast<Wide<U>>(a) << (bits - n)));
}

}  // namespace scanback::arith
