// The runtime host in this process (runtime/host.h), without a scanback process: its control
// endpoint on a unix socket in a temporary directory, driven through control/client (status, pause,
// resume, snapshot, stop), the faulted hold, the snapshot request's answers, and I/O drivers whose
// inputs reach the cycle that starts and which get each cycle's outputs. The host's scan thread is
// a thread of the test; every wait is on a condition (tests/support/wait.h).
#include <grp.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "control/client.h"
#include "runtime/host.h"
#include "tests/support/files.h"
#include "tests/support/st_programs.h"
#include "tests/support/wait.h"
#include "tests/vm/test_support.h"

namespace scanback::runtime {
namespace {

namespace fs = std::filesystem;
using test::eventually;

// Its output byte is its input byte plus 3, in the same cycle.
const char* kEcho = R"(PROGRAM Echo
VAR
  inValue AT %IB0 : USINT;
  outValue AT %QB0 : USINT;
END_VAR
outValue := inValue + 3;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Echo;
END_CONFIGURATION
)";

// A directory of its own under the temporary directory, removed with what it holds.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "scanback_runtime_XXXXXX").string();
    if (::mkdtemp(pattern.data())) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A host whose scan thread is a thread of the test, with what it says collected.
class RunningHost {
 public:
  // Creates the host; start() runs it.
  explicit RunningHost(HostOptions options) {
    options.log = [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
    };
    host_ = RuntimeHost::create(std::move(options), error_);
  }
  ~RunningHost() {
    if (thread_.joinable()) {
      host_->stop();
      thread_.join();
    }
  }
  RuntimeHost* host() { return host_.get(); }
  const std::string& error() const { return error_; }
  void start() {
    thread_ = std::thread([this] {
      summary_ = host_->run();
      ended_ = true;
    });
  }
  bool ended() const { return ended_; }
  // Waits for run() to return (stopped by a control client, or at a limit).
  RunSummary join() {
    thread_.join();
    return summary_;
  }
  // Whether the host said a line that holds `text`.
  bool said(const std::string& text) const {
    std::lock_guard lock(mutex_);
    for (const std::string& line : lines_)
      if (line.find(text) != std::string::npos) return true;
    return false;
  }
  std::string lines() const {
    std::lock_guard lock(mutex_);
    std::string all;
    for (const std::string& line : lines_) all += line + "\n";
    return all;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
  std::string error_;
  std::unique_ptr<RuntimeHost> host_;
  std::thread thread_;
  RunSummary summary_;
  std::atomic<bool> ended_{false};
};

// Options for `program` with a control endpoint on a unix socket in `dir`.
HostOptions controlledOptions(std::shared_ptr<const Program> program, const fs::path& dir) {
  HostOptions options;
  options.program = std::move(program);
  options.loop.realtime = true;
  ControlEndpointOptions& endpoint = options.control.emplace();
  std::string error;
  endpoint.endpoint = *control::parseEndpoint("unix://" + (dir / "rt.sock").string(), error);
  return options;
}

std::unique_ptr<control::ControlClient> connectTo(RuntimeHost& host) {
  std::string error;
  const std::optional<control::Endpoint> endpoint = control::parseEndpoint(host.controlEndpoint(), error);
  EXPECT_TRUE(endpoint) << error;
  if (!endpoint) return nullptr;
  std::unique_ptr<control::ControlClient> client = control::ControlClient::connect(*endpoint, std::nullopt, error);
  EXPECT_TRUE(client) << error;
  return client;
}

// The response to {"command": COMMAND, ...extra}; null with a test failure when there is none.
control::json ask(control::ControlClient& client, const std::string& command, control::json extra = {}) {
  control::json request{{"command", command}};
  if (extra.is_object()) request.update(extra);
  std::string error;
  const std::optional<control::json> response = client.request(request, error);
  EXPECT_TRUE(response) << command << ": " << error;
  return response.value_or(control::json());
}

control::json status(control::ControlClient& client) { return ask(client, "status").value("status", control::json()); }

uint64_t cyclesOf(const control::json& status) { return status.value("cycles", uint64_t{0}); }

TEST(RuntimeHost, ControlClientsPauseResumeSnapshotAndStopIt) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  RunningHost running(controlledOptions(test::mustCompile(test::kCounter), dir.path()));
  ASSERT_TRUE(running.host()) << running.error();
  const std::string endpoint = "unix://" + (dir.path() / "rt.sock").string();
  EXPECT_EQ(running.host()->controlEndpoint(), endpoint);
  EXPECT_TRUE(running.said("scanback: control endpoint " + endpoint + " (debugging enabled, at most 32 connections)"))
      << running.lines();
  running.start();
  auto client = connectTo(*running.host());
  ASSERT_TRUE(client);

