// Runs every program of tests/golden/ through the real `scanback run` command and compares the exit
// code, stderr and the printed final state with the hand-derived expectations.
// Format of a test: tests/golden/README.md.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/shell.h"

namespace fs = std::filesystem;
using scanback::test::readText;
using scanback::test::shellQuote;

namespace {

const fs::path kGoldenDir = fs::path(SCANBACK_SOURCE_DIR) / "tests" / "golden";

struct GoldenCase {
  std::string name;
  std::vector<fs::path> files;  // .st sources
  fs::path expectJson;          // may not exist
  fs::path dir;
};

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

std::vector<GoldenCase> discover() {
  std::vector<GoldenCase> out;
  if (!fs::exists(kGoldenDir)) return out;
  for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
    GoldenCase c;
    if (entry.is_directory()) {
      c.name = entry.path().filename().string();
      for (const auto& f : fs::directory_iterator(entry.path()))
        if (f.path().extension() == ".st") c.files.push_back(f.path());
      std::sort(c.files.begin(), c.files.end());
      c.expectJson = entry.path() / "expect.json";
      c.dir = entry.path();
    } else if (entry.path().extension() == ".st") {
      c.name = entry.path().stem().string();
      c.files.push_back(entry.path());
      c.expectJson = kGoldenDir / (c.name + ".json");
      c.dir = kGoldenDir;
    } else {
      continue;
    }
    if (!c.files.empty()) out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](const GoldenCase& a, const GoldenCase& b) { return a.name < b.name; });
  return out;
}

struct Directives {
  std::string cycles = "1";
  std::string forText;
  std::string inputs;
  int exitCode = 0;
  std::vector<std::string> stderrParts;
  bool strict = false;  // IEC's conversion rules only (--strict)
  std::string dialect;  // --dialect (empty: the default, codesys)
};

Directives readDirectives(const fs::path& first) {
  Directives d;
  std::istringstream in(readText(first));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("// @", 0) != 0) break;
    std::istringstream words(line.substr(4));
    std::string key;
    words >> key;
    std::string rest;
    std::getline(words, rest);
    rest.erase(0, rest.find_first_not_of(' '));
    while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' ')) rest.pop_back();
    if (key == "cycles")
      d.cycles = rest;
    else if (key == "for")
      d.forText = rest;
    else if (key == "inputs")
      d.inputs = rest;
    else if (key == "expect-exit")
      d.exitCode = std::stoi(rest);
    else if (key == "expect-stderr")
      d.stderrParts.push_back(rest);
    else if (key == "strict")
      d.strict = true;
    else if (key == "dialect")
      d.dialect = rest;
  }
  return d;
}

// Reals within a relative 1e-5; every other value exactly. Reports the first difference.
[[nodiscard]] bool sameJson(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& path,
                            std::string& why) {
  if (expected.is_number() && actual.is_number()) {
    const double e = expected.get<double>(), a = actual.get<double>();
    if (expected.is_number_float() || actual.is_number_float()) {
      if (std::fabs(e - a) <= 1e-5 * std::max(1.0, std::fabs(e))) return true;
    } else if (expected == actual) {
      return true;
    }
    why = path + ": expected " + expected.dump() + ", got " + actual.dump();
    return false;
  }
  if (expected.type() != actual.type()) {
    why = path + ": expected " + expected.dump() + ", got " + actual.dump();
    return false;
  }
  if (expected.is_object()) {
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      if (!actual.contains(it.key())) {
        why = path + "." + it.key() + ": missing";
        return false;
      }
      if (!sameJson(it.value(), actual[it.key()], path + "." + it.key(), why)) return false;
    }
    for (auto it = actual.begin(); it != actual.end(); ++it) {
      if (!expected.contains(it.key())) {
        why = path + "." + it.key() + ": not expected (value " + it.value().dump() + ")";
        return false;
      }
    }
    return true;
  }
  if (expected.is_array()) {
    if (expected.size() != actual.size()) {
      why = path + ": expected " + std::to_string(expected.size()) + " elements, got " + std::to_string(actual.size());
      return false;
    }
    for (size_t i = 0; i < expected.size(); ++i)
      if (!sameJson(expected[i], actual[i], path + "[" + std::to_string(i) + "]", why)) return false;
    return true;
  }
  if (expected != actual) {
    why = path + ": expected " + expected.dump() + ", got " + actual.dump();
    return false;
  }
  return true;
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, FinalStateExitCodeAndDiagnostics) {
  const GoldenCase& c = GetParam();
  const Directives d = readDirectives(c.files.front());
  std::string cmd = shellQuote(SCANBACK_BINARY) + " run --quiet --print-state";
  for (const fs::path& f : c.files) cmd += " " + shellQuote(f.string());
  if (d.strict) cmd += " --strict";
  if (!d.dialect.empty()) cmd += " --dialect " + shellQuote(d.dialect);
  if (!d.forText.empty())
    cmd += " --for " + shellQuote(d.forText);
  else
    cmd += " --cycles " + shellQuote(d.cycles);
  if (!d.inputs.empty()) cmd += " --inputs " + shellQuote((c.dir / d.inputs).string());
  const scanback::test::ShellResult run = scanback::test::runShell(cmd);
  const std::string& out = run.out;
  const std::string& err = run.err;
  EXPECT_EQ(run.exitCode, d.exitCode) << "stderr:\n" << err;
  for (const std::string& part : d.stderrParts)
    EXPECT_NE(err.find(part), std::string::npos) << "stderr lacks '" << part << "':\n" << err;
  if (fs::exists(c.expectJson)) {
    nlohmann::json expected = nlohmann::json::parse(readText(c.expectJson));
    nlohmann::json actual;
    try {
      actual = nlohmann::json::parse(out);
    } catch (const std::exception& e) {
      FAIL() << "stdout is not JSON: " << e.what() << "\n" << out << "\nstderr:\n" << err;
    }
    std::string why;
    EXPECT_TRUE(sameJson(expected, actual, c.name, why)) << why;
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, Golden, ::testing::ValuesIn(discover()),
                         [](const ::testing::TestParamInfo<GoldenCase>& testInfo) { return testInfo.param.name; });

}  // namespace
