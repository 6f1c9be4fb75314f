// Bounded loss: ended cycles reach the file within the flush window (as continuations, not new
// keyframes); a flight recorder's file stays bounded and holds its history; a recording that also
// keeps history in memory writes every cycle; a write failure is said at once and the recording
// resumes with a gap (or, for a flight recorder, with nothing lost).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>

#include "recorder/recorder.h"
#include "tests/support/files.h"
#include "tests/support/trace_support.h"
#include "tests/support/wait.h"
#include "traces/trace_reader.h"

namespace fs = std::filesystem;
using namespace scanback;
using namespace std::chrono_literals;

namespace {

using test::compilePlant;
using test::plantStimulus;
using test::TempTrace;

// The cycles a trace file holds now: (first, end) of its chunks and gaps, and its chunks.
struct Held {
  uint64_t first = 0, end = 0;
  size_t chunks = 0, continuations = 0, gaps = 0;
  uint64_t gapCycles = 0;
  bool damaged = false;
};

Held heldIn(const std::string& file) {
  Held h;
  std::string error;
  auto reader = trace::TraceReader::open(file, error);
  if (!reader) return h;
  bool any = false;
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (b.kind != trace::BlockKind::Chunk && b.kind != trace::BlockKind::Gap) continue;
    if (!any) h.first = b.firstCycle;
    any = true;
    h.end = b.firstCycle + b.cycleCount;
    if (b.kind == trace::BlockKind::Chunk) {
      ++h.chunks;
      h.continuations += b.continuations.size();
    } else {
      ++h.gaps;
      h.gapCycles += b.cycleCount;
    }
  }
  h.damaged = !reader->damage().empty();
  return h;
}

// Runs `count` more cycles of the plant (applying its stimulus), then does what the run loop does
// before it waits for the next release: hands the ended cycles to the writer.
void runPlant(Runtime& rt, recorder::Recorder& rec, std::optional<Stimulus>& stimulus, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    if (stimulus) stimulus->apply(rt.cycle(), rt);
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    while (rec.backlogged()) rec.waitUntilNotBacklogged(1s);
  }
  rec.idle();
}

TEST(Durability, EndedCyclesReachTheFileWithinTheFlushWindowWithoutAKeyframeEach) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("flush-window");
  Runtime rt(program);
  std::optional<Stimulus> stimulus = plantStimulus(*program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 1000;  // no chunk ends in this test: only the window writes
  options.flushEveryNs = 50'000'000;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  const std::string partial = path.string() + ".partial";
  for (const uint64_t upTo : {20u, 21u, 60u}) {
    runPlant(rt, *rec, stimulus, upTo - rt.cycle());
    // Nothing else happens: the writer puts them into a block of its own accord.
    EXPECT_TRUE(test::eventually([&] { return heldIn(partial).end == upTo; }, 10s)) << "cycles up to " << upTo;
  }
  const Held h = heldIn(partial);
  EXPECT_EQ(h.chunks, 1u);         // one keyframe...
  EXPECT_EQ(h.continuations, 2u);  // ...and the later cycles as continuations
  EXPECT_FALSE(h.damaged);
  ASSERT_TRUE(rec->finish(error)) << error;
  EXPECT_EQ(rec->stats().divergences, 0u) << rec->firstDivergence();
}

TEST(Durability, WithoutAFlushWindowOnlyWholeChunksAreWritten) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("no-window");
  Runtime rt(program);
  std::optional<Stimulus> stimulus = plantStimulus(*program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 100;
  options.flushEveryNs = 0;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  runPlant(rt, *rec, stimulus, 150);
  // The first chunk is written once complete; the second waits for its end (the writer is idle:
  // the queue is drained once nothing is queued).
  EXPECT_TRUE(
      test::eventually([&] { return rec->queuedBytes() == 0 && heldIn(path.string() + ".partial").end == 100; }));
  ASSERT_TRUE(rec->finish(error)) << error;
  EXPECT_EQ(heldIn(path.string()).end, 150u);
}

