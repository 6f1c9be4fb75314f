// The unit test runner of `scanback test`: finds the TEST_PROGRAMs and TEST_FUNCTION_BLOCKs of a
// project, runs each on a fresh instance, and reports them as lines, JUnit XML and, for a failing
// test, a trace that ends at its failure (docs/language.md, "Unit tests").
//
// A test is one cycle of a program compiled for it (CompileOptions::test): one call of its body
// from the initial image, on the virtual clock from T#0s (ADVANCE_TIME moves it inside the
// cycle). A failed assertion faults at its statement, so it ends the test there, as any runtime
// fault does; both are the test's failure, at that statement. A recording of a failing test is
// the same cycle run again under the recorder: being deterministic, it fails at the same place,
// and the trace's last position is the failing statement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vm/compiler/compiler.h"
#include "vm/source/source.h"

namespace scanback::testrunner {

struct TestCase {
  std::string name;  // as declared
  SourceSpan span;   // the name in its declaration
  bool functionBlock = false;
};

struct TestResult {
  TestCase test;
  std::string file;  // the path of the file that declares it
  bool passed = false;
  // A failure: where (the failing statement, "file:line:col"), what ("ASSERT_EQUAL failed:
  // expected 3, got 2", or "fault: division by zero"), and its kind ("ASSERT_EQUAL" or "fault").
  std::string location;
  std::string message;
  std::string kind;
  std::string trace;       // the recording of the failure (RunOptions::recordDir), when written
  std::string traceError;  // why it could not be written
  double seconds = 0;      // wall time of the run
};

struct RunOptions {
  std::string filter;            // a glob over test names (case-insensitive); empty: every test
  std::string recordDir;         // a failing test is recorded to recordDir/<name>.trace; empty: none
  uint64_t statementBudget = 0;  // the watchdog per test (0: the VM's default)
  Dialect dialect = Dialect::Codesys;
};

// The test POUs of the sources, in file order and declaration order. Syntax errors go to
// `diagnostics` (the list is then incomplete).
std::vector<TestCase> findTests(const SourceSet& sources, Diagnostics& diagnostics);

// Whether `name` matches the glob `pattern` (`*`, `?`, `[...]`), ignoring case.
bool matchesFilter(const std::string& pattern, const std::string& name);

// Compiles the sources for `test` and runs it. Nullopt when it does not compile (the errors are in
// `diagnostics`, warnings too).
[[nodiscard]] std::optional<TestResult> runTest(const SourceSet& sources, const TestCase& test,
                                                const RunOptions& options, Diagnostics& diagnostics);

// "file:line:col: Name: ASSERT_EQUAL failed: expected 3, got 2".
std::string failureLine(const TestResult& result);
// "N passed, M failed".
std::string summaryLine(const std::vector<TestResult>& results);
// JUnit XML: one <testsuite> holding one <testcase> per result, a <failure> for each failure.
std::string junitXml(const std::vector<TestResult>& results);
// The file name of a test's recording: its name with anything but letters, digits, '_', '-' and
// '.' replaced by '_', then ".trace".
std::string traceFileName(const std::string& testName);

}  // namespace scanback::testrunner
