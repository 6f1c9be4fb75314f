#include "vm/bytecode/assertions.h"

#include <fmt/format.h>

namespace scanback {

namespace {

struct AssertSpelling {
  AssertKind kind;
  std::string_view name;
  int operands;
};

constexpr AssertSpelling kAssertions[] = {
    {AssertKind::True, "ASSERT_TRUE", 1},       {AssertKind::False, "ASSERT_FALSE", 1},
    {AssertKind::Equal, "ASSERT_EQUAL", 2},     {AssertKind::NotEqual, "ASSERT_NOT_EQUAL", 2},
    {AssertKind::Near, "ASSERT_NEAR", 3},       {AssertKind::Less, "ASSERT_LESS", 2},
    {AssertKind::Greater, "ASSERT_GREATER", 2},
};

const AssertSpelling& spelling(AssertKind kind) {
  for (const AssertSpelling& s : kAssertions)
    if (s.kind == kind) return s;
  return kAssertions[0];
}

}  // namespace

std::string_view assertName(AssertKind kind) { return spelling(kind).name; }

int assertOperandCount(AssertKind kind) { return spelling(kind).operands; }

std::optional<AssertKind> assertKindNamed(std::string_view upperName) {
  for (const AssertSpelling& s : kAssertions)
    if (s.name == upperName) return s.kind;
  return std::nullopt;
}

std::string assertionMessage(AssertKind kind, bool quoted, std::string_view expected, std::string_view actual,
                             std::string_view tolerance, char quote) {
  const std::string e = quoted ? fmt::format("{0}{1}{0}", quote, expected) : std::string(expected);
  const std::string a = quoted ? fmt::format("{0}{1}{0}", quote, actual) : std::string(actual);
  const std::string_view name = assertName(kind);
  switch (kind) {
    case AssertKind::True: return fmt::format("{} failed: expected TRUE, got FALSE", name);
    case AssertKind::False: return fmt::format("{} failed: expected FALSE, got TRUE", name);
    case AssertKind::Equal: return fmt::format("{} failed: expected {}, got {}", name, e, a);
    case AssertKind::NotEqual: return fmt::format("{} failed: expected a value other than {}, got {}", name, e, a);
    case AssertKind::Near: return fmt::format("{} failed: expected {} +/- {}, got {}", name, e, tolerance, a);
    case AssertKind::Less: return fmt::format("{} failed: expected {} < {}", name, e, a);
    case AssertKind::Greater: return fmt::format("{} failed: expected {} > {}", name, e, a);
  }
  return fmt::format("{} failed", name);
}

}  // namespace scanback
