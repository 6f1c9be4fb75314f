// A chunk stored as its first block and continuations (format version 3): written by the writer
// from ChunkData or from encoded blocks, read back as one chunk, cut off at any byte, refused where
// a continuation does not follow its chunk; and the writer's ownership of its .partial (the lock)
// and its recovery after an I/O error.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <csignal>

#include "tests/traces/trace_test_support.h"
#include "traces/block_encoder.h"

namespace scanback::trace::testing {
namespace {

constexpr uint32_t kImage = 96;
constexpr uint32_t kStatements = 40;

// The chunk with its path table in order of first use, as a recorder builds it (so that a cut
// anywhere leaves each part's paths inside the table up to its end).
ChunkData inFirstUseOrder(ChunkData c) {
  std::vector<uint32_t> renumber(c.pathTable.size(), kNoPath);
  std::vector<std::vector<uint32_t>> table;
  for (uint32_t& p : c.paths) {
    if (p == kNoPath) continue;
    if (renumber[p] == kNoPath) {
      renumber[p] = static_cast<uint32_t>(table.size());
      table.push_back(c.pathTable[p]);
    }
    p = renumber[p];
  }
  c.pathTable = std::move(table);
  return c;
}

// `whole` cut before each cycle index of `cuts` (ascending, inside it): its first block and its
// continuations, as a recorder flushing at those cycles writes them.
std::vector<ChunkData> split(const ChunkData& whole, const std::vector<uint32_t>& cuts) {
  std::vector<ChunkData> parts;
  uint32_t from = 0, pathsBefore = 0;
  std::vector<uint32_t> bounds = cuts;
  bounds.push_back(whole.cycleCount());
  for (const uint32_t to : bounds) {
    ChunkData p;
    p.continuation = from > 0;
    p.firstCycle = whole.firstCycle + from;
    if (!p.continuation) p.keyframe = whole.keyframe;
    p.pathBase = p.continuation ? pathsBefore : 0;
    uint32_t pathsEnd = pathsBefore;
    for (uint32_t i = from; i < to; ++i) {
      p.tasks.push_back(whole.tasks[i]);
      p.startTimes.push_back(whole.startTimes[i]);
      p.stepCounts.push_back(whole.stepCounts[i]);
      p.imageHashes.push_back(whole.imageHashes[i]);
      if (!whole.paths.empty()) {
        p.paths.push_back(whole.paths[i]);
        if (whole.paths[i] != kNoPath) pathsEnd = std::max(pathsEnd, whole.paths[i] + 1);
      }
    }
    p.pathTable.assign(whole.pathTable.begin() + pathsBefore, whole.pathTable.begin() + pathsEnd);
    for (const ImageWriteData& w : whole.inputChanges)
      if (w.cycleIndex >= from && w.cycleIndex < to) {
        p.inputChanges.push_back(w);
        p.inputChanges.back().cycleIndex -= from;
      }
    for (const ImageWriteData& w : whole.writes)
      if (w.cycleIndex >= from && w.cycleIndex < to) {
        p.writes.push_back(w);
        p.writes.back().cycleIndex -= from;
      }
    parts.push_back(std::move(p));
    pathsBefore = pathsEnd;
    from = to;
  }
  // Paths first used after the last cut but not by any cycle stay out; a whole chunk read back
  // has exactly the paths its parts carry.
  return parts;
}

ChunkData joined(const std::vector<ChunkData>& parts) {
  ChunkData c = parts.front();
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string error;
    EXPECT_TRUE(appendContinuation(c, parts[i], error)) << error;
  }
  return c;
}

TEST(Continuation, AChunkWrittenInPartsReadsBackAsOne) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    TempDir dir;
    const HeaderData header = randomHeader(rng, kImage, kStatements);
    const uint16_t tasks = static_cast<uint16_t>(header.tasks.size());
    std::string error;
    auto writer = TraceWriter::create(dir.file("t.sbt"), header, error);
    ASSERT_TRUE(writer) << error;
    std::vector<ChunkData> expected;
    std::vector<size_t> continuations;
    uint64_t cycle = 0;
    for (int c = 0; c < 3; ++c) {
      ChunkData whole = inFirstUseOrder(randomChunk(rng, cycle, 30, kImage, kStatements, tasks));
      std::vector<uint32_t> cuts;
      for (uint32_t i = 1; i < 30; ++i)
        if (uniform(rng, 0, 4) == 0) cuts.push_back(i);
      const std::vector<ChunkData> parts = split(whole, cuts);
      for (const ChunkData& p : parts) ASSERT_TRUE(writer->writeChunk(p)) << writer->lastError();
      expected.push_back(joined(parts));
      continuations.push_back(cuts.size());
      cycle += 30;
    }
    ASSERT_TRUE(writer->close()) << writer->lastError();
    for (const bool scan : {false, true}) {
      std::vector<uint8_t> bytes = readBytes(dir.file("t.sbt"));
      if (scan) bytes.resize(bytes.size() - kTrailerBytes);  // no trailer: the blocks are found by scanning
      auto reader = TraceReader::openBytes(bytes, error);
      ASSERT_TRUE(reader) << error;
      EXPECT_EQ(reader->usedIndex(), !scan);
      EXPECT_TRUE(reader->damage().empty());
      ASSERT_EQ(reader->blocks().size(), expected.size()) << "seed " << seed;
      for (size_t i = 0; i < expected.size(); ++i) {
        const BlockInfo& b = reader->blocks()[i];
        EXPECT_EQ(b.kind, BlockKind::Chunk);
        EXPECT_EQ(b.cycleCount, 30u);
        EXPECT_EQ(b.continuations.size(), continuations[i]);
        ChunkData got;
        ASSERT_TRUE(reader->readChunk(b, got, error)) << error;
        EXPECT_EQ(got, expected[i]) << "seed " << seed << " chunk " << i;
      }
    }
  }
}

