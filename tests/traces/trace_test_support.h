// Shared helpers for the trace format tests: random model data, sample traces, file helpers and
// hand-made frames.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "traces/framing.h"
#include "traces/trace_codec.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace scanback::trace::testing {

namespace fs = std::filesystem;
using Rng = std::mt19937_64;

inline uint64_t uniform(Rng& rng, uint64_t lo, uint64_t hi) {  // inclusive
  return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
}

// A directory removed with everything in it at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path =
        fs::temp_directory_path() / ("scanback_traces_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

inline std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void writeBytes(const std::string& path, const std::vector<uint8_t>& bytes, size_t size = SIZE_MAX) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(std::min(size, bytes.size())));
}

inline std::string randomText(Rng& rng, size_t maxLength) {
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789:=;()\n\t_.";
  std::string s(uniform(rng, 0, maxLength), ' ');
  for (char& c : s) c = alphabet[uniform(rng, 0, sizeof alphabet - 2)];
  if (!s.empty() && uniform(rng, 0, 3) == 0) s += "\xc3\xa4\xe2\x82\xac";  // some UTF-8
  return s;
}

inline std::vector<SourceFile> randomSources(Rng& rng) {
  std::vector<SourceFile> sources(uniform(rng, 0, 3));
  for (size_t i = 0; i < sources.size(); ++i) {
    sources[i].path = "dir/file" + std::to_string(i) + ".st";
    sources[i].text = randomText(rng, 400);
  }
  return sources;
}

inline HeaderData randomHeader(Rng& rng, uint32_t imageSize, uint32_t statementCount) {
  HeaderData h;
  h.scanbackVersion = "0.1.0-test";
  h.programHash = randomText(rng, 32);
  h.sources = randomSources(rng);
  h.tasks.resize(uniform(rng, 1, 4));
  for (size_t i = 0; i < h.tasks.size(); ++i) {
    h.tasks[i].name = "Task" + std::to_string(i);
    h.tasks[i].intervalNs = static_cast<int64_t>(uniform(rng, 1, 100)) * 1'000'000;
    h.tasks[i].priority = static_cast<int32_t>(uniform(rng, 0, 10));
  }
  h.options.keyframeEvery = static_cast<uint32_t>(uniform(rng, 1, 1000));
  h.options.zstdLevel = static_cast<int32_t>(uniform(rng, 1, 9));
  h.options.statements = true;
  h.options.ringBytes = uniform(rng, 0, 1) ? uniform(rng, 0, 1u << 30) : 0;
  h.options.ringDurationNs = static_cast<int64_t>(uniform(rng, 0, 1'000'000'000));
  h.options.statementBudget = uniform(rng, 0, 1) ? uniform(rng, 1, 1ull << 40) : 0;
  h.startWallTimeNs = static_cast<int64_t>(uniform(rng, 0, 1ull << 62));
  h.imageSize = imageSize;
  h.statementCount = statementCount;
  h.writeIndexComplete = uniform(rng, 0, 1) != 0;
  if (h.writeIndexComplete) {  // (no draw of its own: the other fields stay what they were for a seed)
    h.ioConfig = "[[device]]\nname = \"rack1\"\n";
    h.ioConfigPath = "plant-io.toml";
  }
  return h;
}

inline std::vector<ImageWriteData> randomWrites(Rng& rng, uint32_t cycles, uint32_t imageSize, size_t maxCount) {
  std::vector<ImageWriteData> writes;
  if (cycles == 0 || imageSize == 0) return writes;
  const size_t count = uniform(rng, 0, maxCount);
  for (size_t i = 0; i < count; ++i) {
    ImageWriteData w;
    w.cycleIndex = static_cast<uint32_t>(uniform(rng, 0, cycles - 1));
    w.offset = static_cast<uint32_t>(uniform(rng, 0, imageSize - 1));
    if (uniform(rng, 0, 3) == 0) {
      w.bit = static_cast<int8_t>(uniform(rng, 0, 7));
      w.bytes = {static_cast<uint8_t>(uniform(rng, 0, 1))};
    } else {
      const uint32_t size = static_cast<uint32_t>(uniform(rng, 1, std::min<uint32_t>(8, imageSize - w.offset)));
      for (uint32_t k = 0; k < size; ++k) w.bytes.push_back(static_cast<uint8_t>(uniform(rng, 0, 255)));
    }
    w.author = static_cast<WriteAuthor>(uniform(rng, 0, kLastWriteAuthor));
    writes.push_back(std::move(w));
  }
  std::stable_sort(writes.begin(), writes.end(),
                   [](const ImageWriteData& a, const ImageWriteData& b) { return a.cycleIndex < b.cycleIndex; });
  return writes;
}

inline ChunkData randomChunk(Rng& rng, uint64_t firstCycle, uint32_t cycles, uint32_t imageSize,
                             uint32_t statementCount, uint16_t taskCount, bool withPaths = true) {
  ChunkData c;
  c.firstCycle = firstCycle;
  c.keyframe.resize(imageSize);
  for (uint8_t& b : c.keyframe) b = uniform(rng, 0, 3) == 0 ? static_cast<uint8_t>(uniform(rng, 0, 255)) : 0;
  int64_t t = static_cast<int64_t>((firstCycle % (1ull << 32)) * 10'000'000ull);
  for (uint32_t i = 0; i < cycles; ++i) {
    c.tasks.push_back(static_cast<uint16_t>(uniform(rng, 0, taskCount - 1)));
    t += static_cast<int64_t>(uniform(rng, 0, 20'000'000));
    c.startTimes.push_back(t);
    c.stepCounts.push_back(static_cast<uint32_t>(uniform(rng, 0, 1000)));
    c.imageHashes.push_back(static_cast<uint32_t>(uniform(rng, 0, UINT32_MAX)));
  }
  if (withPaths && statementCount > 0) {
    c.pathTable.resize(uniform(rng, 1, 5));
    for (auto& path : c.pathTable) {
      path.resize(uniform(rng, 0, 40));
      for (uint32_t& id : path) id = static_cast<uint32_t>(uniform(rng, 0, statementCount - 1));
    }
    for (uint32_t i = 0; i < cycles; ++i) {
      c.paths.push_back(uniform(rng, 0, 9) == 0 ? kNoPath
                                                : static_cast<uint32_t>(uniform(rng, 0, c.pathTable.size() - 1)));
    }
  }
  c.inputChanges = randomWrites(rng, cycles, imageSize, 10);
  c.writes = randomWrites(rng, cycles, imageSize, 4);
  return c;
}

inline bool sameSources(const std::vector<SourceFile>& a, const std::vector<SourceFile>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].path != b[i].path || a[i].text != b[i].text) return false;
  }
  return true;
}

