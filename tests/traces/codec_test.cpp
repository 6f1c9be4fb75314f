// Block codec and framing: every block kind round-trips with random data; invalid data is
// refused with the block's offset in the message.
#include <gtest/gtest.h>

#include "tests/traces/trace_test_support.h"

namespace scanback::trace::testing {
namespace {

template <typename T>
std::span<const uint8_t> bytes(const T& v) {
  return {v.data(), v.size()};
}

TEST(TraceCodec, HeaderRoundTrip) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed);
    const HeaderData h = randomHeader(rng, static_cast<uint32_t>(uniform(rng, 0, 4096)), 100);
    const std::vector<uint8_t> message = encodeHeader(h);
    EXPECT_EQ(message.size() % 8, 0u);
    HeaderData back;
    std::string error;
    ASSERT_TRUE(decodeHeader(bytes(message), 8, back, error)) << error;
    expectSameHeader(h, back);
  }
}

TEST(TraceCodec, ChunkRoundTrip) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(seed);
    const uint32_t imageSize = static_cast<uint32_t>(uniform(rng, 1, 2048));
    const ChunkData c = randomChunk(rng, uniform(rng, 0, 1ull << 40), static_cast<uint32_t>(uniform(rng, 0, 300)),
                                    imageSize, 500, 3, seed % 5 != 0);
    const std::vector<uint8_t> message = encodeChunk(c);
    ChunkData back;
    std::string error;
    ASSERT_TRUE(decodeChunk(bytes(message), 1234, ChunkLimits{imageSize, 500}, back, error)) << error;
    EXPECT_EQ(back, c) << "seed " << seed;
  }
}

// ImageWrite.author: each value round-trips, on writes and input changes; a value this reader does
// not know (a newer writer's) reads as unknown rather than as an error.
TEST(TraceCodec, AWritesAuthorRoundTripsAndAnUnknownOneReadsAsUnknown) {
  ChunkData c;
  c.firstCycle = 10;
  c.keyframe.assign(16, 0);
  c.tasks = {0, 0};
  c.startTimes = {0, 10};
  c.stepCounts = {1, 1};
  c.imageHashes = {0, 0};
  // Two writes of one cycle by different authors stay two writes, in their order.
  for (uint8_t a = 0; a <= kLastWriteAuthor; ++a) {
    ImageWriteData w;
    w.cycleIndex = 1;
    w.offset = a;
    w.bytes = {static_cast<uint8_t>(a + 1)};
    w.author = static_cast<WriteAuthor>(a);
    c.writes.push_back(w);
  }
  c.inputChanges.push_back(ImageWriteData{0, 8, -1, {7, 7}});
  c.inputChanges.back().author = WriteAuthor::ModbusPeer;
  ChunkData back;
  std::string error;
  ASSERT_TRUE(decodeChunk(bytes(encodeChunk(c)), 0, ChunkLimits{16, 10}, back, error)) << error;
  EXPECT_EQ(back, c);
  ASSERT_EQ(back.writes.size(), size_t{kLastWriteAuthor} + 1);
  EXPECT_EQ(back.writes[2].author, WriteAuthor::Debugger);
  EXPECT_EQ(back.inputChanges[0].author, WriteAuthor::ModbusPeer);
  // A newer writer's author: read as unknown.
  ChunkData newer = c;
  newer.writes[0].author = static_cast<WriteAuthor>(200);
  ASSERT_TRUE(decodeChunk(bytes(encodeChunk(newer)), 0, ChunkLimits{16, 10}, back, error)) << error;
  EXPECT_EQ(back.writes[0].author, WriteAuthor::Unknown);
  EXPECT_EQ(back.writes[1].author, WriteAuthor::Stimulus);
}