  ASSERT_TRUE(eventually([&] { return cyclesOf(status(*client)) >= 3; }));
  control::json s = status(*client);
  EXPECT_EQ(s["state"], "running");
  EXPECT_EQ(s["debugEnabled"], true);
  ASSERT_EQ(s["tasks"].size(), 1u);
  EXPECT_EQ(s["tasks"][0]["name"], "Fast");
  EXPECT_TRUE(s.contains("ring")) << s.dump();        // a control endpoint keeps a history
  EXPECT_FALSE(s.contains("recording")) << s.dump();  // in memory only
  EXPECT_FALSE(s.contains("io")) << s.dump();         // no driver

  // The pause is answered once the task holds: the status read next says so, and no cycle runs.
  EXPECT_EQ(ask(*client, "pause")["ok"], true);
  s = status(*client);
  EXPECT_EQ(s["state"], "paused");
  const uint64_t held = cyclesOf(s);
  EXPECT_EQ(cyclesOf(status(*client)), held);
  // Paused, the history holds every cycle run.
  EXPECT_EQ(s["ring"]["lastCycle"], held - 1) << s.dump();

  // A snapshot of that history while paused: every cycle from the first.
  const fs::path snapshot = dir.path() / "paused.trace";
  control::json written = ask(*client, "snapshot", {{"path", snapshot.string()}});
  EXPECT_EQ(written["ok"], true) << written.dump();
  EXPECT_EQ(written["firstCycle"], 0u) << written.dump();
  EXPECT_EQ(written["endCycle"], held) << written.dump();
  EXPECT_TRUE(fs::exists(snapshot));
  EXPECT_GT(fs::file_size(snapshot), 0u);

  EXPECT_EQ(ask(*client, "resume")["ok"], true);
  ASSERT_TRUE(eventually([&] { return cyclesOf(status(*client)) > held + 2; }));
  EXPECT_EQ(status(*client)["state"], "running");

