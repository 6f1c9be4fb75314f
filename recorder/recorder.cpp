#include "recorder/recorder.h"

#include <fmt/format.h>

#include <chrono>

#include "recorder/block_writer.h"
#include "recorder/history_ring.h"
#include "vm/base/version.h"

namespace scanback::recorder {

Recorder::Recorder(Runtime& runtime, const RecorderOptions& options)
    : runtime_(runtime),
      options_(options),
      handoff_(runtime.program().imageSize(), runtime.program().input.size,
               options.keyframeEvery ? options.keyframeEvery : 1, options.queueBytes) {}

std::unique_ptr<Recorder> Recorder::start(Runtime& runtime, const RecorderOptions& options, std::string& error,
                                          EventHandler onEvent) {
  if (runtime.inCycle()) {
    error = "the recorder attaches between cycles";
    return nullptr;
  }
  std::unique_ptr<Recorder> r(new Recorder(runtime, options));
  if (r->options_.keyframeEvery == 0) r->options_.keyframeEvery = 1;
  if (r->options_.flushEveryNs < 0) r->options_.flushEveryNs = 0;
  if (r->options_.handOverEveryNs <= 0) r->options_.handOverEveryNs = r->options_.flushEveryNs / 4;
  if (r->options_.followedFlushEveryNs <= 0) r->options_.followedFlushEveryNs = r->options_.flushEveryNs;
  const Program& p = runtime.program();
  trace::HeaderData& h = r->header_;
  h.scanbackVersion = kScanbackVersion;
  h.programHash = p.hash;
  h.sources = p.sources.files();
  for (const TaskInfo& t : p.tasks) h.tasks.push_back({t.name, t.intervalNs, t.priority});
  h.options.keyframeEvery = r->options_.keyframeEvery;
  h.options.zstdLevel = options.zstdLevel;
  h.options.statements = options.statements;
  h.options.ringBytes = options.ringBytes;
  h.options.ringDurationNs = options.ringDurationNs;
  h.options.statementBudget = runtime.vm().statementBudget();
  h.options.test = p.test;
  h.startWallTimeNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  h.imageSize = p.imageSize();
  h.statementCount = static_cast<uint32_t>(p.statements.size());
  h.writeIndexComplete = options.writeIndex;
  h.ioConfig = options.ioConfig;
  h.ioConfigPath = options.ioConfigPath;
  if (r->ringMode() || options.keepHistoryBytes) {
    r->ring_ = std::make_unique<HistoryRing>(r->ringMode() ? options.ringBytes : options.keepHistoryBytes,
                                             options.ringDurationNs);
  }
  r->writer_ = std::make_unique<BlockWriter>(runtime.vm().programPtr(), runtime.vm().statementBudget(), r->options_,
                                             r->header_, r->handoff_, r->ring_.get(), std::move(onEvent));
  if (!r->writer_->open(error)) return nullptr;
  runtime.setHooks(r.get());
  r->attached_ = true;
  r->writer_->start();
  return r;
}

Recorder::~Recorder() {
  if (attached_ || (writer_ && writer_->running())) {
    // A destructor has no one to tell: finish() was not called, so no one asked how it ended.
    std::string ignored;
    static_cast<void>(finish(ignored));
  }
}

void Recorder::beforeCycle(const Runtime& runtime) { handoff_.beforeCycle(runtime); }

void Recorder::afterCycle(const Runtime& runtime, RunStatus status) { handoff_.afterCycle(runtime, status); }

void Recorder::noteWrite(const ExternalWrite& write, uint64_t step) { handoff_.noteWrite(write, step); }

void Recorder::idle() { handoff_.idle(); }

void Recorder::flushSoon() { writer_->flushSoon(); }

void Recorder::setWriterDelayForTesting(std::chrono::microseconds delay) { writer_->setDelay(delay); }

const std::string& Recorder::firstDivergence() const { return writer_->firstDivergence(); }

CycleInputs Recorder::currentInputs() const {
  CycleInputs out;
  handoff_.currentInputs(out);
  return out;
}

SyncResult Recorder::sync() {
  SyncResult result;
  if (ringMode()) {
    result.error = "a flight recorder keeps its history in memory: only a snapshot writes it to a file";
    return result;
  }
  if (!attached_) {
    result.error = "the recording has finished";
    return result;
  }
  // (Ready before the mark can reach the writer.)
  std::future<SyncResult> done = writer_->expectSync();
  bool ownKeyframe = false;
  const uint64_t cycle = runtime_.inCycle() ? runtime_.currentCycle().cycle : runtime_.cycle();
  if (!handoff_.handOverSyncMark(cycle, runtime_.inCycle(), ownKeyframe)) {
    result.error = "the recorder's writer has not taken anything for 5 seconds";
    return result;
  }
  writer_->kick();
  SyncResult synced = done.get();
  if (synced.ok && ownKeyframe) synced.image = handoff_.keyframeOfCycleUnderWay(runtime_.vm().imageSize());
  return synced;
}

std::future<SnapshotResult> Recorder::requestSnapshot(std::string path) {
  if (!keepsHistory()) {
    std::string refusal = fmt::format(
        "cannot write a snapshot to {}: the recording is no flight recorder (--ring); its history is in {}.partial "
        "already",
        path, options_.path);
    return writer_->requestSnapshot(std::move(path), 0, std::move(refusal));
  }
  return writer_->requestSnapshot(std::move(path), handoff_.requestSnapshot(), {});
}

bool Recorder::addHistorySink(std::shared_ptr<HistorySink> sink, uint64_t fromCycle, uint64_t maxBytes) {
  return ring_ && ring_->addSink(std::move(sink), fromCycle, maxBytes);
}

void Recorder::removeHistorySink(const HistorySink* sink) {
  if (ring_) ring_->removeSink(sink);
}

HeldHistory Recorder::held() const { return ring_ ? ring_->held() : HeldHistory{}; }

bool Recorder::finish(std::string& error, const trace::OpenCycleData* open) {
  if (attached_) {
    runtime_.setHooks(nullptr);
    attached_ = false;
    handoff_.finishScan(runtime_.cycle());
  }
  return writer_->finish(error, open);
}

RecorderStats Recorder::stats() const {
  RecorderStats s;
  s.cyclesRecorded = handoff_.recorded();
  s.cyclesDropped = handoff_.dropped();
  s.gaps = handoff_.gaps();
  s.chunks = writer_->chunks();
  s.bytesWritten = writer_->bytesWritten();
  s.rawBytes = writer_->rawBytes();
  s.divergences = writer_->divergences();
  s.heldBytes = ring_ ? ring_->heldBytes() : 0;
  return s;
}

RecordingHealth Recorder::health() const { return writer_->health(); }

}  // namespace scanback::recorder
