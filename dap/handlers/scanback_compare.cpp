#include <fmt/format.h>

#include <filesystem>

#include "compare/trace_diff.h"
#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"

namespace scanback::dap {

// scanback/compare (docs/extension.md, docs/compare.md): the session's recording compared with
// another, as `scanback trace diff --json` compares them; the body is the same object. `trace` is
// the other recording (relative to the session's directory); `sessionIs` says which side the
// session's recording is: "a" (the default: the session's recording is A, `trace` B) or "b" (the
// rerun of a recording is opened as B, the recording it reran is A: A before, B after). `vars`:
// paths and globs as `trace diff --vars` takes them; `outputs`: the outputs alone. The session's
// position does not move; the extension seeks to the first divergence with scanback/seek.
Reply compareRequest(Session& session, const json& args) {
  const std::optional<std::string> trace = optionalMember<std::string>(args, "trace");
  if (!trace || trace->empty()) throw DapError("scanback/compare needs 'trace': the recording to compare with");
  const std::string sessionIs = optionalMember<std::string>(args, "sessionIs").value_or("a");
  if (sessionIs != "a" && sessionIs != "b")
    throw DapError(fmt::format("scanback/compare: 'sessionIs' is \"a\" or \"b\", not \"{}\"", sessionIs));
  compare::DiffOptions options;
  if (args.is_object() && args.contains("vars")) {
    if (!args["vars"].is_array()) throw DapError("scanback/compare: 'vars' must be a list of paths and globs");
    for (const json& v : args["vars"]) {
      if (!v.is_string() || v.get<std::string>().empty())
        throw DapError("scanback/compare: every entry of 'vars' must be a path or a glob");
      options.choice.vars += (options.choice.vars.empty() ? "" : ",") + v.get<std::string>();
    }
  }
  options.choice.outputs = optionalMember<bool>(args, "outputs").value_or(false);

  const std::string own = historyOf(session.target()).traceFile();
  if (own.empty()) throw DapError("scanback/compare: this session's history is not in a trace file");
  std::filesystem::path other(*trace);
  if (other.is_relative() && !session.baseDirectory().empty()) other = session.baseDirectory() / other;
  const std::string a = sessionIs == "a" ? own : other.string();
  const std::string b = sessionIs == "a" ? other.string() : own;
  compare::DiffReport report;
  std::string error;
  // A diff reads both traces whole on two threads of its own (seconds for a million cycles); the
  // session's reader and position are not touched.
  if (!compare::diffTraces(a, b, options, report, error)) throw DapError("scanback/compare: " + error);
  json body = compare::diffToJson(report);
  body["sessionIs"] = sessionIs;
  return Reply{std::move(body)};
}

}  // namespace scanback::dap
