// The recorder: turns a running Runtime into a trace without ever slowing its scan thread down
// (docs/architecture.md: the live task never waits). It is three parts behind one interface:
//
// - the scan side (recorder/scan_handoff.h): what the scan thread does each cycle — records the
//   cycle's scan inputs (the determinism contract, invariant 1), the live statement count and any
//   fault, copies the image into a keyframe slot at a chunk's start, and hands the records to a
//   bounded lock-free queue in batches; when the queue is full the batch is dropped and counted,
//   and the next recorded cycle starts a new chunk after a gap record. It reads one flag per cycle
//   and never waits.
// - the writer (recorder/block_writer.h): the writer thread. It re-executes each recorded cycle on
//   its own VM over the same immutable program (invariant 3) for the cycle's digest and statement
//   path, checks itself against the live task (a mismatch is a divergence: counted, reported, and
//   the live keyframe wins), and puts the cycles into blocks within the flush window (bounded
//   loss: docs/architecture.md, traces are self-contained and crash-safe), syncing the file
//   (fdatasync) at most once per window. A write that fails is reported at once
//   (RecorderOptions::onEvent, health()); the task goes on, the writer tries again once per
//   flush window, and the cycles lost meanwhile are a gap.
// - the ring (recorder/history_ring.h): the history held in memory — the blocks of the newest
//   chunks as they are in the file, with their gaps and the fault. A flight recorder (ringBytes /
//   ringDurationNs) forgets the oldest chunks beyond its limits; with a `path` its blocks also go
//   to the file as they are kept, and the file is rewritten from memory whenever it holds about
//   twice the limit (and after writing failed), so it stays bounded and a crash leaves the history
//   held. requestSnapshot() writes the same history to another file while recording goes on, and
//   a HistorySink (a control client streaming it, control/) is handed each block as it is kept. A
//   flight recorder needs no `path`; a recording to a file that also keeps its newest chunks in
//   memory (keepHistoryBytes: a runtime with a control endpoint) serves snapshots and sinks too.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "recorder/recording.h"
#include "recorder/scan_handoff.h"
#include "traces/trace_model.h"
#include "vm/runtime/runtime.h"

namespace scanback::recorder {

class BlockWriter;
class HistoryRing;

class Recorder final : public CycleHooks {
 public:
  // Called on the writer thread for each event: must return soon (print, queue, notify).
  using EventHandler = std::function<void(const RecordingEvent&)>;
  // Attaches to `runtime` (between cycles) and starts the writer thread; null with `error` set
  // when the trace cannot be created.
  [[nodiscard]] static std::unique_ptr<Recorder> start(Runtime& runtime, const RecorderOptions& options,
                                                       std::string& error, EventHandler onEvent = {});
  ~Recorder() override;

  void beforeCycle(const Runtime& runtime) override;
  void afterCycle(const Runtime& runtime, RunStatus status) override;

  // Detaches, drains the queue, writes the index and renames the trace to its final name.
  // False (with `error`) when writing failed at any point. `open`: the cycle under way, when the
  // task is paused inside it (see sync() and currentInputs()), kept as the trace's last block.
  [[nodiscard]] bool finish(std::string& error, const trace::OpenCycleData* open = nullptr);

  // A debugger's write made now, with the task paused inside the cycle under way at statement
  // boundary `step` (already applied to the live image): recorded with that cycle, so that replay
  // applies it at the same boundary. Only while the scan thread is parked inside the cycle.
  void noteWrite(const ExternalWrite& write, uint64_t step);

