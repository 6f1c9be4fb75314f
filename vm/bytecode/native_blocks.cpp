#include "vm/bytecode/native_blocks.h"

#include <array>

namespace scanback {

namespace {

using namespace native_layout;

// clang-format off

template <class T>
std::span<const uint8_t> zeroBytes() {
  static const std::array<uint8_t, sizeof(T)> bytes{};
  return bytes;
}

std::span<const uint8_t> fTrigInit() {
  static const auto bytes = [] {
    std::array<uint8_t, sizeof(Trig)> b{};
    b[offsetof(Trig, M)] = 1;  // IEC: F_TRIG's memory starts TRUE, so a FALSE input does not fire on the first call
    return b;
  }();
  return bytes;
}

// clang-format on

#define SB_NATIVE(NAME, S, FIELDS, INIT) \
  NativeBlock { NAME, sizeof(S), alignof(S), FIELDS, INIT }

#define SB_COUNTERS(SUFFIX, C)                                                \
  SB_NATIVE("CTU_" SUFFIX, CtuOf<C>, kCtuFields<C>, zeroBytes<CtuOf<C>>),     \
      SB_NATIVE("CTD_" SUFFIX, CtdOf<C>, kCtdFields<C>, zeroBytes<CtdOf<C>>), \
      SB_NATIVE("CTUD_" SUFFIX, CtudOf<C>, kCtudFields<C>, zeroBytes<CtudOf<C>>)

const NativeBlock kBlocks[] = {
    SB_NATIVE("TON", Timer, kTimerFields, zeroBytes<Timer>),
    SB_NATIVE("TOF", Timer, kTimerFields, zeroBytes<Timer>),
    SB_NATIVE("TP", Timer, kTimerFields, zeroBytes<Timer>),
    SB_NATIVE("R_TRIG", Trig, kTrigFields, zeroBytes<Trig>),
    SB_NATIVE("F_TRIG", Trig, kTrigFields, fTrigInit),
    SB_NATIVE("CTU", Ctu, kCtuFields<int16_t>, zeroBytes<Ctu>),
    SB_NATIVE("CTD", Ctd, kCtdFields<int16_t>, zeroBytes<Ctd>),
    SB_NATIVE("CTUD", Ctud, kCtudFields<int16_t>, zeroBytes<Ctud>),
    SB_NATIVE("SR", Sr, kSrFields, zeroBytes<Sr>),
    SB_NATIVE("RS", Rs, kRsFields, zeroBytes<Rs>),
    // After the ten of IEC, so that their ids (and every trace's) stay what they were.
    SB_COUNTERS("DINT", int32_t),
    SB_COUNTERS("LINT", int64_t),
    SB_COUNTERS("UDINT", uint32_t),
    SB_COUNTERS("ULINT", uint64_t),
};

}  // namespace

std::span<const NativeBlock> nativeBlocks() { return kBlocks; }

std::vector<uint32_t> nativeInstanceSizes() {
  std::vector<uint32_t> sizes;
  for (const NativeBlock& n : kBlocks) sizes.push_back(n.size);
  return sizes;
}

}  // namespace scanback
