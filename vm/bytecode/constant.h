// A value known at compile time: a folded constant expression, a literal, the value of a CONSTANT
// variable. The semantic pass folds with them; the symbol table keeps the values of CONSTANTs so
// that the debugger folds them as the compiler did.
#pragma once

#include <cstdint>
#include <string>

#include "vm/base/int128.h"

namespace scanback {

// Integers are held wide enough for every IEC integer type (and for untyped literals between them).
struct ConstValue {
  enum class Kind : uint8_t { None, Int, Real, Bool, String };
  Kind kind = Kind::None;
  Int128 i = 0;
  double r = 0.0;
  std::string s;      // String: the bytes of a STRING; of a WSTRING (`wide`), its UTF-16 units, little-endian
  bool wide = false;  // String: a WSTRING

  static ConstValue ofInt(Int128 v) {
    ConstValue c;
    c.kind = Kind::Int;
    c.i = v;
    return c;
  }
  static ConstValue ofReal(double v) {
    ConstValue c;
    c.kind = Kind::Real;
    c.r = v;
    return c;
  }
  static ConstValue ofBool(bool v) {
    ConstValue c;
    c.kind = Kind::Bool;
    c.i = v;
    return c;
  }
  static ConstValue ofString(std::string v) {
    ConstValue c;
    c.kind = Kind::String;
    c.s = std::move(v);
    return c;
  }
  static ConstValue ofWideString(std::string utf16le) {
    ConstValue c = ofString(std::move(utf16le));
    c.wide = true;
    return c;
  }
  // String: its length in characters (bytes, or UTF-16 units when wide).
  size_t stringUnits() const { return wide ? s.size() / 2 : s.size(); }
};

// The decimal text of a 128-bit integer ("-170141183460469231731687303715884105728" included).
std::string int128Text(Int128 v);

}  // namespace scanback
