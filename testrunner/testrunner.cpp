#include "testrunner/testrunner.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <chrono>
#include <filesystem>

#include "recorder/recorder.h"
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

namespace {

// The length of the UTF-8 sequence at text[i] when it encodes a character XML 1.0 may hold
// (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]), else 0.
size_t xmlCharLength(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return lead >= 0x20 || lead == 0x9 || lead == 0xA || lead == 0xD ? 1 : 0;
  const size_t more = lead >= 0xC2 && lead < 0xE0   ? 1
                      : lead >= 0xE0 && lead < 0xF0 ? 2
                      : lead >= 0xF0 && lead < 0xF5 ? 3
                                                    : 0;
  if (more == 0 || i + more >= text.size()) return 0;
  uint32_t cp = lead & (0x3Fu >> more);
  for (size_t k = 1; k <= more; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (next & 0x3Fu);
  }
  constexpr uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000) || cp == 0xFFFE || cp == 0xFFFF) return 0;
  return more + 1;
}

// Text as XML character data or an attribute value, valid UTF-8 and XML 1.0 whatever it holds (a
// STRING may hold any byte): a byte that is not part of a UTF-8 character XML 1.0 allows — not
// UTF-8 at all, or a control character — is written as the IEC escape $XX, two hex digits, as an
// ST string literal writes it ('$81', '$01'). Tab, line feed and carriage return stay characters.
std::string xmlEscaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default: {
        const size_t n = xmlCharLength(text, i);
        if (n == 0) {
          out += fmt::format("${:02X}", static_cast<unsigned char>(c));
          ++i;
        } else {
          out.append(text.substr(i, n));
          i += n;
        }
        continue;
      }
    }
    ++i;
  }
  return out;
}

}  // namespace

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
