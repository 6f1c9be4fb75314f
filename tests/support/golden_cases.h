// The golden programs of tests/golden (tests/golden/README.md) as test cases: each program's files
// and directives, and the cycles a run of it covers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/trace_support.h"
#include "vm/runtime/runtime.h"

namespace scanback::test {

struct GoldenCase {
  std::string name;
  std::vector<std::string> files;
  uint64_t cycles = 1;
  int64_t forNs = -1;  // `@for`: every cycle released before this virtual time (-1: `@cycles`)
  std::string inputs;
  int expectExit = 0;
  CompileOptions options;  // `@dialect`
};

inline std::vector<GoldenCase> goldenCases() {
  const std::filesystem::path dir = std::filesystem::path(SCANBACK_SOURCE_DIR) / "tests" / "golden";
  std::vector<GoldenCase> cases;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    GoldenCase c;
    c.name = e.path().stem().string();
    if (e.is_directory()) {
      c.files = stFilesIn(e.path());
    } else if (e.path().extension() == ".st") {
      c.files.push_back(e.path().string());
    }
    if (c.files.empty()) continue;
    std::ifstream in(c.files.front());
    std::string line;
    while (std::getline(in, line) && line.rfind("// @", 0) == 0) {
      std::istringstream words(line.substr(4));
      std::string key, value;
      words >> key >> value;
      if (key == "cycles") c.cycles = std::stoull(value);
      if (key == "inputs") c.inputs = (std::filesystem::path(c.files.front()).parent_path() / value).string();
      if (key == "expect-exit") c.expectExit = std::stoi(value);
      if (key == "dialect") c.options.dialect = parseDialect(value).value_or(Dialect::Codesys);
      if (key == "for") {
        const size_t digits = value.find_first_not_of("0123456789");
        const int64_t n = std::stoll(value.substr(0, digits));
        const std::string unit = value.substr(digits);
        c.forNs = n * (unit == "ms" ? 1'000'000 : unit == "s" ? 1'000'000'000 : unit == "us" ? 1'000 : 1);
      }
    }
    cases.push_back(c);
  }
  std::sort(cases.begin(), cases.end(), [](const GoldenCase& a, const GoldenCase& b) { return a.name < b.name; });
  return cases;
}

// The cycles a run of `c` covers: `@cycles`, or every cycle released before `@for`'s time.
inline uint64_t goldenCycles(const GoldenCase& c, std::shared_ptr<const Program> program) {
  if (c.forNs < 0) return c.cycles;
  Runtime probe(program);
  uint64_t cycles = 0;
  while (probe.nextCycle().startNs < c.forNs) {
    probe.runCycle();
    ++cycles;
  }
  return cycles;
}

}  // namespace scanback::test