  EXPECT_EQ(ask(*client, "stop")["ok"], true);
  const RunSummary summary = running.join();
  EXPECT_EQ(summary.end, RunSummary::End::Stopped);
  EXPECT_GT(running.host()->runtime().cycle(), held + 2);
  const RecordingSummary recorded = running.host()->finish();
  EXPECT_TRUE(recorded.recorded);
  EXPECT_TRUE(recorded.ok) << recorded.error;
  EXPECT_EQ(recorded.stats.cyclesDropped, 0u);
}

// Forcing through the control endpoint (issue 31): a force is held from a cycle start on (the
// program computes from the forced input), a forced output is what the field gets while the image
// keeps the program's value, status and forced list them, release ends them, and bad requests are
// refused with the reason.
TEST(RuntimeHost, ControlClientsForceAndReleaseVariablesAndAddresses) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  RunningHost running(controlledOptions(test::mustCompile(kEcho), dir.path()));
  ASSERT_TRUE(running.host()) << running.error();
  running.start();
  auto client = connectTo(*running.host());
  ASSERT_TRUE(client);
  control::json forced = ask(*client, "force", {{"target", "%IB0"}, {"value", "40"}});
  ASSERT_EQ(forced["ok"], true) << forced.dump();
  EXPECT_EQ(forced["force"],
            (control::json{{"target", "%IB0"}, {"value", "40"}, {"type", "BYTE"}}));  // the address's own type
  forced = ask(*client, "force", {{"target", "main.outValue"}, {"value", "7"}});
  ASSERT_EQ(forced["ok"], true) << forced.dump();
  EXPECT_EQ(forced["force"]["target"], "Main.outValue");
  // Listed at once (requested), and in the status.
  control::json list = ask(*client, "forced");
  ASSERT_EQ(list["forced"].size(), 2u) << list.dump();
  EXPECT_EQ(list["forced"][0]["target"], "%IB0");
  EXPECT_EQ(list["forced"][1]["value"], "7");
  const uint64_t from = cyclesOf(status(*client));
  ASSERT_TRUE(eventually([&] { return cyclesOf(status(*client)) > from + 2; }));
  EXPECT_EQ(status(*client)["forced"].size(), 2u);
  // Paused between cycles, the image shows what the program computed from the forced input; the
  // output the field got is the forced one.
  EXPECT_EQ(ask(*client, "pause")["ok"], true);
  EXPECT_EQ(test::valueOf(running.host()->runtime(), "Main.inValue"), "40");
  EXPECT_EQ(test::valueOf(running.host()->runtime(), "Main.outValue"), "43");
  ASSERT_FALSE(running.host()->runtime().outputs().empty());
  EXPECT_EQ(running.host()->runtime().outputs()[0], 7);

  control::json released = ask(*client, "release", {{"target", "%IB0"}});
  ASSERT_EQ(released["ok"], true) << released.dump();
  EXPECT_EQ(released["released"], (control::json::array({"%IB0"})));
  released = ask(*client, "release", {{"target", "%IB0"}});
  EXPECT_EQ(released["ok"], false);
  EXPECT_NE(released.value("error", "").find("cannot release '%IB0': it is not forced"), std::string::npos)
      << released.dump();
  const control::json bad = ask(*client, "force", {{"target", "Main.nothing"}, {"value", "1"}});
  EXPECT_EQ(bad["ok"], false);
  EXPECT_NE(bad.value("error", "").find("cannot force 'Main.nothing'"), std::string::npos) << bad.dump();
  EXPECT_EQ(ask(*client, "resume")["ok"], true);
  const uint64_t resumed = cyclesOf(status(*client));
  ASSERT_TRUE(eventually([&] { return cyclesOf(status(*client)) > resumed + 2; }));
  EXPECT_EQ(ask(*client, "release")["released"], (control::json::array({"Main.outValue"})));
  EXPECT_TRUE(ask(*client, "forced")["forced"].empty());
  EXPECT_EQ(ask(*client, "stop")["ok"], true);
  EXPECT_EQ(running.join().end, RunSummary::End::Stopped);
  // Released, the field's input (0) is latched again: the program computes from it.
  EXPECT_EQ(test::valueOf(running.host()->runtime(), "Main.inValue"), "0");
  const RecordingSummary recorded = running.host()->finish();
  EXPECT_TRUE(recorded.ok) << recorded.error;
}