TEST(TraceCodec, OtherBlocksRoundTrip) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed);
    std::string error;
    const GapData gap{uniform(rng, 0, 1ull << 50), uniform(rng, 0, 1ull << 20)};
    GapData gapBack;
    ASSERT_TRUE(decodeGap(bytes(encodeGap(gap)), 0, gapBack, error)) << error;
    EXPECT_EQ(gapBack, gap);

    const ProgramChangeData change{uniform(rng, 0, 1ull << 40), randomText(rng, 40), randomSources(rng),
                                   static_cast<uint32_t>(uniform(rng, 0, 1 << 20)),
                                   static_cast<uint32_t>(uniform(rng, 0, 1 << 16))};
    ProgramChangeData changeBack;
    ASSERT_TRUE(decodeProgramChange(bytes(encodeProgramChange(change)), 0, changeBack, error)) << error;
    EXPECT_TRUE(sameProgramChange(change, changeBack));

    const FaultData fault{uniform(rng, 0, 1ull << 40), uniform(rng, 0, 1000),
                          static_cast<uint32_t>(uniform(rng, 0, 1000)), static_cast<uint32_t>(uniform(rng, 0, 20)),
                          randomText(rng, 200)};
    FaultData faultBack;
    ASSERT_TRUE(decodeFault(bytes(encodeFault(fault)), 0, faultBack, error)) << error;
    EXPECT_EQ(faultBack, fault);

    std::vector<BlockInfo> index(uniform(rng, 0, 50));
    for (BlockInfo& b : index) {
      b.offset = uniform(rng, 0, 1ull << 40);
      b.kind = static_cast<BlockKind>(uniform(rng, 1, 6));
      b.firstCycle = uniform(rng, 0, 1ull << 40);
      b.cycleCount = uniform(rng, 0, 1000);
      b.storedSize = static_cast<uint32_t>(uniform(rng, 0, UINT32_MAX));
      b.rawSize = static_cast<uint32_t>(uniform(rng, 0, UINT32_MAX));
    }
    std::vector<BlockInfo> indexBack;
    ASSERT_TRUE(decodeIndex(bytes(encodeIndex(index)), 0, indexBack, error)) << error;
    expectSameBlocks(index, indexBack);
  }
}

TEST(TraceCodec, OpenCycleRoundTripsAndIsCheckedAgainstTheImage) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed);
    const uint32_t imageSize = static_cast<uint32_t>(uniform(rng, 1, 2048));
    OpenCycleData open;
    open.cycle = uniform(rng, 0, 1ull << 40);
    open.task = static_cast<uint32_t>(uniform(rng, 0, 65535));
    open.startNs = static_cast<int64_t>(uniform(rng, 0, 1ull << 50));
    open.untilStep = uniform(rng, 0, 1 << 20);
    for (uint32_t i = 0; i < imageSize; ++i) open.keyframe.push_back(static_cast<uint8_t>(uniform(rng, 0, 255)));
    open.inputChanges = randomWrites(rng, 1, imageSize, 10);
    open.writes = randomWrites(rng, 1, imageSize, 4);
    const std::vector<uint8_t> message = encodeOpenCycle(open);
    OpenCycleData back;
    std::string error;
    ASSERT_TRUE(decodeOpenCycle(bytes(message), 77, ChunkLimits{imageSize, 10}, back, error)) << error;
    EXPECT_EQ(back, open) << "seed " << seed;
    EXPECT_FALSE(decodeOpenCycle(bytes(message), 77, ChunkLimits{imageSize + 1, 10}, back, error));
    EXPECT_NE(error.find("block at offset 77"), std::string::npos) << error;
    EXPECT_NE(error.find("keyframe size"), std::string::npos) << error;
  }
}

TEST(TraceWriterReader, AnOpenCycleEndsTheTrace) {
  TempDir dir;
  const std::string path = dir.file("open.trace");
  Rng rng(3);
  HeaderData h = randomHeader(rng, 64, 10);
  std::string error;
  auto writer = TraceWriter::create(path, h, error);
  ASSERT_TRUE(writer) << error;
  const ChunkData chunk = randomChunk(rng, 0, 5, 64, 10, static_cast<uint32_t>(h.tasks.size()));
  ASSERT_TRUE(writer->writeChunk(chunk)) << writer->lastError();
  OpenCycleData open;
  open.keyframe.assign(64, 7);
  open.untilStep = 3;
  {
    auto other = TraceWriter::create(dir.file("other.trace"), h, error);
    ASSERT_TRUE(other->writeChunk(chunk));
    open.cycle = 4;  // inside the chunk
    EXPECT_FALSE(other->writeOpenCycle(open));
    EXPECT_NE(other->lastError().find("before the end of the previous chunk"), std::string::npos) << other->lastError();
  }
  open.cycle = 5;
  ASSERT_TRUE(writer->writeOpenCycle(open)) << writer->lastError();
  EXPECT_FALSE(writer->writeChunk(randomChunk(rng, 6, 1, 64, 10, 1)));
  EXPECT_NE(writer->lastError().find("after the open cycle"), std::string::npos) << writer->lastError();
}

TEST(TraceCodec, UnalignedInputIsCopied) {
  Rng rng(7);
  const ChunkData c = randomChunk(rng, 5, 20, 64, 30, 2);
  const std::vector<uint8_t> message = encodeChunk(c);
  std::vector<uint8_t> shifted(message.size() + 1);
  std::copy(message.begin(), message.end(), shifted.begin() + 1);
  ChunkData back;
  std::string error;
  ASSERT_TRUE(decodeChunk({shifted.data() + 1, message.size()}, 0, ChunkLimits{64, 30}, back, error)) << error;
  EXPECT_EQ(back, c);
}

