#include "recorder/block_writer.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "recorder/history_ring.h"
#include "recorder/scan_handoff.h"
#include "traces/trace_writer.h"
#include "vm/base/assert.h"
#include "vm/bytecode/native_blocks.h"
#include "vm/runtime/step_writes.h"

namespace scanback::recorder {

namespace {

// A continuation is compressed against the block before it only for images up to this size: for
// larger ones, the keyframe in that block would be kept in memory all through the chunk.
constexpr uint32_t kLargestPrefix = 1u << 20;

}  // namespace

// A snapshot asked for, on its way to the writer thread.
struct BlockWriter::SnapshotRequest {
  std::string path;
  std::promise<SnapshotResult> done;
  uint64_t ticket = 0;  // its place among all requests (the count before it was made)
  SnapshotRequest* next = nullptr;
};

BlockWriter::SnapshotRequest BlockWriter::closedStack_;

BlockWriter::BlockWriter(std::shared_ptr<const Program> program, uint64_t statementBudget,
                         const RecorderOptions& options, const trace::HeaderData& header, ScanHandoff& handoff,
                         HistoryRing* ring, EventHandler onEvent)
    : options_(options),
      header_(header),
      handoff_(handoff),
      ring_(ring),
      onEvent_(std::move(onEvent)),
      vm_(std::move(program)),
      limits_{header.imageSize, header.statementCount} {
  // The writer's VM: the same program and watchdog as the live one.
  vm_.setStatementBudget(statementBudget);
  // The write index needs the statements that ran, also when their paths are not recorded, and
  // what each may write: computed here, before the first cycle, since on the writer thread it
  // would hold up the queue (tens of milliseconds for a large program).
  if (options.writeIndex) {
    const std::vector<uint32_t> natives = nativeInstanceSizes();
    writeSets_ = std::make_unique<const WriteSets>(vm_.program(), natives);
  }
  if (options.statements || options.writeIndex) {
    statementLog_.resize(options.maxStatementsPerCycle);
    vm_.setStatementLog(statementLog_.data(), statementLog_.data() + statementLog_.size());
  }
}

BlockWriter::~BlockWriter() { stop(); }

bool BlockWriter::open(std::string& error) {
  encoder_ = std::make_unique<trace::BlockEncoder>(options_.zstdLevel);
  if (!encoder_->ok()) {
    error = "cannot create a zstd compression context";
    return false;
  }
  if (!ringMode() || !options_.path.empty()) {
    writer_ = trace::TraceWriter::create(options_.path, header_, error);
    if (!writer_) return false;
  }
  return true;
}

void BlockWriter::start() {
  thread_ = std::thread([this] { loop(); });
}

void BlockWriter::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  thread_.join();
}

bool BlockWriter::ringMode() const { return options_.ringBytes || options_.ringDurationNs; }

std::future<SyncResult> BlockWriter::expectSync() {
  syncDone_ = std::promise<SyncResult>();
  return syncDone_.get_future();
}

void BlockWriter::kick() {
  {
    std::lock_guard lock(kickMutex_);
    kicked_ = true;
  }
  kick_.notify_one();
}

RecordingHealth BlockWriter::health() const {
  std::lock_guard lock(healthMutex_);
  return health_;
}

// ---------------------------------------------------------------- writer thread

