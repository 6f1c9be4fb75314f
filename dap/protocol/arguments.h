// The arguments of `launch` and `attach` as typed structs, read and checked in one place: the
// handlers (dap/handlers/launch.cpp, attach.cpp) and the session (stReload's defaults) read these,
// never the raw JSON. Members DAP or a client adds that scanback does not know (`type`, `name`,
// `request`, `noDebug`, `__sessionId`, ...) are accepted and ignored. A member of the wrong type is
// an ArgumentError naming it and the type it must have ("'cycles' must be an integer, not \"x\"").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control/endpoint.h"
#include "dap/protocol/protocol.h"
#include "vm/compiler/compiler.h"

namespace scanback::dap {

// Where a replay session stops first (`startAt`): the recording's end, its start, or a cycle.
struct StartAt {
  enum class Kind { End, Start, Cycle };
  Kind kind = Kind::End;
  uint64_t cycle = 0;
};

// What a live session records (`record`): a temporary trace (true, the default), nothing (false),
// or the trace at `path`.
struct RecordArgument {
  enum class Kind { Temporary, Off, Path };
  Kind kind = Kind::Temporary;
  std::string path;  // Path: as given (relative to the cwd)
};

struct LaunchArguments {
  // The directory relative paths are taken from: `cwd`, or the adapter's working directory.
  std::string cwd;
  // A replay session: the trace to replay (as given), and where it stops first. Only `cwd`, `trace`
  // and `startAt` are read then; `program` is refused.
  std::optional<std::string> trace;
  StartAt startAt;
  // A replay session: folders where a source not at its recorded path is looked for by name and
  // text (`sourceFolders`), and the URI scheme that names one found nowhere (`sourceScheme`,
  // dap/session/sources.h).
  std::vector<std::string> sourceFolders;
  std::string sourceScheme;
  // A live session: the ST files (paths and glob patterns, as given) and how it runs.
  std::vector<std::string> program;
  std::optional<uint64_t> cycles;     // stop after this many cycles
  bool realtime = true;               // pace cycles by their task intervals
  std::optional<std::string> inputs;  // a stimulus file
  RecordArgument record;
  bool keepTrace = false;  // keep a temporary trace after the session
  bool nonstop = false;    // the task never halts: the session follows its recording
  bool stopOnEntry = false;
  Dialect dialect = Dialect::Codesys;  // where CODESYS, IEC and ruSTy disagree (`scanback run --dialect`)
  bool replay() const { return trace.has_value(); }
};

// Reads `launch`'s arguments (an object; the session refuses anything else). DapError saying
// what is wrong: `trace` and `program` together, neither, `cwd` not a directory, a member of the
// wrong type, `io` or `ioServe` (fieldbus I/O is `scanback run`'s: the error says to attach to it).
// `authToken` is not kept: the session checks it before.
LaunchArguments readLaunchArguments(const json& args);

struct AttachArguments {
  control::Endpoint endpoint;            // the runtime's control endpoint
  std::optional<std::string> cwd;        // as given (a directory)
  std::optional<std::string> authToken;  // the runtime's token (also this adapter's, on TCP)
};

// Reads `attach`'s arguments. DapError when `endpoint` is missing or no endpoint, `cwd` no
// directory, or a member of the wrong type.
AttachArguments readAttachArguments(const json& args);

// `program` (of launch and stReload): one file path, or a non-empty array of paths and glob
// patterns. DapError otherwise.
std::vector<std::string> readProgramArgument(const json& program);

}  // namespace scanback::dap