// --control-group (docs/service.md): the control socket is given to the group, mode 0660. As root (as
// CI runs), processes of other users show what those bits mean: a member of the group connects, a
// user outside it is refused by the kernel.
TEST(RuntimeHost, AControlGroupGetsTheSocketWithMode0660) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const bool root = ::geteuid() == 0;
  const gid_t group = root ? 4242 : ::getegid();  // root may give a file to any group; others to theirs
  HostOptions options = controlledOptions(test::mustCompile(test::kCounter), dir.path());
  options.control->group = group;
  options.control->groupName = "plc";
  RunningHost running(std::move(options));
  ASSERT_TRUE(running.host()) << running.error();
  const std::string sock = (dir.path() / "rt.sock").string();
  struct stat st {};
  ASSERT_EQ(::lstat(sock.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, group);
  if (root) {
    ::chmod(dir.path().c_str(), 0755);
    // 0: connected as `uid` with the supplementary groups `groups`; 1: refused (EACCES); 2: else.
    auto connectsAs = [&](uid_t uid, std::vector<gid_t> groups) {
      const pid_t child = ::fork();
      if (child == 0) {
        if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(3);
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, sock.data(), sock.size());
        if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) ::_exit(0);
        ::_exit(errno == EACCES ? 1 : 2);
      }
      int status = 0;
      ::waitpid(child, &status, 0);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 9;
    };
    EXPECT_EQ(connectsAs(4243, {4242}), 0) << "a member of the group";
    EXPECT_EQ(connectsAs(4244, {}), 1) << "a user outside the group";
    EXPECT_EQ(connectsAs(4245, {4241, 4243}), 1) << "a user in other groups";
  }
  running.start();
  running.host()->stop();
  EXPECT_EQ(running.join().end, RunSummary::End::Stopped);
}

TEST(RuntimeHost, ItsOwnerStopsItWhilePaused) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  RunningHost running(controlledOptions(test::mustCompile(test::kCounter), dir.path()));
  ASSERT_TRUE(running.host()) << running.error();
  running.start();
  auto client = connectTo(*running.host());
  ASSERT_TRUE(client);
  EXPECT_EQ(ask(*client, "pause")["ok"], true);
  EXPECT_EQ(status(*client)["state"], "paused");
  running.host()->stop();  // as SIGTERM does: the hold ends, and so does the run
  EXPECT_EQ(running.join().end, RunSummary::End::Stopped);
  // The endpoint closed with the run: nothing is left to resume.
  std::string error;
  const std::optional<control::json> refused = client->request(control::json{{"command", "resume"}}, error);
  EXPECT_FALSE(refused && refused->value("ok", false)) << refused.value_or(control::json()).dump();
}

TEST(RuntimeHost, AFaultedProgramStaysUpFaultedWithItsPositionUntilStopped) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  HostOptions options = controlledOptions(test::mustCompile(test::kFaultsInCycle19), dir.path());
  options.loop.realtime = false;  // to the fault at once
  RunningHost running(std::move(options));
  ASSERT_TRUE(running.host()) << running.error();
  running.start();
  auto client = connectTo(*running.host());
  ASSERT_TRUE(client);

  ASSERT_TRUE(eventually([&] { return status(*client)["state"] == "faulted"; }));
  const control::json s = status(*client);
  EXPECT_EQ(cyclesOf(s), 20u) << s.dump();  // the faulted cycle ran too
  const control::json& fault = s["fault"];
  EXPECT_EQ(fault["code"], "division by zero") << s.dump();
  EXPECT_EQ(fault["cycle"], 19u) << s.dump();
  EXPECT_EQ(fault["file"], "main.st") << s.dump();
  EXPECT_EQ(fault["line"], 8u) << s.dump();
  EXPECT_EQ(fault["column"], 20u) << s.dump();
  // Its history, for a debugger post mortem: the faulted cycle's included, kept current by the hold.
  EXPECT_TRUE(eventually([&] { return status(*client)["ring"].value("lastCycle", uint64_t{0}) == 19; }))
      << status(*client).dump();
  EXPECT_TRUE(running.said("scanback: the runtime stays up in the faulted state")) << running.lines();
  EXPECT_TRUE(running.said("fault: division by zero")) << running.lines();

  // It holds: no pause to give, and run() has not returned.
  const control::json pause = ask(*client, "pause");
  EXPECT_EQ(pause["ok"], false);
  EXPECT_NE(pause.value("error", "").find("the runtime has faulted"), std::string::npos) << pause.dump();
  EXPECT_FALSE(running.ended());

  EXPECT_EQ(ask(*client, "stop")["ok"], true);
  EXPECT_EQ(running.join().end, RunSummary::End::Faulted);
  EXPECT_EQ(running.host()->runtime().cycle(), 19u);  // the faulted cycle did not complete
}

