// The standard function blocks' bodies, in C++, over the instance layouts of
// vm/bytecode/native_blocks.h.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "vm/bytecode/native_blocks.h"

namespace scanback {

using NativeRun = void (*)(uint8_t* instance, int64_t nowNs);

struct NativeBody {
  std::string_view name;  // the block's, as in nativeBlocks()
  NativeRun run;
};

// By native id, as nativeBlocks().
std::span<const NativeBody> nativeBodies();

}  // namespace scanback
