// `scanback test FILES... [--filter GLOB] [--junit FILE] [--record-failures DIR]`: the project's
// unit tests (testrunner/), one line per failure and a summary on stdout.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "testrunner/testrunner.h"

namespace scanback::cli {

int testCommand(const TestArgs& args) {
  Diagnostics diagnostics;
  const SourceSet sources = loadSourceFiles(args.files, diagnostics);
  std::vector<testrunner::TestCase> tests;
  if (!diagnostics.hasErrors()) tests = testrunner::findTests(sources, diagnostics);
  if (diagnostics.hasErrors()) {
    std::cerr << diagnostics.format(sources);
    return kExitUsage;
  }
  std::vector<testrunner::TestCase> selected;
  for (const testrunner::TestCase& t : tests)
    if (testrunner::matchesFilter(args.filter, t.name)) selected.push_back(t);
  if (selected.empty()) {
    // Nothing to run is never a silent success: a mistyped filter would pass every build.
    std::cerr << (tests.empty() ? "scanback test: the files declare no TEST_PROGRAM or TEST_FUNCTION_BLOCK\n"
                                : fmt::format("scanback test: no test matches --filter '{}'\n", args.filter));
    return kExitUsage;
  }

  testrunner::RunOptions options;
  options.filter = args.filter;
  options.dialect = args.dialect;
  options.recordDir = args.recordFailures;
  options.statementBudget = args.statementBudget;
  std::vector<testrunner::TestResult> results;
  bool warned = false;
  for (const testrunner::TestCase& t : selected) {
    Diagnostics compile;
    std::optional<testrunner::TestResult> result = testrunner::runTest(sources, t, options, compile);
    // Every test compiles the same sources: their errors and warnings are shown once.
    if (!result || !warned) std::cerr << compile.format(sources);
    warned = true;
    if (!result) return kExitUsage;
    if (!result->passed) {
      std::cout << testrunner::failureLine(*result) << '\n';
      if (!result->trace.empty()) std::cerr << fmt::format("{}: recorded {}\n", t.name, result->trace);
      if (!result->traceError.empty()) std::cerr << fmt::format("{}: no recording: {}\n", t.name, result->traceError);
    }
    results.push_back(std::move(*result));
  }
  std::cout << testrunner::summaryLine(results) << '\n';
  std::cout.flush();

  if (!args.junit.empty()) {
    std::ofstream out(args.junit, std::ios::binary | std::ios::trunc);
    out << testrunner::junitXml(results);
    out.close();
    if (!out) {
      std::cerr << fmt::format("scanback test: cannot write {}\n", args.junit);
      return kExitUsage;
    }
  }
  bool allPassed = true;
  for (const testrunner::TestResult& r : results) allPassed = allPassed && r.passed;
  return allPassed ? kExitOk : kExitTestsFailed;
}

}  // namespace scanback::cli
