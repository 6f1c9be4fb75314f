#include "vm/exec/natives.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <utility>

namespace scanback {
namespace {

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

constexpr NativeField kTimerFields[] = {
    SB_FIELD(Timer, IN, Bool, Input),   SB_FIELD(Timer, PT, Time, Input),  SB_FIELD(Timer, Q, Bool, Output),
    SB_FIELD(Timer, ET, Time, Output),  SB_HIDDEN(Timer, prevIn, Bool),    SB_HIDDEN(Timer, running, Bool),
    SB_HIDDEN(Timer, start, Time),
};
constexpr NativeField kTrigFields[] = {
    SB_FIELD(Trig, CLK, Bool, Input),
    SB_FIELD(Trig, Q, Bool, Output),
    SB_HIDDEN(Trig, M, Bool),
};
constexpr NativeField kCtuFields[] = {
    SB_FIELD(Ctu, CU, Bool, Input), SB_FIELD(Ctu, RESET, Bool, Input), SB_FIELD(Ctu, PV, Int, Input),
    SB_FIELD(Ctu, Q, Bool, Output), SB_FIELD(Ctu, CV, Int, Output),     SB_HIDDEN(Ctu, prevCu, Bool),
};
constexpr NativeField kCtdFields[] = {
    SB_FIELD(Ctd, CD, Bool, Input), SB_FIELD(Ctd, LOAD, Bool, Input), SB_FIELD(Ctd, PV, Int, Input),
    SB_FIELD(Ctd, Q, Bool, Output), SB_FIELD(Ctd, CV, Int, Output),    SB_HIDDEN(Ctd, prevCd, Bool),
};
constexpr NativeField kCtudFields[] = {
    SB_FIELD(Ctud, CU, Bool, Input),    SB_FIELD(Ctud, CD, Bool, Input),   SB_FIELD(Ctud, RESET, Bool, Input),
    SB_FIELD(Ctud, LOAD, Bool, Input),  SB_FIELD(Ctud, PV, Int, Input),    SB_FIELD(Ctud, QU, Bool, Output),
    SB_FIELD(Ctud, QD, Bool, Output),   SB_FIELD(Ctud, CV, Int, Output),   SB_HIDDEN(Ctud, prevCu, Bool),
    SB_HIDDEN(Ctud, prevCd, Bool),
};
constexpr NativeField kSrFields[] = {
    SB_FIELD(Sr, S1, Bool, Input),
    SB_FIELD(Sr, R, Bool, Input),
    SB_FIELD(Sr, Q1, Bool, Output),
};
constexpr NativeField kRsFields[] = {
    SB_FIELD(Rs, S, Bool, Input),
    SB_FIELD(Rs, R1, Bool, Input),
    SB_FIELD(Rs, Q1, Bool, Output),
};

// The field tables as constant expressions, so that every field's copy below has a constant
// size and is inlined (a call to memcpy per field was a sixth of the plant benchmark's VM time).
template <class T>
constexpr const auto& fieldsOf();
template <>
constexpr const auto& fieldsOf<Timer>() { return kTimerFields; }
template <>
constexpr const auto& fieldsOf<Trig>() { return kTrigFields; }
template <>
constexpr const auto& fieldsOf<Ctu>() { return kCtuFields; }
template <>
constexpr const auto& fieldsOf<Ctd>() { return kCtdFields; }
template <>
constexpr const auto& fieldsOf<Ctud>() { return kCtudFields; }
template <>
constexpr const auto& fieldsOf<Sr>() { return kSrFields; }
template <>
constexpr const auto& fieldsOf<Rs>() { return kRsFields; }

template <class T, size_t... I>
void loadFields(T& v, const uint8_t* p, std::index_sequence<I...>) {
  constexpr const auto& f = fieldsOf<T>();
  (std::memcpy(reinterpret_cast<uint8_t*>(&v) + f[I].offset, p + f[I].offset, f[I].size), ...);
}
template <class T, size_t... I>
void storeFields(uint8_t* p, const T& v, std::index_sequence<I...>) {
  constexpr const auto& f = fieldsOf<T>();
  (std::memcpy(p + f[I].offset, reinterpret_cast<const uint8_t*>(&v) + f[I].offset, f[I].size), ...);
}

// An instance is read into its struct field by field and written back the same way: the struct's
// padding is never copied into the image, because an optimising compiler may rebuild the struct
// from registers and leave anything in its padding. The image must be a pure function of the
// program and its scan inputs on every build (docs/architecture.md, determinism).
template <class T>
T load(const uint8_t* p) {
  T v{};
  loadFields(v, p, std::make_index_sequence<std::size(fieldsOf<T>())>{});
  return v;
}
template <class T>
void store(uint8_t* p, const T& v) {
  storeFields(p, v, std::make_index_sequence<std::size(fieldsOf<T>())>{});
}

// The time since `start`: 0 when start is not before now, INT64_MAX when the difference does not
// fit. On a recorded history start <= now always holds; a start time corrupted in a trace or
// written by a debugger must still give a defined result, never a signed overflow.
int64_t elapsedSince(int64_t start, int64_t now) {
  if (start >= now) return 0;
  const uint64_t d = static_cast<uint64_t>(now) - static_cast<uint64_t>(start);
  return d > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(d);
}

void runTon(uint8_t* p, int64_t now) {
  auto s = load<Timer>(p);
  if (s.IN) {
    if (!s.prevIn) s.start = now;
    s.ET = std::min(elapsedSince(s.start, now), s.PT);
    s.Q = s.ET >= s.PT;
  } else {
    s.Q = 0;
    s.ET = 0;
  }
  s.prevIn = s.IN;
  store(p, s);
}

void runTof(uint8_t* p, int64_t now) {
  auto s = load<Timer>(p);
  if (s.IN) {
    s.Q = 1;
    s.ET = 0;
    s.running = 0;
  } else {
    if (s.prevIn) {
      s.start = now;
      s.running = 1;
    }
    if (s.running) {
      s.ET = std::min(elapsedSince(s.start, now), s.PT);
      s.Q = s.ET < s.PT;
      if (!s.Q) s.running = 0;
    }
  }
  s.prevIn = s.IN;
  store(p, s);
}

void runTp(uint8_t* p, int64_t now) {
  auto s = load<Timer>(p);
  if (!s.running && s.IN && !s.prevIn && s.ET == 0) {
    s.running = 1;
    s.start = now;
  }
  if (s.running) {
    s.ET = elapsedSince(s.start, now);
    if (s.ET >= s.PT) {
      s.ET = s.PT;
      s.running = 0;
    }
  }
  s.Q = s.running;
  if (!s.running && !s.IN) s.ET = 0;
  s.prevIn = s.IN;
  store(p, s);
}

void runRTrig(uint8_t* p, int64_t) {
  auto s = load<Trig>(p);
  s.Q = s.CLK && !s.M;
  s.M = s.CLK;
  store(p, s);
}

void runFTrig(uint8_t* p, int64_t) {
  auto s = load<Trig>(p);
  s.Q = !s.CLK && !s.M;
  s.M = !s.CLK;
  store(p, s);
}

void runCtu(uint8_t* p, int64_t) {
  auto s = load<Ctu>(p);
  if (s.RESET)
    s.CV = 0;
  else if (s.CU && !s.prevCu && s.CV < INT16_MAX)
    ++s.CV;
  s.Q = s.CV >= s.PV;
  s.prevCu = s.CU;
  store(p, s);
}

void runCtd(uint8_t* p, int64_t) {
  auto s = load<Ctd>(p);
  if (s.LOAD)
    s.CV = s.PV;
  else if (s.CD && !s.prevCd && s.CV > INT16_MIN)
    --s.CV;
  s.Q = s.CV <= 0;
  s.prevCd = s.CD;
  store(p, s);
}

void runCtud(uint8_t* p, int64_t) {
  auto s = load<Ctud>(p);
  if (s.RESET) {
    s.CV = 0;
  } else if (s.LOAD) {
    s.CV = s.PV;
  } else {
    if (s.CU && !s.prevCu && s.CV < INT16_MAX) ++s.CV;
    if (s.CD && !s.prevCd && s.CV > INT16_MIN) --s.CV;
  }
  s.QU = s.CV >= s.PV;
  s.QD = s.CV <= 0;
  s.prevCu = s.CU;
  s.prevCd = s.CD;
  store(p, s);
}

void runSr(uint8_t* p, int64_t) {
  auto s = load<Sr>(p);
  s.Q1 = s.S1 || (!s.R && s.Q1);
  store(p, s);
}

void runRs(uint8_t* p, int64_t) {
  auto s = load<Rs>(p);
  s.Q1 = !s.R1 && (s.S || s.Q1);
  store(p, s);
}

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

#define SB_NATIVE(NAME, S, FIELDS, RUN, INIT) \
  NativeFbInfo { NAME, sizeof(S), alignof(S), FIELDS, RUN, INIT }

const NativeFbInfo kNatives[] = {
    SB_NATIVE("TON", Timer, kTimerFields, runTon, zeroBytes<Timer>),
    SB_NATIVE("TOF", Timer, kTimerFields, runTof, zeroBytes<Timer>),
    SB_NATIVE("TP", Timer, kTimerFields, runTp, zeroBytes<Timer>),
    SB_NATIVE("R_TRIG", Trig, kTrigFields, runRTrig, zeroBytes<Trig>),
    SB_NATIVE("F_TRIG", Trig, kTrigFields, runFTrig, fTrigInit),
    SB_NATIVE("CTU", Ctu, kCtuFields, runCtu, zeroBytes<Ctu>),
    SB_NATIVE("CTD", Ctd, kCtdFields, runCtd, zeroBytes<Ctd>),
    SB_NATIVE("CTUD", Ctud, kCtudFields, runCtud, zeroBytes<Ctud>),
    SB_NATIVE("SR", Sr, kSrFields, runSr, zeroBytes<Sr>),
    SB_NATIVE("RS", Rs, kRsFields, runRs, zeroBytes<Rs>),
};

}  // namespace

std::span<const NativeFbInfo> nativeFunctionBlocks() { return kNatives; }

std::vector<uint32_t> nativeInstanceSizes() {
  std::vector<uint32_t> sizes;
  for (const NativeFbInfo& n : kNatives) sizes.push_back(n.size);
  return sizes;
}

}  // namespace scanback
