// The runtime host's systemd notifications (sd_notify, runtime/host.cpp), without systemd: the
// test binds a unix datagram socket, names it in NOTIFY_SOCKET (and a watchdog in WATCHDOG_USEC)
// and reads what the host sends: READY=1 after the first cycle, WATCHDOG=1 while cycles run and not
// while a cycle hangs, STOPPING=1 at the end. Each test runs in a process of its own (ctest), so
// the environment it sets is its own.
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "control/client.h"
#include "control/endpoint.h"
#include "runtime/host.h"
#include "tests/support/st_programs.h"
#include "tests/support/wait.h"
#include "tests/vm/test_support.h"

namespace scanback::runtime {
namespace {

namespace fs = std::filesystem;

// systemd's end of NOTIFY_SOCKET: a unix datagram socket in a directory of its own.
class NotifySocket {
 public:
  NotifySocket() {
    std::string pattern = (fs::temp_directory_path() / "scanback_notify_XXXXXX").string();
    if (!::mkdtemp(pattern.data())) return;
    dir_ = pattern;
    path_ = (dir_ / "notify").string();
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path_.c_str());
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd_);
      fd_ = -1;
      return;
    }
    setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    if (fd_ >= 0) close(fd_);
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  bool ok() const { return fd_ >= 0; }
  const fs::path& dir() const { return dir_; }
  // The next message, waiting up to `timeout`; empty when none came.
  std::string next(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return {};
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
  }
  // Reads messages until one holds `text` (true) or none comes for 10 s (false); all it read go
  // to `seen`.
  bool awaitHolding(const std::string& text, std::vector<std::string>& seen) {
    for (;;) {
      const std::string m = next();
      if (m.empty()) return false;
      seen.push_back(m);
      if (m.find(text) != std::string::npos) return true;
    }
  }

 private:
  fs::path dir_;
  std::string path_;
  int fd_ = -1;
};

TEST(RuntimeHostNotify, ReadyAfterTheFirstCycleThenWatchdogPingsThenStopping) {
  NotifySocket notify;
  ASSERT_TRUE(notify.ok());
  setenv("WATCHDOG_USEC", "200000", 1);  // a ping every 100 ms
  HostOptions options;
  options.program = test::mustCompile(test::kCounter);
  options.loop.realtime = true;
  options.log = [](const std::string&) {};
  std::string error;
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  std::thread scan([&] { host->run(); });

  std::vector<std::string> seen;
  ASSERT_TRUE(notify.awaitHolding("READY=1", seen));
  EXPECT_EQ(seen.size(), 1u) << "READY=1 is the first message";
  EXPECT_NE(seen.back().find("STATUS=running, "), std::string::npos) << seen.back();
  ASSERT_TRUE(notify.awaitHolding("WATCHDOG=1", seen));
  ASSERT_TRUE(notify.awaitHolding("WATCHDOG=1", seen));  // and again
  host->stop();
  scan.join();
  ASSERT_TRUE(notify.awaitHolding("STOPPING=1", seen));
  for (size_t i = 0; i + 1 < seen.size(); ++i) EXPECT_EQ(seen[i].find("STOPPING=1"), std::string::npos);
  EXPECT_NE(seen.back().find("STATUS=stopping after "), std::string::npos) << seen.back();
}

// Holds the scan thread in readInputs once told to, as a cycle that hangs would.
class HangingDriver final : public IoDriver {
 public:
  void readInputs(std::span<uint8_t>) override {
    std::unique_lock lock(mutex_);
    if (!hang_) return;
    hanging_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return !hang_; });
    hanging_ = false;
  }
  void writeOutputs(std::span<const uint8_t>) override {}
  IoHealth health() const override { return {}; }
  void hang(bool on) {
    std::lock_guard lock(mutex_);
    hang_ = on;
    changed_.notify_all();
  }
  void awaitHanging() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return hanging_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool hang_ = false;
  bool hanging_ = false;
};

TEST(RuntimeHostNotify, AScanThatHangsStopsThePings) {
  NotifySocket notify;
  ASSERT_TRUE(notify.ok());
  setenv("WATCHDOG_USEC", "100000", 1);  // a ping every 50 ms
  auto driver = std::make_shared<HangingDriver>();
  HostOptions options;
  options.program = test::mustCompile(test::kCounter);
  options.loop.realtime = true;
  options.drivers = {driver};
  options.log = [](const std::string&) {};
  std::string error;
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  std::thread scan([&] { host->run(); });
  std::vector<std::string> seen;
  ASSERT_TRUE(notify.awaitHolding("WATCHDOG=1", seen));

  driver->hang(true);
  driver->awaitHanging();
  // What was sent before the hang began is read; then nothing comes for ten ping intervals (a
  // watchdog of 100 ms would have fired five times over).
  while (!notify.next(std::chrono::milliseconds(0)).empty()) {
  }
  const std::string during = notify.next(std::chrono::milliseconds(500));
  EXPECT_EQ(during.find("WATCHDOG=1"), std::string::npos) << during;

  driver->hang(false);
  EXPECT_TRUE(notify.awaitHolding("WATCHDOG=1", seen));  // the cycles run again: so do the pings
  host->stop();
  scan.join();
}

TEST(RuntimeHostNotify, APausedRuntimeIsAliveItsPingsGoOnAndItsStatusSaysPaused) {
  NotifySocket notify;
  ASSERT_TRUE(notify.ok());
  setenv("WATCHDOG_USEC", "100000", 1);
  HostOptions options;
  options.program = test::mustCompile(test::kCounter);
  options.loop.realtime = true;
  options.log = [](const std::string&) {};
  std::string error;
  options.control.emplace().endpoint = *control::parseEndpoint("unix://" + (notify.dir() / "rt.sock").string(), error);
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  std::thread scan([&] { host->run(); });
  std::vector<std::string> seen;
  ASSERT_TRUE(notify.awaitHolding("READY=1", seen));

  std::unique_ptr<control::ControlClient> client =
      control::ControlClient::connect(*control::parseEndpoint(host->controlEndpoint(), error), std::nullopt, error);
  ASSERT_TRUE(client) << error;
  const std::optional<control::json> paused = client->request({{"command", "pause"}}, error);
  ASSERT_TRUE(paused && (*paused)["ok"] == true) << error;
  ASSERT_TRUE(notify.awaitHolding("STATUS=paused, ", seen));
  EXPECT_NE(seen.back().find("WATCHDOG=1"), std::string::npos) << seen.back();
  ASSERT_TRUE(notify.awaitHolding("WATCHDOG=1\nSTATUS=paused, ", seen));  // and again, still paused
  ASSERT_TRUE(client->request({{"command", "resume"}}, error)) << error;
  EXPECT_TRUE(notify.awaitHolding("STATUS=running, ", seen));
  host->stop();
  scan.join();
}

TEST(RuntimeHostNotify, WithoutNotifySocketNothingIsSent) {
  NotifySocket notify;
  ASSERT_TRUE(notify.ok());
  unsetenv("NOTIFY_SOCKET");  // the socket is there; the host is not told of it
  HostOptions options;
  options.program = test::mustCompile(test::kCounter);
  options.loop.cycles = 50;
  options.log = [](const std::string&) {};
  std::string error;
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  host->run();
  EXPECT_EQ(host->runtime().cycle(), 50u);
  EXPECT_EQ(notify.next(std::chrono::milliseconds(0)), "");
}

}  // namespace
}  // namespace scanback::runtime
