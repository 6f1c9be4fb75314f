// The reader against damaged files: cut off at any byte, missing or corrupt index, flipped bytes,
// absurd lengths, `.partial` files and files that are still growing.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <fmt/format.h>
#include <atomic>
#include <cstdlib>
#include <new>

#include "tests/traces/trace_test_support.h"

// Tracks the largest single allocation while `gTrack` is set (for "nothing allocates from an
// unchecked length"). Every plain operator new/delete goes to malloc/free so that they pair up
// (also under AddressSanitizer); the aligned forms stay the library's own.
namespace {
std::atomic<bool> gTrack{false};
std::atomic<size_t> gLargest{0};
void* allocate(size_t size) {
  if (gTrack.load(std::memory_order_relaxed)) {
    size_t seen = gLargest.load(std::memory_order_relaxed);
    while (size > seen && !gLargest.compare_exchange_weak(seen, size)) {
    }
  }
  void* p = std::malloc(size ? size : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(size_t size) { return allocate(size); }
void* operator new[](size_t size) { return allocate(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return std::malloc(size ? size : 1); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return std::malloc(size ? size : 1); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace scanback::trace::testing {
namespace {

bool hasWarning(const TraceReader& r, const std::string& text) {
  for (const std::string& w : r.warnings()) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

class TraceDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    sample_ = writeSampleTrace(dir_.file("sample.trace"), 42);
    bytes_ = readBytes(sample_.path);
    std::string error;
    full_ = TraceReader::open(sample_.path, error);
    ASSERT_TRUE(full_) << error;
    ASSERT_TRUE(full_->usedIndex());
    ASSERT_EQ(full_->blocks().size(), sample_.written.size());
    ASSERT_TRUE(full_->indexBlock());
    headerEnd_ = full_->headerBlock().offset + kFrameHeaderBytes + full_->headerBlock().storedSize;
  }

  uint64_t blockEnd(const BlockInfo& b) const { return b.offset + kFrameHeaderBytes + b.storedSize; }

  // Opens the first `cut` bytes and checks: exactly the blocks complete before the cut, each
  // reading back equal, and a warning unless the cut falls on a block boundary.
  void checkCut(uint64_t cut, bool viaFile) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    std::string error;
    std::unique_ptr<TraceReader> r;
    if (viaFile) {
      const std::string path = dir_.file("cut.trace.partial");
      writeBytes(path, bytes_, cut);
      r = TraceReader::open(path, error);
    } else {
      r = TraceReader::openBytes(std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + cut), error);
    }
    if (cut < headerEnd_) {
      EXPECT_FALSE(r);
      EXPECT_FALSE(error.empty());
      return;
    }
    ASSERT_TRUE(r) << error;
    std::vector<BlockInfo> expected;
    bool boundary = cut == headerEnd_;
    for (const BlockInfo& b : full_->blocks()) {
      if (blockEnd(b) <= cut) expected.push_back(b);
      boundary = boundary || blockEnd(b) == cut;
    }
    boundary = boundary || blockEnd(*full_->indexBlock()) == cut;
    expectSameBlocks(r->blocks(), expected);
    for (size_t i = 0; i < r->blocks().size(); ++i) {
      EXPECT_EQ(readAndCompare(*r, r->blocks()[i], sample_.written[i]), "") << "block " << i;
    }
    EXPECT_FALSE(r->corruptOffset());
    if (cut == bytes_.size()) {
      EXPECT_TRUE(r->warnings().empty());
      EXPECT_TRUE(r->complete());
    } else {
      EXPECT_FALSE(r->complete());
      EXPECT_FALSE(r->usedIndex());
      if (boundary) {
        EXPECT_TRUE(r->warnings().empty()) << r->warnings().front();
      } else {
        ASSERT_EQ(r->warnings().size(), 1u);
        EXPECT_NE(r->warnings()[0].find("(cut off)"), std::string::npos) << r->warnings()[0];
        EXPECT_NE(r->warnings()[0].find("bytes into a block at offset"), std::string::npos) << r->warnings()[0];
      }
    }
  }

  TempDir dir_;
  SampleTrace sample_;
  std::vector<uint8_t> bytes_;
  std::unique_ptr<TraceReader> full_;
  uint64_t headerEnd_ = 0;
};

TEST_F(TraceDamage, CutAtEveryByteOfTheLastTwoBlocks) {
  const auto& blocks = full_->blocks();
  const uint64_t from = blocks[blocks.size() - 2].offset;
  for (uint64_t cut = from; cut <= bytes_.size(); ++cut) {
    checkCut(cut, false);
    if (HasFatalFailure()) return;
  }
}

TEST_F(TraceDamage, CutAtRandomOffsets) {
  Rng rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    checkCut(uniform(rng, 0, bytes_.size()), true);
    if (HasFatalFailure()) return;
  }
  for (uint64_t cut = 0; cut <= headerEnd_ + 1; ++cut) checkCut(cut, false);
}

TEST_F(TraceDamage, CutWarningCountsChunks) {
  const BlockInfo& last = full_->blocks().back();  // the fault; 6 chunks before it
  std::string error;
  auto r = TraceReader::openBytes(std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + last.offset + 10), error);
  ASSERT_TRUE(r) << error;
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_EQ(r->warnings()[0], "trace ends 10 bytes into a block at offset " + std::to_string(last.offset) +
                                  " (cut off): 6 complete chunks are readable");
}

// Without a usable trailer + index the blocks are found by scanning, and they are the same.
TEST_F(TraceDamage, MissingOrCorruptIndexIsRebuiltByScanning) {
  const BlockInfo index = *full_->indexBlock();
  const uint64_t trailerAt = bytes_.size() - kTrailerBytes;
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    bool expectUnusableWarning;
  };
  std::vector<Case> cases;
  cases.push_back({"no trailer", std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + trailerAt), false});
  cases.push_back({"no index, no trailer", std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + index.offset), false});
  {
    std::vector<uint8_t> b = bytes_;
    b[trailerAt + 30] ^= 0x40;  // the trailer check
    cases.push_back({"bad trailer check", b, true});
  }
  {
    std::vector<uint8_t> b = bytes_;
    b[index.offset + kFrameHeaderBytes + 3] ^= 0x01;  // index payload
    cases.push_back({"corrupt index payload", b, true});
  }
  {
    std::vector<uint8_t> b = bytes_;
    encodeTrailer(Trailer{full_->blocks()[2].offset, trailerAt}, b.data() + trailerAt);  // valid, wrong
    cases.push_back({"trailer points at a chunk", b, true});
  }
  {
    std::vector<uint8_t> b = bytes_;
    encodeTrailer(Trailer{index.offset, trailerAt - 8}, b.data() + trailerAt);
    cases.push_back({"trailer size disagrees", b, true});
  }
  {
    // A well-formed, checksummed index whose entries do not match the file.
    std::vector<BlockInfo> entries = full_->blocks();
    entries[1].storedSize += 8;
    std::vector<uint8_t> b(bytes_.begin(), bytes_.begin() + index.offset);
    const std::vector<uint8_t> frame =
        makeFrame(BlockKind::Index, 0, 0, encodeIndex(entries), true, static_cast<uint32_t>(entries.size() + 1));
    b.insert(b.end(), frame.begin(), frame.end());
    b.resize(b.size() + kTrailerBytes);
    encodeTrailer(Trailer{index.offset, b.size() - kTrailerBytes}, b.data() + b.size() - kTrailerBytes);
    cases.push_back({"index entries disagree", b, true});
  }
  {
    std::vector<BlockInfo> entries = full_->blocks();
    entries.pop_back();  // one block missing
    std::vector<uint8_t> b(bytes_.begin(), bytes_.begin() + index.offset);
    const std::vector<uint8_t> frame =
        makeFrame(BlockKind::Index, 0, 0, encodeIndex(entries), false, static_cast<uint32_t>(entries.size() + 2));
    b.insert(b.end(), frame.begin(), frame.end());
    b.resize(b.size() + kTrailerBytes);
    encodeTrailer(Trailer{index.offset, b.size() - kTrailerBytes}, b.data() + b.size() - kTrailerBytes);
    cases.push_back({"index misses a block", b, true});
  }
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string error;
    auto r = TraceReader::openBytes(std::move(c.bytes), error);
    ASSERT_TRUE(r) << error;
    EXPECT_FALSE(r->usedIndex());
    expectSameBlocks(r->blocks(), full_->blocks());
    for (size_t i = 0; i < r->blocks().size(); ++i) {
      EXPECT_EQ(readAndCompare(*r, r->blocks()[i], sample_.written[i]), "") << "block " << i;
    }
    EXPECT_EQ(hasWarning(*r, "the index is unusable"), c.expectUnusableWarning);
  }
}