void BlockWriter::loop() {
  lastHandOver_ = lastSync_ = lastRetry_ = std::chrono::steady_clock::now();
  for (;;) {
    std::span<const uint8_t> rec = handoff_.front();
    if (rec.empty()) {
      if (stop_.load(std::memory_order_acquire)) {
        if (handoff_.front().empty()) break;
        continue;
      }
      serveSnapshots(false);
      checkFlushWindow();
      // Idle: poll again in a millisecond, or at once when sync() asks (a debugger waits for it).
      std::unique_lock lock(kickMutex_);
      kick_.wait_for(lock, std::chrono::milliseconds(1), [&] { return kicked_; });
      kicked_ = false;
      continue;
    }
    if (const int64_t delay = delayUs_.load(std::memory_order_relaxed); delay > 0) {
      // Sleep in small steps so that lifting the delay takes effect at once.
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(delay);
      while (std::chrono::steady_clock::now() < until && delayUs_.load(std::memory_order_relaxed) > 0)
        std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(delay, 1000)));
    }
    // A queue entry holds one or more records back to back.
    for (size_t at = 0; at < rec.size();) {
      RecordHeader h{};
      if (rec[at] & kShort) {
        ShortRecord r;
        std::memcpy(&r, rec.data() + at, sizeof r);
        h.task = r.task;
        h.steps = r.steps;
        h.cycle = takenCycle_ + 1;
        h.startNs = takenStartNs_ + r.sincePreviousNs;
        h.inputBytes = r.inputBytes;
        at += sizeof r;
      } else {
        std::memcpy(&h, rec.data() + at, sizeof h);
        at += sizeof h;
      }
      if (!(h.flags & kNoCycle)) {
        takenCycle_ = h.cycle;
        takenStartNs_ = h.startNs;
      }
      processRecord(h, rec.data() + at);
      at += size_t{h.inputBytes} + h.writeBytes + h.faultMessageBytes + h.forceBytes;
    }
    handoff_.pop();  // (wakes those waiting for the writer)
    serveSnapshots(false);
    checkFlushWindow();
  }
  closeChunk();
  // Every cycle has been handed over: the requests still waiting for a mark are served now, and
  // later ones refused.
  serveSnapshots(true);
  if (writer_ && fileLostFrom_) {
    // A last try, whatever the window: what was lost stays a gap, the fault (if any) follows.
    lastRetry_ = {};
    if (ringMode()) {
      std::string why;
      if (rewriteRingFile(why)) fileLostFrom_.reset();
    } else if (writer_->recover()) {
      const uint64_t end = std::max(takenCycle_ + 1, *fileLostFrom_);
      const uint64_t lost = end - *fileLostFrom_;
      if (lost == 0 || writer_->writeGap(trace::GapData{*fileLostFrom_, lost})) {
        fileLostFrom_.reset();
        std::lock_guard lock(healthMutex_);
        health_.failing = false;
        health_.lostCycles += lost;
      }
    }
  }
  if (writer_ && ringMode() && !fileLostFrom_) {
    // The file holds exactly the history held (it may hold up to twice as much while recording).
    std::string why;
    if (fileBlockBytes_ > ring_->bytes() && !rewriteRingFile(why) && writeError_.empty())
      writeError_ = fmt::format("cannot rewrite the flight recorder's file to the history held: {}", why);
  }
  if (fileLostFrom_ && writeError_.empty()) {
    std::lock_guard lock(healthMutex_);
    writeError_ = health_.error;
  }
}

void BlockWriter::checkFlushWindow() {
  if (flushWanted_.load(std::memory_order_relaxed)) {
    flushWanted_.store(false, std::memory_order_relaxed);
    flushPart(true);
  }
  if (!options_.flushEveryNs) return;
  const auto now = std::chrono::steady_clock::now();
  const bool followed = ring_ && ring_->followed();
  const std::chrono::nanoseconds window(followed ? options_.followedFlushEveryNs : options_.flushEveryNs);
  const std::chrono::nanoseconds handOver(
      followed ? std::min(options_.handOverEveryNs, options_.followedFlushEveryNs / 4) : options_.handOverEveryNs);
  if (now - lastHandOver_ >= handOver) {
    // The scan thread hands over at the end of its next cycle (the run loop also does before it
    // waits for a release), so a cycle reaches the writer at most this long after it ended.
    handoff_.askHandOver();
    lastHandOver_ = now;
  }
  // A cycle taken at partOpenedAt_ ended at most `handOver` before: in a block within the window.
  if (chunkOpen_ && chunk_.cycleCount() > flushedCycles_ && now - partOpenedAt_ >= window - handOver)
    flushPart(true);
  else if (unsynced_ && now - lastSync_ >= window)
    syncFile(true);
}

void BlockWriter::noteDivergence(std::string what) {
  if (divergences_.fetch_add(1, std::memory_order_relaxed) == 0) firstDivergence_ = std::move(what);
}

void BlockWriter::emit(RecordingEvent event) {
  if (onEvent_) onEvent_(event);
}