TEST(Continuation, EncodedBlocksCompressedAgainstTheBlockBeforeReadBack) {
  Rng rng(7);
  TempDir dir;
  const HeaderData header = randomHeader(rng, kImage, kStatements);
  ChunkData whole = inFirstUseOrder(randomChunk(rng, 0, 40, kImage, kStatements, 1));
  const std::vector<ChunkData> parts = split(whole, {10, 11, 25});
  BlockEncoder encoder(3);
  std::string error;
  auto writer = TraceWriter::create(dir.file("e.sbt"), header, error);
  ASSERT_TRUE(writer) << error;
  std::vector<uint8_t> before;
  for (const ChunkData& p : parts) {
    EncodedChunk block;
    std::vector<uint8_t> message;
    ASSERT_TRUE(encoder.encodeChunk(p, ChunkLimits{kImage, kStatements}, block, error, before, &message)) << error;
    EXPECT_EQ(block.continuation(), p.continuation);
    ASSERT_TRUE(writer->writeEncodedChunk(block)) << writer->lastError();
    before = std::move(message);
  }
  ASSERT_TRUE(writer->close()) << writer->lastError();
  auto reader = TraceReader::open(dir.file("e.sbt"), error);
  ASSERT_TRUE(reader) << error;
  ASSERT_EQ(reader->blocks().size(), 1u);
  EXPECT_EQ(reader->blocks()[0].continuations.size(), 3u);
  EXPECT_EQ(reader->physicalBlockCount(), 4u);
  ChunkData got;
  ASSERT_TRUE(reader->readChunk(reader->blocks()[0], got, error)) << error;
  EXPECT_EQ(got, joined(parts));
  // A prefix-compressed frame says so, and only a continuation may.
  const std::vector<uint8_t> bytes = readBytes(dir.file("e.sbt"));
  std::string why;
  const std::optional<FrameHeader> last =
      decodeFrameHeader(bytes.data() + reader->blocks()[0].continuations.back().offset, why);
  ASSERT_TRUE(last) << why;
  EXPECT_EQ(last->compression, kZstdWithChunkPrefix);
  FrameHeader chunk = *last;
  chunk.kind = BlockKind::Chunk;
  uint8_t raw[kFrameHeaderBytes];
  encodeFrameHeader(chunk, raw);
  EXPECT_FALSE(decodeFrameHeader(raw, why));
  EXPECT_NE(why.find("compressed against the block before it"), std::string::npos) << why;
}