TEST(Durability, FlightRecorderFileStaysBoundedAndEndsAsTheHistoryHeld) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("ring-file");
  Runtime rt(program);
  std::optional<Stimulus> stimulus = plantStimulus(*program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 50;
  options.ringBytes = 100'000;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  const std::string partial = path.string() + ".partial";
  uint64_t largest = 0;
  for (int round = 0; round < 30; ++round) {
    runPlant(rt, *rec, stimulus, 500);
    ASSERT_TRUE(test::eventually([&] { return rec->queuedBytes() == 0; }));
    // The file holds the history kept at its last rewrite and every block since: at most twice
    // the limit, plus its header and the block that crossed it.
    const uint64_t size = fs::file_size(partial);
    largest = std::max(largest, size);
    EXPECT_LE(size, 2 * options.ringBytes + 16'000) << "round " << round;
    const Held h = heldIn(partial);
    EXPECT_FALSE(h.damaged);
    EXPECT_GE(h.end + 50, rt.cycle()) << "round " << round;  // at most the chunk being filled is missing
  }
  ASSERT_TRUE(rec->finish(error)) << error;
  const recorder::HeldHistory kept = rec->held();
  const Held h = heldIn(path.string());
  EXPECT_EQ(h.first, kept.firstCycle);
  EXPECT_EQ(h.end, kept.endCycle);
  EXPECT_EQ(h.end, rt.cycle());
  EXPECT_GT(h.first, 0u);                 // the oldest history was forgotten
  EXPECT_GT(largest, options.ringBytes);  // (the bound was tested, not just never reached)
}

TEST(Durability, KeepingHistoryInMemoryStillWritesEveryCycleToTheFile) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("keep-history");
  const TempTrace snapshot("keep-history-snapshot");
  Runtime rt(program);
  std::optional<Stimulus> stimulus = plantStimulus(*program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 50;
  options.keepHistoryBytes = 10'000;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  runPlant(rt, *rec, stimulus, 3000);
  std::future<recorder::SnapshotResult> done = rec->requestSnapshot(snapshot.string());
  runPlant(rt, *rec, stimulus, 1);  // (the request is marked at the next cycle start)
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  const recorder::SnapshotResult s = done.get();
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_GT(s.firstCycle, 0u);  // the newest history only
  EXPECT_EQ(s.endCycle, 3000u);
  ASSERT_TRUE(rec->finish(error)) << error;
  const Held h = heldIn(path.string());
  EXPECT_EQ(h.first, 0u);
  EXPECT_EQ(h.end, 3001u);
}

// In a child process (the file size limit is the process's): records the plant, has writing fail
// by a file size limit as a full disk would, lifts the limit, records on; writes what it saw to
// `report` (events in order) and exits 0 when everything went as expected.
int recordThroughAFailure(const std::string& path, bool ring, const std::string& report) {
  std::signal(SIGXFSZ, SIG_IGN);
  auto program = compilePlant();
  if (!program) return 10;
  Runtime rt(program);
  std::optional<Stimulus> stimulus = plantStimulus(*program);
  recorder::RecorderOptions options;
  options.path = path;
  options.keyframeEvery = 40;
  options.flushEveryNs = 20'000'000;
  if (ring) options.ringBytes = 1'000'000;  // holds all of it: nothing is forgotten in this test
  std::mutex mutex;
  std::vector<recorder::RecordingEvent> events;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error, [&](const recorder::RecordingEvent& e) {
    std::lock_guard lock(mutex);
    events.push_back(e);
  });
  if (!rec) return 11;
  auto run = [&](uint64_t count) {
    for (uint64_t i = 0; i < count; ++i) {
      if (stimulus) stimulus->apply(rt.cycle(), rt);
      if (rt.runCycle() != RunStatus::CycleDone) return false;
      while (rec->backlogged()) rec->waitUntilNotBacklogged(1s);
    }
    rec->idle();
    return true;
  };
  auto eventCount = [&] {
    std::lock_guard lock(mutex);
    return events.size();
  };
  // What was said, also when something below fails (the parent shows it).
  auto writeReport = [&] {
    std::lock_guard lock(mutex);
    std::ofstream out(report);
    for (const recorder::RecordingEvent& e : events)
      out << (e.kind == recorder::RecordingEvent::Kind::Failed ? "failed" : "resumed") << ' ' << e.cycle << ' '
          << e.lostCycles << ' ' << e.message << '\n';
    out << "cycles " << rt.cycle() << '\n';
    const recorder::RecordingHealth health = rec->health();
    out << "health " << health.failing << ' ' << health.lostCycles << ' ' << health.failures << ' ' << health.error
        << '\n';
  };
  if (!run(200) || !test::eventually([&] { return rec->queuedBytes() == 0; })) return 12;
  rlimit limit{};
  ::getrlimit(RLIMIT_FSIZE, &limit);
  const rlimit full{fs::file_size(path + ".partial") + 100, limit.rlim_max};
  if (::setrlimit(RLIMIT_FSIZE, &full) != 0) return 13;
  // Cycles go on; the failure is said (an event, the health) without waiting for the end.
  if (!run(200) || !test::eventually([&] { return eventCount() >= 1 && rec->health().failing; })) return 14;
  if (rec->stats().cyclesDropped != 0) return 15;  // the task never waited or dropped for it
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 16;
  // Writing works again: the next attempt (once per window) resumes.
  if (!test::eventually([&] {
        if (!run(40)) return false;
        return eventCount() >= 2;
      })) {
    writeReport();
    return 17;
  }
  if (!run(100) || !rec->finish(error)) {
    writeReport();
    return 18;
  }
  writeReport();
  return 0;
}