void BlockWriter::processRecord(const RecordHeader& h, const uint8_t* p) {
  if (h.flags & kSnapshotMark) {
    servableTickets_ = std::max(servableTickets_, h.cycle);
    return;
  }
  if (h.flags & kSyncMark) return serveSync(h);
  if (h.droppedBefore) {
    closeChunk();
    vmValid_ = false;  // the dropped cycles are not re-executed
    const trace::GapData gap{h.cycle - h.droppedBefore, h.droppedBefore};
    if (ring_) ring_->keepGap(gap);
    writeGapToFile(gap);
  }
  if (h.flags & kGapOnly) return;
  const uint32_t imageSize = vm_.imageSize();
  // The forces set and released at this cycle's start; at a chunk's start, first every force held
  // before it (restated by the scan thread, which knows them after a gap as well).
  std::vector<trace::ForceData> forces;
  if (h.forceBytes) [[unlikely]]
    decodeForces(p + h.inputBytes + h.writeBytes + h.faultMessageBytes, h.forceBytes, 0, forces);
  if (h.keyframeSlot) {
    closeChunk();  // (its last block's write index counts the forces it held)
    heldForces_.clear();
    for (const trace::ForceData& f : forces)
      if (f.restated) heldForces_.push_back(f);
    const uint8_t* keyframe = handoff_.keyframe(h.keyframeSlot);
    if (vmValid_ && std::memcmp(vm_.image(), keyframe, imageSize) != 0) {
      uint32_t at = 0;
      while (vm_.image()[at] == keyframe[at]) ++at;
      noteDivergence(
          fmt::format("the image before cycle {} differs from the re-executed one (first at byte {})", h.cycle, at));
    }
    std::memcpy(vm_.image(), keyframe, imageSize);  // the live image wins
    vmValid_ = true;
    startChunk(h.cycle, keyframe);
    handoff_.releaseKeyframe(h.keyframeSlot);  // the scan thread may reuse it
    restartChunk_ = false;
  } else if (vmValid_ && (!chunkOpen_ || restartChunk_)) {
    // The chunk before ended early (the file lost one of its blocks): this one starts from the
    // re-executed image (the live image is checked against it again at the next keyframe).
    closeChunk();
    startChunk(h.cycle, vm_.image());
    restartChunk_ = false;
  }
  if (!chunkOpen_ || !vmValid_) return;  // cannot happen: a chunk after a gap or fault starts with its keyframe
  const uint32_t index = chunk_.cycleCount();
  // A chunk's cycles follow one another: a dropped cycle closes it, and the next one opens with a keyframe.
  SB_ASSERT(h.cycle == chunk_.firstCycle + index, "cycle {} after the {} cycles of the chunk from {}", h.cycle, index,
            chunk_.firstCycle);
  // The cycle's scan inputs, applied as Runtime::startCycle applies them: %I changes, then writes.
  // Each stays the record the scan thread made, with its author (ImageWrite.author): none is merged
  // with another, so two writes of one cycle by different authors stay two (and the scan thread
  // splits a run of %I changes where their author changes).
  auto readWrites = [&](const uint8_t* q, uint32_t bytes, bool withBit, std::vector<trace::ImageWriteData>& out) {
    const size_t from = out.size();
    decodeWrites(q, bytes, withBit, index, out);
    for (size_t i = from; i < out.size(); ++i)
      if (out[i].atStep == trace::ImageWriteData::kAtCycleStart)
        applyWrite(vm_.image(), imageSize, ExternalWrite{out[i].offset, out[i].bit, out[i].bytes});
  };
  readWrites(p, h.inputBytes, false, chunk_.inputChanges);
  p += h.inputBytes;
  const size_t firstWrite = chunk_.writes.size();
  readWrites(p, h.writeBytes, true, chunk_.writes);
  p += h.writeBytes;
  if (!forces.empty() || !heldForces_.empty()) [[unlikely]]
    applyForces(std::move(forces), index);

  vm_.rewindStatementLog();
  vm_.beginCycle(h.task, h.startNs);
  // Debugger writes made inside the cycle are applied at their statement boundary, as live.
  std::vector<StepWrite> atSteps;
  for (size_t i = firstWrite; i < chunk_.writes.size(); ++i) {
    const trace::ImageWriteData& w = chunk_.writes[i];
    if (w.atStep >= 0) atSteps.push_back({static_cast<uint64_t>(w.atStep), ExternalWrite{w.offset, w.bit, w.bytes}});
  }
  StepWriter stepWriter(std::move(atSteps));
  const RunStatus status = stepWriter.run(vm_);
  const bool liveFaulted = (h.flags & kFaulted) != 0;
  if ((status == RunStatus::Faulted) != liveFaulted || vm_.steps() != h.steps) {
    noteDivergence(fmt::format("cycle {}: the live task {} after {} statements, the re-execution {} after {}", h.cycle,
                               liveFaulted ? "faulted" : "ended", h.steps,
                               status == RunStatus::Faulted ? "faulted" : "ended", vm_.steps()));
  }
  if (index == flushedCycles_) partOpenedAt_ = std::chrono::steady_clock::now();
  chunk_.tasks.push_back(h.task);
  chunk_.startTimes.push_back(h.startNs);
  chunk_.stepCounts.push_back(h.steps);
  chunk_.imageHashes.push_back(static_cast<uint32_t>(XXH3_64bits(vm_.image(), imageSize)));
  noteBoundary();
  if (options_.statements) {
    uint32_t pathIndex = trace::kNoPath;
    if (!vm_.statementLogOverflowed()) {
      const uint32_t* ids = vm_.statementLogBegin();
      const size_t count = static_cast<size_t>(vm_.statementLogEnd() - ids);
      const size_t hash = static_cast<size_t>(XXH3_64bits(ids, count * 4));
      for (size_t k = 0; k < pathHashes_.size(); ++k) {
        const auto& known = chunk_.pathTable[k];
        if (pathHashes_[k] == hash && known.size() == count && std::memcmp(known.data(), ids, count * 4) == 0) {
          pathIndex = static_cast<uint32_t>(k);
          break;
        }
      }
      if (pathIndex == trace::kNoPath) {
        pathIndex = static_cast<uint32_t>(chunk_.pathTable.size());
        chunk_.pathTable.emplace_back(ids, ids + count);
        pathHashes_.push_back(hash);
      }
    }
    chunk_.paths.push_back(pathIndex);
  }
  if (options_.flushEveryCycles && chunk_.cycleCount() - flushedCycles_ >= options_.flushEveryCycles) flushPart(false);
  // A large image's keyframe goes into a block after the chunk's first cycle, so that it is not
  // held in memory all through the chunk (its later cycles are continuations).
  if (flushedCycles_ == 0 && imageSize > kLargestPrefix) flushPart(false);
  if (liveFaulted) {
    trace::FaultData f;
    f.cycle = h.cycle;
    f.step = h.steps;
    f.statement = h.faultStatement;
    f.code = h.faultCode;
    f.message.assign(reinterpret_cast<const char*>(p), h.faultMessageBytes);
    closeChunk();
    vmValid_ = false;
    if (ring_) ring_->keepFault(f);
    writeFaultToFile(f);
  } else if (status == RunStatus::Faulted) {
    // Diverged: the live task goes on, so the re-execution does too, from its own image (the next
    // keyframe puts the live image back).
    std::vector<uint8_t> image(vm_.image(), vm_.image() + imageSize);
    vm_.reset();
    std::memcpy(vm_.image(), image.data(), imageSize);
  }
}