// A driver that serves input byte 0 with a number it counts up at each cycle start, and checks that
// the outputs it gets after the cycle are that cycle's (the program adds 3). All of it on the scan
// thread, as the interface says; the test reads it after run().
class CountingDriver final : public IoDriver {
 public:
  void readInputs(std::span<uint8_t> inputs) override {
    if (inputs.empty()) return;
    if (awaitingOutputs_) ++outOfOrder;
    awaitingOutputs_ = true;
    lastInput_ = static_cast<uint8_t>(reads++ * 7);
    inputs[0] = lastInput_;
  }
  void writeOutputs(std::span<const uint8_t> outputs) override {
    if (!awaitingOutputs_) ++outOfOrder;
    awaitingOutputs_ = false;
    ++writes;
    if (outputs.empty() || outputs[0] != static_cast<uint8_t>(lastInput_ + 3)) ++mismatches;
  }
  IoHealth health() const override {
    IoHealth h;
    h.device = "counting driver";
    h.ok = healthy.load();
    if (!h.ok) h.error = "counting driver: the link is down";
    h.failures = h.ok ? 0 : 1;
    return h;
  }

  uint64_t reads = 0, writes = 0, mismatches = 0, outOfOrder = 0;
  std::atomic<bool> healthy{true};

 private:
  bool awaitingOutputs_ = false;
  uint8_t lastInput_ = 0;
};

TEST(RuntimeHost, ADriversInputsReachTheCycleThatStartsAndItGetsThatCyclesOutputs) {
  HostOptions options;
  options.program = test::mustCompile(kEcho);
  options.loop.cycles = 100;
  auto driver = std::make_shared<CountingDriver>();
  auto second = std::make_shared<CountingDriver>();  // every driver is called, in order
  options.drivers = {driver, second};
  std::string error;
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  EXPECT_EQ(host->run().end, RunSummary::End::CycleLimit);  // this thread is the scan thread
  EXPECT_EQ(driver->reads, 100u);
  EXPECT_EQ(driver->writes, 100u);
  EXPECT_EQ(driver->outOfOrder, 0u);
  EXPECT_EQ(second->reads, 100u);
  EXPECT_EQ(second->writes, 100u);
  // Both count alike, so the byte latched (the second's, written last) is each one's number.
  EXPECT_EQ(driver->mismatches, 0u);
  EXPECT_EQ(second->mismatches, 0u);
  EXPECT_EQ(test::valueOf(host->runtime(), "Main.inValue"), std::to_string(static_cast<uint8_t>(99 * 7)));
}

TEST(RuntimeHost, ADriverThatFaultsGetsNoOutputsOfTheFaultedCycle) {
  const char* faultyEcho = R"(PROGRAM FaultyEcho
VAR
  inValue AT %IB0 : USINT;
  outValue AT %QB0 : USINT;
  zero : USINT;
END_VAR
outValue := inValue + 3;
IF inValue = 35 THEN outValue := 10 / zero; END_IF;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : FaultyEcho;
END_CONFIGURATION
)";
  HostOptions options;
  options.program = test::mustCompile(faultyEcho);
  auto driver = std::make_shared<CountingDriver>();
  options.drivers = {driver};
  std::vector<std::string> said;
  options.log = [&](const std::string& line) { said.push_back(line); };
  std::string error;
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  // Without a control endpoint a fault ends the run at once. Input 35 = 5 * 7: the sixth cycle.
  EXPECT_EQ(host->run().end, RunSummary::End::Faulted);
  EXPECT_EQ(driver->reads, 6u);
  EXPECT_EQ(driver->writes, 5u);
  EXPECT_EQ(driver->mismatches, 0u);
  ASSERT_FALSE(said.empty());
  EXPECT_NE(said.back().find("main.st:8:"), std::string::npos) << said.back();
}

