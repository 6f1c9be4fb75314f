#include "vm/bytecode/constant.h"

#include <algorithm>

namespace scanback {

std::string int128Text(Int128 v) {
  // Through the magnitude as unsigned, so that the most negative value has one too.
  UInt128 magnitude = v < 0 ? UInt128{0} - static_cast<UInt128>(v) : static_cast<UInt128>(v);
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  if (v < 0) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

}  // namespace scanback