void BlockWriter::serveSync(const RecordHeader& mark) {
  // Every cycle taken goes into a block now (a reader may follow the file); the chunk stays open.
  flushPart(false);
  if (mark.droppedBefore) {
    closeChunk();
    vmValid_ = false;
    writeGapToFile(trace::GapData{mark.cycle - mark.droppedBefore, mark.droppedBefore});
  }
  SyncResult result;
  result.endCycle = mark.cycle;
  {
    std::lock_guard lock(healthMutex_);
    if (health_.failing) result.error = health_.error;
  }
  if (result.error.empty() && !writeError_.empty()) result.error = writeError_;
  if (result.error.empty()) {
    result.ok = true;
    if (vmValid_) result.image.assign(vm_.image(), vm_.image() + vm_.imageSize());
  }
  syncDone_.set_value(std::move(result));
}

// ---------------------------------------------------------------- writer thread: chunks and blocks

void BlockWriter::applyForces(std::vector<trace::ForceData> changes, uint32_t index) {
  for (trace::ForceData& f : changes) {
    if (f.restated) continue;  // (startChunk restated them)
    f.cycleIndex = index;
    auto same = std::find_if(heldForces_.begin(), heldForces_.end(),
                             [&](const trace::ForceData& h) { return h.offset == f.offset && h.bit == f.bit; });
    if (f.release) {
      if (same != heldForces_.end()) {
        // (its bytes were written in this block's cycles before the release: in its write index)
        releasedForces_.push_back({same->offset, same->bit >= 0 ? 1u : static_cast<uint32_t>(same->bytes.size())});
        heldForces_.erase(same);
      }
    } else if (same != heldForces_.end()) {
      *same = f;
    } else {
      heldForces_.push_back(f);
    }
    chunk_.forces.push_back(std::move(f));
  }
  // As Runtime::startCycle: every force held, after the writes.
  for (const trace::ForceData& f : heldForces_)
    applyWrite(vm_.image(), vm_.imageSize(), ExternalWrite{f.offset, f.bit, f.bytes});
}

void BlockWriter::startChunk(uint64_t firstCycle, const uint8_t* keyframe) {
  chunk_ = trace::ChunkData{};
  chunk_.firstCycle = firstCycle;
  // The forces held before the chunk, so that it replays on its own.
  for (trace::ForceData f : heldForces_) {
    f.cycleIndex = 0;
    f.restated = true;
    chunk_.forces.push_back(std::move(f));
  }
  flushedForces_ = 0;
  chunk_.keyframe.assign(keyframe, keyframe + vm_.imageSize());
  chunkOpen_ = true;
  flushedCycles_ = 0;
  flushedPaths_ = 0;
  flushedInputs_ = 0;
  flushedWrites_ = 0;
  pathHashes_.clear();
  startWriteIndex();
}

void BlockWriter::closeChunk() {
  if (!chunkOpen_) return;
  flushPart(false);
  chunkOpen_ = false;
  chunk_ = trace::ChunkData{};
  chunkMessage_.clear();
  pathHashes_.clear();
}