TEST(RuntimeHost, TheDriversHealthIsInTheStatus) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  HostOptions options = controlledOptions(test::mustCompile(kEcho), dir.path());
  auto driver = std::make_shared<CountingDriver>();
  options.drivers = {driver};
  RunningHost running(std::move(options));
  ASSERT_TRUE(running.host()) << running.error();
  running.start();
  auto client = connectTo(*running.host());
  ASSERT_TRUE(client);
  control::json s = status(*client);
  ASSERT_TRUE(s.contains("io")) << s.dump();
  ASSERT_EQ(s["io"].size(), 1u);
  EXPECT_EQ(s["io"][0]["device"], "counting driver");
  EXPECT_EQ(s["io"][0]["state"], "ok");
  EXPECT_FALSE(s["io"][0].contains("error"));

  driver->healthy = false;
  s = status(*client);
  EXPECT_EQ(s["io"][0]["state"], "failing") << s.dump();
  EXPECT_EQ(s["io"][0]["error"], "counting driver: the link is down") << s.dump();
  EXPECT_EQ(s["io"][0]["failures"], 1u) << s.dump();
  EXPECT_EQ(s["state"], "running");  // a driver's failure is its own: the task goes on

  EXPECT_EQ(ask(*client, "stop")["ok"], true);
  EXPECT_EQ(running.join().end, RunSummary::End::Stopped);
  EXPECT_EQ(driver->mismatches, 0u);
  EXPECT_EQ(driver->outOfOrder, 0u);
}

TEST(RuntimeHost, ASnapshotRequestIsAnsweredAsTheRecordingAllows) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string trace = (dir.path() / "plain.trace").string();
  auto runWith = [&](std::optional<recorder::RecorderOptions> recording) {
    HostOptions options;
    options.program = test::mustCompile(test::kCounter);
    options.loop.cycles = 5;
    options.recording = std::move(recording);
    std::vector<std::string> said;
    options.log = [&](const std::string& line) { said.push_back(line); };
    std::string error;
    std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
    EXPECT_TRUE(host) << error;
    if (!host) return std::string();
    host->requestSnapshot();  // as SIGUSR1 does
    EXPECT_EQ(host->run().end, RunSummary::End::CycleLimit);
    EXPECT_TRUE(host->finish().ok);
    std::string all;
    for (const std::string& line : said) all += line + "\n";
    return all;
  };
  EXPECT_NE(runWith(std::nullopt).find("SIGUSR1: this run records nothing"), std::string::npos);

  recorder::RecorderOptions plain;
  plain.path = trace;
  const std::string whole = runWith(plain);
  EXPECT_NE(whole.find("SIGUSR1: the whole recording is in " + trace + ".partial already"), std::string::npos) << whole;

  recorder::RecorderOptions ring;
  ring.path = (dir.path() / "ring.trace").string();
  ring.ringBytes = 1'000'000;
  const std::string snapshot = runWith(ring);
  // Named after the trace and the cycle it was asked at (the first), written by the end.
  const std::string path = (dir.path() / "ring-0.trace").string();
  EXPECT_NE(snapshot.find("scanback: snapshot without cycles written to " + path), std::string::npos) << snapshot;
  EXPECT_TRUE(fs::exists(path));
}

