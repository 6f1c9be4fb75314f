// `scanback ctl`: a client of a runtime's control endpoint (control/client.h, docs/control.md).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "control/client.h"
#include "net/auth_token.h"

namespace scanback::cli {

namespace {

// "  %IX0.2 = TRUE (BOOL), since cycle 120" for each force, or "none".
void printForced(const control::json& forced) {
  if (forced.empty()) std::cout << "forced: none\n";
  for (const auto& f : forced)
    std::cout << fmt::format("forced: {} = {} ({}), since cycle {}\n", f.value("target", "?"), f.value("value", "?"),
                             f.value("type", "?"), f.value("sinceCycle", uint64_t{0}));
}

std::string formatNs(uint64_t ns) { return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6); }

void printStatus(const control::json& s) {
  std::cout << fmt::format("state: {}\ncycles: {}\ndebugging: {}\n", s.value("state", "?"), s.value("cycles", 0),
                           s.value("debugEnabled", false) ? "enabled" : "disabled");
  for (const auto& t : s.value("tasks", control::json::array())) {
    const control::json times = t.value("cycleTimeNs", control::json::object());
    std::cout << fmt::format("task {}: {} cycles, cycle time median {}, p99 {}, max {}\n", t.value("name", "?"),
                             t.value("cycles", 0), formatNs(times.value("median", 0)), formatNs(times.value("p99", 0)),
                             formatNs(times.value("max", 0)));
  }
  if (s.contains("ring")) {
    const control::json& r = s["ring"];
    if (r.contains("firstCycle"))
      std::cout << fmt::format("history held: cycles {}..{}, {} bytes in {} chunks\n", r.value("firstCycle", 0),
                               r.value("lastCycle", 0), r.value("bytes", 0), r.value("chunks", 0));
    else
      std::cout << "history held: none yet\n";
  }
  if (s.contains("recording")) {
    const control::json& r = s["recording"];
    if (r.value("state", "") == "failing")
      std::cout << fmt::format("recording: failed: {} since cycle {} (to {})\n", r.value("error", "?"),
                               r.value("sinceCycle", 0), r.value("path", "?"));
    else
      std::cout << fmt::format("recording: to {}{}\n", r.value("path", "?"),
                               r.value("lostCycles", 0)
                                   ? fmt::format(", {} cycles lost while writing failed", r.value("lostCycles", 0))
                                   : std::string());
  }
  // The I/O drivers: "io rack1 (tcp://127.0.0.1:1502): ok, 200.0 requests/s, round trip p50 0.210 ms, p99
  // 0.900 ms, 0 failures" and, while failing, the error on a line of its own.
  for (const auto& d : s.value("io", control::json::array())) {
    std::string line = fmt::format("io {}", d.value("device", "?"));
    if (d.contains("endpoint")) line += fmt::format(" ({})", d.value("endpoint", "?"));
    line += fmt::format(": {}", d.value("state", "?"));
    if (d.contains("requestRate")) line += fmt::format(", {:.1f} requests/s", d.value("requestRate", 0.0));
    if (d.contains("roundTripNs"))
      line += fmt::format(", round trip p50 {}, p99 {}", formatNs(d["roundTripNs"].value("p50", 0)),
                          formatNs(d["roundTripNs"].value("p99", 0)));
    line += fmt::format(", {} failures", d.value("failures", 0));
    std::cout << line << "\n";
    if (d.contains("error")) std::cout << fmt::format("  error: {}\n", d.value("error", "?"));
  }
  if (s.contains("forced") && !s["forced"].empty()) printForced(s["forced"]);
  if (s.contains("fault")) std::cout << "fault: " << s["fault"].value("message", "?") << "\n";
}

}  // namespace

