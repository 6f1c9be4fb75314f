// A block missing from the middle of a trace, or present twice, is found and reported with its
// cycle range (docs/architecture.md: self-contained traces): through the block numbers of format
// version 2, and through cycle continuity alone in version 1 traces, whose blocks are not numbered.
// The writer keeps the cycles continuous (dropped cycles are a gap) so that a hole always means
// damage. Also: recording never replaces a file that is not a trace.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "tests/traces/trace_test_support.h"

namespace scanback::trace::testing {
namespace {

// `chunks` chunks of `perChunk` cycles from cycle 0, closed. Version 1 when `oldFormat` (no block
// numbers, as a scanback of that version wrote them).
std::vector<uint8_t> chunkTrace(const TempDir& dir, uint32_t chunks, uint32_t perChunk, bool oldFormat = false) {
  Rng rng(17);
  HeaderData header = randomHeader(rng, 48, 12);
  if (oldFormat) {
    header.formatVersion = 1;
    header.minReaderVersion = 1;
  }
  std::string error;
  const std::string path = dir.file(oldFormat ? "v1.trace" : "v2.trace");
  auto writer = TraceWriter::create(path, header, error);
  EXPECT_TRUE(writer) << error;
  if (!writer) return {};
  for (uint32_t i = 0; i < chunks; ++i) {
    EXPECT_TRUE(writer->writeChunk(randomChunk(rng, uint64_t{i} * perChunk, perChunk, 48, 12, 1)))
        << writer->lastError();
  }
  EXPECT_TRUE(writer->close()) << writer->lastError();
  return readBytes(path);
}

bool hasWarningText(const std::vector<std::string>& warnings, const std::string& text) {
  for (const std::string& w : warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

std::unique_ptr<TraceReader> openOrFail(std::vector<uint8_t> bytes) {
  std::string error;
  auto r = TraceReader::openBytes(std::move(bytes), error);
  EXPECT_TRUE(r) << error;
  return r;
}

// The file's blocks as written (header, data blocks, index), each as [offset, end).
std::vector<std::pair<size_t, size_t>> blockSpans(const std::vector<uint8_t>& bytes) {
  std::vector<std::pair<size_t, size_t>> spans;
  size_t at = sizeof kFileMagic;
  std::string error;
  while (at + kFrameHeaderBytes <= bytes.size()) {
    const std::optional<FrameHeader> h = decodeFrameHeader(bytes.data() + at, error);
    if (!h) break;
    spans.push_back({at, at + kFrameHeaderBytes + h->storedSize});
    at = spans.back().second;
  }
  return spans;
}

// The file with the blocks numbered `drop` (0 = the header) left out, and its index and trailer
// with them: what remains is what a scan finds.
std::vector<uint8_t> withoutBlocks(const std::vector<uint8_t>& bytes, std::vector<size_t> drop) {
  const auto spans = blockSpans(bytes);
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + sizeof kFileMagic);
  for (size_t i = 0; i + 1 < spans.size(); ++i) {  // the last block is the index
    if (std::find(drop.begin(), drop.end(), i) != drop.end()) continue;
    out.insert(out.end(), bytes.begin() + spans[i].first, bytes.begin() + spans[i].second);
  }
  return out;
}

// The file with block `copy` written a second time right after block `after`, index and trailer
// left out.
std::vector<uint8_t> withCopy(const std::vector<uint8_t>& bytes, size_t copy, size_t after) {
  const auto spans = blockSpans(bytes);
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + sizeof kFileMagic);
  for (size_t i = 0; i + 1 < spans.size(); ++i) {
    out.insert(out.end(), bytes.begin() + spans[i].first, bytes.begin() + spans[i].second);
    if (i == after) out.insert(out.end(), bytes.begin() + spans[copy].first, bytes.begin() + spans[copy].second);
  }
  return out;
}

TEST(TraceContinuity, BlocksAreNumberedInTheirFrames) {
  TempDir dir;
  const std::vector<uint8_t> bytes = chunkTrace(dir, 4, 10);
  const auto spans = blockSpans(bytes);
  ASSERT_EQ(spans.size(), 6u);  // header, 4 chunks, index
  std::string error;
  for (size_t i = 0; i < spans.size(); ++i) {
    const std::optional<FrameHeader> h = decodeFrameHeader(bytes.data() + spans[i].first, error);
    ASSERT_TRUE(h) << error;
    EXPECT_EQ(h->sequence, i);
  }
  auto r = openOrFail(bytes);
  EXPECT_EQ(r->header().formatVersion, kFormatVersion);
  EXPECT_TRUE(r->damage().empty());
  EXPECT_TRUE(r->warnings().empty());
}

TEST(TraceContinuity, AMissingMiddleChunkIsDamageWithItsCycleRange) {
  TempDir dir;
  const std::vector<uint8_t> bytes = chunkTrace(dir, 4, 1000);
  auto r = openOrFail(withoutBlocks(bytes, {2}));  // the chunk of cycles 1000..1999
  ASSERT_TRUE(r);
  ASSERT_EQ(r->blocks().size(), 3u);
  ASSERT_EQ(r->damage().size(), 1u);
  const DamageData& d = r->damage()[0];
  EXPECT_EQ(d.firstCycle, 1000u);
  EXPECT_EQ(d.cycleCount, 1000u);
  EXPECT_EQ(d.offset, r->blocks()[1].offset);
  EXPECT_EQ(d.what, "cycles 1000..1999 are missing before offset " + std::to_string(d.offset) +
                        ": no chunk or gap holds them (block 2 is missing)");
  EXPECT_TRUE(hasWarningText(r->warnings(), "cycles 1000..1999 are missing"));
  // The chunks on both sides still read: each starts with its keyframe.
  for (const BlockInfo& b : r->blocks()) EXPECT_EQ(readAny(*r, b), "");
}

TEST(TraceContinuity, AnOldTraceWithoutNumbersStillOpensAndContinuityFindsAMissingChunk) {
  TempDir dir;
  const std::vector<uint8_t> bytes = chunkTrace(dir, 4, 1000, /*oldFormat=*/true);
  std::string error;
  for (const auto& [from, to] : blockSpans(bytes)) {
    (void)to;
    const std::optional<FrameHeader> h = decodeFrameHeader(bytes.data() + from, error);
    ASSERT_TRUE(h) << error;
    EXPECT_EQ(h->sequence, 0u);  // as version 1 wrote them
  }
  auto whole = openOrFail(bytes);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->header().formatVersion, 1u);
  EXPECT_EQ(whole->blocks().size(), 4u);
  EXPECT_TRUE(whole->damage().empty());

