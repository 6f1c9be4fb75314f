// The standard function blocks' instance layouts (TON, TOF, TP, R_TRIG, F_TRIG, CTU, CTD, CTUD,
// SR, RS, and the counters over DINT, LINT, UDINT and ULINT): what the compiler declares them as and what write sets
// and the recorder size. Their bodies run in C++ (vm/exec/natives.h) over the same structs, whose natural-alignment
// layout is exactly the one the compiler gives the same fields, so an instance in the image can be read by either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
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
// The counters, over the type of PV and CV: INT for CTU, CTD and CTUD, and DINT, LINT, UDINT and
// ULINT for the CODESYS Standard library's CTU_DINT ... CTUD_ULINT.
template <class C>
struct CtuOf {
  uint8_t CU;
  uint8_t RESET;
  C PV;
  uint8_t Q;
  C CV;
  uint8_t prevCu;
};
template <class C>
struct CtdOf {
  uint8_t CD;
  uint8_t LOAD;
  C PV;
  uint8_t Q;
  C CV;
  uint8_t prevCd;
};
template <class C>
struct CtudOf {
  uint8_t CU;
  uint8_t CD;
  uint8_t RESET;
  uint8_t LOAD;
  C PV;
  uint8_t QU;
  uint8_t QD;
  C CV;
  uint8_t prevCu;
  uint8_t prevCd;
};
using Ctu = CtuOf<int16_t>;
using Ctd = CtdOf<int16_t>;
using Ctud = CtudOf<int16_t>;

// The elementary type of a counter's PV and CV.
template <class C>
constexpr TypeKind counterKind() {
  if constexpr (std::is_same_v<C, int16_t>) return TypeKind::Int;
  if constexpr (std::is_same_v<C, int32_t>) return TypeKind::DInt;
  if constexpr (std::is_same_v<C, int64_t>) return TypeKind::LInt;
  if constexpr (std::is_same_v<C, uint32_t>) return TypeKind::UDInt;
  return TypeKind::ULInt;
}
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
#define SB_COUNT(S, F, SECTION) NativeField{#F, counterKind<C>(), VarSection::SECTION, offsetof(S, F), sizeof(C), false}
template <class C>
inline constexpr NativeField kCtuFields[] = {
    SB_FIELD(CtuOf<C>, CU, Bool, Input), SB_FIELD(CtuOf<C>, RESET, Bool, Input), SB_COUNT(CtuOf<C>, PV, Input),
    SB_FIELD(CtuOf<C>, Q, Bool, Output), SB_COUNT(CtuOf<C>, CV, Output),         SB_HIDDEN(CtuOf<C>, prevCu, Bool),
};
template <class C>
inline constexpr NativeField kCtdFields[] = {
    SB_FIELD(CtdOf<C>, CD, Bool, Input), SB_FIELD(CtdOf<C>, LOAD, Bool, Input), SB_COUNT(CtdOf<C>, PV, Input),
    SB_FIELD(CtdOf<C>, Q, Bool, Output), SB_COUNT(CtdOf<C>, CV, Output),        SB_HIDDEN(CtdOf<C>, prevCd, Bool),
};
template <class C>
inline constexpr NativeField kCtudFields[] = {
    SB_FIELD(CtudOf<C>, CU, Bool, Input),   SB_FIELD(CtudOf<C>, CD, Bool, Input),  SB_FIELD(CtudOf<C>, RESET, Bool, Input),
    SB_FIELD(CtudOf<C>, LOAD, Bool, Input), SB_COUNT(CtudOf<C>, PV, Input),        SB_FIELD(CtudOf<C>, QU, Bool, Output),
    SB_FIELD(CtudOf<C>, QD, Bool, Output),  SB_COUNT(CtudOf<C>, CV, Output),       SB_HIDDEN(CtudOf<C>, prevCu, Bool),
    SB_HIDDEN(CtudOf<C>, prevCd, Bool),
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
#undef SB_COUNT

}  // namespace native_layout

}  // namespace scanback
