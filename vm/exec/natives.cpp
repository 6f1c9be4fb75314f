#include "vm/exec/natives.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>

namespace scanback {
namespace {

using namespace native_layout;

// clang-format off
// The field tables as constant expressions, so that every field's copy below has a constant
// size and is inlined (a call to memcpy per field was a sixth of the plant benchmark's VM time).
template <class T>
struct Fields;
template <>
struct Fields<Timer> { static constexpr const auto& get() { return kTimerFields; } };
template <>
struct Fields<Trig> { static constexpr const auto& get() { return kTrigFields; } };
template <class C>
struct Fields<CtuOf<C>> { static constexpr const auto& get() { return kCtuFields<C>; } };
template <class C>
struct Fields<CtdOf<C>> { static constexpr const auto& get() { return kCtdFields<C>; } };
template <class C>
struct Fields<CtudOf<C>> { static constexpr const auto& get() { return kCtudFields<C>; } };
template <>
struct Fields<Sr> { static constexpr const auto& get() { return kSrFields; } };
template <>
struct Fields<Rs> { static constexpr const auto& get() { return kRsFields; } };
template <class T>
constexpr const auto& fieldsOf() { return Fields<T>::get(); }

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

// A counter stops at its type's limits (an unsigned CTD at 0), as IEC's CTU stops at PVmax.
template <class C>
void runCtu(uint8_t* p, int64_t) {
  auto s = load<CtuOf<C>>(p);
  if (s.RESET)
    s.CV = 0;
  else if (s.CU && !s.prevCu && s.CV < std::numeric_limits<C>::max())
    ++s.CV;
  s.Q = s.CV >= s.PV;
  s.prevCu = s.CU;
  store(p, s);
}

template <class C>
void runCtd(uint8_t* p, int64_t) {
  auto s = load<CtdOf<C>>(p);
  if (s.LOAD)
    s.CV = s.PV;
  else if (s.CD && !s.prevCd && s.CV > std::numeric_limits<C>::min())
    --s.CV;
  s.Q = s.CV <= 0;
  s.prevCd = s.CD;
  store(p, s);
}

template <class C>
void runCtud(uint8_t* p, int64_t) {
  auto s = load<CtudOf<C>>(p);
  if (s.RESET) {
    s.CV = 0;
  } else if (s.LOAD) {
    s.CV = s.PV;
  } else {
    if (s.CU && !s.prevCu && s.CV < std::numeric_limits<C>::max()) ++s.CV;
    if (s.CD && !s.prevCd && s.CV > std::numeric_limits<C>::min()) --s.CV;
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

// clang-format on

// By native id: in the order of nativeBlocks() (vm/bytecode/native_blocks.cpp), which
// natives_test checks by name.
const NativeBody kBodies[] = {
    {"TON", runTon},
    {"TOF", runTof},
    {"TP", runTp},
    {"R_TRIG", runRTrig},
    {"F_TRIG", runFTrig},
    {"CTU", runCtu<int16_t>},
    {"CTD", runCtd<int16_t>},
    {"CTUD", runCtud<int16_t>},
    {"SR", runSr},
    {"RS", runRs},
#define SB_COUNTER_BODIES(SUFFIX, C) \
  {"CTU_" SUFFIX, runCtu<C>}, {"CTD_" SUFFIX, runCtd<C>}, { "CTUD_" SUFFIX, runCtud<C> }
    SB_COUNTER_BODIES("DINT", int32_t),
    SB_COUNTER_BODIES("LINT", int64_t),
    SB_COUNTER_BODIES("UDINT", uint32_t),
    SB_COUNTER_BODIES("ULINT", uint64_t),
#undef SB_COUNTER_BODIES
};

}  // namespace

std::span<const NativeBody> nativeBodies() { return kBodies; }

}  // namespace scanback