TEST(Continuation, ACutAtAnyByteKeepsEveryCompleteBlock) {
  Rng rng(11);
  TempDir dir;
  const HeaderData header = randomHeader(rng, kImage, kStatements);
  ChunkData whole = inFirstUseOrder(randomChunk(rng, 0, 24, kImage, kStatements, 1));
  const std::vector<ChunkData> parts = split(whole, {6, 12, 18});
  std::string error;
  auto writer = TraceWriter::create(dir.file("c.sbt"), header, error);
  ASSERT_TRUE(writer) << error;
  std::vector<uint64_t> ends;  // the file size after each block
  for (const ChunkData& p : parts) {
    ASSERT_TRUE(writer->writeChunk(p)) << writer->lastError();
    ends.push_back(writer->bytesWritten());
  }
  const std::vector<uint8_t> bytes = readBytes(writer->partialPath());  // (never closed: a crash)
  const uint64_t headerEnd = ends.front() - (writer->blocks().front().storedSize + kFrameHeaderBytes);
  for (uint64_t size = headerEnd; size <= bytes.size(); ++size) {
    auto reader = TraceReader::openBytes(std::vector<uint8_t>(bytes.begin(), bytes.begin() + size), error);
    ASSERT_TRUE(reader) << "cut at " << size << ": " << error;
    size_t complete = 0;
    while (complete < ends.size() && ends[complete] <= size) ++complete;
    if (complete == 0) {
      EXPECT_TRUE(reader->blocks().empty()) << "cut at " << size;
      continue;
    }
    ASSERT_EQ(reader->blocks().size(), 1u) << "cut at " << size;
    ChunkData got;
    ASSERT_TRUE(reader->readChunk(reader->blocks()[0], got, error)) << "cut at " << size << ": " << error;
    EXPECT_EQ(got, joined(std::vector<ChunkData>(parts.begin(), parts.begin() + static_cast<ptrdiff_t>(complete))))
        << "cut at " << size;
  }
}

TEST(Continuation, TheWriterRefusesOneThatDoesNotFollowItsChunk) {
  Rng rng(3);
  TempDir dir;
  const HeaderData header = randomHeader(rng, kImage, kStatements);
  ChunkData whole = inFirstUseOrder(randomChunk(rng, 0, 20, kImage, kStatements, 1));
  std::vector<ChunkData> parts = split(whole, {10});
  std::string error;
  auto writer = TraceWriter::create(dir.file("r.sbt"), header, error);
  ASSERT_TRUE(writer) << error;
  // First of all: nothing to continue.
  EXPECT_FALSE(writer->writeChunk(parts[1]));
  EXPECT_NE(writer->lastError().find("follows no chunk"), std::string::npos) << writer->lastError();
  ASSERT_TRUE(writer->writeChunk(parts[0])) << writer->lastError();
  ChunkData wrongPaths = parts[1];
  wrongPaths.pathBase += 1;
  EXPECT_FALSE(writer->writeChunk(wrongPaths));
  EXPECT_NE(writer->lastError().find("numbers its paths from"), std::string::npos) << writer->lastError();
  ChunkData keyframed = parts[1];
  keyframed.keyframe = parts[0].keyframe;
  EXPECT_FALSE(writer->writeChunk(keyframed));
  EXPECT_NE(writer->lastError().find("a continuation with a keyframe"), std::string::npos) << writer->lastError();
  ASSERT_TRUE(writer->writeChunk(parts[1])) << writer->lastError();
  // After a gap there is nothing to continue either.
  ASSERT_TRUE(writer->writeGap(GapData{20, 5})) << writer->lastError();
  ChunkData after = parts[1];
  after.firstCycle = 25;
  EXPECT_FALSE(writer->writeChunk(after));
  EXPECT_NE(writer->lastError().find("follows no chunk"), std::string::npos) << writer->lastError();
  ASSERT_TRUE(writer->close()) << writer->lastError();
}