void expectRecordedThroughAFailure(bool ring) {
  const TempTrace path(ring ? "fail-ring" : "fail-plain");
  const std::string report = path.string() + ".report";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(recordThroughAFailure(path.string(), ring, report));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << test::readText(report);
  const std::string said = test::readText(report);
  fs::remove(report);
  // Failed first, with the path and the system's reason; then resumed.
  EXPECT_EQ(said.rfind("failed ", 0), 0u) << said;
  EXPECT_NE(said.find(path.string()), std::string::npos) << said;
  EXPECT_NE(said.find("File too large"), std::string::npos) << said;
  EXPECT_NE(said.find("\nresumed "), std::string::npos) << said;
  const Held h = heldIn(path.string());
  EXPECT_FALSE(h.damaged);
  EXPECT_EQ(h.first, 0u);
  const uint64_t cycles = std::stoull(said.substr(said.find("\ncycles ") + 8));
  EXPECT_EQ(h.end, cycles);
  if (ring) {
    EXPECT_EQ(h.gaps, 0u) << said;  // rewritten from memory: nothing lost
  } else {
    // The cycles lost while the disk was full: a gap (two when a retry got its gap in and not the
    // block after it), as many cycles as the recorder says it lost.
    EXPECT_GE(h.gaps, 1u) << said;
    EXPECT_NE(said.find("are a gap in it"), std::string::npos) << said;
    const std::string health = said.substr(said.find("\nhealth ") + 8);
    EXPECT_EQ(std::to_string(h.gapCycles), health.substr(2, health.find(' ', 2) - 2)) << said;
  }
  // Every cycle in the file replays as recorded: the replayer's verify runs in replayer_tests; here
  // the trace opens undamaged with every cycle accounted for.
}

TEST(Durability, AWriteFailureIsSaidAtOnceAndTheRecordingResumesWithAGap) { expectRecordedThroughAFailure(false); }

TEST(Durability, AFlightRecorderResumesFromMemoryLosingNothingItHolds) { expectRecordedThroughAFailure(true); }

}  // namespace