TEST(TraceCodec, WrongKindAndGarbageAreErrorsWithTheOffset) {
  std::string error;
  ChunkData chunk;
  EXPECT_FALSE(decodeChunk({}, 4242, ChunkLimits{}, chunk, error));
  EXPECT_NE(error.find("offset 4242"), std::string::npos) << error;
  const std::vector<uint8_t> gap = encodeGap(GapData{1, 2});
  EXPECT_FALSE(decodeChunk(bytes(gap), 4242, ChunkLimits{}, chunk, error));
  EXPECT_NE(error.find("offset 4242"), std::string::npos) << error;
  EXPECT_NE(error.find("found gap"), std::string::npos) << error;
  Rng rng(3);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> garbage(8 * uniform(rng, 1, 64));
    for (uint8_t& b : garbage) b = static_cast<uint8_t>(uniform(rng, 0, 255));
    if (trial % 2) {  // a plausible segment table: one segment of the right size
      const uint32_t words = static_cast<uint32_t>(garbage.size() / 8 - 1);
      std::memset(garbage.data(), 0, 4);
      std::memcpy(garbage.data() + 4, &words, 4);
    }
    HeaderData h;
    GapData g;
    ProgramChangeData p;
    FaultData f;
    std::vector<BlockInfo> index;
    std::string e1, e2, e3, e4, e5, e6;
    if (!decodeChunk(bytes(garbage), 99, ChunkLimits{64, 10}, chunk, e1)) {
      EXPECT_NE(e1.find("offset 99"), std::string::npos) << e1;
    }
    if (!decodeHeader(bytes(garbage), 99, h, e2)) {
      EXPECT_NE(e2.find("offset 99"), std::string::npos) << e2;
    }
    if (!decodeGap(bytes(garbage), 99, g, e3)) {
      EXPECT_NE(e3.find("offset 99"), std::string::npos) << e3;
    }
    if (!decodeProgramChange(bytes(garbage), 99, p, e4)) {
      EXPECT_NE(e4.find("offset 99"), std::string::npos) << e4;
    }
    if (!decodeFault(bytes(garbage), 99, f, e5)) {
      EXPECT_NE(e5.find("offset 99"), std::string::npos) << e5;
    }
    if (!decodeIndex(bytes(garbage), 99, index, e6)) {
      EXPECT_NE(e6.find("offset 99"), std::string::npos) << e6;
    }
  }
}

// Encodes `c` without validation and expects decoding to refuse it with `what` in the error.
void expectRefused(const ChunkData& c, const ChunkLimits& limits, const std::string& what) {
  ChunkData back;
  std::string error;
  EXPECT_FALSE(decodeChunk(bytes(encodeChunk(c)), 777, limits, back, error)) << what;
  EXPECT_NE(error.find("offset 777"), std::string::npos) << error;
  EXPECT_NE(error.find(what), std::string::npos) << error;
  std::string direct;
  EXPECT_FALSE(validateChunk(c, limits, direct));
}

TEST(TraceCodec, ChunkValidation) {
  Rng rng(11);
  const ChunkLimits limits{64, 30};
  const ChunkData good = randomChunk(rng, 100, 10, 64, 30, 2);
  std::string error;
  ASSERT_TRUE(validateChunk(good, limits, error)) << error;

  ChunkData c = good;
  c.startTimes.pop_back();
  expectRefused(c, limits, "column lengths");
  c = good;
  c.paths.push_back(0);
  expectRefused(c, limits, "column lengths");
  c = good;
  c.paths[3] = static_cast<uint32_t>(c.pathTable.size());
  expectRefused(c, limits, "path index");
  c = good;
  c.pathTable[0].push_back(30);
  expectRefused(c, limits, "statement id 30");
  c = good;
  c.keyframe.push_back(0);
  expectRefused(c, limits, "keyframe size 65");
  c = good;
  c.writes.push_back(ImageWriteData{10, 0, -1, {1}});
  expectRefused(c, limits, "cycle index 10");
  c = good;
  c.inputChanges = {ImageWriteData{0, 60, -1, {1, 2, 3, 4, 5}}};
  expectRefused(c, limits, "offset 60 + size 5 > image size 64");
  c = good;
  c.writes = {ImageWriteData{0, 64, 3, {1}}};
  expectRefused(c, limits, "image size");
  c = good;
  c.writes = {ImageWriteData{0, 1, 8, {1}}};
  expectRefused(c, limits, "bit 8");
  c = good;
  c.writes = {ImageWriteData{5, 1, -1, {1}}, ImageWriteData{2, 1, -1, {1}}};
  expectRefused(c, limits, "not sorted");
  c = good;
  c.firstCycle = UINT64_MAX - 3;
  expectRefused(c, limits, "overflows");

  // Paths may be left out entirely (statements not recorded), and a path may be kNoPath.
  c = good;
  c.paths.clear();
  c.pathTable.clear();
  EXPECT_TRUE(validateChunk(c, limits, error)) << error;
  c = good;
  c.paths[0] = kNoPath;
  EXPECT_TRUE(validateChunk(c, limits, error)) << error;
}