inline void expectSameHeader(const HeaderData& a, const HeaderData& b) {
  EXPECT_EQ(a.formatVersion, b.formatVersion);
  EXPECT_EQ(a.minReaderVersion, b.minReaderVersion);
  EXPECT_EQ(a.scanbackVersion, b.scanbackVersion);
  EXPECT_EQ(a.programHash, b.programHash);
  EXPECT_TRUE(sameSources(a.sources, b.sources));
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    EXPECT_EQ(a.tasks[i].name, b.tasks[i].name);
    EXPECT_EQ(a.tasks[i].intervalNs, b.tasks[i].intervalNs);
    EXPECT_EQ(a.tasks[i].priority, b.tasks[i].priority);
  }
  EXPECT_EQ(a.options.keyframeEvery, b.options.keyframeEvery);
  EXPECT_EQ(a.options.zstdLevel, b.options.zstdLevel);
  EXPECT_EQ(a.options.statements, b.options.statements);
  EXPECT_EQ(a.options.ringBytes, b.options.ringBytes);
  EXPECT_EQ(a.options.ringDurationNs, b.options.ringDurationNs);
  EXPECT_EQ(a.options.statementBudget, b.options.statementBudget);
  EXPECT_EQ(a.startWallTimeNs, b.startWallTimeNs);
  EXPECT_EQ(a.imageSize, b.imageSize);
  EXPECT_EQ(a.statementCount, b.statementCount);
  EXPECT_EQ(a.writeIndexComplete, b.writeIndexComplete);
  EXPECT_EQ(a.ioConfig, b.ioConfig);
  EXPECT_EQ(a.ioConfigPath, b.ioConfigPath);
}

inline bool sameProgramChange(const ProgramChangeData& a, const ProgramChangeData& b) {
  return a.atCycle == b.atCycle && a.programHash == b.programHash && sameSources(a.sources, b.sources) &&
         a.imageSize == b.imageSize && a.statementCount == b.statementCount;
}

inline bool sameInfo(const BlockInfo& a, const BlockInfo& b) {
  return a.offset == b.offset && a.kind == b.kind && a.firstCycle == b.firstCycle && a.cycleCount == b.cycleCount &&
         a.storedSize == b.storedSize && a.rawSize == b.rawSize;
}

inline void expectSameBlocks(const std::vector<BlockInfo>& a, const std::vector<BlockInfo>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(sameInfo(a[i], b[i])) << "block " << i << " at " << a[i].offset;
}

// One data block as written.
using Written = std::variant<ChunkData, GapData, ProgramChangeData, FaultData>;

// Reads `block` and compares it with `expected`; returns "" or the error / difference.
inline std::string readAndCompare(const TraceReader& reader, const BlockInfo& block, const Written& expected) {
  std::string error;
  if (const auto* c = std::get_if<ChunkData>(&expected)) {
    ChunkData got;
    if (!reader.readChunk(block, got, error)) return error.empty() ? "read failed without error" : error;
    return got == *c ? "" : "chunk differs";
  }
  if (const auto* g = std::get_if<GapData>(&expected)) {
    GapData got;
    if (!reader.readGap(block, got, error)) return error.empty() ? "read failed without error" : error;
    return got == *g ? "" : "gap differs";
  }
  if (const auto* p = std::get_if<ProgramChangeData>(&expected)) {
    ProgramChangeData got;
    if (!reader.readProgramChange(block, got, error)) return error.empty() ? "read failed without error" : error;
    return sameProgramChange(got, *p) ? "" : "program change differs";
  }
  const auto& f = std::get<FaultData>(expected);
  FaultData got;
  if (!reader.readFault(block, got, error)) return error.empty() ? "read failed without error" : error;
  return got == f ? "" : "fault differs";
}

