#include "traces/trace_codec.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fmt/format.h>
#include <kj/io.h>

#include <cstring>
#include <exception>

#include "traces/framing.h"
#include "traces/trace.capnp.h"
#include "vm/base/out_of_memory.h"

namespace scanback::trace {

namespace {

using schema::Block;

// ---------------------------------------------------------------------------------------------
// Encoding

std::vector<uint8_t> toBytes(capnp::MessageBuilder& builder) {
  // Written once, straight into the vector (no flat array copied again: a keyframe may be large).
  std::vector<uint8_t> out(capnp::computeSerializedSizeInWords(builder) * sizeof(capnp::word));
  kj::ArrayOutputStream stream(kj::arrayPtr(reinterpret_cast<kj::byte*>(out.data()), out.size()));
  capnp::writeMessage(stream, builder);
  return out;
}

uint32_t words(size_t bytes) { return static_cast<uint32_t>(std::min<size_t>((bytes + 7) / 8, 1u << 28)); }

void setSources(capnp::List<schema::SourceFile>::Builder list, const std::vector<SourceFile>& sources) {
  for (size_t i = 0; i < sources.size(); ++i) {
    list[i].setPath(sources[i].path);
    list[i].setText(sources[i].text);
  }
}

void setWrites(capnp::List<schema::ImageWrite>::Builder list, const std::vector<ImageWriteData>& writes) {
  for (size_t i = 0; i < writes.size(); ++i) {
    const ImageWriteData& w = writes[i];
    list[i].setCycleIndex(w.cycleIndex);
    list[i].setOffset(w.offset);
    list[i].setBit(w.bit);
    list[i].setBytes(kj::arrayPtr(w.bytes.data(), w.bytes.size()));
    if (w.atStep != ImageWriteData::kAtCycleStart) list[i].setAtStep(w.atStep);
    if (w.author != WriteAuthor::Unknown) list[i].setAuthor(static_cast<schema::WriteAuthor>(w.author));
  }
}

void setForces(capnp::List<schema::Force>::Builder list, const std::vector<ForceData>& forces) {
  for (size_t i = 0; i < forces.size(); ++i) {
    const ForceData& f = forces[i];
    list[i].setCycleIndex(f.cycleIndex);
    list[i].setOffset(f.offset);
    list[i].setBit(f.bit);
    list[i].setBytes(kj::arrayPtr(f.bytes.data(), f.bytes.size()));
    list[i].setRelease(f.release);
    list[i].setTarget(f.target);
    list[i].setSinceCycle(f.sinceCycle);
    list[i].setRestated(f.restated);
  }
}

size_t sourcesBytes(const std::vector<SourceFile>& sources) {
  size_t n = 0;
  for (const SourceFile& f : sources) n += f.path.size() + f.text.size() + 48;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Decoding

std::string text(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }

void getSources(capnp::List<schema::SourceFile>::Reader list, std::vector<SourceFile>& out) {
  out.clear();
  out.reserve(list.size());
  for (auto f : list) out.push_back(SourceFile{text(f.getPath()), text(f.getText())});
}

void getWrites(capnp::List<schema::ImageWrite>::Reader list, std::vector<ImageWriteData>& out) {
  out.clear();
  out.reserve(list.size());
  for (auto w : list) {
    ImageWriteData d;
    d.cycleIndex = w.getCycleIndex();
    d.offset = w.getOffset();
    d.bit = w.getBit();
    capnp::Data::Reader bytes = w.getBytes();
    d.bytes.assign(bytes.begin(), bytes.end());
    d.atStep = w.getAtStep();
    // A newer writer's author this reader does not know: unknown (it only names the write).
    const auto author = static_cast<uint16_t>(w.getAuthor());
    if (author <= kLastWriteAuthor) d.author = static_cast<WriteAuthor>(author);
    out.push_back(std::move(d));
  }
}

void getForces(capnp::List<schema::Force>::Reader list, std::vector<ForceData>& out) {
  out.clear();
  out.reserve(list.size());
  for (auto f : list) {
    ForceData d;
    d.cycleIndex = f.getCycleIndex();
    d.offset = f.getOffset();
    d.bit = f.getBit();
    capnp::Data::Reader bytes = f.getBytes();
    d.bytes.assign(bytes.begin(), bytes.end());
    d.release = f.getRelease();
    d.target = text(f.getTarget());
    d.sinceCycle = f.getSinceCycle();
    d.restated = f.getRestated();
    out.push_back(std::move(d));
  }
}

template <typename T, typename L>
void getColumn(L list, std::vector<T>& out) {
  out.clear();
  out.reserve(list.size());
  for (auto v : list) out.push_back(static_cast<T>(v));
}

const char* whichName(Block::Which which) {
  switch (which) {
    case Block::HEADER: return "header";
    case Block::CHUNK: return "chunk";
    case Block::GAP: return "gap";
    case Block::PROGRAM_CHANGE: return "program change";
    case Block::FAULT: return "fault";
    case Block::INDEX: return "index";
    case Block::OPEN_CYCLE: return "open cycle";
    case Block::CONTINUATION: return "continuation";
  }
  return "unknown";
}

// Opens `message` as a capnp Block holding `expected` and calls fill(block, innerError).
template <typename Fill>
[[nodiscard]] bool withBlock(std::span<const uint8_t> message, uint64_t offset, Block::Which expected,
                             std::string& error, Fill&& fill) {
  const char* what = whichName(expected);
  if (message.size() % sizeof(capnp::word) != 0 || message.empty()) {
    error = fmt::format("block at offset {}: {}: message size {} is not a positive multiple of 8", offset, what,
                        message.size());
    return false;
  }
  const size_t count = message.size() / sizeof(capnp::word);
  std::vector<uint64_t> aligned;
  const void* data = message.data();
  if (reinterpret_cast<uintptr_t>(data) % alignof(capnp::word) != 0) {
    aligned.resize(count);
    std::memcpy(aligned.data(), message.data(), message.size());
    data = aligned.data();
  }
  capnp::ReaderOptions options;
  // Each object is read once; twice the message size leaves room and still stops amplification
  // (objects referenced many times, lists of zero-sized elements).
  options.traversalLimitInWords = count * 2 + 1024;
  options.nestingLimit = 16;
  try {
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(static_cast<const capnp::word*>(data), count), options);
    Block::Reader block = reader.getRoot<Block>();
    const Block::Which which = block.which();
    if (which != expected) {
      error = fmt::format("block at offset {}: expected a {} message, found {} (union tag {})", offset, what,
                          whichName(which), static_cast<unsigned>(which));
      return false;
    }
    std::string inner;
    if (!fill(block, inner)) {
      error = fmt::format("block at offset {}: {}: {}", offset, what, inner);
      return false;
    }
    return true;
  } catch (const kj::Exception& e) {
    error = fmt::format("block at offset {}: {}: invalid capnp message: {}", offset, what, e.getDescription().cStr());
    return false;
  } catch (const OutOfMemory&) {
    throw;
  } catch (const std::bad_alloc&) {
    // Not a damaged block: the memory there is did not hold it.
    throw OutOfMemory(fmt::format("decoding the {} at offset {} of the trace", what, offset), message.size());
  } catch (const std::exception& e) {
    error = fmt::format("block at offset {}: {}: {}", offset, what, e.what());
    return false;
  }
}

// A force the replayer cannot apply is refused with what is wrong with it (a reader meets it
// before it replays the cycle).
[[nodiscard]] bool validateForces(const std::vector<ForceData>& forces, uint64_t firstCycle, uint32_t cycleCount,
                                  uint32_t imageSize, std::string& error) {
  uint32_t previous = 0;
  for (size_t i = 0; i < forces.size(); ++i) {
    const ForceData& f = forces[i];
    const std::string what = fmt::format("force {} ('{}')", i, f.target);
    if (f.cycleIndex >= cycleCount || f.cycleIndex < previous) {
      error = fmt::format("{}: cycle index {} {} (cycle count {})", what, f.cycleIndex,
                          f.cycleIndex < previous ? "not sorted" : "out of range", cycleCount);
      return false;
    }
    previous = f.cycleIndex;
    if (f.bit < -1 || f.bit > 7) {
      error = fmt::format("{}: bit {} out of range -1..7", what, f.bit);
      return false;
    }
    const uint64_t size = f.bit >= 0 ? 1 : f.bytes.size();
    if (f.release ? !f.bytes.empty() : (f.bytes.empty() || (f.bit >= 0 && f.bytes.size() != 1))) {
      error = fmt::format("{}: {} bytes for a {}{}", what, f.bytes.size(), f.release ? "release" : "force",
                          f.bit >= 0 ? " of a bit" : "");
      return false;
    }
    if (f.offset > imageSize || size > imageSize - f.offset) {
      error = fmt::format("{}: offset {} + {} bytes outside the image of {} bytes: it cannot be applied", what,
                          f.offset, size, imageSize);
      return false;
    }
    if (f.sinceCycle > firstCycle + f.cycleIndex || (f.restated && f.release)) {
      error = fmt::format("{}: {}", what,
                          f.restated && f.release ? "a release cannot be restated"
                                                  : fmt::format("set at cycle {}, after the cycle it is in ({})",
                                                                f.sinceCycle, firstCycle + f.cycleIndex));
      return false;
    }
  }
  return true;
}

[[nodiscard]] bool validateWrites(const std::vector<ImageWriteData>& writes, const char* what, uint32_t cycleCount,
                                  uint32_t imageSize, std::string& error) {
  uint32_t previous = 0;
  for (size_t i = 0; i < writes.size(); ++i) {
    const ImageWriteData& w = writes[i];
    if (w.cycleIndex >= cycleCount) {
      error = fmt::format("{} {}: cycle index {} >= cycle count {}", what, i, w.cycleIndex, cycleCount);
      return false;
    }
    if (w.cycleIndex < previous) {
      error = fmt::format("{} {}: cycle index {} after {} (not sorted)", what, i, w.cycleIndex, previous);
      return false;
    }
    previous = w.cycleIndex;
    if (w.atStep < ImageWriteData::kAtCycleStart || w.atStep > UINT32_MAX) {
      error = fmt::format("{} {}: step {} out of range (-1 for the cycle start, else a statement boundary)", what, i,
                          w.atStep);
      return false;
    }
    if (w.bit < -1 || w.bit > 7) {
      error = fmt::format("{} {}: bit {} out of range -1..7", what, i, w.bit);
      return false;
    }
    if (w.bit >= 0 && w.bytes.size() > 1) {
      error = fmt::format("{} {}: a bit write carries {} bytes (expected 1)", what, i, w.bytes.size());
      return false;
    }
    const uint64_t size = w.bit >= 0 ? 1 : w.bytes.size();
    if (static_cast<uint64_t>(w.offset) + size > imageSize) {
      error = fmt::format("{} {}: offset {} + size {} > image size {}", what, i, w.offset, size, imageSize);
      return false;
    }
  }
  return true;
}

}  // namespace

// -----------------------------------------------------------------------------------------------

std::vector<uint8_t> encodeHeader(const HeaderData& h) {
  capnp::MallocMessageBuilder builder(words(sourcesBytes(h.sources) + 64 * h.tasks.size() + 1024));
  auto m = builder.initRoot<Block>().initHeader();
  m.setFormatVersion(h.formatVersion);
  m.setMinReaderVersion(h.minReaderVersion);
  m.setScanbackVersion(h.scanbackVersion);
  m.setProgramHash(h.programHash);
  setSources(m.initSources(static_cast<unsigned>(h.sources.size())), h.sources);
  auto tasks = m.initTasks(static_cast<unsigned>(h.tasks.size()));
  for (size_t i = 0; i < h.tasks.size(); ++i) {
    tasks[i].setName(h.tasks[i].name);
    tasks[i].setIntervalNs(h.tasks[i].intervalNs);
    tasks[i].setPriority(h.tasks[i].priority);
  }
  auto o = m.initOptions();
  o.setKeyframeEvery(h.options.keyframeEvery);
  o.setZstdLevel(h.options.zstdLevel);
  o.setStatements(h.options.statements);
  o.setRingBytes(h.options.ringBytes);
  o.setRingDurationNs(h.options.ringDurationNs);
  o.setStatementBudget(h.options.statementBudget);
  if (!h.options.test.empty()) o.setTest(h.options.test);
  m.setStartWallTimeNs(h.startWallTimeNs);
  m.setImageSize(h.imageSize);
  m.setStatementCount(h.statementCount);
  m.setWriteIndexComplete(h.writeIndexComplete);
  if (!h.ioConfig.empty()) {
    m.setIoConfig(h.ioConfig);
    m.setIoConfigPath(h.ioConfigPath);
  }
  return toBytes(builder);
}

std::vector<uint8_t> encodeChunk(const ChunkData& c) {
  // A large keyframe is referenced where it is, not copied into the message first (capnp reads an
  // external blob in whole words: only a keyframe of whole words qualifies).
  const bool external = c.keyframe.size() >= (64u << 10) && c.keyframe.size() % sizeof(capnp::word) == 0 &&
                        reinterpret_cast<uintptr_t>(c.keyframe.data()) % sizeof(capnp::word) == 0;
  size_t estimate = (external ? 0 : c.keyframe.size()) + c.cycleCount() * 22 + 256;
  for (const auto& p : c.pathTable) estimate += p.size() * 4 + 16;
  for (const auto& w : c.inputChanges) estimate += w.bytes.size() + 32;
  for (const auto& w : c.writes) estimate += w.bytes.size() + 32;
  for (const auto& f : c.forces) estimate += f.bytes.size() + f.target.size() + 64;
  if (c.writeIndex) estimate += c.writeIndex->size() * 4;
  capnp::MallocMessageBuilder builder(words(estimate));
  auto root = builder.initRoot<Block>();
  auto m = c.continuation ? root.initContinuation() : root.initChunk();
  const unsigned n = c.cycleCount();
  m.setFirstCycle(c.firstCycle);
  m.setCycleCount(n);
  if (external)
    m.adoptKeyframe(
        builder.getOrphanage().referenceExternalData(capnp::Data::Reader(c.keyframe.data(), c.keyframe.size())));
  else if (!c.continuation)
    m.setKeyframe(kj::arrayPtr(c.keyframe.data(), c.keyframe.size()));
  m.setPathBase(c.pathBase);
  auto tasks = m.initTasks(n);
  for (unsigned i = 0; i < n; ++i) tasks.set(i, c.tasks[i]);
  auto times = m.initStartTimes(static_cast<unsigned>(c.startTimes.size()));
  for (unsigned i = 0; i < c.startTimes.size(); ++i) times.set(i, c.startTimes[i]);
  auto steps = m.initStepCounts(static_cast<unsigned>(c.stepCounts.size()));
  for (unsigned i = 0; i < c.stepCounts.size(); ++i) steps.set(i, c.stepCounts[i]);
  auto hashes = m.initImageHashes(static_cast<unsigned>(c.imageHashes.size()));
  for (unsigned i = 0; i < c.imageHashes.size(); ++i) hashes.set(i, c.imageHashes[i]);
  auto paths = m.initPaths(static_cast<unsigned>(c.paths.size()));
  for (unsigned i = 0; i < c.paths.size(); ++i) paths.set(i, c.paths[i]);
  auto table = m.initPathTable(static_cast<unsigned>(c.pathTable.size()));
  for (unsigned i = 0; i < c.pathTable.size(); ++i) {
    const std::vector<uint32_t>& path = c.pathTable[i];
    auto statements = table[i].initStatements(static_cast<unsigned>(path.size()));
    for (unsigned j = 0; j < path.size(); ++j) statements.set(j, path[j]);
  }
  setWrites(m.initInputChanges(static_cast<unsigned>(c.inputChanges.size())), c.inputChanges);
  setWrites(m.initWrites(static_cast<unsigned>(c.writes.size())), c.writes);
  if (!c.forces.empty()) setForces(m.initForces(static_cast<unsigned>(c.forces.size())), c.forces);
  if (c.writeIndex) {
    m.setHasWriteIndex(true);
    auto index = m.initWriteIndex(static_cast<unsigned>(c.writeIndex->size()));
    for (unsigned i = 0; i < c.writeIndex->size(); ++i) index.set(i, (*c.writeIndex)[i]);
  }
  return toBytes(builder);
}

std::vector<uint8_t> encodeGap(const GapData& g) {
  capnp::MallocMessageBuilder builder(16);
  auto m = builder.initRoot<Block>().initGap();
  m.setFirstCycle(g.firstCycle);
  m.setCycleCount(g.cycleCount);
  return toBytes(builder);
}

std::vector<uint8_t> encodeProgramChange(const ProgramChangeData& p) {
  capnp::MallocMessageBuilder builder(words(sourcesBytes(p.sources) + p.programHash.size() + 256));
  auto m = builder.initRoot<Block>().initProgramChange();
  m.setAtCycle(p.atCycle);
  m.setProgramHash(p.programHash);
  setSources(m.initSources(static_cast<unsigned>(p.sources.size())), p.sources);
  m.setImageSize(p.imageSize);
  m.setStatementCount(p.statementCount);
  return toBytes(builder);
}

std::vector<uint8_t> encodeOpenCycle(const OpenCycleData& o) {
  size_t estimate = o.keyframe.size() + 256;
  for (const auto& w : o.inputChanges) estimate += w.bytes.size() + 32;
  for (const auto& w : o.writes) estimate += w.bytes.size() + 32;
  for (const auto& f : o.forces) estimate += f.bytes.size() + f.target.size() + 64;
  capnp::MallocMessageBuilder builder(words(estimate));
  auto m = builder.initRoot<Block>().initOpenCycle();
  m.setCycle(o.cycle);
  m.setTask(static_cast<uint16_t>(o.task));
  m.setStartNs(o.startNs);
  m.setUntilStep(o.untilStep);
  m.setKeyframe(kj::arrayPtr(o.keyframe.data(), o.keyframe.size()));
  setWrites(m.initInputChanges(static_cast<unsigned>(o.inputChanges.size())), o.inputChanges);
  setWrites(m.initWrites(static_cast<unsigned>(o.writes.size())), o.writes);
  if (!o.forces.empty()) setForces(m.initForces(static_cast<unsigned>(o.forces.size())), o.forces);
  return toBytes(builder);
}

std::vector<uint8_t> encodeFault(const FaultData& f) {
  capnp::MallocMessageBuilder builder(words(f.message.size() + 128));
  auto m = builder.initRoot<Block>().initFault();
  m.setCycle(f.cycle);
  m.setStep(f.step);
  m.setStatement(f.statement);
  m.setCode(f.code);
  m.setMessage(f.message);
  return toBytes(builder);
}

std::vector<uint8_t> encodeIndex(const std::vector<BlockInfo>& blocks) {
  size_t estimate = blocks.size() * 48 + 64;
  for (const BlockInfo& b : blocks) estimate += b.writeIndex ? b.writeIndex->size() * 4 : 0;
  capnp::MallocMessageBuilder builder(words(estimate));
  auto entries = builder.initRoot<Block>().initIndex().initEntries(static_cast<unsigned>(blocks.size()));
  for (size_t i = 0; i < blocks.size(); ++i) {
    const BlockInfo& b = blocks[i];
    entries[i].setOffset(b.offset);
    entries[i].setKind(static_cast<uint8_t>(b.kind));
    entries[i].setFirstCycle(b.firstCycle);
    entries[i].setCycleCount(b.cycleCount);
    entries[i].setStoredSize(b.storedSize);
    entries[i].setRawSize(b.rawSize);
    if (b.writeIndex) {
      entries[i].setHasWriteIndex(true);
      auto index = entries[i].initWriteIndex(static_cast<unsigned>(b.writeIndex->size()));
      for (unsigned k = 0; k < b.writeIndex->size(); ++k) index.set(k, (*b.writeIndex)[k]);
    }
  }
  return toBytes(builder);
}

bool validateChunk(const ChunkData& c, const ChunkLimits& limits, std::string& error) {
  const uint32_t n = c.cycleCount();
  if (c.tasks.size() > UINT32_MAX) {
    error = fmt::format("{} cycles in one chunk", c.tasks.size());
    return false;
  }
  if (c.startTimes.size() != n || c.stepCounts.size() != n || c.imageHashes.size() != n ||
      (!c.paths.empty() && c.paths.size() != n)) {
    error = fmt::format(
        "column lengths differ from the cycle count {}: startTimes {}, stepCounts {}, imageHashes {}, paths {}", n,
        c.startTimes.size(), c.stepCounts.size(), c.imageHashes.size(), c.paths.size());
    return false;
  }
  if (c.firstCycle + n < c.firstCycle) {
    error = fmt::format("first cycle {} + cycle count {} overflows", c.firstCycle, n);
    return false;
  }
  if (c.continuation ? !c.keyframe.empty() : c.keyframe.size() != limits.imageSize) {
    error = c.continuation ? fmt::format("a continuation with a keyframe of {} bytes", c.keyframe.size())
                           : fmt::format("keyframe size {} != image size {}", c.keyframe.size(), limits.imageSize);
    return false;
  }
  if (!c.continuation && c.pathBase != 0) {
    error = fmt::format("a chunk whose paths number from {}", c.pathBase);
    return false;
  }
  // A continuation's paths may also be ones of the blocks of its chunk before it.
  const uint64_t pathCount = uint64_t{c.pathBase} + c.pathTable.size();
  // The virtual clock starts at 0 and never goes back; timers subtract start times, so a trace
  // that says otherwise is refused here rather than replayed.
  for (size_t i = 0; i < n; ++i) {
    if (c.startTimes[i] < 0) {
      error = fmt::format("cycle {}: start time {} ns is negative (the virtual clock starts at 0)", c.firstCycle + i,
                          c.startTimes[i]);
      return false;
    }
    if (i > 0 && c.startTimes[i] < c.startTimes[i - 1]) {
      error = fmt::format("cycle {}: start time {} ns is before the previous cycle's ({} ns)", c.firstCycle + i,
                          c.startTimes[i], c.startTimes[i - 1]);
      return false;
    }
  }
  for (size_t i = 0; i < c.paths.size(); ++i) {
    if (c.paths[i] != kNoPath && c.paths[i] >= pathCount) {
      error = fmt::format("cycle index {}: path index {} >= path table size {}", i, c.paths[i], pathCount);
      return false;
    }
  }
  for (size_t i = 0; i < c.pathTable.size(); ++i) {
    for (uint32_t id : c.pathTable[i]) {
      if (id >= limits.statementCount) {
        error = fmt::format("path {}: statement id {} >= statement count {}", i, id, limits.statementCount);
        return false;
      }
    }
  }
  if (c.writeIndex && !validateWriteIndex(*c.writeIndex, limits.imageSize, error)) return false;
  // A write at a statement boundary: the cycle passed that boundary.
  for (size_t i = 0; i < c.writes.size(); ++i) {
    const ImageWriteData& w = c.writes[i];
    if (w.atStep >= 0 && w.cycleIndex < c.stepCounts.size() && w.atStep >= int64_t{c.stepCounts[w.cycleIndex]}) {
      error = fmt::format("write {}: at step {} of cycle index {}, which has {} steps", i, w.atStep, w.cycleIndex,
                          c.stepCounts[w.cycleIndex]);
      return false;
    }
  }
  return validateWrites(c.inputChanges, "input change", n, limits.imageSize, error) &&
         validateWrites(c.writes, "write", n, limits.imageSize, error) &&
         validateForces(c.forces, c.firstCycle, n, limits.imageSize, error);
}

bool validateWriteIndex(const WriteIndex& index, uint32_t imageSize, std::string& error) {
  if (index.size() % 2 != 0) {
    error = fmt::format("write index has {} numbers, not (offset, size) pairs", index.size());
    return false;
  }
  uint64_t end = 0;
  for (size_t i = 0; i < index.size(); i += 2) {
    const uint64_t offset = index[i], size = index[i + 1];
    if (size == 0 || offset < end || offset + size > imageSize) {
      error = fmt::format("write index range {} ({}+{}) is empty, unsorted or outside the image of {} bytes", i / 2,
                          offset, size, imageSize);
      return false;
    }
    end = offset + size;
  }
  return true;
}

bool decodeHeader(std::span<const uint8_t> message, uint64_t offset, HeaderData& out, std::string& error) {
  return withBlock(message, offset, Block::HEADER, error, [&](Block::Reader block, std::string& inner) {
    auto m = block.getHeader();
    out.formatVersion = m.getFormatVersion();
    out.minReaderVersion = m.getMinReaderVersion();
    out.scanbackVersion = text(m.getScanbackVersion());
    out.programHash = text(m.getProgramHash());
    getSources(m.getSources(), out.sources);
    auto tasks = m.getTasks();
    if (tasks.size() > 65536) {
      inner = fmt::format("{} tasks (at most 65536: the task column is 16 bits)", tasks.size());
      return false;
    }
    out.tasks.clear();
    out.tasks.reserve(tasks.size());
    for (auto t : tasks) out.tasks.push_back(TaskData{text(t.getName()), t.getIntervalNs(), t.getPriority()});
    auto o = m.getOptions();
    out.options.keyframeEvery = o.getKeyframeEvery();
    out.options.zstdLevel = o.getZstdLevel();
    out.options.statements = o.getStatements();
    out.options.ringBytes = o.getRingBytes();
    out.options.ringDurationNs = o.getRingDurationNs();
    out.options.statementBudget = o.getStatementBudget();
    out.options.test = text(o.getTest());
    out.startWallTimeNs = m.getStartWallTimeNs();
    out.imageSize = m.getImageSize();
    out.statementCount = m.getStatementCount();
    out.writeIndexComplete = m.getWriteIndexComplete();
    out.ioConfig = text(m.getIoConfig());
    out.ioConfigPath = text(m.getIoConfigPath());
    return true;
  });
}

bool decodeChunk(std::span<const uint8_t> message, uint64_t offset, const ChunkLimits& limits, ChunkData& out,
                 std::string& error) {
  return decodeChunkOrContinuation(message, offset, limits, false, out, error);
}

bool decodeContinuation(std::span<const uint8_t> message, uint64_t offset, const ChunkLimits& limits, ChunkData& out,
                        std::string& error) {
  return decodeChunkOrContinuation(message, offset, limits, true, out, error);
}

bool decodeChunkOrContinuation(std::span<const uint8_t> message, uint64_t offset, const ChunkLimits& limits,
                               bool continuation, ChunkData& out, std::string& error) {
  const Block::Which which = continuation ? Block::CONTINUATION : Block::CHUNK;
  return withBlock(message, offset, which, error, [&](Block::Reader block, std::string& inner) {
    auto m = continuation ? block.getContinuation() : block.getChunk();
    out.continuation = continuation;
    out.pathBase = m.getPathBase();
    out.firstCycle = m.getFirstCycle();
    const uint32_t cycleCount = m.getCycleCount();
    capnp::Data::Reader keyframe = m.getKeyframe();
    out.keyframe.assign(keyframe.begin(), keyframe.end());
    getColumn(m.getTasks(), out.tasks);
    if (out.tasks.size() != cycleCount) {
      inner = fmt::format("task column has {} entries, cycle count is {}", out.tasks.size(), cycleCount);
      return false;
    }
    getColumn(m.getStartTimes(), out.startTimes);
    getColumn(m.getStepCounts(), out.stepCounts);
    getColumn(m.getImageHashes(), out.imageHashes);
    getColumn(m.getPaths(), out.paths);
    auto table = m.getPathTable();
    out.pathTable.clear();
    out.pathTable.reserve(table.size());
    for (auto path : table) {
      std::vector<uint32_t> statements;
      getColumn(path.getStatements(), statements);
      out.pathTable.push_back(std::move(statements));
    }
    getWrites(m.getInputChanges(), out.inputChanges);
    getWrites(m.getWrites(), out.writes);
    getForces(m.getForces(), out.forces);
    out.writeIndex.reset();
    if (m.getHasWriteIndex()) {
      out.writeIndex.emplace();
      getColumn(m.getWriteIndex(), *out.writeIndex);
    }
    return validateChunk(out, limits, inner);
  });
}

bool decodeGap(std::span<const uint8_t> message, uint64_t offset, GapData& out, std::string& error) {
  return withBlock(message, offset, Block::GAP, error, [&](Block::Reader block, std::string& inner) {
    auto m = block.getGap();
    out.firstCycle = m.getFirstCycle();
    out.cycleCount = m.getCycleCount();
    if (out.firstCycle + out.cycleCount < out.firstCycle) {
      inner = fmt::format("first cycle {} + cycle count {} overflows", out.firstCycle, out.cycleCount);
      return false;
    }
    return true;
  });
}

bool decodeProgramChange(std::span<const uint8_t> message, uint64_t offset, ProgramChangeData& out,
                         std::string& error) {
  return withBlock(message, offset, Block::PROGRAM_CHANGE, error, [&](Block::Reader block, std::string&) {
    auto m = block.getProgramChange();
    out.atCycle = m.getAtCycle();
    out.programHash = text(m.getProgramHash());
    getSources(m.getSources(), out.sources);
    out.imageSize = m.getImageSize();
    out.statementCount = m.getStatementCount();
    return true;
  });
}

bool decodeOpenCycle(std::span<const uint8_t> message, uint64_t offset, const ChunkLimits& limits, OpenCycleData& out,
                     std::string& error) {
  return withBlock(message, offset, Block::OPEN_CYCLE, error, [&](Block::Reader block, std::string& inner) {
    auto m = block.getOpenCycle();
    out.cycle = m.getCycle();
    out.task = m.getTask();
    out.startNs = m.getStartNs();
    if (out.startNs < 0) {
      inner = fmt::format("start time {} ns is negative (the virtual clock starts at 0)", out.startNs);
      return false;
    }
    out.untilStep = m.getUntilStep();
    capnp::Data::Reader keyframe = m.getKeyframe();
    out.keyframe.assign(keyframe.begin(), keyframe.end());
    getWrites(m.getInputChanges(), out.inputChanges);
    getWrites(m.getWrites(), out.writes);
    getForces(m.getForces(), out.forces);
    if (out.keyframe.size() != limits.imageSize) {
      inner = fmt::format("keyframe size {} != image size {}", out.keyframe.size(), limits.imageSize);
      return false;
    }
    return validateWrites(out.inputChanges, "input change", 1, limits.imageSize, inner) &&
           validateWrites(out.writes, "write", 1, limits.imageSize, inner) &&
           validateForces(out.forces, out.cycle, 1, limits.imageSize, inner);
  });
}

bool decodeFault(std::span<const uint8_t> message, uint64_t offset, FaultData& out, std::string& error) {
  return withBlock(message, offset, Block::FAULT, error, [&](Block::Reader block, std::string&) {
    auto m = block.getFault();
    out.cycle = m.getCycle();
    out.step = m.getStep();
    out.statement = m.getStatement();
    out.code = m.getCode();
    out.message = text(m.getMessage());
    return true;
  });
}

bool decodeIndex(std::span<const uint8_t> message, uint64_t offset, std::vector<BlockInfo>& out, std::string& error) {
  return withBlock(message, offset, Block::INDEX, error, [&](Block::Reader block, std::string& inner) {
    auto entries = block.getIndex().getEntries();
    out.clear();
    out.reserve(entries.size());
    for (auto e : entries) {
      if (!validBlockKind(e.getKind())) {
        inner = fmt::format("entry {}: unknown block kind {}", out.size(), e.getKind());
        return false;
      }
      BlockInfo b;
      b.offset = e.getOffset();
      b.kind = static_cast<BlockKind>(e.getKind());
      b.firstCycle = e.getFirstCycle();
      b.cycleCount = e.getCycleCount();
      b.storedSize = e.getStoredSize();
      b.rawSize = e.getRawSize();
      if (e.getHasWriteIndex()) {
        b.writeIndex.emplace();
        getColumn(e.getWriteIndex(), *b.writeIndex);
        // Sorted and disjoint (the image bound is checked against the chunk's program when used).
        std::string bad;
        if (!validateWriteIndex(*b.writeIndex, UINT32_MAX, bad)) {
          inner = fmt::format("entry {}: {}", out.size(), bad);
          return false;
        }
      }
      out.push_back(std::move(b));
    }
    return true;
  });
}

}  // namespace scanback::trace
