#include "runtime/process_signals.h"

#include <atomic>
#include <csignal>

namespace scanback::runtime::process_signals {

namespace {
// Lock-free atomics: what a handler may touch, and what the host's threads read without a race.
std::atomic<bool> gInterrupted{false};
std::atomic<bool> gSnapshotWanted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
}  // namespace

void install() {
  std::signal(SIGPIPE, SIG_IGN);  // as cli/main.cpp does for every command: a host may be embedded elsewhere
  std::signal(SIGUSR1, [](int) { gSnapshotWanted.store(true); });
  std::signal(SIGINT, [](int) { gInterrupted.store(true); });
  std::signal(SIGTERM, [](int) { gInterrupted.store(true); });
  std::signal(SIGHUP, [](int) { gInterrupted.store(true); });
}

bool interrupted() { return gInterrupted.load(); }

bool takeSnapshotRequest() { return gSnapshotWanted.exchange(false); }

}  // namespace scanback::runtime::process_signals
