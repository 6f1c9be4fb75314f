// `scanback run`: the project's tasks on the virtual clock, optionally recorded to a trace. The
// command reads its options into a runtime host (runtime/host.h), runs it and prints its summary.
#include <fmt/format.h>
#include <grp.h>

#include <cctype>
#include <cstring>
#include <iostream>
#include <optional>
#include <vector>

#include "cli/commands.h"
#include "control/endpoint.h"
#include "net/auth_token.h"
#include "runtime/host.h"
#include "runtime/io/config.h"
#include "runtime/io/modbus_device.h"
#include "runtime/io/modbus_server.h"
#include "runtime/realtime.h"
#include "vm/compiler/compiler.h"
#include "vm/exec/iec_text.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/stimulus.h"
#include "vm/runtime/values.h"

namespace scanback::cli {

namespace {

void printStatistics(const Runtime& rt, double seconds) {
  const Program& p = rt.program();
  std::cerr << fmt::format("scanback: {} cycles in {:.3f} s of wall time, last cycle started at {}\n", rt.cycle(),
                           seconds, formatDuration(rt.cycle() ? rt.currentCycle().startNs : 0));
  for (size_t t = 0; t < p.tasks.size(); ++t) {
    const TaskStatistics& s = rt.statistics()[t];
    std::cerr << fmt::format("  task {:<12} interval {:<10} {:>8} cycles, {:>8.1f} statements per cycle (max {})\n",
                             p.tasks[t].name, formatDuration(p.tasks[t].intervalNs), s.cycles,
                             s.cycles ? static_cast<double>(s.statements) / s.cycles : 0.0, s.maxStatements);
  }
  if (rt.totalStatements() > 0)
    std::cerr << fmt::format("  {} statements, {:.1f} ns per statement, {:.2f} us per cycle\n", rt.totalStatements(),
                             seconds * 1e9 / static_cast<double>(rt.totalStatements()),
                             rt.cycle() ? seconds * 1e6 / static_cast<double>(rt.cycle()) : 0.0);
}

// "64MB" -> bytes, "10min" -> nanoseconds.
[[nodiscard]] bool parseRing(const std::string& text, recorder::RecorderOptions& options, std::string& error) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const double n = i ? std::stod(text.substr(0, i)) : 0.0;
  const struct {
    const char* unit;
    double bytes;
  } sizes[] = {{"B", 1},        {"KB", 1e3},        {"MB", 1e6},          {"GB", 1e9},
               {"KIB", 1024.0}, {"MIB", 1048576.0}, {"GIB", 1073741824.0}};
  for (const auto& s : sizes) {
    if (unit == s.unit) {
      if (n <= 0) break;
      options.ringBytes = static_cast<uint64_t>(n * s.bytes);
      return true;
    }
  }
  std::string lower = text;
  if (lower.size() > 3 && lower.substr(lower.size() - 3) == "min") lower = lower.substr(0, lower.size() - 3) + "m";
  std::optional<int64_t> ns = parseDuration(lower, error);
  if (ns && *ns > 0) {
    options.ringDurationNs = *ns;
    return true;
  }
  error = fmt::format("--ring {}: expected a size like 64MB or a duration like 10min", text);
  return false;
}

// Checks the --control options: where to listen, on which interface, with which token. False with
// the message printed.
bool controlOptions(const RunArgs& args, runtime::ControlEndpointOptions& options) {
  std::string error;
  const std::optional<control::Endpoint> endpoint = control::parseEndpoint(args.control, error);
  if (!endpoint) {
    std::cerr << "scanback: --control: " << error << "\n";
    return false;
  }
  options.endpoint = *endpoint;
  if (endpoint->kind == control::Endpoint::Kind::Tcp) {
    if (!args.controlBind.empty()) {
      options.bindAddress = args.controlBind;
    } else if (endpoint->host != "127.0.0.1") {
      std::cerr << fmt::format(
          "scanback: --control {}: a control endpoint listens on 127.0.0.1; --control-bind ADDR listens on "
          "another interface (and then needs --auth-token-file)\n",
          args.control);
      return false;
    }
  } else if (!args.controlBind.empty()) {
    std::cerr << "scanback: --control-bind is for a tcp:// endpoint\n";
    return false;
  }
  if (!args.controlGroup.empty()) {
    if (endpoint->kind != control::Endpoint::Kind::Unix) {
      std::cerr << "scanback: --control-group is for a unix:/// endpoint (a TCP port has no group: use a token)\n";
      return false;
    }
    // The name as /etc/group (or NSS) has it.
    std::vector<char> buffer(16384);
    group entry{};
    group* found = nullptr;
    const int rc = getgrnam_r(args.controlGroup.c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (rc != 0 || !found) {
      std::cerr << fmt::format("scanback: --control-group {}: {}\n", args.controlGroup,
                               rc != 0 ? std::strerror(rc) : "there is no group of that name");
      return false;
    }
    options.group = found->gr_gid;
    options.groupName = args.controlGroup;
  }
  if (!args.authTokenFile.empty()) {
    std::string warning;
    options.token = net::readAuthToken(args.authTokenFile, error, warning);
    if (!options.token) {
      std::cerr << "scanback: --auth-token-file: " << error << "\n";
      return false;
    }
    if (!warning.empty()) std::cerr << "scanback: warning: " << warning << "\n";
  } else if (options.bindAddress != "127.0.0.1") {
    std::cerr << fmt::format(
        "scanback: --control-bind {}: a control endpoint reachable from other machines needs a token "
        "(--auth-token-file FILE)\n",
        options.bindAddress);
    return false;
  } else if (endpoint->kind == control::Endpoint::Kind::Tcp && !args.allowNoToken) {
    std::cerr << fmt::format(
        "scanback: --control {}: every local user can connect to a TCP port, and then pause, stop and snapshot this "
        "runtime (writing files as its user): give --auth-token-file FILE, or --allow-no-token to accept that, or "
        "use a unix:/// endpoint (mode 0600)\n",
        args.control);
    return false;
  }
  if (options.token && args.allowNoToken)
    std::cerr << "scanback: warning: --allow-no-token has no effect: the runtime has a token (--auth-token-file)\n";
  options.maxConnections = args.maxConnections;
  return true;
}

}  // namespace

std::shared_ptr<const Program> compileFiles(const std::vector<std::string>& files, const CompileOptions& options) {
  Diagnostics diags;
  SourceSet sources = loadSourceFiles(files, diags);
  if (diags.hasErrors()) {
    std::cerr << diags.format(sources);
    return nullptr;
  }
  std::shared_ptr<const Program> program = compileProject(sources, diags, options);
  if (program && !checkSchedule(*program, diags)) program = nullptr;
  std::cerr << diags.format(sources);
  return program;
}

std::optional<int64_t> parseDuration(const std::string& input, std::string& error) {
  std::string text = input;
  if (text.find('#') == std::string::npos) text = "T#" + text;
  TypeTable types;
  Program scratch;
  std::vector<uint8_t> bytes;
  if (!encodeValue(scratch, text, *types.elementary(TypeKind::LTime), bytes, error)) return std::nullopt;
  int64_t ns;
  std::memcpy(&ns, bytes.data(), sizeof ns);
  return ns;
}

int runCommand(const RunArgs& args) {
  CompileOptions compileOptions;
  compileOptions.strict = args.strict;
  compileOptions.dialect = args.dialect;
  std::shared_ptr<const Program> program = compileFiles(args.files, compileOptions);
  if (!program) return kExitCompile;
  runtime::HostOptions host;
  host.program = program;
  host.statementBudget = args.statementBudget;
  host.handleSignals = true;
  host.debugEnabled = !args.noDebug;
  host.loop.realtime = args.realtime;
  if (args.scanPriority) {
    // Before any thread starts, so that a refusal ends the run before it began.
    std::string error;
    if (!runtime::probeScanPriority(*args.scanPriority, error)) {
      std::cerr << "scanback: " << error << "\n";
      return kExitUsage;
    }
    host.scanPriority = args.scanPriority;
  }
  host.loop.cycles = args.cycles;
  if (!args.forText.empty()) {
    std::string error;
    host.loop.untilNs = parseDuration(args.forText, error);
    if (!host.loop.untilNs) {
      std::cerr << fmt::format("scanback: --for {}: expected a duration like 250ms, 1.5s or T#2m\n", args.forText);
      return kExitUsage;
    }
  }
  if (!args.inputs.empty()) {
    std::string error;
    host.stimulus = Stimulus::load(args.inputs, *program, error);
    if (!host.stimulus) {
      std::cerr << "scanback: " << error << "\n";
      return kExitUsage;
    }
  }
  std::optional<runtime::io::IoConfig> io;
  if (!args.io.empty()) {
    std::string error;
    io = runtime::io::loadIoConfig(args.io, program.get(), error);
    if (!io) {
      std::cerr << "scanback: " << error << "\n";
      return kExitUsage;
    }
  }
  const bool controlled = !args.control.empty();
  if (!args.record.empty() || controlled) {
    recorder::RecorderOptions& options = host.recording.emplace();
    options.path = args.record;
    options.keyframeEvery = args.keyframeEvery;
    options.zstdLevel = args.zstdLevel;
    options.statements = !args.noStatements;
    options.fsync = !args.noFsync;
    std::string error;
    if (!args.ring.empty() && !parseRing(args.ring, options, error)) {
      std::cerr << "scanback: " << error << "\n";
      return kExitUsage;
    }
    const std::optional<int64_t> flushEvery = args.flushEvery == "0" ? 0 : parseDuration(args.flushEvery, error);
    if (!flushEvery || *flushEvery < 0) {
      std::cerr << fmt::format("scanback: --flush-every {}: expected a duration like 1s or 500ms, or 0\n",
                               args.flushEvery);
      return kExitUsage;
    }
    options.flushEveryNs = *flushEvery;
    options.flushEveryCycles = args.flushCycles;
    if (io) {
      options.ioConfig = io->text;
      options.ioConfigPath = args.io;
    }
  }
  if (controlled && !controlOptions(args, host.control.emplace())) return kExitUsage;
  if (io) {
    // The devices connect in the background; until a device's first poll round ends, its inputs
    // read 0 (and its status word says it is not answering).
    host.drivers = runtime::io::startDevices(*io);
    for (const runtime::io::Device& d : io->devices)
      if (!args.quiet) std::cerr << "scanback: I/O device " << runtime::io::describeDevice(d) << "\n";
  }
  if (args.ioServe) {
    runtime::ModbusServerOptions options;
    options.bindAddress = args.ioBind;
    options.port = *args.ioServe;
    options.maxConnections = args.ioMaxConnections;
    options.inputBytes = program->input.size;
    options.outputBytes = program->output.size;
    options.memoryBytes = program->memory.size;
    std::string error;
    std::shared_ptr<runtime::ModbusServer> server = runtime::ModbusServer::start(options, error);
    if (!server) {
      std::cerr << "scanback: " << error << "\n";
      return kExitUsage;
    }
    std::cerr << fmt::format("scanback: {} (at most {} connections): {}\n", server->name(), args.ioMaxConnections,
                             server->describeMap());
    if (!server->loopback())
      std::cerr << fmt::format(
          "scanback: WARNING: the Modbus server listens on {}: Modbus has no authentication, so whoever reaches it can "
          "write this runtime's inputs\n",
          args.ioBind);
    host.drivers.push_back(std::move(server));
  }

  std::string error;
  std::unique_ptr<runtime::RuntimeHost> runtimeHost = runtime::RuntimeHost::create(std::move(host), error);
  if (!runtimeHost) {
    std::cerr << "scanback: " << error << "\n";
    return kExitUsage;
  }
  const runtime::RunSummary ran = runtimeHost->run();
  int exitCode = ran.end == runtime::RunSummary::End::Faulted ? kExitFault : kExitOk;
  const Runtime& rt = runtimeHost->runtime();
  if (args.printState)
    std::cout << stateToJson(*program, rt.vm().image()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  if (!args.quiet) printStatistics(rt, ran.seconds);
  const runtime::RecordingSummary recorded = runtimeHost->finish();
  if (!recorded.recorded) return exitCode;
  const recorder::RecorderStats& s = recorded.stats;
  const recorder::RecordingHealth& health = recorded.health;
  const bool ring = !args.ring.empty() || args.record.empty();
  if (!recorded.ok) {
    std::cerr << fmt::format("scanback: recording to {} failed: {}\n", args.record, recorded.error);
    if (exitCode == kExitOk) exitCode = kExitUsage;
  } else if (!args.quiet && !args.record.empty()) {
    if (ring) {
      // The file holds what the flight recorder kept, not every cycle recorded.
      const recorder::HeldHistory& held = recorded.held;
      if (held.chunks)
        std::cerr << fmt::format("  {} keeps the last {} of {} cycles recorded (cycles {}..{}, {} chunks, {} bytes)",
                                 args.record, held.endCycle - held.firstCycle, s.cyclesRecorded, held.firstCycle,
                                 held.endCycle - 1, held.chunks, s.bytesWritten);
      else
        std::cerr << fmt::format("  {} keeps no cycle ({} recorded)", args.record, s.cyclesRecorded);
    } else {
      std::cerr << fmt::format("  recorded {} cycles to {} ({} chunks, {} bytes, {:.1f} bytes per cycle)",
                               s.cyclesRecorded, args.record, s.chunks, s.bytesWritten,
                               s.cyclesRecorded ? static_cast<double>(s.bytesWritten) / s.cyclesRecorded : 0.0);
    }
    if (s.cyclesDropped) std::cerr << fmt::format(", {} cycles dropped in {} gaps", s.cyclesDropped, s.gaps);
    if (health.lostCycles)
      std::cerr << fmt::format(", {} cycles lost while writing failed ({} failures)", health.lostCycles,
                               health.failures);
    std::cerr << "\n";
  }
  return exitCode;
}

}  // namespace scanback::cli
