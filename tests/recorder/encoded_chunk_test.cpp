// Chunks encoded in memory (traces/block_encoder.h), as the flight recorder keeps them: appended
// later, they make the same file as writeChunk, and the writer checks them as strictly. (Trace
// layer tests, kept here beside the recorder that needs them.)
#include <gtest/gtest.h>

#include "tests/traces/trace_test_support.h"
#include "traces/block_encoder.h"

namespace {

using namespace scanback::trace;
using namespace scanback::trace::testing;

TEST(EncodedChunk, AppendedLaterItMakesTheSameFileAsWriteChunk) {
  TempDir dir;
  Rng rng(7);
  const HeaderData header = randomHeader(rng, 64, 20);
  std::vector<ChunkData> chunks;
  for (uint64_t first = 0; first < 40; first += 8) chunks.push_back(randomChunk(rng, first, 8, 64, 20, 2));

  std::string error;
  auto direct = TraceWriter::create(dir.file("direct.trace"), header, error);
  ASSERT_TRUE(direct) << error;
  for (const ChunkData& c : chunks) ASSERT_TRUE(direct->writeChunk(c)) << direct->lastError();
  ASSERT_TRUE(direct->writeGap(GapData{40, 3}));
  ASSERT_TRUE(direct->close()) << direct->lastError();

  BlockEncoder encoder(header.options.zstdLevel);
  ASSERT_TRUE(encoder.ok());
  std::vector<EncodedChunk> kept(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    ASSERT_TRUE(encoder.encodeChunk(chunks[i], ChunkLimits{64, 20}, kept[i], error)) << error;
    EXPECT_EQ(kept[i].firstCycle(), chunks[i].firstCycle);
    EXPECT_EQ(kept[i].cycleCount(), 8u);
    EXPECT_EQ(kept[i].bytes().size(), kept[i].size());
  }
  auto later = TraceWriter::create(dir.file("later.trace"), header, error);
  ASSERT_TRUE(later) << error;
  for (const EncodedChunk& c : kept) ASSERT_TRUE(later->writeEncodedChunk(c)) << later->lastError();
  ASSERT_TRUE(later->writeGap(GapData{40, 3}));
  EXPECT_EQ(later->nextCycle(), 43u);
  ASSERT_TRUE(later->close()) << later->lastError();
  EXPECT_EQ(later->bytesWritten(), direct->bytesWritten());
  EXPECT_EQ(later->rawBytes(), direct->rawBytes());

  // The same header, blocks and index: the same bytes.
  EXPECT_EQ(readBytes(dir.file("later.trace")), readBytes(dir.file("direct.trace")));
  auto reader = TraceReader::open(dir.file("later.trace"), error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(reader->complete());
  ASSERT_EQ(reader->blocks().size(), chunks.size() + 1);
  for (size_t i = 0; i < chunks.size(); ++i) {
    ChunkData back;
    ASSERT_TRUE(reader->readChunk(reader->blocks()[i], back, error)) << error;
    EXPECT_EQ(back, chunks[i]);
  }
}

TEST(EncodedChunk, EncoderRefusesInvalidChunks) {
  Rng rng(8);
  BlockEncoder encoder(3);
  ChunkData c = randomChunk(rng, 5, 4, 32, 10, 1);
  c.keyframe.resize(31);
  EncodedChunk out;
  std::string error;
  EXPECT_FALSE(encoder.encodeChunk(c, ChunkLimits{32, 10}, out, error));
  EXPECT_NE(error.find("invalid chunk at cycle 5: keyframe size 31 != image size 32"), std::string::npos) << error;
  EXPECT_TRUE(out.empty());
}

TEST(EncodedChunk, WriterKeepsItsChecks) {
  TempDir dir;
  Rng rng(9);
  const HeaderData header = randomHeader(rng, 32, 10);
  BlockEncoder encoder(3);
  std::string error;
  auto encode = [&](const ChunkData& c, ChunkLimits limits) {
    EncodedChunk e;
    EXPECT_TRUE(encoder.encodeChunk(c, limits, e, error)) << error;
    return e;
  };
  auto writer = TraceWriter::create(dir.file("w.trace"), header, error);
  ASSERT_TRUE(writer) << error;

  EXPECT_FALSE(writer->writeEncodedChunk(EncodedChunk{}));
  EXPECT_NE(writer->lastError().find("empty encoded chunk"), std::string::npos) << writer->lastError();
  // Validated against another program: not valid here.
  EXPECT_FALSE(writer->writeEncodedChunk(encode(randomChunk(rng, 0, 4, 48, 3, 1), ChunkLimits{48, 3})));
  EXPECT_NE(writer->lastError().find("encoded for an image of 48 bytes and 3 statements; the program in effect "
                                     "has 32 and 10"),
            std::string::npos)
      << writer->lastError();
  EXPECT_TRUE(writer->writeEncodedChunk(encode(randomChunk(rng, 0, 4, 32, 10, 1), ChunkLimits{32, 10})))
      << writer->lastError();
  // Cycles never go backwards.
  EXPECT_FALSE(writer->writeEncodedChunk(encode(randomChunk(rng, 2, 4, 32, 10, 1), ChunkLimits{32, 10})));
  EXPECT_NE(writer->lastError().find("chunk starts at cycle 2, before the end of the previous chunk or gap (cycle 4)"),
            std::string::npos)
      << writer->lastError();
  EXPECT_TRUE(writer->writeGap(GapData{4, 2}));
  // After a program change, a chunk encoded for the old program is refused, one for the new taken.
  EXPECT_TRUE(writer->writeProgramChange(ProgramChangeData{6, "v2", {}, 48, 3}));
  EXPECT_FALSE(writer->writeEncodedChunk(encode(randomChunk(rng, 6, 4, 32, 10, 1), ChunkLimits{32, 10})));
  EXPECT_TRUE(writer->writeEncodedChunk(encode(randomChunk(rng, 6, 4, 48, 3, 1), ChunkLimits{48, 3})))
      << writer->lastError();
  EXPECT_TRUE(writer->writeFault(FaultData{9, 1, 0, 1, "boom"}));
  EXPECT_FALSE(writer->writeEncodedChunk(encode(randomChunk(rng, 10, 4, 48, 3, 1), ChunkLimits{48, 3})));
  EXPECT_NE(writer->lastError().find("after the fault: it ends the trace"), std::string::npos) << writer->lastError();
  ASSERT_TRUE(writer->close()) << writer->lastError();
  EXPECT_FALSE(writer->writeEncodedChunk(encode(randomChunk(rng, 20, 4, 48, 3, 1), ChunkLimits{48, 3})));
  EXPECT_NE(writer->lastError().find("closed"), std::string::npos) << writer->lastError();

  auto reader = TraceReader::open(dir.file("w.trace"), error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(reader->usedIndex());
  ASSERT_EQ(reader->blocks().size(), 5u);  // chunk, gap, program change, chunk, fault
  ChunkData back;
  EXPECT_TRUE(reader->readChunk(reader->blocks()[3], back, error)) << error;
}

}  // namespace
