#include "testrunner/testrunner.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <chrono>
#include <filesystem>

#include "recorder/recorder.h"
#include "vm/base/xml_text.h"
#include "vm/bytecode/assertions.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/runtime.h"
#include "vm/syntax/parser.h"

namespace scanback::testrunner {

namespace fs = std::filesystem;

std::vector<TestCase> findTests(const SourceSet& sources, Diagnostics& diagnostics) {
  std::vector<TestCase> tests;
  for (FileId id = 0; id < sources.size(); ++id) {
    const ast::CompilationUnit unit = parseFile(sources, id, diagnostics);
    for (const ast::Pou& pou : unit.pous)
      if (pou.test) tests.push_back(TestCase{pou.name, pou.span, pou.kind == ast::PouKind::FunctionBlock});
  }
  return tests;
}

bool matchesFilter(const std::string& pattern, const std::string& name) {
  return pattern.empty() || ::fnmatch(pattern.c_str(), name.c_str(), FNM_CASEFOLD) == 0;
}

namespace {

std::string locationOf(const Program& program, uint32_t statement) {
  if (statement >= program.statements.size()) return {};
  const SourceSpan& s = program.statements[statement].span;
  return fmt::format("{}:{}:{}", program.sources.file(s.file).path, s.line, s.column);
}

// The failure a faulted run is: the assertion's own message, or the fault's.
void describeFailure(const Runtime& runtime, TestResult& result) {
  const FaultInfo& fault = runtime.vm().fault();
  result.location = locationOf(runtime.program(), fault.statement);
  if (fault.code == FaultCode::AssertionFailed) {
    result.message = fault.detail;
    result.kind = result.message.substr(0, result.message.find(' '));
    return;
  }
  result.message = fmt::format("fault: {}", faultText(fault.code));
  if (!fault.detail.empty()) result.message += fmt::format(" ({})", fault.detail);
  result.kind = "fault";
}

// Runs the failing test again under the recorder: the same cycle fails at the same statement, and
// the trace ends there.
void recordFailure(const std::shared_ptr<const Program>& program, const RunOptions& options, TestResult& result) {
  std::error_code ec;
  fs::create_directories(options.recordDir, ec);
  if (ec) {
    result.traceError = fmt::format("cannot create the directory {}: {}", options.recordDir, ec.message());
    return;
  }
  const std::string path = (fs::path(options.recordDir) / traceFileName(result.test.name)).string();
  Runtime runtime(program);
  if (options.statementBudget) runtime.vm().setStatementBudget(options.statementBudget);
  recorder::RecorderOptions recording;
  recording.path = path;
  std::string error;
  std::unique_ptr<recorder::Recorder> rec = recorder::Recorder::start(runtime, recording, error);
  if (!rec) {
    result.traceError = error;
    return;
  }
  runtime.runCycle();
  if (!rec->finish(error)) {
    result.traceError = error;
    return;
  }
  result.trace = path;
}

}  // namespace

std::optional<TestResult> runTest(const SourceSet& sources, const TestCase& test, const RunOptions& options,
                                  Diagnostics& diagnostics) {
  CompileOptions compileOptions;
  compileOptions.test = test.name;
  compileOptions.dialect = options.dialect;
  const std::shared_ptr<const Program> program = compileProject(sources, diagnostics, compileOptions);
  if (!program) return std::nullopt;
  TestResult result;
  result.test = test;
  result.file = sources.file(test.span.file).path;
  const auto start = std::chrono::steady_clock::now();
  Runtime runtime(program);
  if (options.statementBudget) runtime.vm().setStatementBudget(options.statementBudget);
  const RunStatus status = runtime.runCycle();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.passed = status == RunStatus::CycleDone;
  if (result.passed) return result;
  describeFailure(runtime, result);
  if (!options.recordDir.empty()) recordFailure(program, options, result);
  return result;
}

std::string failureLine(const TestResult& result) {
  return fmt::format("{}: {}: {}", result.location, result.test.name, result.message);
}

std::string summaryLine(const std::vector<TestResult>& results) {
  size_t passed = 0;
  for (const TestResult& r : results) passed += r.passed ? 1 : 0;
  return fmt::format("{} passed, {} failed", passed, results.size() - passed);
}

std::string junitXml(const std::vector<TestResult>& results) {
  size_t failures = 0;
  double seconds = 0;
  for (const TestResult& r : results) {
    failures += r.passed ? 0 : 1;
    seconds += r.seconds;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"scanback test\" tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"{:.6f}\">\n",
                     results.size(), failures, seconds);
  out += fmt::format(
      "  <testsuite name=\"scanback test\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" time=\"{:.6f}\">\n",
      results.size(), failures, seconds);
  for (const TestResult& r : results) {
    // CI systems group test cases by class: the file's name without its extension.
    const std::string classname = fs::path(r.file).stem().string();
    out += fmt::format("    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{}\" time=\"{:.6f}\"",
                       xmlEscaped(r.test.name), xmlEscaped(classname), xmlEscaped(r.file), r.test.span.line, r.seconds);
    if (r.passed) {
      out += "/>\n";
      continue;
    }
    out += ">\n";
    std::string body = failureLine(r);
    if (!r.trace.empty()) body += "\nrecorded: " + r.trace;
    out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xmlEscaped(r.message),
                       xmlEscaped(r.kind), xmlEscaped(body));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string traceFileName(const std::string& testName) {
  std::string name;
  for (const char c : testName) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    name += keep ? c : '_';
  }
  if (name.empty() || name.front() == '.') name.insert(name.begin(), '_');
  return name + ".trace";
}

}  // namespace scanback::testrunner