  auto r = openOrFail(withoutBlocks(bytes, {2}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->damage().size(), 1u);
  EXPECT_EQ(r->damage()[0].firstCycle, 1000u);
  EXPECT_EQ(r->damage()[0].cycleCount, 1000u);
  EXPECT_EQ(r->damage()[0].what, "cycles 1000..1999 are missing before offset " +
                                     std::to_string(r->blocks()[1].offset) + ": no chunk or gap holds them");
}

TEST(TraceContinuity, ACopiedChunkIsLeftOutAndReported) {
  TempDir dir;
  for (const bool oldFormat : {false, true}) {
    SCOPED_TRACE(oldFormat ? "version 1" : "version 2");
    const std::vector<uint8_t> bytes = chunkTrace(dir, 3, 10, oldFormat);
    auto r = openOrFail(withCopy(bytes, 1, 2));  // chunk 0..9 again after chunk 10..19
    ASSERT_TRUE(r);
    ASSERT_EQ(r->blocks().size(), 3u);
    EXPECT_EQ(r->blocks()[2].firstCycle, 20u);
    ASSERT_EQ(r->damage().size(), 1u);
    EXPECT_EQ(r->damage()[0].firstCycle, 0u);
    EXPECT_EQ(r->damage()[0].cycleCount, 10u);
    EXPECT_NE(r->damage()[0].what.find(oldFormat ? "cycles 0..9 in the chunk block at offset" : "is numbered 1"),
              std::string::npos)
        << r->damage()[0].what;
    EXPECT_NE(r->damage()[0].what.find(oldFormat ? "were recorded before it" : "a copy, left out"), std::string::npos)
        << r->damage()[0].what;
  }
}

TEST(TraceContinuity, AMissingFirstChunkIsFoundByItsNumber) {
  TempDir dir;
  const std::vector<uint8_t> bytes = chunkTrace(dir, 3, 10);
  auto r = openOrFail(withoutBlocks(bytes, {1}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->damage().size(), 1u);
  EXPECT_EQ(r->damage()[0].cycleCount, 0u);
  EXPECT_NE(r->damage()[0].what.find("block 1 is missing at the start of the trace"), std::string::npos)
      << r->damage()[0].what;
  EXPECT_NE(r->damage()[0].what.find("the cycles before cycle 10 may be lost"), std::string::npos)
      << r->damage()[0].what;
}

TEST(TraceContinuity, AMissingProgramChangeOrGapIsDamage) {
  TempDir dir;
  const SampleTrace sample = writeSampleTrace(dir.file("s.trace"), 5);  // 3 chunks, gap, chunk, change, 2 chunks
  const std::vector<uint8_t> bytes = readBytes(sample.path);
  // The program change (block 6): no cycle is lost, but the chunks after it cannot be trusted.
  auto r = openOrFail(withoutBlocks(bytes, {6}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->damage().size(), 1u);
  EXPECT_EQ(r->damage()[0].cycleCount, 0u);
  EXPECT_NE(r->damage()[0].what.find("block 6 is missing before offset"), std::string::npos) << r->damage()[0].what;
  EXPECT_NE(r->damage()[0].what.find("a program change or fault may be"), std::string::npos) << r->damage()[0].what;
  // The gap (block 4, cycles 36..42): those cycles are missing, not dropped.
  r = openOrFail(withoutBlocks(bytes, {4}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->damage().size(), 1u);
  EXPECT_EQ(r->damage()[0].firstCycle, 36u);
  EXPECT_EQ(r->damage()[0].cycleCount, 7u);
  // The last chunk before the fault: the fault's cycle has no chunk.
  r = openOrFail(withoutBlocks(bytes, {8}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->damage().size(), 1u);
  EXPECT_EQ(r->damage()[0].firstCycle, 67u);
  EXPECT_EQ(r->damage()[0].cycleCount, 12u);
}

TEST(TraceWriter, CyclesFollowOnWithoutAHole) {
  TempDir dir;
  Rng rng(3);
  const HeaderData header = randomHeader(rng, 16, 4);
  std::string error;
  auto writer = TraceWriter::create(dir.file("h.trace"), header, error);
  ASSERT_TRUE(writer) << error;
  // The first chunk may start anywhere (a flight recorder keeps only the newest cycles).
  ASSERT_TRUE(writer->writeChunk(randomChunk(rng, 500, 5, 16, 4, 1))) << writer->lastError();
  EXPECT_FALSE(writer->writeChunk(randomChunk(rng, 510, 5, 16, 4, 1)));
  EXPECT_EQ(writer->lastError(), "chunk starts at cycle 510, leaving cycles 505..509 out: write a gap for them");
  EXPECT_FALSE(writer->writeGap(GapData{506, 2}));
  EXPECT_TRUE(writer->writeGap(GapData{505, 5})) << writer->lastError();
  EXPECT_TRUE(writer->writeChunk(randomChunk(rng, 510, 5, 16, 4, 1))) << writer->lastError();
  EXPECT_FALSE(writer->writeFault(FaultData{512, 1, 0, 1, "boom"}));
  EXPECT_NE(writer->lastError().find("the fault is in the last recorded cycle (514)"), std::string::npos)
      << writer->lastError();
  EXPECT_TRUE(writer->writeFault(FaultData{514, 1, 0, 1, "boom"})) << writer->lastError();
  EXPECT_TRUE(writer->close()) << writer->lastError();
  auto r = TraceReader::open(dir.file("h.trace"), error);
  ASSERT_TRUE(r) << error;
  EXPECT_TRUE(r->damage().empty());
  EXPECT_TRUE(r->warnings().empty());
}

TEST(TraceCodec, StartTimesAreNotNegativeAndNeverGoBack) {
  Rng rng(4);
  ChunkData c = randomChunk(rng, 10, 4, 16, 4, 1);
  std::string error;
  ASSERT_TRUE(validateChunk(c, ChunkLimits{16, 4}, error)) << error;
  ChunkData back = c;
  back.startTimes[2] = back.startTimes[1] - 1;
  EXPECT_FALSE(validateChunk(back, ChunkLimits{16, 4}, error));
  EXPECT_NE(error.find("cycle 12: start time"), std::string::npos) << error;
  EXPECT_NE(error.find("is before the previous cycle's"), std::string::npos) << error;
  ChunkData negative = c;
  negative.startTimes[0] = INT64_MIN;
  EXPECT_FALSE(validateChunk(negative, ChunkLimits{16, 4}, error));
  EXPECT_NE(error.find("is negative"), std::string::npos) << error;
  // The reader refuses such a chunk when it decodes it, naming the block.
  ChunkData decoded;
  EXPECT_FALSE(decodeChunk(encodeChunk(negative), 4242, ChunkLimits{16, 4}, decoded, error));
  EXPECT_NE(error.find("block at offset 4242"), std::string::npos) << error;
}

// ---------------------------------------------------------------- recording replaces traces only

TEST(TraceWriter, NeverReplacesAFileThatIsNoTrace) {
  TempDir dir;
  Rng rng(6);
  const HeaderData header = randomHeader(rng, 16, 4);
  std::string error;
  const std::string precious = dir.file("notes.txt");
  writeBytes(precious, {'k', 'e', 'e', 'p'});
  EXPECT_FALSE(TraceWriter::create(precious, header, error));
  EXPECT_EQ(error, "the file exists and is not a scanback trace: a recording only ever replaces a trace");
  EXPECT_EQ(readBytes(precious), (std::vector<uint8_t>{'k', 'e', 'e', 'p'}));
  EXPECT_FALSE(fs::exists(precious + ".partial"));

  // An empty file is no trace either, nor is a directory.
  writeBytes(dir.file("empty"), {});
  EXPECT_FALSE(TraceWriter::create(dir.file("empty"), header, error));
  fs::create_directories(dir.file("sub"));
  EXPECT_FALSE(TraceWriter::create(dir.file("sub"), header, error));
  EXPECT_NE(error.find("(a directory)"), std::string::npos) << error;

  // Nor its .partial: a user's file of that name stays, and a link there is never followed.
  const std::string other = dir.file("other.txt");
  writeBytes(other, {'x'});
  writeBytes(dir.file("t.trace.partial"), {'y'});
  EXPECT_FALSE(TraceWriter::create(dir.file("t.trace"), header, error));
  EXPECT_NE(error.find("its .partial file exists and is not a scanback trace"), std::string::npos) << error;
  fs::remove(dir.file("t.trace.partial"));
  fs::create_symlink(other, dir.file("t.trace.partial"));
  EXPECT_FALSE(TraceWriter::create(dir.file("t.trace"), header, error));
  EXPECT_NE(error.find("(a symbolic link)"), std::string::npos) << error;
  EXPECT_EQ(readBytes(other), std::vector<uint8_t>{'x'});
  fs::remove(dir.file("t.trace.partial"));
  fs::create_symlink(other, dir.file("link.trace"));
  EXPECT_FALSE(TraceWriter::create(dir.file("link.trace"), header, error));
  EXPECT_EQ(readBytes(other), std::vector<uint8_t>{'x'});

  // A trace is replaced, and so is the .partial a crashed recording left.
  auto writer = TraceWriter::create(dir.file("t.trace"), header, error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->close());
  const std::vector<uint8_t> first = readBytes(dir.file("t.trace"));
  writer = TraceWriter::create(dir.file("t.trace"), header, error);
  ASSERT_TRUE(writer) << error;
  writer.reset();  // never closed: t.trace.partial stays
  ASSERT_TRUE(fs::exists(dir.file("t.trace.partial")));
  writer = TraceWriter::create(dir.file("t.trace"), header, error);
  ASSERT_TRUE(writer) << error;
  ChunkData c = randomChunk(rng, 0, 3, 16, 4, 1);
  ASSERT_TRUE(writer->writeChunk(c)) << writer->lastError();
  ASSERT_TRUE(writer->close()) << writer->lastError();
  EXPECT_NE(readBytes(dir.file("t.trace")), first);
  auto r = TraceReader::open(dir.file("t.trace"), error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->blocks().size(), 1u);
}

}  // namespace
}  // namespace scanback::trace::testing