  RecorderStats stats() const;
  RecordingHealth health() const;
  // The first divergence, described (cycle, what differed); empty when there was none. Valid
  // after finish().
  const std::string& firstDivergence() const;
  // True while the queue to the writer is more than three quarters full. A simulation that runs
  // faster than real time may wait between cycles while this holds (never inside a cycle), so
  // that it records every cycle; a real-time task just lets the recorder drop.
  // (Or while the next chunk's keyframe has no free slot: the writer is more than a chunk behind.)
  bool backlogged() const { return handoff_.backlogged(); }
  // Bytes handed to the writer and not yet processed.
  size_t queuedBytes() const { return handoff_.queuedBytes(); }
  // Waits until the writer has processed all but at most `bytes` of what was handed to it, or
  // `timeout` has passed; true when it has. For those who may wait for the writer: a simulation
  // faster than real time, between its cycles (a real-time task never waits), and tests. The
  // writer wakes a waiter as it takes records from the queue.
  bool waitForWriter(size_t bytes, std::chrono::nanoseconds timeout) const {
    return handoff_.waitForWriter(bytes, timeout);
  }
  // backlogged() no more: the queue half empty, so that the next cycles do not wait again at once.
  bool waitUntilNotBacklogged(std::chrono::nanoseconds timeout) const {
    return handoff_.waitUntilNotBacklogged(timeout);
  }
  // Flight recorder: asks the writer thread to write the history it holds (the kept chunks, the
  // gaps among them, the chunk being filled and the fault, if any) to a complete trace at `path`
  // (written as `path.partial`, then renamed, with the recording's header and an index), while
  // recording goes on. Callable from any thread, the scan thread included (between cycles or
  // not): it never blocks and takes no lock; it allocates the request.
  //
  // Of that history, the snapshot holds every cycle that ended before the call: the scan thread
  // notices the request when its next cycle starts and hands over the cycles it has staged with a
  // mark; the writer takes the snapshot when it reaches the mark. A request the scan thread has not marked when
  // the recording finishes is taken at the end, with everything. So the future is ready after the
  // next cycle starts and the writer has written the file, or by the end of finish().
  //
  // Refused (a ready future with `error`) for a recording that keeps no history in memory (its
  // history is already in `path.partial`), for the recording's own path, and after finish().
  // While the writer writes a snapshot it processes no records: a long one can make the task drop
  // cycles (counted as usual), never wait.
  std::future<SnapshotResult> requestSnapshot(std::string path);
  // Makes the trace file hold every cycle that has ended, so that a reader (a debugger stepping
  // back from a paused live task) can replay up to the cycle under way. Hands the staged cycles to
  // the writer and waits until it has written them: the chunk being filled is closed early, and
  // the next one starts from the writer's re-executed image. Call it from the task's thread, or
  // from another while the task's thread is parked behind a lock the call holds (a debugger's
  // pause): only when the task is not scanning, since it waits. Refused for a flight recorder,
  // whose history is in memory (requestSnapshot() writes it), and after finish().
  SyncResult sync();
  // The scan inputs of the cycle under way (same threads as sync(); inside a cycle).
  CycleInputs currentInputs() const;
  // For a task that runs no cycle for now (it faulted, an operator paused it, a debugger stopped it
  // inside a cycle): does what the next cycle's start would, marking the snapshot requests made so
  // far, so that they are served, and hands the staged cycles (all ended) to the writer, so that
  // readers of the history get every cycle run. The scan thread, between cycles or held inside one.
  void idle();
  // Asks the writer to put every cycle it has taken into a block now rather than at the end of the
  // flush window (a task that holds for a while: an operator's pause, a fault). Any thread; never waits.
  void flushSoon();

  // ---- flight recorder: its history, from any thread
  // Hands `sink` the history held from the chunk that holds `fromCycle` on — only the newest
  // chunks whose bytes fit in `maxBytes` (at least one) — with the gaps among and after them and
  // the fault, then each chunk, gap and fault as the writer keeps it, until removeHistorySink().
  // False for a recording that keeps no history in memory.
  [[nodiscard]] bool addHistorySink(std::shared_ptr<HistorySink> sink, uint64_t fromCycle, uint64_t maxBytes);
  void removeHistorySink(const HistorySink* sink);
  HeldHistory held() const;
  // The header of the recording (and of its snapshots and streams).
  const trace::HeaderData& header() const { return header_; }
  // Makes the writer sleep this long per record: tests the never-blocking path.
  void setWriterDelayForTesting(std::chrono::microseconds delay);

 private:
  Recorder(Runtime& runtime, const RecorderOptions& options);
  bool ringMode() const { return options_.ringBytes || options_.ringDurationNs; }
  bool keepsHistory() const { return ring_ != nullptr; }

  Runtime& runtime_;
  RecorderOptions options_;
  trace::HeaderData header_;  // also the header of snapshots
  bool attached_ = false;
  ScanHandoff handoff_;
  std::unique_ptr<HistoryRing> ring_;  // when the recording keeps history in memory
  std::unique_ptr<BlockWriter> writer_;
};

}  // namespace scanback::recorder
