// The subcommands of `scanback`, one function each; cli/main.cpp parses arguments into these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vm/bytecode/program.h"
#include "vm/compiler/compiler.h"

namespace scanback::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCompile = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitFault = 3;
inline constexpr int kExitDivergence = 4;
// `trace verify`: part of the trace is missing, repeated or unreadable, so not all of it was checked.
inline constexpr int kExitDamaged = 5;
// Every command: memory ran out (kExitOutOfMemory = 6, vm/base/out_of_memory.h; cli/main.cpp).
// `scanback test`: a test failed (compile and usage errors are kExitUsage there).
inline constexpr int kExitTestsFailed = 1;
// `scanback trace diff`: the traces differ (0: equal, kExitUsage: bad input).
inline constexpr int kExitDifferent = 1;

// Connections served at once by default (--max-connections): a runtime's control endpoint (ctl,
// HMIs polling status, attached debuggers) and `scanback dap --port/--socket` (a developer's few
// sessions). Beyond, the oldest connection still in its handshake is closed, or the new one refused.
inline constexpr size_t kControlMaxConnections = 32;
inline constexpr size_t kDapMaxConnections = 16;

struct RunArgs {
  std::vector<std::string> files;
  bool strict = false;  // IEC's conversion rules only
  Dialect dialect = Dialect::Codesys;
  std::optional<uint64_t> cycles;
  std::string forText;
  std::string inputs;
  bool printState = false;
  bool realtime = false;
  std::optional<int> scanPriority;  // --scan-priority: SCHED_FIFO for the scan thread
  bool quiet = false;
  uint64_t statementBudget = 0;
  // recording
  std::string record;
  uint32_t keyframeEvery = 1000;
  int zstdLevel = 3;
  bool noStatements = false;
  std::string ring;               // "64MB" or "10min"
  std::string flushEvery = "1s";  // the flush window ("0": off)
  uint32_t flushCycles = 0;       // and at most this many cycles a block (0: off)
  bool noFsync = false;
  // control endpoint (control/)
  std::string control;        // unix:///path.sock or tcp://127.0.0.1:PORT; empty: none
  std::string controlBind;    // a tcp endpoint's interface (default 127.0.0.1)
  std::string controlGroup;   // a unix endpoint's group: its members connect too (mode 0660)
  std::string authTokenFile;  // control connections must present its token
  bool allowNoToken = false;  // a tcp:// endpoint without a token (loopback only)
  size_t maxConnections = kControlMaxConnections;
  bool noDebug = false;  // status, snapshot and stop only: attach is refused
  std::string io;        // the I/O configuration (runtime/io/config.h, docs/fieldbus.md); empty: none
  // Modbus TCP server (runtime/io/modbus_server.h, docs/fieldbus-server.md)
  std::optional<uint16_t> ioServe;  // --io-serve [PORT]: 1502 without a port, 0 any
  std::string ioBind = "127.0.0.1";
  size_t ioMaxConnections = 8;
};

// `scanback ctl ENDPOINT [--auth-token-file FILE] status [--json] | snapshot FILE | stop | pause | resume`
// (cli/ctl_command.cpp): exit 0, or kExitUsage for usage, connection and authentication errors.
struct CtlArgs {
  std::string endpoint;
  std::string authTokenFile;
  enum class Action { Status, Snapshot, Stop, Pause, Resume, Force, Release, Forced } action = Action::Status;
  bool json = false;
  std::string snapshotPath;
  std::string target;  // force, release (release: empty for every force)
  std::string value;   // force
};
int ctlCommand(const CtlArgs& args);

// Compiles files, printing diagnostics to stderr; null on errors.
std::shared_ptr<const Program> compileFiles(const std::vector<std::string>& files, const CompileOptions& options = {});
// "250ms", "1.5s", "T#2m" -> nanoseconds.
[[nodiscard]] std::optional<int64_t> parseDuration(const std::string& text, std::string& error);

int runCommand(const RunArgs& args);
int traceInfoCommand(const std::string& path, bool json);
int traceDumpCommand(const std::string& path, const std::string& cycles, const std::string& source);
int traceHitsCommand(const std::string& path, const std::string& fileLine, bool json);