TEST(TraceFraming, FrameHeaderRoundTripAndChecks) {
  Rng rng(5);
  for (int trial = 0; trial < 1000; ++trial) {
    FrameHeader h;
    h.kind = static_cast<BlockKind>(uniform(rng, 1, 6));
    h.compression = 1;
    h.storedSize = static_cast<uint32_t>(uniform(rng, 0, kMaxStoredBlockBytes));
    h.rawSize = static_cast<uint32_t>(uniform(rng, 0, kMaxRawBlockBytes / 8) * 8);
    h.firstCycle = uniform(rng, 0, UINT64_MAX);
    h.cycleCount = uniform(rng, 0, UINT64_MAX);
    h.payloadHash = uniform(rng, 0, UINT64_MAX);
    uint8_t raw[kFrameHeaderBytes];
    encodeFrameHeader(h, raw);
    std::string error;
    std::optional<FrameHeader> back = decodeFrameHeader(raw, error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(back->kind, h.kind);
    EXPECT_EQ(back->storedSize, h.storedSize);
    EXPECT_EQ(back->rawSize, h.rawSize);
    EXPECT_EQ(back->firstCycle, h.firstCycle);
    EXPECT_EQ(back->cycleCount, h.cycleCount);
    EXPECT_EQ(back->payloadHash, h.payloadHash);
    // Any single flipped bit is caught.
    const size_t byte = uniform(rng, 0, kFrameHeaderBytes - 1);
    raw[byte] ^= static_cast<uint8_t>(1u << uniform(rng, 0, 7));
    EXPECT_FALSE(decodeFrameHeader(raw, error));
    EXPECT_FALSE(error.empty());
  }
}

TEST(TraceFraming, SizeLimitsAreChecked) {
  FrameHeader h;
  h.storedSize = 0xFFFFFFFFu;
  h.rawSize = 64;
  uint8_t raw[kFrameHeaderBytes];
  encodeFrameHeader(h, raw);
  std::string error;
  EXPECT_FALSE(decodeFrameHeader(raw, error));
  EXPECT_NE(error.find("stored size 4294967295 exceeds"), std::string::npos) << error;
  h.storedSize = 64;
  h.rawSize = 0xFFFFFFF8u;
  encodeFrameHeader(h, raw);
  EXPECT_FALSE(decodeFrameHeader(raw, error));
  EXPECT_NE(error.find("raw size 4294967288 exceeds"), std::string::npos) << error;
  h.rawSize = 60;  // not whole words
  encodeFrameHeader(h, raw);
  EXPECT_FALSE(decodeFrameHeader(raw, error));
  h.rawSize = 72;
  h.compression = 0;  // uncompressed: raw == stored
  encodeFrameHeader(h, raw);
  EXPECT_FALSE(decodeFrameHeader(raw, error));
}

TEST(TraceWriterReader, EveryBlockKindRoundTrips) {
  TempDir dir;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::string path = dir.file("t" + std::to_string(seed) + ".trace");
    const SampleTrace s = writeSampleTrace(path, seed, static_cast<uint32_t>(1 + seed * 7));
    EXPECT_FALSE(fs::exists(path + ".partial"));
    std::string error;
    auto reader = TraceReader::open(path, error);
    ASSERT_TRUE(reader) << error;
    EXPECT_TRUE(reader->warnings().empty());
    EXPECT_TRUE(reader->usedIndex());
    EXPECT_TRUE(reader->complete());
    EXPECT_EQ(reader->fileSize(), fs::file_size(path));
    expectSameHeader(s.header, reader->header());
    ASSERT_EQ(reader->blocks().size(), s.written.size());
    for (size_t i = 0; i < s.written.size(); ++i) {
      EXPECT_EQ(readAndCompare(*reader, reader->blocks()[i], s.written[i]), "") << "block " << i;
    }
  }
}

}  // namespace
}  // namespace scanback::trace::testing
