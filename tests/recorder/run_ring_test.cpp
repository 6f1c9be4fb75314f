// `scanback run --record TRACE --ring ...`: SIGUSR1 writes a snapshot while the run goes on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/files.h"
#include "tests/support/trace_support.h"
#include "tests/support/wait.h"
#include "traces/trace_reader.h"

namespace fs = std::filesystem;
using namespace scanback;
using namespace std::chrono_literals;

extern char** environ;

namespace {

fs::path scanbackBinary() {
#ifdef SCANBACK_BINARY
  return SCANBACK_BINARY;
#else
  // Built next to the test binary (both at the top of the build directory).
  return fs::read_symlink("/proc/self/exe").parent_path() / "scanback";
#endif
}

// Starts `args` with stderr sent to `errFile`; -1 on failure.
pid_t spawn(const std::vector<std::string>& args, const fs::path& errFile) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

using test::readText;

TEST(RunRing, Sigusr1WritesASnapshotAndTheRunGoesOn) {
  const fs::path binary = scanbackBinary();
  if (!fs::exists(binary)) GTEST_SKIP() << binary << " is not built";
  const fs::path dir = fs::temp_directory_path() / ("scanback_run_ring_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path trace = dir / "plant.trace";
  const fs::path errFile = dir / "stderr.txt";
  std::vector<std::string> args = {binary.string(), "run"};
  for (const std::string& file : test::stFilesIn(test::plantDirectory())) args.push_back(file);
  // Many more cycles than it can run before it is interrupted.
  for (const char* a : {"--cycles", "1000000000", "--quiet", "--keyframe-every", "200", "--ring", "100KB", "--record"})
    args.push_back(a);
  args.push_back(trace.string());
  const pid_t pid = spawn(args, errFile);
  ASSERT_GT(pid, 0);
  // The handler is installed before the trace is created, and the writer thread is started once
  // its header is written (which takes a sanitizer build a good part of a second).
  const auto threads = [&] {
    std::error_code ignored;
    const fs::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ignored);
    return std::distance(fs::begin(tasks), fs::end(tasks));
  };
  const bool started = test::whileRunning(
      pid, [&] { return fs::exists(trace.string() + ".partial") && threads() >= 2; }, 10s);
  // Some history: the run has been scanning for a while (50 ms of its CPU time since then).
  const auto cpuAtStart = test::cpuTime(std::to_string(pid));
  const bool scanned =
      started && test::whileRunning(
                     pid, [&] { return test::cpuTime(std::to_string(pid)) >= cpuAtStart + 50ms; }, 10s);
  if (!scanned) ::kill(pid, SIGKILL);
  ASSERT_TRUE(started) << readText(errFile);
  ASSERT_TRUE(scanned) << readText(errFile);
  ASSERT_EQ(::kill(pid, SIGUSR1), 0);
  fs::path snapshot;
  const bool written = test::whileRunning(
      pid,
      [&] {
        for (const auto& e : fs::directory_iterator(dir)) {
          const std::string name = e.path().filename().string();
          if (name.starts_with("plant-") && name.ends_with(".trace")) {
            snapshot = e.path();
            return true;
          }
        }
        return false;
      },
      10s);
  ::kill(pid, SIGINT);  // ends the run cleanly
  EXPECT_EQ(test::exitCode(pid, 10s), 0) << readText(errFile);
  ASSERT_TRUE(written) << readText(errFile);

  // plant-<cycle>.trace, named on stderr.
  const std::string cycle = snapshot.stem().string().substr(6);
  EXPECT_FALSE(cycle.empty());
  EXPECT_EQ(cycle.find_first_not_of("0123456789"), std::string::npos) << snapshot;
  const std::string err = readText(errFile);
  EXPECT_NE(err.find("written to " + snapshot.string()), std::string::npos) << err;
  std::string error;
  auto reader = trace::TraceReader::open(snapshot.string(), error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(reader->complete());
  EXPECT_TRUE(reader->usedIndex());
  ASSERT_FALSE(reader->blocks().empty());
  const trace::BlockInfo& last = reader->blocks().back();
  EXPECT_GE(last.firstCycle + last.cycleCount, std::stoull(cycle)) << "every cycle run before the signal";
  EXPECT_LE(last.firstCycle + last.cycleCount, std::stoull(cycle) + 1);
  // `scanback trace info` accepts it, and the run's own trace.
  for (const fs::path& t : {snapshot, trace}) {
    const pid_t info = spawn({binary.string(), "trace", "info", t.string()}, dir / "info.txt");
    ASSERT_GT(info, 0);
    EXPECT_EQ(test::exitCode(info, 10s), 0) << readText(dir / "info.txt");
  }
  fs::remove_all(dir);
}

}  // namespace