void BlockWriter::flushPart(bool onTime) {
  if (!chunkOpen_ || chunk_.cycleCount() == flushedCycles_) return;
  // The cycles not yet in a block: the chunk's first block (with its keyframe), or a continuation.
  const uint32_t from = flushedCycles_;
  const uint32_t to = chunk_.cycleCount();
  // One entry per cycle in every column; the paths known to the hashes are the chunk's table's.
  SB_ASSERT(from < to && chunk_.startTimes.size() == to && chunk_.stepCounts.size() == to &&
                chunk_.imageHashes.size() == to && (chunk_.paths.empty() || chunk_.paths.size() == to),
            "cycles {}..{} of a chunk whose columns hold {}, {}, {}, {}", from, to, chunk_.startTimes.size(),
            chunk_.stepCounts.size(), chunk_.imageHashes.size(), chunk_.paths.size());
  SB_ASSERT(flushedPaths_ <= chunk_.pathTable.size() && pathHashes_.size() <= chunk_.pathTable.size());
  trace::ChunkData part;
  part.continuation = from > 0;
  part.firstCycle = chunk_.firstCycle + from;
  part.pathBase = part.continuation ? flushedPaths_ : 0;
  if (!part.continuation) part.keyframe = std::move(chunk_.keyframe);  // not needed once in a block
  auto tail = [&](const auto& column) { return std::vector(column.begin() + from, column.begin() + to); };
  part.tasks = tail(chunk_.tasks);
  part.startTimes = tail(chunk_.startTimes);
  part.stepCounts = tail(chunk_.stepCounts);
  part.imageHashes = tail(chunk_.imageHashes);
  if (!chunk_.paths.empty()) part.paths = tail(chunk_.paths);
  part.pathTable.assign(chunk_.pathTable.begin() + flushedPaths_, chunk_.pathTable.end());
  for (size_t i = flushedInputs_; i < chunk_.inputChanges.size(); ++i) {
    part.inputChanges.push_back(chunk_.inputChanges[i]);
    part.inputChanges.back().cycleIndex -= from;
  }
  for (size_t i = flushedWrites_; i < chunk_.writes.size(); ++i) {
    part.writes.push_back(chunk_.writes[i]);
    part.writes.back().cycleIndex -= from;
  }
  for (size_t i = flushedForces_; i < chunk_.forces.size(); ++i) {
    part.forces.push_back(chunk_.forces[i]);
    part.forces.back().cycleIndex -= from;
  }
  if (options_.writeIndex) part.writeIndex = takeWriteIndex(part);
  flushedCycles_ = to;
  flushedPaths_ = static_cast<uint32_t>(chunk_.pathTable.size());
  flushedInputs_ = chunk_.inputChanges.size();
  flushedWrites_ = chunk_.writes.size();
  flushedForces_ = chunk_.forces.size();

  auto block = std::make_shared<trace::EncodedChunk>();
  std::string why;
  std::vector<uint8_t> message;
  if (!encoder_->encodeChunk(part, limits_, *block, why, chunkMessage_,
                             vm_.imageSize() <= kLargestPrefix ? &message : nullptr)) {
    // Our own bug (every part is valid by construction): recorded as a failure, not a crash.
    fileFailed(part.firstCycle, fmt::format("cannot encode cycles {}..{}: {}", part.firstCycle,
                                            part.firstCycle + part.cycleCount() - 1, why));
    restartChunk_ = true;
    return;
  }
  chunkMessage_ = std::move(message);  // what the chunk's next block is compressed against
  if (!part.continuation) chunks_.fetch_add(1, std::memory_order_release);
  if (ring_)
    ring_->keep(block, chunk_.startTimes.empty() ? std::nullopt : std::optional<int64_t>(chunk_.startTimes.back()));
  if (writer_) {
    writePart(*block);
    syncFile(onTime);
  }
  publishSizes();
}