TEST(Continuation, OneWhoseChunkIsMissingIsDamageNotReplayed) {
  Rng rng(5);
  TempDir dir;
  const HeaderData header = randomHeader(rng, kImage, kStatements);
  ChunkData first = inFirstUseOrder(randomChunk(rng, 0, 10, kImage, kStatements, 1));
  ChunkData second = inFirstUseOrder(randomChunk(rng, 10, 20, kImage, kStatements, 1));
  const std::vector<ChunkData> parts = split(second, {10});
  std::string error;
  auto writer = TraceWriter::create(dir.file("d.sbt"), header, error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->writeChunk(first)) << writer->lastError();
  ASSERT_TRUE(writer->writeChunk(parts[0])) << writer->lastError();
  ASSERT_TRUE(writer->writeChunk(parts[1])) << writer->lastError();
  const std::vector<BlockInfo> written = writer->blocks();
  writer.reset();
  // The second chunk's first block cut out of the file: its continuation follows the first chunk,
  // whose cycles it does not continue.
  std::vector<uint8_t> bytes = readBytes(dir.file("d.sbt.partial"));
  const uint64_t at = written[1].offset, size = kFrameHeaderBytes + written[1].storedSize;
  bytes.erase(bytes.begin() + static_cast<ptrdiff_t>(at), bytes.begin() + static_cast<ptrdiff_t>(at + size));
  auto reader = TraceReader::openBytes(bytes, error);
  ASSERT_TRUE(reader) << error;
  ASSERT_EQ(reader->blocks().size(), 1u);
  EXPECT_EQ(reader->blocks()[0].cycleCount, 10u);
  bool orphan = false;
  for (const DamageData& d : reader->damage()) orphan |= d.what.find("follows no chunk") != std::string::npos;
  EXPECT_TRUE(orphan);
}

TEST(Continuation, RefreshGrowsTheLastChunk) {
  Rng rng(9);
  TempDir dir;
  const HeaderData header = randomHeader(rng, kImage, kStatements);
  ChunkData whole = inFirstUseOrder(randomChunk(rng, 0, 20, kImage, kStatements, 1));
  const std::vector<ChunkData> parts = split(whole, {8});
  std::string error;
  auto writer = TraceWriter::create(dir.file("g.sbt"), header, error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->writeChunk(parts[0])) << writer->lastError();
  auto reader = TraceReader::open(writer->partialPath(), error);
  ASSERT_TRUE(reader) << error;
  ASSERT_EQ(reader->blocks().size(), 1u);
  EXPECT_EQ(reader->blocks()[0].cycleCount, 8u);
  EXPECT_FALSE(reader->refresh());
  ASSERT_TRUE(writer->writeChunk(parts[1])) << writer->lastError();
  EXPECT_TRUE(reader->refresh());
  ASSERT_EQ(reader->blocks().size(), 1u);
  EXPECT_EQ(reader->blocks()[0].cycleCount, 20u);
  ChunkData got;
  ASSERT_TRUE(reader->readChunk(reader->blocks()[0], got, error)) << error;
  EXPECT_EQ(got, joined(parts));
}

// ---------------------------------------------------------------- the writer's .partial

TEST(TraceOwnership, ASecondWriterToTheSamePathIsRefusedWhileTheFirstWrites) {
  Rng rng(1);
  TempDir dir;
  const HeaderData header = randomHeader(rng, kImage, kStatements);
  std::string error;
  auto first = TraceWriter::create(dir.file("own.sbt"), header, error);
  ASSERT_TRUE(first) << error;
  ASSERT_TRUE(first->writeChunk(randomChunk(rng, 0, 5, kImage, kStatements, 1))) << first->lastError();
  const uint64_t size = first->bytesWritten();
  EXPECT_FALSE(TraceWriter::create(dir.file("own.sbt"), header, error));
  EXPECT_NE(error.find("another recording is writing to it"), std::string::npos) << error;
  // Nor may anything be written to the .partial itself (a snapshot named after it).
  EXPECT_FALSE(TraceWriter::create(dir.file("own.sbt.partial"), header, error));
  EXPECT_NE(error.find("recording in progress"), std::string::npos) << error;
  EXPECT_EQ(fs::file_size(first->partialPath()), size);  // untouched
  ASSERT_TRUE(first->close()) << first->lastError();
  // Once it has finished, the path may be recorded to again (the trace is replaced).
  auto again = TraceWriter::create(dir.file("own.sbt"), header, error);
  EXPECT_TRUE(again) << error;
}