// Reads whatever `block` is; "" or the error.
inline std::string readAny(const TraceReader& reader, const BlockInfo& block) {
  std::string error;
  bool ok = false;
  switch (block.kind) {
    case BlockKind::Chunk: {
      ChunkData c;
      ok = reader.readChunk(block, c, error);
      break;
    }
    case BlockKind::Gap: {
      GapData g;
      ok = reader.readGap(block, g, error);
      break;
    }
    case BlockKind::ProgramChange: {
      ProgramChangeData p;
      ok = reader.readProgramChange(block, p, error);
      break;
    }
    case BlockKind::Fault: {
      FaultData f;
      ok = reader.readFault(block, f, error);
      break;
    }
    default: error = "unexpected block kind"; break;
  }
  if (ok) return "";
  return error.empty() ? "read failed without error" : error;
}

// A trace with every data block kind: chunks, a gap, a program change (new image size), more
// chunks and a fault; written and closed.
struct SampleTrace {
  std::string path;
  HeaderData header;
  std::vector<Written> written;  // the data blocks in file order
};

inline SampleTrace writeSampleTrace(const std::string& path, uint64_t seed, uint32_t cyclesPerChunk = 12,
                                    bool close = true) {
  Rng rng(seed);
  SampleTrace s;
  s.path = path;
  s.header = randomHeader(rng, 96, 40);
  const uint16_t tasks = static_cast<uint16_t>(s.header.tasks.size());
  std::string error;
  auto writer = TraceWriter::create(path, s.header, error);
  EXPECT_TRUE(writer) << error;
  if (!writer) return s;
  uint64_t cycle = 0;
  uint32_t imageSize = s.header.imageSize, statements = s.header.statementCount;
  auto chunk = [&] {
    ChunkData c = randomChunk(rng, cycle, cyclesPerChunk, imageSize, statements, tasks);
    EXPECT_TRUE(writer->writeChunk(c)) << writer->lastError();
    cycle += cyclesPerChunk;
    s.written.push_back(std::move(c));
  };
  chunk();
  chunk();
  chunk();
  GapData gap{cycle, 7};
  EXPECT_TRUE(writer->writeGap(gap)) << writer->lastError();
  s.written.push_back(gap);
  cycle += 7;
  chunk();
  ProgramChangeData change{cycle, "second-version", randomSources(rng), 128, 50};
  EXPECT_TRUE(writer->writeProgramChange(change)) << writer->lastError();
  s.written.push_back(change);
  imageSize = 128;
  statements = 50;
  chunk();
  chunk();
  FaultData fault{cycle - 1, 17, 3, 2, "main.st:3:5: fault: division by zero"};
  EXPECT_TRUE(writer->writeFault(fault)) << writer->lastError();
  s.written.push_back(fault);
  if (close) {
    EXPECT_TRUE(writer->close()) << writer->lastError();
  }
  return s;
}

// A block frame made by hand (for corrupt-but-checksummed inputs). `sequence` is the block's number
// in the file (format version 2: the header is 0, each later block one more).
inline std::vector<uint8_t> makeFrame(BlockKind kind, uint64_t firstCycle, uint64_t cycleCount,
                                      const std::vector<uint8_t>& message, bool compress, uint32_t sequence) {
  std::vector<uint8_t> payload = message;
  FrameHeader h;
  h.kind = kind;
  h.firstCycle = firstCycle;
  h.cycleCount = cycleCount;
  h.rawSize = static_cast<uint32_t>(message.size());
  h.compression = 0;
  if (compress) {
    payload.resize(ZSTD_compressBound(message.size()));
    payload.resize(ZSTD_compress(payload.data(), payload.size(), message.data(), message.size(), 3));
    h.compression = 1;
  }
  h.storedSize = static_cast<uint32_t>(payload.size());
  h.payloadHash = payloadHash(payload.data(), payload.size());
  h.sequence = sequence;
  std::vector<uint8_t> out(kFrameHeaderBytes);
  encodeFrameHeader(h, out.data());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

// Re-encodes the frame header at `offset` after `edit` changed its fields (so it passes the
// header check).
template <typename Edit>
void editFrame(std::vector<uint8_t>& bytes, uint64_t offset, Edit&& edit) {
  std::string error;
  std::optional<FrameHeader> h = decodeFrameHeader(bytes.data() + offset, error);
  ASSERT_TRUE(h) << error;
  edit(*h);
  encodeFrameHeader(*h, bytes.data() + offset);
}

}  // namespace scanback::trace::testing
