// 128-bit integers for exact intermediate arithmetic (constant folding, FOR loop bounds, literal
// range checks). GCC and clang provide them as an extension; __extension__ keeps -Wpedantic quiet
// here, once, instead of at every use.
#pragma once

namespace scanback {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

}  // namespace scanback
