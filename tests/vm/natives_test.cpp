// The standard function blocks implemented in C++ touch exactly their fields: an instance's
// padding bytes are never written, so the image stays a pure function of the program and its
// inputs on every build (a release build once left stack bytes in a CTU's trailing padding, and a
// trace recorded by it diverged when verified by a debug build).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "vm/exec/natives.h"

namespace scanback {
namespace {

constexpr uint8_t kSentinel = 0xA5;

std::vector<bool> fieldBytes(const NativeFbInfo& fb) {
  std::vector<bool> covered(fb.size, false);
  for (const NativeField& f : fb.fields)
    for (uint32_t i = 0; i < f.size; ++i) covered.at(f.offset + i) = true;
  return covered;
}

TEST(NativeFunctionBlocks, FieldsLieInsideTheInstanceAndDoNotOverlap) {
  for (const NativeFbInfo& fb : nativeFunctionBlocks()) {
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
  for (const NativeFbInfo& fb : nativeFunctionBlocks()) {
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
  for (const NativeFbInfo& fb : nativeFunctionBlocks()) {
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

}  // namespace
}  // namespace scanback
