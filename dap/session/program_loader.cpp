#include "dap/session/program_loader.h"

#include <fmt/format.h>
#include <glob.h>

#include "dap/session/session.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/runtime.h"

namespace scanback::dap {

namespace fs = std::filesystem;

namespace {

// The files `patterns` name (paths and glob patterns, relative to `cwd`).
std::vector<std::string> programFiles(const std::vector<std::string>& patterns, const fs::path& cwd) {
  std::vector<std::string> files;
  for (const std::string& pattern : patterns) {
    const fs::path full = fs::path(pattern).is_absolute() ? fs::path(pattern) : cwd / pattern;
    if (pattern.find_first_of("*?[") == std::string::npos) {
      files.push_back(full.lexically_normal().string());
      continue;
    }
    glob_t matches{};
    if (::glob(full.c_str(), 0, nullptr, &matches) == 0) {
      for (size_t i = 0; i < matches.gl_pathc; ++i)
        files.push_back(fs::path(matches.gl_pathv[i]).lexically_normal().string());
    }
    globfree(&matches);
    if (matches.gl_pathc == 0) throw DapError(fmt::format("no file matches '{}'", pattern));
  }
  return files;
}

}  // namespace

std::shared_ptr<const Program> compileProgramArgument(Session& session, const std::vector<std::string>& program,
                                                      const fs::path& cwd, Dialect dialect) {
  const std::vector<std::string> files = programFiles(program, cwd);
  Diagnostics diagnostics;
  SourceSet sources = loadSourceFiles(files, diagnostics);
  std::shared_ptr<const Program> compiled;
  CompileOptions options;
  options.dialect = dialect;
  if (!diagnostics.hasErrors()) compiled = compileProject(sources, diagnostics, options);
  if (compiled && !checkSchedule(*compiled, diagnostics)) compiled = nullptr;
  if (!compiled) {
    const std::string text = diagnostics.format(sources);
    session.output("stderr", text);
    // Each diagnostic also as data, so that a client can put them where its user looks for errors
    // (the VS Code extension: Problems, docs/extension.md).
    json list = json::array();
    for (const Diagnostic& d : diagnostics.items()) {
      if (d.severity == Severity::Note || !d.span.valid() || d.span.file >= sources.size()) continue;
      const uint32_t endLine = d.span.endLine ? d.span.endLine : d.span.line;
      const uint32_t endColumn = d.span.endLine ? d.span.endColumn : d.span.column;
      list.push_back(json{{"path", sources.file(d.span.file).path},
                          {"line", session.lineOut(d.span.line)},
                          {"column", session.columnOut(d.span.column)},
                          {"endLine", session.lineOut(endLine)},
                          {"endColumn", session.columnOut(endColumn)},
                          {"severity", d.severity == Severity::Error ? "error" : "warning"},
                          {"message", d.message}});
    }
    throw DapError(fmt::format("the program does not compile:\n{}", text), json{{"diagnostics", std::move(list)}});
  }
  if (!diagnostics.items().empty()) session.output("console", diagnostics.format(sources));
  return compiled;
}

Stimulus loadInputsArgument(const std::string& inputs, const fs::path& cwd, const Program& program) {
  const fs::path path = fs::path(inputs).is_absolute() ? fs::path(inputs) : cwd / inputs;
  std::string error;
  std::optional<Stimulus> stimulus = Stimulus::load(path.string(), program, error);
  if (!stimulus) throw DapError(fmt::format("'inputs': {}", error));
  return std::move(*stimulus);
}

}  // namespace scanback::dap
