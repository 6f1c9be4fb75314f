#include <fmt/format.h>
#include <glob.h>

#include <filesystem>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"
#include "dap/targets/live_target.h"
#include "vm/compiler/compiler.h"

namespace scanback::dap {

namespace fs = std::filesystem;

namespace {

// The files `program` names: one path, or an array of paths and glob patterns, relative to `cwd`.
std::vector<std::string> programFiles(const json& program, const fs::path& cwd) {
  std::vector<std::string> patterns;
  if (program.is_string()) {
    patterns.push_back(program.get<std::string>());
  } else if (program.is_array() && !program.empty()) {
    for (const json& p : program) {
      if (!p.is_string()) throw DapError("'program' must be a file path or an array of file paths");
      patterns.push_back(p.get<std::string>());
    }
  } else {
    throw DapError("'program' must be a file path or an array of file paths");
  }
  std::vector<std::string> files;
  for (const std::string& pattern : patterns) {
    const fs::path full = fs::path(pattern).is_absolute() ? fs::path(pattern) : cwd / pattern;
    if (pattern.find_first_of("*?[") == std::string::npos) {
      files.push_back(full.lexically_normal().string());
      continue;
    }
    glob_t matches{};
    if (::glob(full.c_str(), 0, nullptr, &matches) == 0) {
      for (size_t i = 0; i < matches.gl_pathc; ++i) files.push_back(fs::path(matches.gl_pathv[i]).lexically_normal().string());
    }
    globfree(&matches);
    if (matches.gl_pathc == 0) throw DapError(fmt::format("no file matches '{}'", pattern));
  }
  return files;
}

}  // namespace

Reply launchRequest(Session& session, const json& args) {
  if (session.launched()) throw DapError("a program is launched already");
  if (args.contains("trace") && !args.contains("program"))
    throw DapError("replaying a trace ('trace') is not supported yet: launch a 'program'");
  const fs::path cwd = optionalMember<std::string>(args, "cwd").value_or(fs::current_path().string());
  std::error_code ec;
  if (!fs::is_directory(cwd, ec)) throw DapError(fmt::format("'cwd' {} is not a directory", cwd.string()));
  if (!args.contains("program")) throw DapError("missing argument 'program' (the ST file, or an array of files)");
  const std::vector<std::string> files = programFiles(args["program"], cwd);

  Diagnostics diagnostics;
  SourceSet sources = loadSourceFiles(files, diagnostics);
  std::shared_ptr<const Program> program;
  if (!diagnostics.hasErrors()) program = compileProject(sources, diagnostics);
  if (!program) {
    const std::string text = diagnostics.format(sources);
    session.output("stderr", text);
    throw DapError(fmt::format("the program does not compile:\n{}", text));
  }
  if (!diagnostics.items().empty()) session.output("console", diagnostics.format(sources));

  LiveOptions options;
  if (const auto cycles = optionalMember<int64_t>(args, "cycles")) {
    if (*cycles < 0) throw DapError("'cycles' must not be negative");
    options.cycles = static_cast<uint64_t>(*cycles);
  }
  options.realtime = optionalMember<bool>(args, "realtime").value_or(true);
  if (const auto inputs = optionalMember<std::string>(args, "inputs")) {
    const fs::path path = fs::path(*inputs).is_absolute() ? fs::path(*inputs) : cwd / *inputs;
    std::string error;
    options.stimulus = Stimulus::load(path.string(), *program, error);
    if (!options.stimulus) throw DapError(fmt::format("'inputs': {}", error));
  }
  session.stopOnEntry = optionalMember<bool>(args, "stopOnEntry").value_or(false);
  session.setTarget(std::make_unique<LiveTarget>(program, std::move(options), session.targetListener()),
                    cwd.string());
  session.applyStops();
  // Ready for configuration requests (breakpoints resolve against this program): `initialized`.
  return Reply{json(), [&session] { session.sendEvent("initialized"); }};
}

}  // namespace scanback::dap
