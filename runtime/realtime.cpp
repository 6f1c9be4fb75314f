#include "runtime/realtime.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace scanback::runtime {

namespace {

// What to change when the kernel refuses: an unprivileged process needs RLIMIT_RTPRIO (a unit's
// LimitRTPRIO=, limits.conf's rtprio) or CAP_SYS_NICE; a unit with RestrictRealtime=yes refuses all.
std::string refusal(int priority, int why) {
  rlimit limit{};
  const bool haveLimit = ::getrlimit(RLIMIT_RTPRIO, &limit) == 0;
  std::string hint;
  if (why == EPERM)
    hint = haveLimit && limit.rlim_cur < static_cast<rlim_t>(priority)
               ? fmt::format(
                     " (this process may use real-time priorities up to {}: raise RLIMIT_RTPRIO, in a "
                     "systemd unit LimitRTPRIO={}, or run with CAP_SYS_NICE)",
                     limit.rlim_cur, priority)
               : " (a systemd unit with RestrictRealtime=yes, or a container without CAP_SYS_NICE, refuses it)";
  return fmt::format("cannot give the scan thread real-time priority {} (SCHED_FIFO): {}{}", priority,
                     std::strerror(why), hint);
}

int setFifo(int priority) {
  sched_param param{};
  param.sched_priority = priority;
  return ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &param);
}

}  // namespace

bool probeScanPriority(int priority, std::string& error) {
  if (priority < kLowestScanPriority || priority > kHighestScanPriority) {
    error = fmt::format("--scan-priority {}: expected a SCHED_FIFO priority from {} to {}", priority,
                        kLowestScanPriority, kHighestScanPriority);
    return false;
  }
  int oldPolicy = 0;
  sched_param old{};
  ::pthread_getschedparam(::pthread_self(), &oldPolicy, &old);
  if (const int why = setFifo(priority); why != 0) {
    error = refusal(priority, why);
    return false;
  }
  // Back at once: the threads started before run() must not inherit it.
  ::pthread_setschedparam(::pthread_self(), oldPolicy, &old);
  return true;
}

std::vector<std::string> becomeRealtime(int priority) {
  std::vector<std::string> failed;
  if (const int why = setFifo(priority); why != 0) failed.push_back(refusal(priority, why));
  if (::mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0) {
    const int why = errno;
    failed.push_back(fmt::format(
        "cannot lock the runtime's memory (a page fault may then stall a cycle): {}{}", std::strerror(why),
        why == ENOMEM || why == EPERM ? " (raise RLIMIT_MEMLOCK: in a systemd unit LimitMEMLOCK=infinity)" : ""));
  }
  return failed;
}

}  // namespace scanback::runtime