int ctlCommand(const CtlArgs& args) {
  std::string error;
  const std::optional<control::Endpoint> endpoint = control::parseEndpoint(args.endpoint, error);
  if (!endpoint) {
    std::cerr << "scanback: " << error << "\n";
    return kExitUsage;
  }
  std::optional<std::string> token;
  if (!args.authTokenFile.empty()) {
    std::string warning;
    token = net::readAuthToken(args.authTokenFile, error, warning);
    if (!token) {
      std::cerr << "scanback: --auth-token-file: " << error << "\n";
      return kExitUsage;
    }
    if (!warning.empty()) std::cerr << "scanback: warning: " << warning << "\n";
  }
  std::unique_ptr<control::ControlClient> client = control::ControlClient::connect(*endpoint, token, error);
  if (!client) {
    std::cerr << "scanback: " << error << "\n";
    return kExitUsage;
  }
  control::json request;
  switch (args.action) {
    case CtlArgs::Action::Status: request = {{"command", "status"}}; break;
    case CtlArgs::Action::Stop: request = {{"command", "stop"}}; break;
    case CtlArgs::Action::Pause: request = {{"command", "pause"}}; break;
    case CtlArgs::Action::Resume: request = {{"command", "resume"}}; break;
    case CtlArgs::Action::Force:
      request = {{"command", "force"}, {"target", args.target}, {"value", args.value}};
      break;
    case CtlArgs::Action::Release:
      request = {{"command", "release"}};
      if (!args.target.empty()) request["target"] = args.target;
      break;
    case CtlArgs::Action::Forced: request = {{"command", "forced"}}; break;
    case CtlArgs::Action::Snapshot: {
      // The runtime writes the file: the path is made absolute here, where the user gave it.
      std::error_code ec;
      const std::filesystem::path path = std::filesystem::absolute(args.snapshotPath, ec);
      request = {{"command", "snapshot"}, {"path", path.lexically_normal().string()}};
      break;
    }
  }
  const std::optional<control::json> response = client->request(request, error);
  if (!response) {
    std::cerr << "scanback: " << error << "\n";
    return kExitUsage;
  }
  if (!response->value("ok", false)) {
    const auto message = response->find("error");
    std::cerr << "scanback: " << endpoint->text() << ": "
              << (message != response->end() && message->is_string() ? message->get<std::string>()
                                                                     : std::string("refused"))
              << "\n";
    return kExitUsage;
  }
  switch (args.action) {
    case CtlArgs::Action::Status:
      if (args.json)
        std::cout << response->value("status", control::json::object()).dump(2) << "\n";
      else
        printStatus(response->value("status", control::json::object()));
      break;
    case CtlArgs::Action::Snapshot:
      std::cout << fmt::format("snapshot of cycles {}..{} written to {} ({} bytes)\n", response->value("firstCycle", 0),
                               response->value("endCycle", uint64_t{1}) - 1, response->value("path", "?"),
                               response->value("bytes", 0));
      break;
    case CtlArgs::Action::Stop: std::cout << "stop requested\n"; break;
    case CtlArgs::Action::Pause: std::cout << "paused: the task holds between cycles (scanback ctl resume)\n"; break;
    case CtlArgs::Action::Resume: std::cout << "resumed\n"; break;
    case CtlArgs::Action::Force: {
      const control::json f = response->value("force", control::json::object());
      std::cout << fmt::format("{} forced to {} ({}) from the next cycle start\n", f.value("target", "?"),
                               f.value("value", "?"), f.value("type", "?"));
      break;
    }
    case CtlArgs::Action::Release: {
      const control::json released = response->value("released", control::json::array());
      if (released.empty()) std::cout << "nothing was forced\n";
      for (const auto& t : released)
        std::cout << "released: " << (t.is_string() ? t.get<std::string>() : t.dump()) << "\n";
      break;
    }
    case CtlArgs::Action::Forced:
      if (args.json)
        std::cout << response->value("forced", control::json::array()).dump(2) << "\n";
      else
        printForced(response->value("forced", control::json::array()));
      break;
  }
  return kExitOk;
}

}  // namespace scanback::cli
