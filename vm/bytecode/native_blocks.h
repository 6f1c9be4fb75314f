// The standard function blocks' instance layouts (TON, TOF, TP, R_TRIG, F_TRIG, CTU, CTD, CTUD,
// SR, RS): what the compiler declares them as and what write sets and the recorder size. Their
// bodies run in C++ (vm/exec/natives.h) over the same structs, whose natural-alignment layout is
// exactly the one the compiler gives the same fields, so an instance in the image can be read by
// either.
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

struct NativeBlock {
  std::string_view name;
  uint32_t size;
  uint32_t align;
  std::span<const NativeField> fields;
  std::span<const uint8_t> (*initialBytes)();  // instance state before the first call
};

// By native id (a compiled program's `nativeId`): the order of vm/exec/natives.cpp's bodies.
std::span<const NativeBlock> nativeBlocks();
// The instance bytes of each, by native id: what the write sets of a program need
// (vm/bytecode/write_sets.h).
std::vector<uint32_t> nativeInstanceSizes();

namespace native_layout {

// Instance layouts. Field order is the declaration order shown to users; internal state is last.
struct Timer {  // TON, TOF, TP
  uint8_t IN;
  int64_t PT;
  uint8_t Q;
  int64_t ET;
  uint8_t prevIn;
  uint8_t running;
  int64_t start;
};
struct Trig {  // R_TRIG, F_TRIG
  uint8_t CLK;
  uint8_t Q;
  uint8_t M;
};
struct Ctu {
  uint8_t CU;
  uint8_t RESET;
  int16_t PV;
  uint8_t Q;
  int16_t CV;
  uint8_t prevCu;
};
struct Ctd {
  uint8_t CD;
  uint8_t LOAD;
  int16_t PV;
  uint8_t Q;
  int16_t CV;
  uint8_t prevCd;
};
struct Ctud {
  uint8_t CU;
  uint8_t CD;
  uint8_t RESET;
  uint8_t LOAD;
  int16_t PV;
  uint8_t QU;
  uint8_t QD;
  int16_t CV;
  uint8_t prevCu;
  uint8_t prevCd;
};
struct Sr {
  uint8_t S1;
  uint8_t R;
  uint8_t Q1;
};
struct Rs {
  uint8_t S;
  uint8_t R1;
  uint8_t Q1;
};

// clang-format off
#define SB_FIELD(S, F, KIND, SECTION) NativeField{#F, TypeKind::KIND, VarSection::SECTION, offsetof(S, F), sizeof(S::F), false}
#define SB_HIDDEN(S, F, KIND) NativeField{#F, TypeKind::KIND, VarSection::Var, offsetof(S, F), sizeof(S::F), true}

inline constexpr NativeField kTimerFields[] = {
    SB_FIELD(Timer, IN, Bool, Input),   SB_FIELD(Timer, PT, Time, Input),  SB_FIELD(Timer, Q, Bool, Output),
    SB_FIELD(Timer, ET, Time, Output),  SB_HIDDEN(Timer, prevIn, Bool),    SB_HIDDEN(Timer, running, Bool),
    SB_HIDDEN(Timer, start, Time),
};
inline constexpr NativeField kTrigFields[] = {
    SB_FIELD(Trig, CLK, Bool, Input),
    SB_FIELD(Trig, Q, Bool, Output),
    SB_HIDDEN(Trig, M, Bool),
};
inline constexpr NativeField kCtuFields[] = {
    SB_FIELD(Ctu, CU, Bool, Input), SB_FIELD(Ctu, RESET, Bool, Input), SB_FIELD(Ctu, PV, Int, Input),
    SB_FIELD(Ctu, Q, Bool, Output), SB_FIELD(Ctu, CV, Int, Output),     SB_HIDDEN(Ctu, prevCu, Bool),
};
inline constexpr NativeField kCtdFields[] = {
    SB_FIELD(Ctd, CD, Bool, Input), SB_FIELD(Ctd, LOAD, Bool, Input), SB_FIELD(Ctd, PV, Int, Input),
    SB_FIELD(Ctd, Q, Bool, Output), SB_FIELD(Ctd, CV, Int, Output),    SB_HIDDEN(Ctd, prevCd, Bool),
};
inline constexpr NativeField kCtudFields[] = {
    SB_FIELD(Ctud, CU, Bool, Input),    SB_FIELD(Ctud, CD, Bool, Input),   SB_FIELD(Ctud, RESET, Bool, Input),
    SB_FIELD(Ctud, LOAD, Bool, Input),  SB_FIELD(Ctud, PV, Int, Input),    SB_FIELD(Ctud, QU, Bool, Output),
    SB_FIELD(Ctud, QD, Bool, Output),   SB_FIELD(Ctud, CV, Int, Output),   SB_HIDDEN(Ctud, prevCu, Bool),
    SB_HIDDEN(Ctud, prevCd, Bool),
};
inline constexpr NativeField kSrFields[] = {
    SB_FIELD(Sr, S1, Bool, Input),
    SB_FIELD(Sr, R, Bool, Input),
    SB_FIELD(Sr, Q1, Bool, Output),
};
inline constexpr NativeField kRsFields[] = {
    SB_FIELD(Rs, S, Bool, Input),
    SB_FIELD(Rs, R1, Bool, Input),
    SB_FIELD(Rs, Q1, Bool, Output),
};

// clang-format on
#undef SB_FIELD
#undef SB_HIDDEN

}  // namespace native_layout

}  // namespace scanback
