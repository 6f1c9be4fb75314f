// The scan thread's real-time priority (runtime/realtime.h): only the scan thread gets SCHED_FIFO,
// every thread started before run() keeps the ordinary policy, and a refusal says what to change.
// Where the kernel lets this process use SCHED_FIFO (root, CAP_SYS_NICE, RLIMIT_RTPRIO) the host is
// run with it; where it does not, the refusal is what is checked.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <string>
#include <thread>

#include "runtime/host.h"
#include "runtime/realtime.h"
#include "tests/vm/test_support.h"

namespace scanback::runtime {
namespace {

struct Policy {
  int policy = -1;
  int priority = -1;
};

Policy policyOfThisThread() {
  Policy p;
  sched_param param{};
  ::pthread_getschedparam(::pthread_self(), &p.policy, &param);
  p.priority = param.sched_priority;
  return p;
}

// Notes the policy of the thread that reads its inputs: the scan thread.
class PolicyDriver final : public IoDriver {
 public:
  void readInputs(std::span<uint8_t>) override { seen = policyOfThisThread(); }
  void writeOutputs(std::span<const uint8_t>) override {}
  IoHealth health() const override { return {}; }
  Policy seen;
};

TEST(RuntimeRealtime, APriorityOutsideOneTo99IsRefusedWithTheRange) {
  for (int priority : {0, -5, 100}) {
    std::string error;
    EXPECT_FALSE(probeScanPriority(priority, error));
    EXPECT_NE(error.find("from 1 to 99"), std::string::npos) << error;
  }
}

TEST(RuntimeRealtime, OnlyTheScanThreadRunsUnderSchedFifo) {
  constexpr int kPriority = 10;
  std::string error;
  const Policy before = policyOfThisThread();
  if (!probeScanPriority(kPriority, error)) {
    // Not permitted here: the refusal names the policy and what would permit it, and nothing changed.
    EXPECT_NE(error.find("SCHED_FIFO"), std::string::npos) << error;
    EXPECT_TRUE(error.find("RLIMIT_RTPRIO") != std::string::npos || error.find("CAP_SYS_NICE") != std::string::npos)
        << error;
    EXPECT_EQ(policyOfThisThread().policy, before.policy);
    return;
  }
  // The probe went back to the ordinary policy at once.
  EXPECT_EQ(policyOfThisThread().policy, before.policy);
  EXPECT_EQ(policyOfThisThread().priority, before.priority);

  HostOptions options;
  options.program = test::mustCompile(R"(PROGRAM P
VAR n : INT; END_VAR
n := n + 1;
END_PROGRAM
CONFIGURATION Cfg
  TASK T (INTERVAL := T#2ms, PRIORITY := 1);
  PROGRAM Main WITH T : P;
END_CONFIGURATION
)");
  options.loop.realtime = true;
  options.loop.cycles = 20;
  options.scanPriority = kPriority;
  std::vector<std::string> said;
  options.log = [&said](const std::string& line) { said.push_back(line); };
  auto driver = std::make_shared<PolicyDriver>();
  options.drivers = {driver};
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  // The scan thread is a thread of its own here, so that this test's thread keeps its policy.
  Policy bystander;
  std::atomic<bool> scanning{false};
  std::thread scan([&] {
    scanning = true;
    EXPECT_EQ(host->run().end, RunSummary::End::CycleLimit);
  });
  std::thread other([&] {
    while (!scanning) std::this_thread::yield();
    bystander = policyOfThisThread();
  });
  other.join();
  scan.join();
  EXPECT_EQ(driver->seen.policy, SCHED_FIFO);
  EXPECT_EQ(driver->seen.priority, kPriority);
  EXPECT_EQ(bystander.policy, SCHED_OTHER);
  EXPECT_EQ(policyOfThisThread().policy, before.policy);
  ASSERT_FALSE(said.empty());
  EXPECT_NE(said.front().find("real-time priority 10"), std::string::npos) << said.front();
}

}  // namespace
}  // namespace scanback::runtime
