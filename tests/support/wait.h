// Waiting in tests without sleeping (docs/architecture.md, conventions): on a condition that some
// other thread or process makes true, polled with a generous deadline, where each pause between
// polls is itself a wait on something that happens (a child process ending), or a yield.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace scanback::test {

using namespace std::chrono_literals;

// Polls `holds` until it is true (true) or `timeout` has passed (false), yielding between polls.
template <class Predicate>
bool eventually(Predicate holds, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!holds()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// A file descriptor that becomes readable when process `pid` (a child) ends; -1 when it cannot be
// opened (the process is gone already).
inline int openProcess(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// Waits until one of `pids` (children not reaped yet) ends, or until `deadline`.
template <class TimePoint>
void awaitAnyExit(const std::vector<pid_t>& pids, TimePoint deadline) {
  std::vector<pollfd> fds;
  for (pid_t pid : pids)
    if (const int fd = openProcess(pid); fd >= 0) fds.push_back(pollfd{fd, POLLIN, 0});
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (!fds.empty() && left.count() > 0) ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
  for (const pollfd& p : fds) ::close(p.fd);
}

// Waits until `pid` (a child) ends or `timeout` passes; true when it ended (not reaped yet).
inline bool awaitExit(pid_t pid, std::chrono::milliseconds timeout) {
  const int fd = openProcess(pid);
  if (fd < 0) return true;  // (gone: nothing to wait for)
  pollfd p{fd, POLLIN, 0};
  const bool ended = ::poll(&p, 1, static_cast<int>(timeout.count())) > 0;
  ::close(fd);
  return ended;
}

// The exit code of child `pid`, or -1 when it did not exit within `timeout` (it is then killed)
// or died of a signal.
inline int exitCode(pid_t pid, std::chrono::milliseconds timeout) {
  int status = 0;
  if (!awaitExit(pid, timeout)) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Polls `holds` while child `pid` runs: true when it holds, false when `timeout` passes or the
// child ends first. Between polls it waits for the child's end for up to `poll`.
template <class Predicate>
bool whileRunning(pid_t pid, Predicate holds, std::chrono::milliseconds timeout, std::chrono::milliseconds poll = 5ms) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!holds()) {
    if (std::chrono::steady_clock::now() > deadline || awaitExit(pid, poll)) return holds();
  }
  return true;
}

// Fields of /proc/<path>/stat after the command name (field 3, the state, is at index 0).
inline std::vector<std::string> statFields(const std::string& path) {
  std::ifstream in("/proc/" + path + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(text.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

// The CPU time (user + system) a process or thread (`path`: "PID" or "self/task/TID") has used.
inline std::chrono::milliseconds cpuTime(const std::string& path) {
  const std::vector<std::string> f = statFields(path);
  if (f.size() < 13) return 0ms;
  const long ticks = std::stol(f[11]) + std::stol(f[12]);  // utime, stime (fields 14 and 15)
  return std::chrono::milliseconds(ticks * 1000 / ::sysconf(_SC_CLK_TCK));
}

inline pid_t currentThreadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// The CPU time used so far by this process's threads other than the caller: work another thread
// is doing (a search under way) shows there.
inline std::chrono::milliseconds othersCpuTime() {
  std::chrono::milliseconds total{0};
  const std::string self = std::to_string(currentThreadId());
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const std::string tid = e.path().filename().string();
    if (tid != self) total += cpuTime("self/task/" + tid);
  }
  return total;
}

// Whether thread `tid` of this process is blocked in the kernel (a read, accept, futex wait).
inline bool blocked(pid_t tid) {
  const std::vector<std::string> f = statFields("self/task/" + std::to_string(tid));
  return !f.empty() && (f[0] == "S" || f[0] == "D");
}

}  // namespace scanback::test
