// A watched range of the image: a variable, a struct field, an array element, or one bit of one.
// What a data breakpoint watches (live and in replay) and what `trace why` follows: one type for
// every place that compares a value with the one it had before.
#pragma once

#include <cstdint>
#include <cstring>

namespace scanback {

struct Watch {
  uint32_t offset = 0;
  uint32_t size = 1;
  int8_t bit = -1;  // >= 0: one bit at `offset`

  // The bytes a value of it takes (one 0/1 byte for a bit); 0 when the range is not inside an
  // image of `imageSize` bytes (it is then never read).
  uint32_t width(uint32_t imageSize) const {
    if (offset >= imageSize || size > imageSize - offset) return 0;
    return bit >= 0 ? 1u : size;
  }
  // Copies its value out of `image` into `out` (width() bytes).
  void read(const uint8_t* image, uint8_t* out) const {
    if (bit >= 0)
      *out = static_cast<uint8_t>((image[offset] >> bit) & 1);
    else
      std::memcpy(out, image + offset, size);
  }
  // Whether `image` still holds `value` (width() bytes read earlier).
  bool holds(const uint8_t* image, const uint8_t* value) const {
    if (bit >= 0) return *value == ((image[offset] >> bit) & 1);
    return std::memcmp(value, image + offset, size) == 0;
  }
};

}  // namespace scanback