bool BlockWriter::fileUsable() {
  if (!fileLostFrom_) return true;
  // Failed earlier: tried again at most once per flush window (or second).
  const auto now = std::chrono::steady_clock::now();
  const std::chrono::nanoseconds every(options_.flushEveryNs ? options_.flushEveryNs : 1'000'000'000);
  if (now - lastRetry_ < every) return false;
  lastRetry_ = now;
  return writer_->recover() || ringMode();  // (a flight recorder rewrites its file instead)
}

void BlockWriter::writePart(const trace::EncodedChunk& block) {
  if (ringMode()) {
    if (fileLostFrom_) {
      // Writing failed before: the file is rewritten from the history held, this block included.
      if (!fileUsable()) return;
      std::string why;
      if (!rewriteRingFile(why)) {
        lastRetry_ = std::chrono::steady_clock::now();
        return;
      }
      const uint64_t lostFrom = *fileLostFrom_;
      fileLostFrom_.reset();
      {
        std::lock_guard lock(healthMutex_);
        health_.failing = false;
      }
      emit(RecordingEvent{RecordingEvent::Kind::Resumed, lostFrom, 0,
                          fmt::format("writing to {}.partial works again: rewritten from the history held in memory, "
                                      "nothing of it lost",
                                      options_.path)});
      return;
    }
    if (!writer_->writeEncodedChunk(block)) return fileFailed(block.firstCycle(), writer_->lastError());
    fileBlockBytes_ += block.size();
    // Bounded on disk: about twice the history held (rewriting costs a write of the history per
    // history's worth of new blocks: twice the bytes written, never more).
    const uint64_t limit = std::max<uint64_t>(options_.ringBytes ? options_.ringBytes : ring_->bytes(), 64u << 10);
    std::string why;
    if (fileBlockBytes_ > 2 * limit && !rewriteRingFile(why)) fileFailed(block.firstCycle() + block.cycleCount(), why);
    return;
  }
  if (fileLostFrom_) {
    // A continuation of a chunk whose earlier block was lost cannot follow in the file: while
    // writing fails, each chunk ends at the next cycle, so that the next block that is tried is a
    // chunk's first block, with which the file resumes.
    if (block.continuation() || !fileUsable()) {
      restartChunk_ = true;
      return;
    }
    const uint64_t lostFrom = *fileLostFrom_;
    const uint64_t lost = block.firstCycle() - lostFrom;
    auto failedAgain = [&] {
      // Cut back again; the next retry starts from here, and says so if it fails again.
      static_cast<void>(writer_->recover());
      lastRetry_ = std::chrono::steady_clock::now();
      restartChunk_ = true;
    };
    if (lost) {
      if (!writer_->writeGap(trace::GapData{lostFrom, lost})) return failedAgain();
      // The gap is in the file, whatever happens to the block after it: the lost cycles go on from it.
      fileLostFrom_ = block.firstCycle();
      std::lock_guard lock(healthMutex_);
      health_.lostCycles += lost;
    }
    if (!writer_->writeEncodedChunk(block)) return failedAgain();
    fileLostFrom_.reset();
    uint64_t failedFrom = 0;
    {
      std::lock_guard lock(healthMutex_);
      health_.failing = false;
      failedFrom = health_.sinceCycle;
    }
    emit(RecordingEvent{RecordingEvent::Kind::Resumed, block.firstCycle(), block.firstCycle() - failedFrom,
                        fmt::format("writing to {}.partial works again from cycle {}: cycles {}..{} are a gap in it",
                                    options_.path, block.firstCycle(), failedFrom, block.firstCycle() - 1)});
    return;
  }
  if (!writer_->writeEncodedChunk(block)) fileFailed(block.firstCycle(), writer_->lastError());
}

void BlockWriter::writeGapToFile(const trace::GapData& gap) {
  if (!writer_ || ringMode() || fileLostFrom_) return;  // (a flight recorder's file gets its gaps when rewritten)
  if (!writer_->writeGap(gap)) fileFailed(gap.firstCycle, writer_->lastError());
}

void BlockWriter::writeFaultToFile(const trace::FaultData& fault) {
  if (!writer_) return;
  if (ringMode()) {
    // The fault ends the history: the file is rewritten with it (and is then exactly the history).
    std::string why;
    if (!rewriteRingFile(why)) fileFailed(fault.cycle, why);
    return;
  }
  if (fileLostFrom_ && writer_->recover()) {
    // The last chance to end the file properly: what was lost is a gap up to the fault's cycle.
    const uint64_t lost = fault.cycle + 1 - *fileLostFrom_;
    if (writer_->writeGap(trace::GapData{*fileLostFrom_, lost})) {
      std::lock_guard lock(healthMutex_);
      health_.failing = false;
      health_.lostCycles += lost;
      fileLostFrom_.reset();
    } else {
      // The writing is failing already (health says so); the next retry reports what happens.
      static_cast<void>(writer_->recover());
    }
  }
  if (!fileLostFrom_ && !writer_->writeFault(fault)) fileFailed(fault.cycle, writer_->lastError());
  syncFile(true);
}

void BlockWriter::fileFailed(uint64_t fromCycle, const std::string& why) {
  if (!ringMode()) restartChunk_ = true;  // the chunk's later blocks cannot follow a lost one
  lastRetry_ = std::chrono::steady_clock::now();
  if (fileLostFrom_) return;  // failing still: said already
  fileLostFrom_ = fromCycle;
  {
    std::lock_guard lock(healthMutex_);
    health_.failing = true;
    health_.sinceCycle = fromCycle;
    health_.error = why;
    ++health_.failures;
  }
  emit(RecordingEvent{RecordingEvent::Kind::Failed, fromCycle, 0,
                      fmt::format("recording to {} failed at cycle {}: {}; the task goes on, and writing is tried "
                                  "again every {}",
                                  options_.path, fromCycle, why, ringMode() ? "block kept" : "flush window")});
}

void BlockWriter::syncFile(bool onTime) {
  if (!writer_ || fileLostFrom_) return;
  unsynced_ = true;
  if (!options_.fsync) return;
  const auto now = std::chrono::steady_clock::now();
  if (!onTime && now - lastSync_ < std::chrono::nanoseconds(options_.flushEveryNs)) return;
  lastSync_ = now;
  unsynced_ = false;
  if (!writer_->flush()) {
    {
      std::lock_guard lock(healthMutex_);
      ++health_.failures;
    }
    emit(RecordingEvent{RecordingEvent::Kind::Failed, takenCycle_, 0,
                        fmt::format("recording to {}: {} (the blocks written may not survive a power cut)",
                                    options_.path, writer_->lastError())});
  }
}

bool BlockWriter::rewriteRingFile(std::string& error) {
  std::unique_ptr<trace::TraceWriter> w = ring_->rewrite(options_.path, header_, error);
  if (!w) return false;
  writer_ = std::move(w);  // (the old writer's file is gone: replaced)
  fileBlockBytes_ = ring_->bytes();
  lastSync_ = std::chrono::steady_clock::now();
  unsynced_ = false;
  publishSizes();
  return true;
}

void BlockWriter::publishSizes() {
  if (!writer_) return;
  bytesWritten_.store(writer_->bytesWritten(), std::memory_order_relaxed);
  rawBytes_.store(writer_->rawBytes(), std::memory_order_relaxed);
}

void BlockWriter::startWriteIndex() {
  if (!options_.writeIndex) return;
  const uint32_t words = (vm_.imageSize() + 7) / 8;
  boundaryImage_.assign(words, 0);
  std::memcpy(boundaryImage_.data(), vm_.image(), vm_.imageSize());
  changedBytes_.assign(words, 0);
  ranStatements_.assign(writeSets_->statementCount(), 0);
  ranUnknown_ = false;
}

namespace {
// One bit per byte of `diff` that is not zero (bit i: byte i).
inline uint8_t nonZeroBytes(uint64_t diff) {
  diff |= diff >> 4;
  diff |= diff >> 2;
  diff |= diff >> 1;
  return static_cast<uint8_t>(((diff & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56);
}
}  // namespace

void BlockWriter::noteBoundary() {
  if (!options_.writeIndex) return;
  // One pass over the image per cycle, on the writer thread (the scan thread never pays for it):
  // what the scan inputs and anything else changed, one bit per byte changed (an eighth of the
  // image in memory). What statements wrote, also a value changed and restored within the cycle,
  // comes from their write sets (takeWriteIndex).
  const uint32_t size = vm_.imageSize();
  const uint32_t whole = size / 8;
  const uint8_t* image = vm_.image();
  uint64_t* last = boundaryImage_.data();
  uint8_t* changed = changedBytes_.data();
  for (uint32_t i = 0; i < whole; ++i) {
    uint64_t now;
    std::memcpy(&now, image + 8 * i, 8);
    if (const uint64_t diff = now ^ last[i]) {
      changed[i] |= nonZeroBytes(diff);
      last[i] = now;
    }
  }
  if (whole * 8 < size) {
    uint64_t now = 0;
    std::memcpy(&now, image + 8 * whole, size - whole * 8);
    changed[whole] |= nonZeroBytes(now ^ last[whole]);
    last[whole] = now;
  }
  // The statements that ran: in the chunk's path table when paths are recorded, else noted here.
  if (vm_.statementLogOverflowed()) {
    ranUnknown_ = true;
  } else if (!options_.statements) {
    for (const uint32_t* id = vm_.statementLogBegin(); id != vm_.statementLogEnd(); ++id)
      if (*id < ranStatements_.size()) ranStatements_[*id] = 1;
  }
}

trace::WriteIndex BlockWriter::takeWriteIndex(const trace::ChunkData& part) {
  // Once per block: the bytes that differed at its cycle boundaries (adjacent bytes form one
  // range), every byte the statements that ran in its cycles may write, every byte of its scan
  // inputs (a stimulus value the cycle overwrites leaves no trace at the boundary). Beyond
  // kMaxRanges the ranges nearest each other are merged (a superset is allowed), so the index stays
  // small. The changed bytes and statements start again from nothing for the next block.
  constexpr size_t kMaxRanges = 256;
  SB_ASSERT(writeSets_, "the write index of a chunk that startWriteIndex did not start");
  const uint32_t size = vm_.imageSize();
  std::vector<ImageRange> ranges;
  for (uint32_t at = 0; at < size; ++at) {
    const uint8_t bytes = changedBytes_[at / 8];
    if (bytes == 0) {
      at = at / 8 * 8 + 7;
      continue;
    }
    if (((bytes >> (at % 8)) & 1) == 0) continue;
    if (!ranges.empty() && ranges.back().offset + ranges.back().size == at)
      ++ranges.back().size;
    else
      ranges.push_back({at, 1});
  }
  std::fill(changedBytes_.begin(), changedBytes_.end(), 0);
  bool anywhere = ranUnknown_ || writeSets_->unownedAnywhere();
  const std::span<const ImageRange> unowned = writeSets_->unowned();
  ranges.insert(ranges.end(), unowned.begin(), unowned.end());
  // The statements that ran: the paths of the block's cycles (a continuation's cycles may run paths
  // of the chunk's earlier blocks), or, without statement paths, those noted from the log.
  std::vector<uint8_t> ran(writeSets_->statementCount(), 0);
  ran.swap(ranStatements_);
  std::vector<uint8_t> pathSeen(chunk_.pathTable.size(), 0);
  for (const uint32_t p : part.paths) {
    if (p == trace::kNoPath || p >= pathSeen.size() || pathSeen[p]) continue;
    pathSeen[p] = 1;
    for (const uint32_t id : chunk_.pathTable[p])
      if (id < ran.size()) ran[id] = 1;
  }
  for (uint32_t id = 0; id < ran.size() && !anywhere; ++id) {
    if (!ran[id]) continue;
    anywhere = writeSets_->anywhere(id);
    const std::span<const ImageRange> writes = writeSets_->of(id);
    ranges.insert(ranges.end(), writes.begin(), writes.end());
  }
  ranUnknown_ = false;
  for (const std::vector<trace::ImageWriteData>* inputs : {&part.inputChanges, &part.writes})
    for (const trace::ImageWriteData& w : *inputs)
      ranges.push_back({w.offset, w.bit >= 0 ? 1u : static_cast<uint32_t>(w.bytes.size())});
  // Forces write their bytes at every cycle start: those of the part and those held through it.
  for (const std::vector<trace::ForceData>* forces :
       {&part.forces, static_cast<const std::vector<trace::ForceData>*>(&heldForces_)})
    for (const trace::ForceData& f : *forces)
      ranges.push_back({f.offset, f.bit >= 0 ? 1u : static_cast<uint32_t>(f.bytes.size())});
  ranges.insert(ranges.end(), releasedForces_.begin(), releasedForces_.end());
  releasedForces_.clear();
  if (anywhere) ranges.assign(1, ImageRange{0, size});
  normalizeRanges(ranges, size, kMaxRanges);
  trace::WriteIndex index;
  for (const ImageRange& r : ranges) index.insert(index.end(), {r.offset, r.size});
  return index;
}

std::future<SnapshotResult> BlockWriter::requestSnapshot(std::string path, uint64_t ticket, std::string refusal) {
  auto request = std::make_unique<SnapshotRequest>();
  request->path = std::move(path);
  std::future<SnapshotResult> result = request->done.get_future();
  auto refuse = [&](std::string why) {
    SnapshotResult r;
    r.path = request->path;
    r.error = std::move(why);
    request->done.set_value(std::move(r));
    return std::move(result);
  };
  if (!refusal.empty()) return refuse(std::move(refusal));
  request->ticket = ticket;
  SnapshotRequest* head = snapshotRequests_.load(std::memory_order_relaxed);
  do {
    if (head == &closedStack_)
      return refuse(fmt::format("cannot write a snapshot to {}: the recording has finished", request->path));
    request->next = head;
  } while (!snapshotRequests_.compare_exchange_weak(head, request.get(), std::memory_order_release,
                                                    std::memory_order_relaxed));
  request.release();  // the writer owns it now
  return result;
}

void BlockWriter::serveSnapshots(bool all) {
  if (all || snapshotRequests_.load(std::memory_order_relaxed) != nullptr) {
    SnapshotRequest* taken = snapshotRequests_.exchange(all ? &closedStack_ : nullptr, std::memory_order_acquire);
    const size_t at = waitingSnapshots_.size();
    while (taken) {
      SnapshotRequest* next = taken->next;
      waitingSnapshots_.emplace_back(taken);
      taken = next;
    }
    std::reverse(waitingSnapshots_.begin() + static_cast<ptrdiff_t>(at), waitingSnapshots_.end());  // oldest first
  }
  std::erase_if(waitingSnapshots_, [&](const std::unique_ptr<SnapshotRequest>& r) {
    if (!all && r->ticket >= servableTickets_) return false;  // its mark has not come yet
    r->done.set_value(writeSnapshot(r->path));
    return true;
  });
}

SnapshotResult BlockWriter::writeSnapshot(const std::string& path) {
  SnapshotResult r;
  r.path = path;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!options_.path.empty() &&
      fs::absolute(path, ec).lexically_normal() == fs::absolute(options_.path, ec).lexically_normal()) {
    r.error = fmt::format("cannot write a snapshot to {}: it is the recording's own trace", path);
    return r;
  }
  // Every cycle taken so far into a block: the snapshot holds the chunk being filled too.
  flushPart(false);
  std::string error;
  std::unique_ptr<trace::TraceWriter> w = trace::TraceWriter::create(path, header_, error);
  if (!w) {
    r.error = fmt::format("cannot write a snapshot to {}: {}", path, error);
    return r;
  }
  if (!ring_->writeTo(*w) || !w->close()) {
    r.error = fmt::format("cannot write a snapshot to {}: {}", path, w->lastError());
    const std::string partial = w->partialPath();
    w.reset();
    std::remove(partial.c_str());  // a failed snapshot leaves nothing behind
    return r;
  }
  r.ok = true;
  r.firstCycle = w->blocks().empty() ? 0 : w->blocks().front().firstCycle;
  r.endCycle = w->nextCycle();
  r.bytes = w->bytesWritten();
  return r;
}

bool BlockWriter::finish(std::string& error, const trace::OpenCycleData* open) {
  stop();
  if (writer_) {
    if (open && writeError_.empty() && !writer_->writeOpenCycle(*open)) writeError_ = writer_->lastError();
    if (!writer_->close() && writeError_.empty()) writeError_ = writer_->lastError();
    publishSizes();
  }
  if (!writeError_.empty()) {
    error = writeError_;
    return false;
  }
  return true;
}

}  // namespace scanback::recorder