// `scanback replay TRACE [--to CYCLE[:STEP]|end] [--print-state]` (cli/replay_commands.cpp).
struct ReplayArgs {
  std::string trace;
  std::string to = "end";  // "end", "CYCLE" (the end of that cycle) or "CYCLE:STEP"
  bool printState = false;
};
int replayCommand(const ReplayArgs& args);
// `scanback trace verify TRACE`: exit 0 when every cycle replays as recorded, kExitDivergence when
// one does not, kExitDamaged when part of the trace is missing or unreadable (or holds no cycle).
int traceVerifyCommand(const std::string& path);
// `scanback trace why TRACE VARIABLE [--at CYCLE[:STEP]|end] [--count N] [--depth N] [--json]`:
// depth 1 (the default, without --json) lists the last changes; deeper, or --json, the why-chain
// (replayer/why.h).
struct WhyArgs {
  std::string trace;
  std::string variable;  // "Main.fb.x", "Main.a[3]", "gVar" or "%IX0.1"
  std::string at = "end";
  uint32_t count = 5;
  uint32_t depth = 1;
  bool json = false;
};
int traceWhyCommand(const WhyArgs& args);

// `scanback trace log TRACE FILE:LINE MESSAGE [--cycles A..B] [--limit N]` (cli/trace_log.cpp): a
// logpoint over the recording, one line per run of the statement: "CYCLE:STEP  message".
struct LogArgs {
  std::string trace;
  std::string location;  // FILE:LINE
  std::string message;   // text with {expression} parts
  std::string cycles;    // as ExportArgs::cycles
  uint64_t limit = 1000;
};
int traceLogCommand(const LogArgs& args);

// `scanback trace export TRACE (--vcd FILE | --csv FILE) [--vars LIST] [--cycles A..B]`
// (cli/trace_export.cpp): the values at the end of every cycle, as CSV rows or a VCD for GTKWave.
struct ExportArgs {
  std::string trace;
  std::string vcd, csv;
  std::string vars;    // comma-separated paths and globs; empty: every scalar of the image
  std::string cycles;  // "A..B", "A..", "..B" or "A"; empty: the whole recording
  // How signals are named: "variables" (their paths), "modbus" (the device and Modbus address the
  // trace's I/O configuration gives them; only the variables it maps), "both".
  std::string names = "variables";
};
int traceExportCommand(const ExportArgs& args);

// `scanback test FILES... [--filter GLOB] [--junit FILE] [--record-failures DIR]`
// (cli/test_command.cpp): exit 0 when every test passes, kExitTestsFailed when one fails,
// kExitUsage for usage and compile errors and when no test is selected.
struct TestArgs {
  std::vector<std::string> files;
  std::string filter;          // a glob over test names
  std::string junit;           // write JUnit XML here
  std::string recordFailures;  // a directory: one trace per failing test
  uint64_t statementBudget = 0;
  Dialect dialect = Dialect::Codesys;
};
int testCommand(const TestArgs& args);

// `scanback rerun TRACE FILES... [--record OUT] [--cycles A..B] [--stop-on-divergence]`
// (cli/compare_commands.cpp): exit 0, kExitCompile, kExitUsage, kExitFault when the new version
// faults, kExitDivergence when --stop-on-divergence stopped it.
struct RerunArgs {
  std::string trace;
  std::vector<std::string> files;
  std::string record;
  std::string cycles;  // "A..B", "A..", "..B" or "A"
  bool stopOnDivergence = false;
  bool strict = false;
};
int rerunCommand(const RerunArgs& args);

// `scanback trace diff A B [--vars LIST] [--outputs] [--json] [--junit FILE]`: exit 0 equal,
// kExitDifferent, kExitUsage (bad input: nothing is written then).
struct DiffArgs {
  std::string a, b;
  std::string vars;
  bool outputs = false;
  bool json = false;
  std::string junit;
};
int traceDiffCommand(const DiffArgs& args);

// `scanback dap [--port N [--auth-token-file FILE] | --socket PATH] [--max-connections N]`
// (cli/dap_command.cpp).
struct DapArgs {
  std::optional<uint16_t> port;
  std::optional<std::string> socket;  // a unix socket path
  std::string authTokenFile;          // empty: --port generates a token and prints it
  size_t maxConnections = kDapMaxConnections;
};
int dapCommand(const DapArgs& args);

// `scanback lsp [--debounce-ms N]`: the Language Server Protocol server on stdin/stdout
// (cli/lsp_command.cpp, lsp/server.h).
struct LspArgs {
  unsigned debounceMs = 25;
  Dialect dialect = Dialect::Codesys;
};
int lspCommand(const LspArgs& args);

}  // namespace scanback::cli
