// Real-time scheduling of the scan thread (`scanback run --scan-priority N`): the scan thread runs
// under SCHED_FIFO at priority N, so that no ordinary thread — the I/O drivers' pollers, the
// recorder's writer, the control server, a build on the same machine — takes its processor in the
// middle of a cycle; and the process's memory is locked, so that no page fault stalls a cycle. This
// is how a PLC runtime on Linux runs its tasks (docs/fieldbus.md, "Cycle time").
//
// Only the scan thread gets the priority: a thread inherits its creator's policy, so it is taken
// after every other thread has started (RuntimeHost::run) and checked before any has (probe).
#pragma once

#include <string>
#include <vector>

namespace scanback::runtime {

// SCHED_FIFO priorities: 1 (lowest) to 99; the kernel's own threads sit at 50 on PREEMPT_RT.
constexpr int kLowestScanPriority = 1;
constexpr int kHighestScanPriority = 99;

// Whether the calling thread may take SCHED_FIFO at `priority`; it tries and goes back to the
// ordinary policy at once. False with the reason and what to change (for "scanback: ERROR").
[[nodiscard]] bool probeScanPriority(int priority, std::string& error);

// The calling thread takes SCHED_FIFO at `priority` and the process's memory is locked: the pages
// in use now, and every page from when it is first touched (MCL_ONFAULT: a reservation never used,
// as a sanitizer's shadow or a ring's tail, is not made resident). Returns what failed, one line
// each (empty: both done): the priority cannot fail after a probe that passed, the lock can
// (RLIMIT_MEMLOCK), and the run goes on without it.
[[nodiscard]] std::vector<std::string> becomeRealtime(int priority);

}  // namespace scanback::runtime