// In a child process (the file size limit is the process's): a host records to `dir`/t.trace with
// a control endpoint; writing fails by a file size limit, as on a full disk, and works again once
// it is lifted. What the status said goes to `report`; the exit code is 0 when everything went as
// expected, else the step that did not.
int recordThroughAFailure(const fs::path& dir, const fs::path& report) {
  std::signal(SIGXFSZ, SIG_IGN);
  HostOptions options = controlledOptions(test::mustCompile(test::kCounter), dir);
  const std::string trace = (dir / "t.trace").string();
  recorder::RecorderOptions& recording = options.recording.emplace();
  recording.path = trace;
  recording.flushEveryNs = 20'000'000;  // a block every other cycle: the failure comes soon
  RunningHost running(std::move(options));
  if (!running.host()) return 10;
  running.start();
  auto client = connectTo(*running.host());
  if (!client) return 11;
  std::ofstream out(report);
  control::json s;
  auto recordingIs = [&](const std::string& state) {
    s = status(*client);
    return s.contains("recording") && s["recording"]["state"] == state;
  };
  const std::string partial = trace + ".partial";
  std::error_code ec;
  if (!eventually([&] { return recordingIs("ok") && fs::file_size(partial, ec) > 0; })) return 12;
  rlimit limit{};
  ::getrlimit(RLIMIT_FSIZE, &limit);
  const rlimit full{fs::file_size(partial) + 100, limit.rlim_max};
  if (::setrlimit(RLIMIT_FSIZE, &full) != 0) return 13;
  // The failure is said at once: in the status (with the path and the system's reason) and in
  // what the host says, while the task goes on.
  const bool failing = eventually([&] { return recordingIs("failing"); });
  out << "failing: " << s.dump() << "\n" << running.lines();
  if (!failing) return 14;
  const uint64_t cyclesWhenFailing = cyclesOf(s);
  const std::string error = s["recording"].value("error", "");
  if (s["recording"]["path"] != trace || error.find("File too large") == std::string::npos) return 15;
  if (!eventually([&] { return running.said("recording to " + trace + " failed at cycle"); })) return 16;
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 17;
  // Writing works again; the cycles lost meanwhile are counted.
  const bool resumed = eventually([&] { return recordingIs("ok"); });
  out << "resumed: " << s.dump() << "\n";
  if (!resumed) return 18;
  if (s["recording"]["failures"] == 0u || s["recording"]["lostCycles"] == 0u) return 19;
  if (cyclesOf(s) <= cyclesWhenFailing || s["state"] != "running") return 20;
  if (ask(*client, "stop")["ok"] != true || running.join().end != RunSummary::End::Stopped) return 21;
  const RecordingSummary recorded = running.host()->finish();
  out << "finished: " << recorded.ok << " " << recorded.error << " lost " << recorded.health.lostCycles << "\n";
  if (!recorded.ok || recorded.health.lostCycles == 0 || !fs::exists(trace)) return 22;
  return 0;
}

TEST(RuntimeHost, ARecordingThatFailsIsSaidInTheStatusAndResumes) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const fs::path report = dir.path() / "report.txt";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 30;  // (an exception: gtest must not go on in the child)
    try {
      code = recordThroughAFailure(dir.path(), report);
    } catch (const std::exception& e) {
      std::ofstream(report, std::ios::app) << "exception: " << e.what() << "\n";
    }
    ::_exit(code);
  }
  EXPECT_EQ(test::exitCode(child, std::chrono::seconds(60)), 0) << test::readText(report);
}

TEST(RuntimeHost, WhatItCannotOpenIsAClearError) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  HostOptions recording;
  recording.program = test::mustCompile(test::kCounter);
  const std::string path = (dir.path() / "missing" / "t.trace").string();
  recording.recording.emplace().path = path;
  std::string error;
  EXPECT_FALSE(RuntimeHost::create(std::move(recording), error));
  EXPECT_EQ(error.rfind("cannot record to " + path + ": ", 0), 0u) << error;

  HostOptions controlled = controlledOptions(test::mustCompile(test::kCounter), dir.path() / "missing");
  error.clear();
  EXPECT_FALSE(RuntimeHost::create(std::move(controlled), error));
  EXPECT_NE(error.find((dir.path() / "missing" / "rt.sock").string()), std::string::npos) << error;
}

}  // namespace
}  // namespace scanback::runtime
