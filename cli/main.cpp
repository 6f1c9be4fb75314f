// The `scanback` command: argument parsing only; each subcommand lives in its own file.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "vm/base/out_of_memory.h"
#include "vm/base/version.h"
#include "vm/exec/vm.h"

using namespace scanback;
using namespace scanback::cli;

int main(int argc, char** argv) {
  // A write to a closed pipe (`scanback run ... --print-state | head`) is an error to handle, not
  // death: the recording still finishes. A file size limit (ulimit -f) likewise.
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"scanback: record-and-replay time-travel debugger for IEC 61131-3 Structured Text"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("scanback ") + kScanbackVersion);

  std::vector<std::string> checkFiles;
  auto* check = app.add_subcommand("check", "Compile ST files and report diagnostics (exit 0 ok, 1 on errors)");
  check->add_option("files", checkFiles, "ST source files of the project")->required()->check(CLI::ExistingFile);
  CompileOptions checkOptions;
  const char* strictHelp =
      "IEC's conversion rules only: the implicit conversions CODESYS accepts (between integer, bit string and real "
      "types, with a warning) are errors";
  check->add_flag("--strict", checkOptions.strict, strictHelp);
  // Where CODESYS, IEC 61131-3 and ruSTy disagree (docs/language.md, "Dialects").
  const char* dialectHelp =
      "Where CODESYS, IEC 61131-3 and ruSTy disagree: codesys (default), iec (IEC's conversion rules, as --strict), "
      "rusty (a REF_TO is also a pointer: byte arithmetic, conversions between REF_TO types)";
  // (CLI11's CheckedTransformer would print the map's values, which have no text, in the help and
  // in its error.)
  const CLI::Validator dialectName(
      [](std::string& value) -> std::string {
        std::string name = value;
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        const std::optional<Dialect> d = parseDialect(name);
        if (!d) return "unknown dialect '" + value + "': codesys, iec or rusty";
        value = std::to_string(static_cast<int>(*d));
        return {};
      },
      "", "dialect");
  const auto dialectOption = [&](CLI::App* command, Dialect& dialect) {
    command->add_option("--dialect", dialect, dialectHelp)->transform(dialectName)->type_name("codesys|iec|rusty");
  };
  dialectOption(check, checkOptions.dialect);

  RunArgs run;
  uint64_t cycles = 0;
  auto* runCmd = app.add_subcommand("run", "Run the project's tasks on the virtual clock");
  runCmd->add_option("files", run.files, "ST source files of the project")->required()->check(CLI::ExistingFile);
  runCmd->add_flag("--strict", run.strict, strictHelp);
  dialectOption(runCmd, run.dialect);
  auto* cyclesOpt = runCmd->add_option("--cycles", cycles, "Run N cycles in total (all tasks)");
  runCmd->add_option("--for", run.forText, "Run every cycle released before this virtual time, e.g. 250ms")
      ->excludes(cyclesOpt);
  runCmd->add_option("--inputs", run.inputs, "Stimulus CSV: cycle,<address or Program.var>,...")
      ->check(CLI::ExistingFile);
  runCmd->add_flag("--print-state", run.printState, "Print the final state as JSON on stdout");
  auto* realtimeOpt = runCmd->add_flag("--realtime", run.realtime,
                                       "Pace cycles by the task intervals instead of running as fast as possible");
  runCmd
      ->add_option("--scan-priority", run.scanPriority,
                   "Run the scan thread under SCHED_FIFO at this real-time priority (1-99) and lock the runtime's "
                   "memory, so that no other thread or page fault delays a cycle; needs CAP_SYS_NICE or "
                   "RLIMIT_RTPRIO (a unit's LimitRTPRIO=), refused at start otherwise")
      ->needs(realtimeOpt)
      ->type_name("N");
  runCmd->add_option("--statement-budget", run.statementBudget,
                     "Statements allowed per cycle before the watchdog faults (default 10000000)");
  runCmd->add_flag("--quiet", run.quiet, "Do not print cycle statistics on stderr");
  runCmd->add_option("--record", run.record, "Record every cycle to this trace file");
  runCmd->add_option("--keyframe-every", run.keyframeEvery, "Cycles per trace chunk (each starts with a keyframe)")
      ->default_val(1000)
      ->check(CLI::Range(1u, 10'000'000u));
  runCmd->add_option("--zstd-level", run.zstdLevel, "zstd compression level of the trace")
      ->default_val(3)
      ->check(CLI::Range(-7, 22));
  runCmd->add_flag("--no-statements", run.noStatements, "Do not record statement paths (smaller, no 'trace hits')");
  runCmd->add_option("--ring", run.ring,
                     "Flight recorder: keep only the last SIZE (64MB, compressed) or DURATION (10min) of history, in "
                     "memory and in TRACE (at most about twice that on disk while running; exactly the history kept "
                     "when the run ends). SIGUSR1 writes a snapshot of it to TRACE with -CYCLE before the extension "
                     "(plant.trace -> plant-123456.trace) and recording goes on");
  runCmd
      ->add_option("--flush-every", run.flushEvery,
                   "Every cycle that has ended is in the trace file within this wall time, so that a crash or kill "
                   "-9 loses at most that much (default 1s; 0: only whole chunks are written)")
      ->default_val("1s");
  runCmd
      ->add_option("--flush-cycles", run.flushCycles,
                   "And once this many cycles have ended since the last flush (default 0: the window alone)")
      ->check(CLI::Range(0u, 10'000'000u));
  runCmd->add_flag("--no-fsync", run.noFsync,
                   "Do not fdatasync the trace after each flush: a kill -9 still loses at most the flush window, a "
                   "power cut may lose what the kernel had not written back");
  runCmd->add_option("--control", run.control,
                     "Serve a control endpoint: unix:///path.sock (mode 0600) or tcp://127.0.0.1:PORT (0: a free port, "
                     "printed). scanback ctl and a debugger's attach connect to it; the runtime keeps its newest "
                     "history in memory (--ring, default 64MB) and stays up, faulted, after a fault (docs/control.md)");
  runCmd->add_option("--control-bind", run.controlBind,
                     "Listen for a tcp:// control endpoint on this IPv4 address instead of 127.0.0.1 (needs "
                     "--auth-token-file)");
  runCmd->add_option("--control-group", run.controlGroup,
                     "Give the unix:/// control socket to this group, mode 0660: its members connect too (ctl, a "
                     "debugger's attach) without being this user; the runtime's user must be in the group, and a "
                     "token still applies");
  runCmd->add_option("--auth-token-file", run.authTokenFile,
                     "Control connections must present the token in FILE (its first line, at least 16 bytes; keep it "
                     "chmod 600). A tcp:// endpoint needs one");
  runCmd->add_flag("--allow-no-token", run.allowNoToken,
                   "Serve a tcp:// control endpoint on 127.0.0.1 without a token: every local user can then pause, "
                   "stop and snapshot the runtime (a warning says so at start)");
  auto* runMaxConnections =
      runCmd
          ->add_option("--max-connections", run.maxConnections,
                       "Control connections served at once (default 32): beyond, the oldest one still in its "
                       "handshake is closed, or the new one refused")
          ->check(CLI::Range(size_t{1}, size_t{100000}));
  runCmd
      ->add_option("--io", run.io,
                   "Exchange the %I and %Q areas with Modbus TCP devices as their client, as the TOML file says "
                   "(docs/fieldbus.md): each device polled on an I/O thread of its own, its inputs recorded like any "
                   "scan input")
      ->check(CLI::ExistingFile)
      ->type_name("FILE");
  runCmd->add_flag("--no-debug", run.noDebug,
                   "Debugging disabled: the control endpoint answers status, snapshot and stop; attach is refused");
  uint16_t ioServePort = 1502;
  auto* ioServeOpt =
      runCmd
          ->add_option("--io-serve", ioServePort,
                       "Serve %I (writable), %Q and %M (read-only) to Modbus TCP clients (an HMI, SCADA) on PORT "
                       "(default 1502; 0: a free port, printed). A client's write reaches the input image at the next "
                       "cycle start and is recorded (docs/fieldbus-server.md)")
          ->expected(0, 1)
          ->default_str("1502");
  auto* ioBindOpt = runCmd->add_option("--io-bind", run.ioBind,
                                       "Serve Modbus TCP on this address instead of 127.0.0.1: IPv4, IPv6 (::1; "
                                       "::), or a host name (0.0.0.0 or ::: every interface; Modbus has no "
                                       "authentication)");
  auto* ioMaxOpt = runCmd
                       ->add_option("--io-max-connections", run.ioMaxConnections,
                                    "Modbus TCP clients served at once (default 8): a further one is closed")
                       ->check(CLI::Range(size_t{1}, size_t{1000}));
  ioBindOpt->needs(ioServeOpt);
  ioMaxOpt->needs(ioServeOpt);

  CtlArgs ctlArgs;
  auto* ctlCmd = app.add_subcommand("ctl", "Talk to a runtime started with run --control (docs/control.md)");
  ctlCmd->add_option("endpoint", ctlArgs.endpoint, "unix:///path.sock or tcp://127.0.0.1:PORT")->required();
  ctlCmd->add_option("--auth-token-file", ctlArgs.authTokenFile,
                     "The runtime's token: the first line of FILE. Over a unix socket it is sent only when the "
                     "socket and the process listening on it belong to you or root");
  ctlCmd->require_subcommand(1);
  auto* ctlStatus = ctlCmd->add_subcommand("status", "State, cycles, cycle times, history held, fault");
  ctlStatus->add_flag("--json", ctlArgs.json, "Print as JSON");
  auto* ctlSnapshot = ctlCmd->add_subcommand("snapshot", "Write the history the runtime holds to a trace");
  ctlSnapshot->add_option("file", ctlArgs.snapshotPath, "The trace to write (on the runtime's machine)")->required();
  auto* ctlStop = ctlCmd->add_subcommand("stop", "Stop the runtime");
  auto* ctlPause = ctlCmd->add_subcommand(
      "pause", "Hold the task between cycles (the runtime's STOP switch; a debugger never does this)");
  auto* ctlResume = ctlCmd->add_subcommand("resume", "Let a paused task run again");
  auto* ctlForce = ctlCmd->add_subcommand(
      "force",
      "Hold a variable or an address at a value from the next cycle start on, until released: inputs over the "
      "field, outputs as the field receives them. Recorded in the runtime's history");
  ctlForce->add_option("target", ctlArgs.target, "Main.fb.x, gVar, Main.a[3] or an address such as %IX0.2, %QW4")
      ->required();
  ctlForce->add_option("value", ctlArgs.value, "The value, as in stimulus files: TRUE, 42, 16#FF, T#2s, 'text'")
      ->required();
  auto* ctlRelease = ctlCmd->add_subcommand(
      "release", "End a force (without TARGET: every force); the value stays until the program or the field writes it");
  ctlRelease->add_option("target", ctlArgs.target, "What was forced, as force named it");
  auto* ctlForced = ctlCmd->add_subcommand("forced", "List the forces held");
  ctlForced->add_flag("--json", ctlArgs.json, "Print as JSON");

  TestArgs testArgs;
  auto* testCmd = app.add_subcommand(
      "test",
      "Run the unit tests (TEST_PROGRAM, TEST_FUNCTION_BLOCK) of ST files, each on a fresh instance on the virtual "
      "clock: one line per failure, then 'N passed, M failed' (exit 0 all pass, 1 a test failed, 2 usage or "
      "compile errors)");
  testCmd->add_option("files", testArgs.files, "ST source files: the tests and the code they test")
      ->required()
      ->check(CLI::ExistingFile);
  dialectOption(testCmd, testArgs.dialect);
  testCmd->add_option("--filter", testArgs.filter, "Only the tests whose name matches this glob (Motor*, *Timer?)");
  testCmd->add_option("--junit", testArgs.junit, "Write the results as JUnit XML to FILE");
  testCmd->add_option("--record-failures", testArgs.recordFailures,
                      "Record each failing test to DIR/<test>.trace: a trace that ends at the failure (scanback "
                      "replay opens there and can step back through the test)");
  testCmd->add_option("--statement-budget", testArgs.statementBudget,
                      "Statements a test may execute before the watchdog faults (default 10000000)");

  std::vector<std::string> disasmFiles;
  auto* disasm = app.add_subcommand("disasm", "Compile and print the bytecode");
  disasm->add_option("files", disasmFiles, "ST source files of the project")->required()->check(CLI::ExistingFile);

  auto* traceCmd = app.add_subcommand("trace", "Inspect a recorded trace");
  traceCmd->require_subcommand(1);
  std::string tracePath, dumpCycles, dumpSource, fileLine;
  bool infoJson = false, hitsJson = false;
  auto* info = traceCmd->add_subcommand("info", "Version, program, tasks, cycles, sizes, gaps, fault");
  info->add_option("trace", tracePath, "Trace file")->required();
  info->add_flag("--json", infoJson, "Print as JSON");
  auto* dump = traceCmd->add_subcommand("dump", "Print the trace's records for humans");
  dump->add_option("trace", tracePath, "Trace file")->required();
  dump->add_option("--cycles", dumpCycles, "Only cycles A..B (inclusive; A.. or ..B)");
  dump->add_option("--source", dumpSource,
                   "Print only the recorded text of this source file (a path or just the file's name): what "
                   "'trace hits' line numbers refer to");
  auto* hits = traceCmd->add_subcommand("hits", "Cycles in which the statement at FILE:LINE executed, with counts");
  hits->add_option("trace", tracePath, "Trace file")->required();
  hits->add_option("location", fileLine, "FILE:LINE (FILE may be a path or just the file's name)")->required();
  hits->add_flag("--json", hitsJson, "Print as JSON");

  // Replay (cli/replay_commands.cpp).
  ReplayArgs replayArgs;
  auto* replayCmd = app.add_subcommand(
      "replay",
      "Rebuild the state at a position of a trace: a summary (task, time, statement, call stack) or the "
      "state as JSON");
  replayCmd->add_option("trace", replayArgs.trace, "Trace file (recorded with run --record)")->required();
  replayCmd
      ->add_option("--to", replayArgs.to,
                   "CYCLE (the end of that cycle), CYCLE:STEP (before the STEP-th statement of the cycle, from "
                   "0) or end (the end of the last cycle, its faulting statement, or where the recording "
                   "finished inside it)")
      ->default_val("end");
  replayCmd->add_flag("--print-state", replayArgs.printState,
                      "Print the state there as JSON on stdout, exactly as run --print-state does");
  auto* verify = traceCmd->add_subcommand(
      "verify", "Re-execute every recorded cycle and check its digest and the keyframes (exit 0 faithful, 4 diverges)");
  verify->add_option("trace", tracePath, "Trace file")->required();
  WhyArgs whyArgs;
  auto* why = traceCmd->add_subcommand("why",
                                       "The last changes of a variable before a position, newest first, with "
                                       "the statement that made each and the old and new values; with --depth "
                                       "N > 1 or --json, why it has its value: the statement that last changed "
                                       "it, the values that statement read, and theirs, back to the inputs");
  why->add_option("trace", whyArgs.trace, "Trace file")->required();
  why->add_option("variable", whyArgs.variable, "Main.fb.x, Main.a[3], gVar or an address such as %IX0.1")->required();
  why->add_option("--at", whyArgs.at, "Up to this position: CYCLE (its end), CYCLE:STEP or end")->default_val("end");
  why->add_option("--count", whyArgs.count, "How many changes to show")
      ->default_val(5)
      ->check(CLI::Range(1u, 1'000'000u));
  why->add_option("--depth", whyArgs.depth,
                  "Levels of the why-chain: 1 the last changes; 2 and more the statement that changed it, what it "
                  "read, and so on")
      ->default_val(1)
      ->check(CLI::Range(1u, 1000u));
  why->add_flag("--json", whyArgs.json, "The why-chain as JSON (a WhyNode, docs/explain.md) on stdout");

  LogArgs logArgs;
  auto* logCmd = traceCmd->add_subcommand(
      "log",
      "A logpoint over the whole recording: the message for every time the statement on FILE:LINE ran, "
      "each with its position CYCLE:STEP; {expressions} in it are evaluated there");
  logCmd->add_option("trace", logArgs.trace, "Trace file")->required();
  logCmd->add_option("location", logArgs.location, "FILE:LINE of the statement (the first one on the line)")
      ->required();
  logCmd->add_option("message", logArgs.message, "Text with {expression} parts ({{ and }} for braces)")->required();
  logCmd->add_option("--cycles", logArgs.cycles, "Only these cycles: A..B, A.., ..B or A");
  logCmd->add_option("--limit", logArgs.limit, "Stop after this many messages")
      ->default_val(1000)
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX));

  ExportArgs exportArgs;
  auto* exportCmd = traceCmd->add_subcommand(
      "export",
      "Variables over the recording, their values at the end of every cycle: CSV (cycle,time,<var>...; time is "
      "the cycle's virtual start in ns) or a VCD (IEEE 1364, nanoseconds) that GTKWave opens");
  exportCmd->add_option("trace", exportArgs.trace, "Trace file")->required();
  auto* vcdOpt = exportCmd->add_option("--vcd", exportArgs.vcd, "Write a value change dump to FILE");
  exportCmd->add_option("--csv", exportArgs.csv, "Write CSV to FILE, one row per cycle")->excludes(vcdOpt);
  exportCmd->add_option("--vars", exportArgs.vars,
                        "Comma-separated variable paths or globs (Line.produced,T.avg or Line.*); a structure, array "
                        "or FB instance stands for all its values. Default: every value of the image");
  exportCmd->add_option("--cycles", exportArgs.cycles, "Only cycles A..B (inclusive; A.. or ..B)");
  exportCmd
      ->add_option("--names", exportArgs.names,
                   "Name signals by their variables, by the Modbus device and address the recording's I/O file "
                   "(run --io) maps them to (only the variables it maps), or both")
      ->check(CLI::IsMember({"variables", "modbus", "both"}))
      ->default_val("variables");

  // Compare runs (cli/compare_commands.cpp): a recording rerun with another version, two diffed.
  RerunArgs rerunArgs;
  auto* rerunCmd = app.add_subcommand(
      "rerun",
      "Drive another version of the program with a trace's recorded scan inputs (docs/compare.md; exit 0 ran, 1 "
      "compile errors, 2 usage or an unreadable trace, 3 it faulted, 4 --stop-on-divergence stopped it)");
  rerunCmd->add_option("trace", rerunArgs.trace, "The recording")->required();
  rerunCmd->add_option("files", rerunArgs.files, "ST source files of the version to run")
      ->required()
      ->check(CLI::ExistingFile);
  rerunCmd->add_option("--record", rerunArgs.record, "Record the rerun to this trace file")->type_name("OUT");
  rerunCmd
      ->add_option("--cycles", rerunArgs.cycles,
                   "Only recorded cycles A..B (A.. or ..B); from A > 0 the recorded state is carried over")
      ->type_name("A..B");
  rerunCmd->add_flag("--stop-on-divergence", rerunArgs.stopOnDivergence,
                     "Stop after the first cycle whose outputs or common variables differ from the recording");
  rerunCmd->add_flag("--strict", rerunArgs.strict, strictHelp);
  DiffArgs diffArgs;
  auto* diffCmd = traceCmd->add_subcommand(
      "diff",
      "Compare two recordings cycle by cycle: the first divergence down to the statement, each value's "
      "differences (docs/compare.md; exit 0 equal, 1 different, 2 usage or an unreadable trace)");
  diffCmd->add_option("a", diffArgs.a, "Trace A")->required();
  diffCmd->add_option("b", diffArgs.b, "Trace B")->required();
  diffCmd
      ->add_option("--vars", diffArgs.vars,
                   "Compare these paths and globs (as trace export --vars) instead of the outputs and every "
                   "variable both versions have")
      ->type_name("LIST");
  diffCmd->add_flag("--outputs", diffArgs.outputs, "Compare the outputs (%Q) only");
  diffCmd->add_flag("--json", diffArgs.json, "Print the report as JSON");
  diffCmd->add_option("--junit", diffArgs.junit, "Also write the report as JUnit XML to FILE")->type_name("FILE");

  // The debug adapter (cli/dap_command.cpp).
  DapArgs dapArgs;
  uint16_t dapPort = 0;
  std::string dapSocket;
  auto* dapCmd = app.add_subcommand("dap",
                                    "Serve the Debug Adapter Protocol on stdin/stdout (what VS Code starts), or with "
                                    "--port on 127.0.0.1, or with --socket on a unix socket");
  auto* portOpt = dapCmd
                      ->add_option("--port", dapPort,
                                   "Listen on 127.0.0.1:PORT, one session per connection. Any local process can "
                                   "connect, so launch and attach must give the token as \"authToken\": the one "
                                   "in --auth-token-file, or one generated and printed on stderr. 0: a free port, "
                                   "printed on stderr")
                      ->check(CLI::Range(0, 65535));
  auto* socketOpt = dapCmd
                        ->add_option("--socket", dapSocket,
                                     "Listen on a unix socket created at PATH with mode 0600 (only you can "
                                     "connect), one session per connection; the safer server mode")
                        ->excludes(portOpt);
  dapCmd->add_option("--auth-token-file", dapArgs.authTokenFile,
                     "The token launch and attach must give as \"authToken\": the first line of FILE (at least 16 "
                     "bytes; keep it chmod 600)");
  auto* dapMaxConnections =
      dapCmd
          ->add_option("--max-connections", dapArgs.maxConnections,
                       "With --port or --socket: sessions served at once (default 16): beyond, the oldest connection "
                       "still in its handshake is closed, or the new one refused")
          ->check(CLI::Range(size_t{1}, size_t{100000}));

  // The language server (cli/lsp_command.cpp).
  LspArgs lspArgs;
  auto* lspCmd = app.add_subcommand("lsp",
                                    "Serve the Language Server Protocol on stdin/stdout (what an editor starts): "
                                    "diagnostics of the workspace folder's .st files as you type, outline, "
                                    "definitions, references, hover, completion, rename (docs/lsp.md)");
  lspCmd
      ->add_option("--debounce-ms", lspArgs.debounceMs,
                   "Compile for diagnostics this long after the last edit (default 25)")
      ->check(CLI::Range(0u, 10000u));
  dialectOption(lspCmd, lspArgs.dialect);
  // Many clients (vscode-languageclient's stdio transport among them) add `--stdio`: the server
  // always talks over stdin/stdout, so it is accepted and changes nothing.
  bool lspStdio = false;
  lspCmd->add_flag("--stdio", lspStdio, "Accepted for clients that pass it: the server always uses stdin/stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  // Every command ends with a message and an exit code when memory runs out, never with
  // std::terminate (vm/base/out_of_memory.h).
  auto dispatch = [&]() -> int {
    if (*check) return compileFiles(checkFiles, checkOptions) ? kExitOk : kExitCompile;
    if (*disasm) {
      std::shared_ptr<const Program> program = compileFiles(disasmFiles);
      if (!program) return kExitCompile;
      std::cout << disassemble(*program);
      return kExitOk;
    }
    if (*testCmd) return testCommand(testArgs);
    if (*info) return traceInfoCommand(tracePath, infoJson);
    if (*dump) return traceDumpCommand(tracePath, dumpCycles, dumpSource);
    if (*hits) return traceHitsCommand(tracePath, fileLine, hitsJson);
    if (*verify) return traceVerifyCommand(tracePath);
    if (*why) return traceWhyCommand(whyArgs);
    if (*logCmd) return traceLogCommand(logArgs);
    if (*exportCmd) return traceExportCommand(exportArgs);
    if (*replayCmd) return replayCommand(replayArgs);
    if (*rerunCmd) return rerunCommand(rerunArgs);
    if (*diffCmd) return traceDiffCommand(diffArgs);
    if (*dapCmd) {
      if (*portOpt) dapArgs.port = dapPort;
      if (*socketOpt) dapArgs.socket = dapSocket;
      if (*dapMaxConnections && !*portOpt && !*socketOpt) {
        std::cerr << "scanback: --max-connections goes with --port or --socket\n";
        return kExitUsage;
      }
      return dapCommand(dapArgs);
    }
    if (*lspCmd) return lspCommand(lspArgs);
    if (*ctlCmd) {
      if (*ctlSnapshot) ctlArgs.action = CtlArgs::Action::Snapshot;
      if (*ctlStop) ctlArgs.action = CtlArgs::Action::Stop;
      if (*ctlPause) ctlArgs.action = CtlArgs::Action::Pause;
      if (*ctlResume) ctlArgs.action = CtlArgs::Action::Resume;
      if (*ctlStatus) ctlArgs.action = CtlArgs::Action::Status;
      if (*ctlForce) ctlArgs.action = CtlArgs::Action::Force;
      if (*ctlRelease) ctlArgs.action = CtlArgs::Action::Release;
      if (*ctlForced) ctlArgs.action = CtlArgs::Action::Forced;
      return ctlCommand(ctlArgs);
    }
    if (*runCmd) {
      if (*cyclesOpt) run.cycles = cycles;
      if (*ioServeOpt) run.ioServe = ioServePort;
      if (run.control.empty() && (!run.controlBind.empty() || !run.controlGroup.empty() || !run.authTokenFile.empty() ||
                                  run.noDebug || run.allowNoToken || *runMaxConnections)) {
        std::cerr << "scanback: --control-bind, --control-group, --auth-token-file, --allow-no-token, "
                     "--max-connections and --no-debug go with --control ENDPOINT\n";
        return kExitUsage;
      }
      if (!run.ring.empty() && run.record.empty() && run.control.empty()) {
        std::cerr << "scanback: --ring needs --record TRACE or --control ENDPOINT\n";
        return kExitUsage;
      }
      return runCommand(run);
    }
    return kExitUsage;
  };
  try {
    return dispatch();
  } catch (const std::bad_alloc& e) {
    std::string command = "scanback";
    for (const CLI::App* a = &app; !a->get_subcommands().empty();) {
      a = a->get_subcommands().front();
      command += " " + a->get_name();
    }
    std::cerr << fmt::format("scanback: {} (see `ulimit -v`, or the memory limit of the container or service)\n",
                             outOfMemoryText(e, "running " + command));
    return kExitOutOfMemory;
  }
}