TEST(TraceOwnership, ALeftoverPartialOfACrashedRecordingIsReplaced) {
  Rng rng(2);
  TempDir dir;
  const HeaderData header = randomHeader(rng, kImage, kStatements);
  std::string error;
  {
    auto crashed = TraceWriter::create(dir.file("crash.sbt"), header, error);
    ASSERT_TRUE(crashed) << error;
  }  // (destroyed without close(): its lock is gone, its .partial stays)
  ASSERT_TRUE(fs::exists(dir.file("crash.sbt.partial")));
  auto next = TraceWriter::create(dir.file("crash.sbt"), header, error);
  EXPECT_TRUE(next) << error;
}

TEST(TraceOwnership, ReplacePartialMovesTheFileAndItsLock) {
  Rng rng(4);
  TempDir dir;
  const HeaderData header = randomHeader(rng, kImage, kStatements);
  std::string error;
  auto old = TraceWriter::create(dir.file("ring.sbt"), header, error);
  ASSERT_TRUE(old) << error;
  ASSERT_TRUE(old->writeChunk(randomChunk(rng, 0, 5, kImage, kStatements, 1))) << old->lastError();
  auto fresh = TraceWriter::create(dir.file("ring.sbt.rewrite"), header, error);
  ASSERT_TRUE(fresh) << error;
  const ChunkData kept = randomChunk(rng, 5, 7, kImage, kStatements, 1);
  ASSERT_TRUE(fresh->writeChunk(kept)) << fresh->lastError();
  ASSERT_TRUE(fresh->replacePartial(dir.file("ring.sbt"))) << fresh->lastError();
  old.reset();
  EXPECT_FALSE(fs::exists(dir.file("ring.sbt.rewrite.partial")));
  EXPECT_FALSE(TraceWriter::create(dir.file("ring.sbt"), header, error));  // still locked: the fresh one's
  ASSERT_TRUE(fresh->close()) << fresh->lastError();
  auto reader = TraceReader::open(dir.file("ring.sbt"), error);
  ASSERT_TRUE(reader) << error;
  ASSERT_EQ(reader->blocks().size(), 1u);
  EXPECT_EQ(reader->blocks()[0].firstCycle, 5u);
}

// An I/O error (here the file size limit, as a full disk would) cuts the file back to its last
// complete block; once writing works again the writer goes on from there.
TEST(TraceOwnership, AfterAnIoErrorTheWriterRecoversFromTheLastCompleteBlock) {
  TempDir dir;
  const std::string path = dir.file("full.sbt");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // In a child: the limit applies to the whole process.
    std::signal(SIGXFSZ, SIG_IGN);
    Rng rng(6);
    const HeaderData header = randomHeader(rng, kImage, kStatements);
    std::string error;
    auto writer = TraceWriter::create(path, header, error);
    if (!writer) ::_exit(10);
    if (!writer->writeChunk(randomChunk(rng, 0, 5, kImage, kStatements, 1))) ::_exit(11);
    const uint64_t good = writer->bytesWritten();
    rlimit limit{};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    const rlimit small{good + 16, limit.rlim_max};
    if (::setrlimit(RLIMIT_FSIZE, &small) != 0) ::_exit(12);
    if (writer->writeChunk(randomChunk(rng, 5, 50, kImage, kStatements, 1))) ::_exit(13);  // must fail
    if (fs::file_size(writer->partialPath()) != good) ::_exit(14);                         // cut back
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(15);
    if (!writer->recover()) ::_exit(16);
    if (!writer->writeGap(GapData{5, 50})) ::_exit(17);
    if (!writer->writeChunk(randomChunk(rng, 55, 5, kImage, kStatements, 1))) ::_exit(18);
    ::_exit(writer->close() ? 0 : 19);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::string error;
  auto reader = TraceReader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(reader->damage().empty());
  ASSERT_EQ(reader->blocks().size(), 3u);
  EXPECT_EQ(reader->blocks()[1].kind, BlockKind::Gap);
  EXPECT_EQ(reader->blocks()[2].firstCycle, 55u);
}

}  // namespace
}  // namespace scanback::trace::testing
