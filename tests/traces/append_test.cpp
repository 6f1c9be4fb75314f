// The appending TraceWriter: a trace opened to append to (TraceWriter::openToAppend), one created
// exclusively from a header block framed elsewhere (createExclusive), and chunk blocks framed
// elsewhere (writeFramedChunk), as an attached debug session writes a runtime's streamed history.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_test_support.h"

namespace scanback::trace::testing {
namespace {

constexpr uint32_t kAppendImage = 48;
constexpr uint32_t kAppendStatements = 12;

// Writes a header and chunks (and a gap) of 6 cycles each, leaving the .partial unclosed or
// closing it; returns the data blocks written.
std::vector<Written> writeUnended(const std::string& path, Rng& rng, HeaderData& header, bool close) {
  header = randomHeader(rng, kAppendImage, kAppendStatements);
  const uint16_t tasks = static_cast<uint16_t>(header.tasks.size());
  std::string error;
  auto writer = TraceWriter::create(path, header, error);
  EXPECT_TRUE(writer) << error;
  std::vector<Written> written;
  if (!writer) return written;
  for (uint64_t first : {0u, 6u}) {
    ChunkData c = randomChunk(rng, first, 6, kAppendImage, kAppendStatements, tasks);
    EXPECT_TRUE(writer->writeChunk(c)) << writer->lastError();
    written.push_back(std::move(c));
  }
  EXPECT_TRUE(writer->writeGap(GapData{12, 3})) << writer->lastError();
  written.push_back(GapData{12, 3});
  if (close) {
    EXPECT_TRUE(writer->close()) << writer->lastError();
  }
  return written;
}

// Reads the trace at `path` and compares its data blocks with `written`.
void expectTraceHolds(const std::string& path, const std::vector<Written>& written) {
  std::string error;
  auto reader = TraceReader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(reader->damage().empty());
  EXPECT_TRUE(reader->warnings().empty()) << reader->warnings().front();
  ASSERT_EQ(reader->blocks().size(), written.size());
  for (size_t i = 0; i < written.size(); ++i)
    EXPECT_EQ(readAndCompare(*reader, reader->blocks()[i], written[i]), "") << "block " << i;
}

// The framed blocks of the trace file `bytes` after its magic: [offset, size) each.
std::vector<std::pair<size_t, size_t>> framedBlocks(const std::vector<uint8_t>& bytes) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t at = sizeof kFileMagic;
  while (bytes.size() - at >= kFrameHeaderBytes) {
    std::string error;
    const std::optional<FrameHeader> h = decodeFrameHeader(bytes.data() + at, error);
    if (!h || h->kind == BlockKind::Index) break;
    out.emplace_back(at, kFrameHeaderBytes + h->storedSize);
    at += kFrameHeaderBytes + h->storedSize;
  }
  return out;
}

TEST(TraceAppend, AppendsToATraceLeftUnclosedAndReadsBack) {
  TempDir dir;
  Rng rng(41);
  HeaderData header;
  std::vector<Written> written = writeUnended(dir.file("a.trace"), rng, header, false);
  const std::string partial = dir.file("a.trace.partial");
  std::string error;
  auto writer = TraceWriter::openToAppend(partial, error);
  ASSERT_TRUE(writer) << error;
  EXPECT_EQ(writer->nextCycle(), 15u) << "cycles go on after the gap";
  EXPECT_EQ(writer->blocks().size(), 3u);
  // A hole is refused as when the trace was first written.
  const uint16_t tasks = static_cast<uint16_t>(header.tasks.size());
  EXPECT_FALSE(writer->writeChunk(randomChunk(rng, 16, 6, kAppendImage, kAppendStatements, tasks)));
  EXPECT_EQ(writer->lastError(), "chunk starts at cycle 16, leaving cycles 15..15 out: write a gap for them");
  // The chunk encoded elsewhere, as a flight recorder's, and one written here.
  BlockEncoder encoder(3);
  EncodedChunk encoded;
  ChunkData first = randomChunk(rng, 15, 6, kAppendImage, kAppendStatements, tasks);
  ASSERT_TRUE(encoder.encodeChunk(first, ChunkLimits{kAppendImage, kAppendStatements}, encoded, error)) << error;
  ASSERT_TRUE(writer->writeEncodedChunk(encoded)) << writer->lastError();
  written.push_back(std::move(first));
  ChunkData second = randomChunk(rng, 21, 6, kAppendImage, kAppendStatements, tasks);
  ASSERT_TRUE(writer->writeChunk(second)) << writer->lastError();
  written.push_back(std::move(second));
  ASSERT_TRUE(writer->close()) << writer->lastError();
  EXPECT_EQ(writer->partialPath(), partial) << "written in place";
  EXPECT_FALSE(fs::exists(dir.file("a.trace"))) << "nothing renamed";
  expectTraceHolds(partial, written);
  std::unique_ptr<TraceReader> reader = TraceReader::open(partial, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(reader->complete()) << "closed: index and trailer";
}

TEST(TraceAppend, AppendsToAClosedTraceInPlaceOfItsIndex) {
  TempDir dir;
  Rng rng(42);
  HeaderData header;
  std::vector<Written> written = writeUnended(dir.file("c.trace"), rng, header, true);
  const size_t closedSize = readBytes(dir.file("c.trace")).size();
  std::string error;
  auto writer = TraceWriter::openToAppend(dir.file("c.trace"), error);
  ASSERT_TRUE(writer) << error;
  EXPECT_LT(writer->bytesWritten(), closedSize) << "index and trailer cut off";
  ChunkData more = randomChunk(rng, 15, 6, kAppendImage, kAppendStatements, static_cast<uint16_t>(header.tasks.size()));
  ASSERT_TRUE(writer->writeChunk(more)) << writer->lastError();
  written.push_back(std::move(more));
  ASSERT_TRUE(writer->close()) << writer->lastError();
  expectTraceHolds(dir.file("c.trace"), written);
  auto reader = TraceReader::open(dir.file("c.trace"), error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(reader->usedIndex()) << "the new index is read";
}

TEST(TraceAppend, RefusesATraceCutOffInsideABlockWithItsOffset) {
  TempDir dir;
  Rng rng(43);
  HeaderData header;
  writeUnended(dir.file("t.trace"), rng, header, false);
  const std::string partial = dir.file("t.trace.partial");
  std::vector<uint8_t> bytes = readBytes(partial);
  const auto blocks = framedBlocks(bytes);
  ASSERT_EQ(blocks.size(), 4u);  // header, two chunks, the gap
  const size_t last = blocks.back().first;
  std::string error;
  // Cut inside the last block's payload, then inside its frame header.
  writeBytes(partial, bytes, bytes.size() - 3);
  EXPECT_FALSE(TraceWriter::openToAppend(partial, error));
  EXPECT_EQ(error, fmt::format("cut off at offset {}: the gap block there has {} of its {} payload bytes", last,
                               blocks.back().second - kFrameHeaderBytes - 3, blocks.back().second - kFrameHeaderBytes));
  EXPECT_EQ(readBytes(partial).size(), bytes.size() - 3) << "the file is left as it was";
  writeBytes(partial, bytes, last + 10);
  EXPECT_FALSE(TraceWriter::openToAppend(partial, error));
  EXPECT_EQ(error, fmt::format("cut off at offset {}: 10 bytes of a block's 48-byte frame header", last));
}

TEST(TraceAppend, RefusesADamagedTraceWithTheOffset) {
  TempDir dir;
  Rng rng(44);
  HeaderData header;
  writeUnended(dir.file("d.trace"), rng, header, false);
  const std::string partial = dir.file("d.trace.partial");
  const std::vector<uint8_t> bytes = readBytes(partial);
  const auto blocks = framedBlocks(bytes);
  ASSERT_EQ(blocks.size(), 4u);
  std::string error;
  // A payload byte of the first chunk.
  std::vector<uint8_t> damaged = bytes;
  damaged[blocks[1].first + kFrameHeaderBytes + 5] ^= 0x40;
  writeBytes(partial, damaged);
  EXPECT_FALSE(TraceWriter::openToAppend(partial, error));
  EXPECT_EQ(error.rfind(fmt::format("block at offset {}: payload hash ", blocks[1].first), 0), 0u) << error;
  EXPECT_NE(error.find("(corrupt data)"), std::string::npos) << error;
  EXPECT_EQ(readBytes(partial), damaged) << "the file is left as it was";
  // The second chunk's block missing: its numbers say so.
  std::vector<uint8_t> holed(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(blocks[2].first));
  holed.insert(holed.end(), bytes.begin() + static_cast<ptrdiff_t>(blocks[3].first), bytes.end());
  writeBytes(partial, holed);
  EXPECT_FALSE(TraceWriter::openToAppend(partial, error));
  EXPECT_EQ(error, fmt::format("block at offset {}: numbered 3, expected 2 (a block is missing before it, or "
                               "present twice)",
                               blocks[2].first));
  // No trace at all.
  writeBytes(partial, std::vector<uint8_t>{'n', 'o', 't', ' ', 'a', ' ', 't', 'r', 'a', 'c', 'e'});
  EXPECT_FALSE(TraceWriter::openToAppend(partial, error));
  EXPECT_EQ(error, "not a scanback trace (no SCANBACK magic at the start)");
}

TEST(TraceAppend, RefusesATraceARecordingIsWriting) {
  TempDir dir;
  Rng rng(45);
  std::string error;
  auto recording = TraceWriter::create(dir.file("r.trace"), randomHeader(rng, kAppendImage, kAppendStatements), error);
  ASSERT_TRUE(recording) << error;
  EXPECT_FALSE(TraceWriter::openToAppend(dir.file("r.trace.partial"), error));
  EXPECT_EQ(error, "another recording is writing to it (it is locked by a running scanback)");
}

// What an attached session does: the header block and chunk blocks of another trace (as a
// runtime streams them) make a trace of the same bytes, written in place.
TEST(TraceAppend, FramedBlocksMakeTheSameTrace) {
  TempDir dir;
  Rng rng(46);
  HeaderData header;
  writeUnended(dir.file("s.trace"), rng, header, false);
  const std::vector<uint8_t> source = readBytes(dir.file("s.trace.partial"));
  const auto blocks = framedBlocks(source);
  ASSERT_EQ(blocks.size(), 4u);
  auto block = [&](size_t i) { return std::span<const uint8_t>(source.data() + blocks[i].first, blocks[i].second); };
  const std::string copy = dir.file("copy.trace.partial");
  std::string error;
  auto writer = TraceWriter::createExclusive(copy, block(0), error);
  ASSERT_TRUE(writer) << error;
  // A continuation follows a chunk's block only; a chunk must start where the cycles end.
  std::vector<uint8_t> continuation(block(2).begin(), block(2).end());
  editFrame(continuation, 0, [](FrameHeader& h) { h.kind = BlockKind::Continuation; });
  EXPECT_FALSE(writer->writeFramedChunk(continuation));
  EXPECT_EQ(writer->lastError(),
            "continuation at cycle 6 follows no chunk (a gap, a program change or a lost block "
            "is before it)");
  ASSERT_TRUE(writer->writeFramedChunk(block(1))) << writer->lastError();
  EXPECT_FALSE(writer->writeFramedChunk(block(1)));
  EXPECT_EQ(writer->lastError(), "chunk starts at cycle 0, before the end of the previous chunk or gap (cycle 6)");
  // A damaged payload, a block of another kind.
  std::vector<uint8_t> damaged(block(2).begin(), block(2).end());
  damaged.back() ^= 1;
  EXPECT_FALSE(writer->writeFramedChunk(damaged));
  EXPECT_EQ(writer->lastError(), "a chunk's block is a block whose payload does not match its hash");
  EXPECT_FALSE(writer->writeFramedChunk(block(3)));
  EXPECT_EQ(writer->lastError(), "a gap block where a chunk's block belongs");
  ASSERT_TRUE(writer->writeFramedChunk(block(2))) << writer->lastError();
  ASSERT_TRUE(writer->writeGap(GapData{12, 3})) << writer->lastError();
  writer.reset();  // unclosed, as an attached session leaves it
  EXPECT_EQ(readBytes(copy), source) << "the same trace, byte for byte";
  struct stat st {};
  ASSERT_EQ(::stat(copy.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "its owner's only";
}

TEST(TraceAppend, ExclusiveCreationNeverTakesAnExistingFile) {
  TempDir dir;
  Rng rng(47);
  HeaderData header;
  writeUnended(dir.file("s.trace"), rng, header, false);
  const std::vector<uint8_t> source = readBytes(dir.file("s.trace.partial"));
  const auto blocks = framedBlocks(source);
  const std::span<const uint8_t> headerBlock(source.data() + blocks[0].first, blocks[0].second);
  std::string error;
  // A file, even a trace; a link, even one that leads nowhere.
  const std::vector<uint8_t> mine{'m', 'i', 'n', 'e'};
  writeBytes(dir.file("taken"), mine);
  EXPECT_FALSE(TraceWriter::createExclusive(dir.file("taken"), headerBlock, error));
  EXPECT_EQ(error, "it exists (a trace created exclusively never replaces a file)");
  EXPECT_EQ(readBytes(dir.file("taken")), mine);
  EXPECT_FALSE(TraceWriter::createExclusive(dir.file("s.trace.partial"), headerBlock, error));
  EXPECT_EQ(readBytes(dir.file("s.trace.partial")), source);
  ASSERT_EQ(::symlink(dir.file("nowhere").c_str(), dir.file("link").c_str()), 0);
  EXPECT_FALSE(TraceWriter::createExclusive(dir.file("link"), headerBlock, error));
  EXPECT_EQ(error, "it exists (a trace created exclusively never replaces a file)");
  EXPECT_FALSE(fs::exists(dir.file("nowhere")));
  // A header block that is not one.
  EXPECT_FALSE(TraceWriter::createExclusive(dir.file("new"),
                                            std::span(source.data() + blocks[1].first, blocks[1].second), error));
  EXPECT_EQ(error, "its header block is a chunk block");
  EXPECT_FALSE(fs::exists(dir.file("new")));
}

}  // namespace
}  // namespace scanback::trace::testing
