// Standard function blocks (TON, TOF, TP, R_TRIG, F_TRIG, CTU, CTD, CTUD, SR, RS) implemented in
// C++. Their instance layout is a C++ struct whose natural-alignment layout is exactly the one the
// compiler gives the same fields, so an instance in the image can be read by either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "vm/bytecode/types.h"

namespace scanback {

struct NativeField {
  std::string_view name;
  TypeKind kind;
  VarSection section;
  uint32_t offset;
  uint32_t size;
  bool hidden;  // internal state, not shown in printed state
};

using NativeRun = void (*)(uint8_t* instance, int64_t nowNs);

struct NativeFbInfo {
  std::string_view name;
  uint32_t size;
  uint32_t align;
  std::span<const NativeField> fields;
  NativeRun run;
  std::span<const uint8_t> (*initialBytes)();  // instance state before the first call
};

std::span<const NativeFbInfo> nativeFunctionBlocks();
// The instance bytes of each, by native id: what the write sets of a program need
// (vm/bytecode/write_sets.h).
std::vector<uint32_t> nativeInstanceSizes();

}  // namespace scanback