// Random damage is always reported (open error, warning, corrupt offset or a failing read), never
// crashes, and the blocks before the damage still read back equal.
TEST_F(TraceDamage, FlippedBytesAreReportedAndEarlierBlocksStillRead) {
  Rng rng(20240601);
  int openFailures = 0, scanStops = 0, readFailures = 0, indexWarnings = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<uint8_t> b = bytes_;
    uint64_t first = UINT64_MAX;
    const int flips = trial % 4 == 0 ? static_cast<int>(uniform(rng, 2, 6)) : 1;
    for (int k = 0; k < flips; ++k) {
      const uint64_t pos = uniform(rng, 0, b.size() - 1);
      if (trial % 2) {
        b[pos] ^= static_cast<uint8_t>(1u << uniform(rng, 0, 7));
      } else {
        b[pos] = static_cast<uint8_t>(b[pos] + uniform(rng, 1, 255));
      }
      first = std::min(first, pos);
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + ", first damaged byte " + std::to_string(first));
    std::string error;
    auto r = TraceReader::openBytes(std::move(b), error);
    if (first < headerEnd_) {
      EXPECT_FALSE(r);
      EXPECT_FALSE(error.empty());
      ++openFailures;
      continue;
    }
    ASSERT_TRUE(r) << error;
    bool reported = !r->warnings().empty() || r->corruptOffset().has_value();
    if (r->corruptOffset()) {
      ++scanStops;
      EXPECT_NE(r->corruptError().find("offset " + std::to_string(*r->corruptOffset())), std::string::npos);
    }
    if (hasWarning(*r, "index is unusable")) ++indexWarnings;
    size_t intact = 0;
    for (const BlockInfo& block : full_->blocks()) intact += blockEnd(block) <= first;
    ASSERT_GE(r->blocks().size(), intact);
    for (size_t i = 0; i < r->blocks().size(); ++i) {
      const BlockInfo& block = r->blocks()[i];
      if (i < intact) {
        EXPECT_TRUE(sameInfo(block, full_->blocks()[i]));
        EXPECT_EQ(readAndCompare(*r, block, sample_.written[i]), "") << "block " << i;
        continue;
      }
      const std::string why = readAny(*r, block);
      if (!why.empty()) {
        reported = true;
        ++readFailures;
        EXPECT_NE(why.find("offset " + std::to_string(block.offset)), std::string::npos) << why;
      }
    }
    EXPECT_TRUE(reported);
  }
  // The damage was spread over all the kinds of detection.
  EXPECT_GT(openFailures, 0);
  EXPECT_GT(scanStops, 0);
  EXPECT_GT(readFailures, 0);
  EXPECT_GT(indexWarnings, 0);
}

