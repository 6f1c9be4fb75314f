// The standard function blocks implemented in C++ touch exactly their fields: an instance's
// padding bytes are never written, so the image stays a pure function of the program and its
// inputs on every build (a release build once left stack bytes in a CTU's trailing padding, and a
// trace recorded by it diverged when verified by a debug build).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vm/exec/natives.h"

namespace scanback {
namespace {

constexpr uint8_t kSentinel = 0xA5;

// A block's layout (vm/bytecode) with its body (vm/exec), by native id.
struct Native : NativeBlock {
  NativeRun run;
};
std::vector<Native> natives() {
  std::vector<Native> all;
  for (size_t id = 0; id < nativeBlocks().size(); ++id)
    all.push_back(Native{nativeBlocks()[id], nativeBodies()[id].run});
  return all;
}

TEST(NativeFunctionBlocks, EveryLayoutHasItsBodyUnderTheSameId) {
  ASSERT_EQ(nativeBodies().size(), nativeBlocks().size());
  for (size_t id = 0; id < nativeBlocks().size(); ++id) EXPECT_EQ(nativeBodies()[id].name, nativeBlocks()[id].name);
}

std::vector<bool> fieldBytes(const NativeBlock& fb) {
  std::vector<bool> covered(fb.size, false);
  for (const NativeField& f : fb.fields)
    for (uint32_t i = 0; i < f.size; ++i) covered.at(f.offset + i) = true;
  return covered;
}

TEST(NativeFunctionBlocks, FieldsLieInsideTheInstanceAndDoNotOverlap) {
  for (const Native& fb : natives()) {
    std::vector<int> owner(fb.size, -1);
    for (size_t k = 0; k < fb.fields.size(); ++k) {
      const NativeField& f = fb.fields[k];
      ASSERT_GT(f.size, 0u) << fb.name << "." << f.name;
      ASSERT_LE(f.offset + f.size, fb.size) << fb.name << "." << f.name;
      for (uint32_t i = 0; i < f.size; ++i) {
        EXPECT_EQ(owner[f.offset + i], -1) << fb.name << "." << f.name << " overlaps another field";
        owner[f.offset + i] = static_cast<int>(k);
      }
    }
  }
}

TEST(NativeFunctionBlocks, InitialBytesAreZeroOutsideFields) {
  for (const Native& fb : natives()) {
    const auto init = fb.initialBytes();
    ASSERT_EQ(init.size(), fb.size) << fb.name;
    const auto covered = fieldBytes(fb);
    for (uint32_t i = 0; i < fb.size; ++i) {
      if (!covered[i]) {
        EXPECT_EQ(init[i], 0) << fb.name << " padding byte " << i;
      }
    }
  }
}

// Every call with random inputs leaves the padding exactly as it was, and the outputs depend on
// the fields alone: the same fields with other padding give the same fields after the call.
TEST(NativeFunctionBlocks, CallsNeverWritePaddingAndIgnoreIt) {
  std::mt19937_64 random(42);
  for (const Native& fb : natives()) {
    const auto covered = fieldBytes(fb);
    std::vector<uint8_t> withSentinel(fb.initialBytes().begin(), fb.initialBytes().end());
    std::vector<uint8_t> withZeros = withSentinel;
    for (uint32_t i = 0; i < fb.size; ++i)
      if (!covered[i]) withSentinel[i] = kSentinel;
    int64_t now = 0;
    for (int call = 0; call < 500; ++call) {
      for (const NativeField& f : fb.fields) {
        if (f.section != VarSection::Input) continue;
        uint64_t value = random();
        if (f.kind == TypeKind::Bool) value &= 1;
        if (f.kind == TypeKind::Time) value %= 50'000'000;  // PT up to 50 ms
        if (f.kind == TypeKind::Int) value %= 20;
        std::memcpy(withSentinel.data() + f.offset, &value, f.size);
        std::memcpy(withZeros.data() + f.offset, &value, f.size);
      }
      now += 1'000'000 * static_cast<int64_t>(random() % 20);
      fb.run(withSentinel.data(), now);
      fb.run(withZeros.data(), now);
      for (uint32_t i = 0; i < fb.size; ++i) {
        if (covered[i]) {
          ASSERT_EQ(withSentinel[i], withZeros[i]) << fb.name << " field byte " << i << " at call " << call;
        } else {
          ASSERT_EQ(withSentinel[i], kSentinel) << fb.name << " wrote padding byte " << i << " at call " << call;
        }
      }
    }
  }
}

TEST(NativeFunctionBlocks, TimersAreDefinedForAnyStartTime) {
  // A start time corrupted in a trace's keyframe (or written by a debugger) once made TON compute
  // now - start with a signed overflow. Whatever the start, the elapsed time is within 0..PT.
  const int64_t times[] = {INT64_MIN, INT64_MIN + 1, -1'000'000'000, -1, 0, 1, 1'000'000'000, INT64_MAX - 1, INT64_MAX};
  for (const Native& fb : natives()) {
    const std::string name(fb.name);
    if (name != "TON" && name != "TOF" && name != "TP") continue;
    auto field = [&](const char* n) -> const NativeField& {
      for (const NativeField& f : fb.fields)
        if (std::string(f.name) == n) return f;
      ADD_FAILURE() << fb.name << " has no field " << n;
      return fb.fields[0];
    };
    auto put = [&](std::vector<uint8_t>& image, const char* n, int64_t v) {
      std::memcpy(image.data() + field(n).offset, &v, field(n).size);
    };
    auto get = [&](const std::vector<uint8_t>& image, const char* n) {
      int64_t v = 0;
      std::memcpy(&v, image.data() + field(n).offset, field(n).size);
      return v;
    };
    const int64_t pt = 5'000'000'000;
    for (int64_t start : times) {
      for (int64_t now : times) {
        for (int in = 0; in <= 1; ++in) {
          std::vector<uint8_t> image(fb.initialBytes().begin(), fb.initialBytes().end());
          put(image, "IN", in);
          put(image, "prevIn", in);  // no edge: the recorded start is used as it is
          put(image, "running", 1);
          put(image, "PT", pt);
          put(image, "start", start);
          fb.run(image.data(), now);
          const int64_t et = get(image, "ET");
          EXPECT_GE(et, 0) << fb.name << " start " << start << " now " << now << " IN " << in;
          EXPECT_LE(et, pt) << fb.name << " start " << start << " now " << now << " IN " << in;
          if (name == "TON" && in && start == INT64_MIN && now == INT64_MAX) {
            EXPECT_EQ(et, pt);
            EXPECT_EQ(get(image, "Q") & 1, 1);
          }
          if (name == "TON" && in && start > now) {
            EXPECT_EQ(et, 0) << "a start after now has not elapsed";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace scanback
