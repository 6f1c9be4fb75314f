// A runtime started with `scanback run FILE --realtime --quiet --control unix://DIR/rt.sock` in a
// child process, for tests that attach to it or control it: its endpoint, its stderr read line by
// line (waiting on the pipe, never sleeping), its end. Needs SCANBACK_BINARY (the scanback
// executable under test).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/wait.h"

namespace scanback::test {

#ifdef SCANBACK_BINARY
// `scanback run FILE --realtime --quiet --control unix://DIR/rt.sock EXTRA...`.
class ControlRuntime {
 public:
  ControlRuntime(const std::string& file, const std::filesystem::path& dir, std::vector<std::string> extra = {})
      : socket_((dir / "rt.sock").string()) {
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) return;
    std::vector<std::string> args = {SCANBACK_BINARY, "run", file, "--realtime", "--quiet", "--control", endpoint()};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(err[1], 2);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(err[1]);
    stderr_ = err[0];
  }
  ~ControlRuntime() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (stderr_ >= 0) ::close(stderr_);
  }
  std::string endpoint() const { return "unix://" + socket_; }
  pid_t pid() const { return pid_; }

  // Waits for the stderr line that starts with `prefix`; false when it does not come in 20 s.
  bool awaitLine(const std::string& prefix) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      size_t nl;
      while ((nl = buffer_.find('\n')) != std::string::npos) {
        const std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        lines_.push_back(line);
        if (line.starts_with(prefix)) return true;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{stderr_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[512];
      const ssize_t n = ::read(stderr_, chunk, sizeof chunk);
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }
  bool ready() { return awaitLine("scanback: control endpoint"); }
  // Whether it is still running (not reaped).
  bool running() const { return pid_ > 0 && !awaitExit(pid_, std::chrono::milliseconds(0)); }
  // Its exit code, waiting up to 20 s.
  int exitCode() {
    const int code = scanback::test::exitCode(pid_, std::chrono::seconds(20));
    pid_ = -1;
    return code;
  }

 private:
  std::string socket_;
  pid_t pid_ = -1;
  int stderr_ = -1;
  std::string buffer_;
  std::vector<std::string> lines_;
};

#endif  // SCANBACK_BINARY

}  // namespace scanback::test
