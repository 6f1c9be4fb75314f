#include "dap/protocol/arguments.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace scanback::dap {

namespace fs = std::filesystem;

namespace {

// `cwd` as given, when it names a directory (DapError when it does not).
std::optional<std::string> cwdArgument(const json& args) {
  std::optional<std::string> cwd = optionalMember<std::string>(args, "cwd");
  std::error_code ec;
  if (cwd && !fs::is_directory(*cwd, ec)) throw DapError(fmt::format("'cwd' {} is not a directory", *cwd));
  return cwd;
}

// `startAt`: "end" (the default), "start", or a cycle number.
StartAt startAtArgument(const json& args) {
  StartAt at;
  if (!args.contains("startAt")) return at;
  const json& value = args["startAt"];
  if (value == "end") return at;
  if (value == "start") {
    at.kind = StartAt::Kind::Start;
    return at;
  }
  if (value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0)) {
    at.kind = StartAt::Kind::Cycle;
    at.cycle = value.get<uint64_t>();
    return at;
  }
  throw DapError(fmt::format("'startAt' must be \"end\", \"start\" or a cycle number, not {}", value.dump()));
}

// `record`: a trace path, true (the default: a temporary trace) or false (no history).
RecordArgument recordArgument(const json& args) {
  RecordArgument record;
  const json value = args.contains("record") ? args["record"] : json(true);
  if (value == true) return record;
  if (value == false) {
    record.kind = RecordArgument::Kind::Off;
    return record;
  }
  if (!value.is_string() || value.get<std::string>().empty())
    throw DapError(fmt::format("'record' must be a trace path, true or false, not {}", value.dump()));
  record.kind = RecordArgument::Kind::Path;
  record.path = value.get<std::string>();
  return record;
}

}  // namespace

std::vector<std::string> readProgramArgument(const json& program) {
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
  return patterns;
}

LaunchArguments readLaunchArguments(const json& args) {
  // Fieldbus I/O is the runtime host's (runtime/io), a layer above the debug adapter's: a launch
  // runs the program in the adapter's own session loop, which calls no I/O driver. A runtime with
  // I/O is `scanback run`, and a debugger attaches to it (docs/fieldbus.md, "A debugger on a runtime
  // with I/O"). Said at once, rather than a session that runs without its machine.
  for (const auto& [member, option] : {std::pair{"io", "--io FILE"}, std::pair{"ioServe", "--io-serve PORT"}})
    if (args.contains(member))
      throw DapError(
          fmt::format("'{}': a launched program has no fieldbus I/O; run it as `scanback run FILES {} --control "
                      "unix:///PATH/control.sock` and attach to that endpoint (\"request\": \"attach\", \"endpoint\": "
                      "\"unix:///PATH/control.sock\"; docs/fieldbus.md)",
                      member, option));
  LaunchArguments launch;
  launch.cwd = cwdArgument(args).value_or(fs::current_path().string());
  if (args.contains("trace")) {
    if (args.contains("program"))
      throw DapError("give 'program' (run it live) or 'trace' (replay a recording), not both");
    launch.trace = optionalMember<std::string>(args, "trace");
    if (!launch.trace || launch.trace->empty()) throw DapError("'trace' must be the path of a trace file");
    launch.startAt = startAtArgument(args);
    launch.sourceFolders =
        optionalMember<std::vector<std::string>>(args, "sourceFolders").value_or(std::vector<std::string>{});
    launch.sourceScheme = optionalMember<std::string>(args, "sourceScheme").value_or("");
    // A URI scheme: a letter, then letters, digits, '+', '-' or '.' (RFC 3986).
    if (!launch.sourceScheme.empty() && (!std::isalpha(static_cast<unsigned char>(launch.sourceScheme[0])) ||
                                         !std::ranges::all_of(launch.sourceScheme, [](char c) {
                                           return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' ||
                                                  c == '.';
                                         })))
      throw DapError(fmt::format("'sourceScheme' must be a URI scheme (letters, digits, '+', '-', '.'), not '{}'",
                                 launch.sourceScheme));
    return launch;
  }
  if (!args.contains("program"))
    throw DapError("missing argument 'program' (the ST file, or an array of files) or 'trace' (a recording to replay)");
  launch.program = readProgramArgument(args["program"]);
  if (const std::optional<int64_t> cycles = optionalMember<int64_t>(args, "cycles")) {
    if (*cycles < 0) throw DapError("'cycles' must not be negative");
    launch.cycles = static_cast<uint64_t>(*cycles);
  }
  launch.realtime = optionalMember<bool>(args, "realtime").value_or(true);
  launch.inputs = optionalMember<std::string>(args, "inputs");
  launch.record = recordArgument(args);
  launch.keepTrace = optionalMember<bool>(args, "keepTrace").value_or(false);
  launch.nonstop = optionalMember<bool>(args, "nonstop").value_or(false);
  if (launch.nonstop && launch.record.kind == RecordArgument::Kind::Off)
    throw DapError("'nonstop' works on the recorded history: it cannot be combined with 'record': false");
  launch.stopOnEntry = optionalMember<bool>(args, "stopOnEntry").value_or(false);
  if (const std::optional<std::string> dialect = optionalMember<std::string>(args, "dialect")) {
    const std::optional<Dialect> d = parseDialect(*dialect);
    if (!d) throw DapError(fmt::format("'dialect' is codesys, iec or rusty, not '{}'", *dialect));
    launch.dialect = *d;
  }
  return launch;
}

AttachArguments readAttachArguments(const json& args) {
  const std::optional<std::string> endpoint = optionalMember<std::string>(args, "endpoint");
  if (!endpoint || endpoint->empty())
    throw DapError(
        "missing argument 'endpoint': the runtime's control endpoint, unix:///path.sock or "
        "tcp://127.0.0.1:PORT");
  AttachArguments attach;
  attach.cwd = cwdArgument(args);
  std::string error;
  const std::optional<control::Endpoint> parsed = control::parseEndpoint(*endpoint, error);
  if (!parsed) throw DapError(fmt::format("'endpoint': {}", error));
  attach.endpoint = *parsed;
  attach.authToken = optionalMember<std::string>(args, "authToken");
  return attach;
}

}  // namespace scanback::dap
