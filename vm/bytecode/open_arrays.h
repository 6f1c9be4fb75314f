// ARRAY[*] (a VAR_IN_OUT of any bounds, docs/language.md): its type and the descriptor its slot
// holds. The type is an Array whose dimensions have no elements (count 0: a real array has at
// least one); its bounds arrive with each call, in the slot: the REF of the first element, then per
// dimension its lower bound (DINT), its element count (UDINT) and its stride in bytes (UDINT).
#pragma once

#include <cstdint>

#include "vm/bytecode/types.h"

namespace scanback {

inline bool isOpenArray(const Type* t) {
  return t && t->kind == TypeKind::Array && !t->dims.empty() && t->dims[0].count == 0;
}

inline constexpr uint32_t kOpenArrayRefBytes = 4;
inline constexpr uint32_t kOpenArrayDimBytes = 12;  // lower, count, stride
// Bytes of an ARRAY[*] slot: the REF and each dimension's bounds.
inline uint32_t openArraySlotSize(const Type* t) {
  return kOpenArrayRefBytes + kOpenArrayDimBytes * static_cast<uint32_t>(t->dims.size());
}
// Whether an array of type `actual` may be passed for an ARRAY[*] of `open`: the same element type
// and as many dimensions (an ARRAY[*] passed on carries its own bounds).
inline bool fitsOpenArray(const Type* actual, const Type* open) {
  return actual && actual->kind == TypeKind::Array && actual->base == open->base &&
         actual->dims.size() == open->dims.size();
}

}  // namespace scanback