TEST_F(TraceDamage, HugeLengthsDoNotAllocate) {
  const BlockInfo& chunk = full_->blocks()[1];
  struct Case {
    const char* name;
    uint32_t storedSize;
    uint32_t rawSize;
    bool dropTrailer;
  };
  const Case cases[] = {
      {"stored 4 GiB", 0xFFFFFFFFu, chunk.rawSize, false},
      {"stored 4 GiB, scanned", 0xFFFFFFFFu, chunk.rawSize, true},
      {"raw 4 GiB", chunk.storedSize, 0xFFFFFFF8u, true},
      {"stored 500 MiB past the end", 500u << 20, chunk.rawSize, true},
      {"raw 1 GiB from a few bytes", chunk.storedSize, kMaxRawBlockBytes, true},
      {"raw 1 GiB from a few bytes, indexed", chunk.storedSize, kMaxRawBlockBytes, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<uint8_t> b = bytes_;
    editFrame(b, chunk.offset, [&](FrameHeader& h) {
      h.storedSize = c.storedSize;
      h.rawSize = c.rawSize;
    });
    if (c.dropTrailer) b.resize(b.size() - kTrailerBytes);
    const size_t inputSize = b.size();
    gLargest = 0;
    gTrack = true;
    std::string error;
    auto r = TraceReader::openBytes(std::move(b), error);
    std::vector<std::string> problems;
    if (r) {
      problems = r->warnings();
      for (const BlockInfo& block : r->blocks()) {
        const std::string why = readAny(*r, block);
        if (!why.empty()) problems.push_back(why);
      }
    }
    gTrack = false;
    ASSERT_TRUE(r) << error;
    EXPECT_FALSE(problems.empty());
    // Nothing near the claimed sizes: the largest buffer is bounded by the file itself.
    EXPECT_LT(gLargest.load(), 4 * inputSize + (1u << 20)) << gLargest.load();
    // The block before the damaged one still reads.
    EXPECT_EQ(readAndCompare(*r, r->blocks()[0], sample_.written[0]), "");
  }
}

// Blocks whose checks pass but whose contents are bad: reported with their offset.
TEST(TraceReader, CheckedButInvalidBlocksAreReportedWithTheirOffset) {
  TempDir dir;
  Rng rng(9);
  const HeaderData header = randomHeader(rng, 64, 20);
  std::string error;
  auto writer = TraceWriter::create(dir.file("t.trace"), header, error);
  ASSERT_TRUE(writer) << error;
  const ChunkData good = randomChunk(rng, 0, 5, 64, 20, 1);
  ASSERT_TRUE(writer->writeChunk(good)) << writer->lastError();
  writer.reset();  // never closed
  std::vector<uint8_t> bytes = readBytes(dir.file("t.trace.partial"));
  ASSERT_FALSE(bytes.empty());

  ChunkData bad = randomChunk(rng, 5, 5, 64, 20, 1);
  bad.paths[2] = 99;  // path index out of range
  const uint64_t badAt = bytes.size();
  std::vector<uint8_t> frame = makeFrame(BlockKind::Chunk, 5, 5, encodeChunk(bad), true, 2);
  bytes.insert(bytes.end(), frame.begin(), frame.end());
  const uint64_t garbageAt = bytes.size();
  std::vector<uint8_t> garbage(256);
  for (uint8_t& g : garbage) g = static_cast<uint8_t>(uniform(rng, 0, 255));
  frame = makeFrame(BlockKind::Chunk, 10, 5, garbage, false, 3);
  bytes.insert(bytes.end(), frame.begin(), frame.end());
  const uint64_t wrongCyclesAt = bytes.size();
  frame = makeFrame(BlockKind::Chunk, 15, 6, encodeChunk(randomChunk(rng, 15, 5, 64, 20, 1)), true, 4);
  bytes.insert(bytes.end(), frame.begin(), frame.end());
  const uint64_t backwardsAt = bytes.size();
  frame = makeFrame(BlockKind::Chunk, 3, 5, encodeChunk(randomChunk(rng, 3, 5, 64, 20, 1)), true, 5);
  bytes.insert(bytes.end(), frame.begin(), frame.end());

  auto r = TraceReader::openBytes(bytes, error);
  ASSERT_TRUE(r) << error;
  ASSERT_EQ(r->blocks().size(), 4u);  // the backwards chunk is left out, as damage
  EXPECT_FALSE(r->corruptOffset());
  ASSERT_EQ(r->damage().size(), 1u);
  EXPECT_EQ(r->damage()[0].offset, backwardsAt);
  EXPECT_EQ(r->damage()[0].firstCycle, 3u);
  EXPECT_EQ(r->damage()[0].cycleCount, 5u);
  EXPECT_NE(r->damage()[0].what.find("cycles 3..7 in the chunk block at offset " + std::to_string(backwardsAt) +
                                     " were recorded before it (up to cycle 20)"),
            std::string::npos)
      << r->damage()[0].what;
  EXPECT_TRUE(hasWarning(*r, "left out"));
  ChunkData c;
  EXPECT_TRUE(r->readChunk(r->blocks()[0], c, error)) << error;
  EXPECT_EQ(c, good);
  EXPECT_FALSE(r->readChunk(r->blocks()[1], c, error));
  EXPECT_NE(error.find("offset " + std::to_string(badAt)), std::string::npos) << error;
  EXPECT_NE(error.find("path index 99"), std::string::npos) << error;
  EXPECT_FALSE(r->readChunk(r->blocks()[2], c, error));
  EXPECT_NE(error.find("offset " + std::to_string(garbageAt)), std::string::npos) << error;
  EXPECT_FALSE(r->readChunk(r->blocks()[3], c, error));
  EXPECT_NE(error.find("offset " + std::to_string(wrongCyclesAt)), std::string::npos) << error;
  GapData g;
  EXPECT_FALSE(r->readGap(r->blocks()[0], g, error));
  EXPECT_NE(error.find("is a chunk block, expected a gap block"), std::string::npos) << error;
}

TEST(TraceReader, RefusesNonTracesAndNewerFormats) {
  TempDir dir;
  std::string error;
  EXPECT_FALSE(TraceReader::open(dir.file("missing.trace"), error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  EXPECT_FALSE(TraceReader::openBytes({}, error));
  EXPECT_NE(error.find("too short"), std::string::npos) << error;
  EXPECT_FALSE(TraceReader::openBytes(std::vector<uint8_t>(100, 'x'), error));
  EXPECT_NE(error.find("not a scanback trace"), std::string::npos) << error;

  Rng rng(1);
  HeaderData header = randomHeader(rng, 16, 4);
  header.formatVersion = 7;
  header.minReaderVersion = 5;
  auto writer = TraceWriter::create(dir.file("new.trace"), header, error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->close());
  EXPECT_FALSE(TraceReader::open(dir.file("new.trace"), error));
  EXPECT_NE(error.find("needs a reader of version 5"), std::string::npos) << error;
}

TEST(TraceWriter, RefusesInvalidBlocksAndStaysUsable) {
  TempDir dir;
  Rng rng(2);
  const HeaderData header = randomHeader(rng, 32, 10);
  std::string error;
  auto writer = TraceWriter::create(dir.file("w.trace"), header, error);
  ASSERT_TRUE(writer) << error;
  EXPECT_TRUE(fs::exists(dir.file("w.trace.partial")));
  ChunkData c = randomChunk(rng, 0, 4, 32, 10, 1);
  c.keyframe.resize(31);
  EXPECT_FALSE(writer->writeChunk(c));
  EXPECT_NE(writer->lastError().find("keyframe size 31 != image size 32"), std::string::npos) << writer->lastError();
  c = randomChunk(rng, 0, 4, 32, 10, 1);
  EXPECT_TRUE(writer->writeChunk(c)) << writer->lastError();
  EXPECT_FALSE(writer->writeChunk(randomChunk(rng, 2, 4, 32, 10, 1)));
  EXPECT_NE(writer->lastError().find("before the end of the previous chunk"), std::string::npos);
  EXPECT_FALSE(writer->writeGap(GapData{3, 1}));
  EXPECT_TRUE(writer->writeGap(GapData{4, 2}));
  EXPECT_EQ(writer->nextCycle(), 6u);
  // After a program change, chunks are checked against the new program.
  EXPECT_TRUE(writer->writeProgramChange(ProgramChangeData{6, "v2", {}, 48, 3}));
  EXPECT_FALSE(writer->writeChunk(randomChunk(rng, 6, 4, 32, 10, 1)));
  EXPECT_TRUE(writer->writeChunk(randomChunk(rng, 6, 4, 48, 3, 1))) << writer->lastError();
  EXPECT_TRUE(writer->writeFault(FaultData{9, 1, 0, 1, "boom"}));
  EXPECT_FALSE(writer->writeChunk(randomChunk(rng, 10, 4, 48, 3, 1)));
  EXPECT_NE(writer->lastError().find("after the fault: it ends the trace"), std::string::npos);
  EXPECT_FALSE(writer->writeFault(FaultData{9, 1, 0, 1, "boom"}));
  EXPECT_TRUE(writer->flush());
  const uint64_t beforeClose = writer->bytesWritten();
  EXPECT_TRUE(writer->close()) << writer->lastError();
  EXPECT_FALSE(writer->writeGap(GapData{20, 1}));
  EXPECT_FALSE(fs::exists(dir.file("w.trace.partial")));
  ASSERT_TRUE(fs::exists(dir.file("w.trace")));
  EXPECT_EQ(fs::file_size(dir.file("w.trace")), writer->bytesWritten());
  EXPECT_GT(writer->bytesWritten(), beforeClose);
  EXPECT_GT(writer->rawBytes(), 0u);

  auto r = TraceReader::open(dir.file("w.trace"), error);
  ASSERT_TRUE(r) << error;
  ASSERT_EQ(r->blocks().size(), 5u);
  EXPECT_EQ(r->limitsAt(r->blocks()[0].offset).imageSize, 32u);
  EXPECT_EQ(r->limitsAt(r->blocks()[3].offset).imageSize, 48u);
  ChunkData back;
  EXPECT_TRUE(r->readChunk(r->blocks()[3], back, error)) << error;
  EXPECT_EQ(back.keyframe.size(), 48u);
}

TEST(TraceWriter, CreateFailsClearly) {
  std::string error;
  HeaderData header;
  EXPECT_FALSE(TraceWriter::create("/nonexistent-dir/x/y.trace", header, error));
  // The caller names the trace; the error says what went wrong with it.
  EXPECT_EQ(error, "cannot create its .partial file: No such file or directory");
  header.tasks.resize(70000);
  EXPECT_FALSE(TraceWriter::create("/tmp/never.trace", header, error));
  EXPECT_NE(error.find("70000 tasks"), std::string::npos) << error;
}

TEST(TraceReader, PartialFileFromAWriterThatNeverClosed) {
  TempDir dir;
  const SampleTrace s = writeSampleTrace(dir.file("p.trace"), 3, 12, /*close=*/false);
  EXPECT_FALSE(fs::exists(dir.file("p.trace")));
  std::string error;
  auto r = TraceReader::open(dir.file("p.trace.partial"), error);
  ASSERT_TRUE(r) << error;
  EXPECT_FALSE(r->complete());
  EXPECT_FALSE(r->usedIndex());
  EXPECT_TRUE(r->warnings().empty());
  ASSERT_EQ(r->blocks().size(), s.written.size());
  for (size_t i = 0; i < s.written.size(); ++i) EXPECT_EQ(readAndCompare(*r, r->blocks()[i], s.written[i]), "");
}

// A replayer follows a recorder that is still writing.
TEST(TraceReader, RefreshFollowsAGrowingFile) {
  TempDir dir;
  Rng rng(4);
  const HeaderData header = randomHeader(rng, 40, 12);
  const uint16_t tasks = static_cast<uint16_t>(header.tasks.size());
  std::string error;
  auto writer = TraceWriter::create(dir.file("g.trace"), header, error);
  ASSERT_TRUE(writer) << error;
  std::vector<ChunkData> chunks;
  auto write = [&] {
    chunks.push_back(randomChunk(rng, chunks.size() * 10, 10, 40, 12, tasks));
    ASSERT_TRUE(writer->writeChunk(chunks.back())) << writer->lastError();
  };
  write();
  write();
  auto r = TraceReader::open(dir.file("g.trace.partial"), error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->blocks().size(), 2u);
  EXPECT_FALSE(r->refresh());
  write();
  write();
  EXPECT_TRUE(r->refresh());
  EXPECT_EQ(r->blocks().size(), 4u);

  // Half a block appears (a write in progress): not yet a block, and a cut-off warning.
  const ChunkData next = randomChunk(rng, 40, 10, 40, 12, tasks);
  const std::vector<uint8_t> frame = makeFrame(BlockKind::Chunk, 40, 10, encodeChunk(next), true, 5);
  {
    const int fd = ::open(dir.file("g.trace.partial").c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, frame.data(), frame.size() / 2), static_cast<ssize_t>(frame.size() / 2));
    ::close(fd);
  }
  EXPECT_FALSE(r->refresh());
  EXPECT_EQ(r->blocks().size(), 4u);
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_NE(r->warnings()[0].find("cut off"), std::string::npos);
  // The writer then writes that block whole, over the partial bytes, and goes on.
  chunks.push_back(next);
  ASSERT_TRUE(writer->writeChunk(next)) << writer->lastError();
  write();
  EXPECT_TRUE(r->refresh());
  EXPECT_EQ(r->blocks().size(), 6u);
  EXPECT_TRUE(r->warnings().empty());
  EXPECT_FALSE(r->complete());
  ASSERT_TRUE(writer->close()) << writer->lastError();
  EXPECT_FALSE(r->refresh());  // the index and trailer are no data blocks
  EXPECT_TRUE(r->complete());
  EXPECT_TRUE(r->warnings().empty());
  EXPECT_FALSE(r->refresh());
  ASSERT_EQ(r->blocks().size(), chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) EXPECT_EQ(readAndCompare(*r, r->blocks()[i], chunks[i]), "");
}

TEST(TraceReader, ProgramChangeThatDoesNotDecodeStopsTheScan) {
  TempDir dir;
  Rng rng(8);
  const HeaderData header = randomHeader(rng, 16, 4);
  std::string error;
  auto writer = TraceWriter::create(dir.file("pc.trace"), header, error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->writeChunk(randomChunk(rng, 0, 3, 16, 4, 1)));
  writer.reset();
  std::vector<uint8_t> bytes = readBytes(dir.file("pc.trace.partial"));
  const uint64_t at = bytes.size();
  const std::vector<uint8_t> frame = makeFrame(BlockKind::ProgramChange, 3, 0, encodeGap(GapData{3, 1}), false, 2);
  bytes.insert(bytes.end(), frame.begin(), frame.end());
  auto r = TraceReader::openBytes(bytes, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->blocks().size(), 1u);
  ASSERT_TRUE(r->corruptOffset());
  EXPECT_EQ(*r->corruptOffset(), at);
  EXPECT_NE(r->corruptError().find("expected a program change message, found gap"), std::string::npos)
      << r->corruptError();
}

TEST(TraceReader, AHeaderClaimingAnImageBeyondTheLimitIsRefusedBeforeAnythingIsSizedByIt) {
  // docs/language.md, "Limits": no program has a larger image, so no chunk of such a trace could
  // ever replay; a header that claims one is a crafted or broken file.
  TempDir dir;
  Rng rng(27);
  for (const uint32_t claimed : {uint32_t{UINT32_MAX}, uint32_t{(256u << 20) + 1}}) {
    const std::string path = dir.file("claims" + std::to_string(claimed) + ".trace");
    std::string error;
    auto writer = TraceWriter::create(path, randomHeader(rng, claimed, 4), error);
    ASSERT_TRUE(writer) << error;
    ASSERT_TRUE(writer->close()) << writer->lastError();
    gLargest = 0;
    gTrack = true;
    auto r = TraceReader::open(path, error);
    gTrack = false;
    EXPECT_FALSE(r);
    EXPECT_EQ(
        error,
        fmt::format("the header claims an image of {} bytes; scanback's limit is 268435456 bytes (256 MiB)", claimed));
    EXPECT_LT(gLargest.load(), size_t{1} << 20);
  }
  // The limit itself is allowed (an empty trace of a program of 256 MiB).
  const std::string path = dir.file("at-limit.trace");
  std::string error;
  auto writer = TraceWriter::create(path, randomHeader(rng, 256u << 20, 4), error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->close()) << writer->lastError();
  EXPECT_TRUE(TraceReader::open(path, error)) << error;
}

TEST(TraceReader, AProgramChangeClaimingAnImageBeyondTheLimitStopsTheScan) {
  TempDir dir;
  Rng rng(28);
  std::string error;
  auto writer = TraceWriter::create(dir.file("pc.trace"), randomHeader(rng, 16, 4), error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->writeChunk(randomChunk(rng, 0, 3, 16, 4, 1))) << writer->lastError();
  ASSERT_TRUE(writer->writeProgramChange(ProgramChangeData{3, "next", {}, UINT32_MAX, 4})) << writer->lastError();
  ASSERT_TRUE(writer->close()) << writer->lastError();
  for (const bool indexed : {true, false}) {  // found through the index, and by scanning
    std::vector<uint8_t> bytes = readBytes(dir.file("pc.trace"));
    if (!indexed) bytes.resize(bytes.size() - 1);  // no trailer: the blocks are scanned
    auto r = TraceReader::openBytes(bytes, error);
    ASSERT_TRUE(r) << error;
    EXPECT_EQ(r->blocks().size(), 1u);
    ASSERT_TRUE(r->corruptOffset());
    EXPECT_NE(r->corruptError().find("the program change at cycle 3 claims an image of 4294967295 bytes; scanback's "
                                     "limit is 268435456 bytes (256 MiB)"),
              std::string::npos)
        << r->corruptError();
  }
}

}  // namespace
}  // namespace scanback::trace::testing
