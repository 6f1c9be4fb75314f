// The read-ahead (replayer/read_ahead.h, History::readAhead): a chunk decoded on its thread is the
// chunk the caller would have decoded itself, whatever the caller asks in whatever order; a chunk it
// cannot read is reported by the caller exactly as without it. Run under ThreadSanitizer too
// (scripts/test.sh): the thread reads the trace beside the caller.
#include "replayer/read_ahead.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "replayer/history.h"
#include "tests/support/trace_support.h"
#include "traces/framing.h"

using namespace scanback;

// Named, not anonymous: the unity build puts the replayer tests in one file.
namespace read_ahead_test {

constexpr uint64_t kCycles = 700;
constexpr uint32_t kChunkCycles = 50;  // 14 chunks

// Everything History::cycle says of a cycle, by value.
struct Facts {
  uint64_t cycle = 0;
  uint32_t task = 0;
  int64_t startNs = 0;
  uint32_t stepCount = 0, imageHash = 0;
  bool open = false;
  std::vector<uint32_t> path;
  bool hasPath = false;
  std::vector<trace::ImageWriteData> inputChanges, writes;
  std::vector<trace::ForceData> forces;
  bool operator==(const Facts&) const = default;
};

Facts factsOf(const replay::CycleRecord& r) {
  Facts f{r.cycle, r.task, r.startNs, r.stepCount, r.imageHash, r.open, {}, r.path != nullptr, {}, {}, {}};
  if (r.path) f.path = *r.path;
  for (const trace::ImageWriteData* w : r.inputChanges) f.inputChanges.push_back(*w);
  for (const trace::ImageWriteData* w : r.writes) f.writes.push_back(*w);
  for (const trace::ForceData* x : r.forces) f.forces.push_back(*x);
  return f;
}

std::unique_ptr<replay::History> openHistory(const std::string& path) {
  std::unique_ptr<trace::TraceReader> reader = test::openTrace(path);
  return reader ? std::make_unique<replay::History>(std::move(reader)) : nullptr;
}

// Cycle `c` as a History without read-ahead and without a held chunk finds it: a lookup each time.
bool lookUp(replay::History& h, uint64_t c, Facts& out, std::string& error) {
  std::shared_ptr<const trace::ChunkData> held;
  replay::CycleRecord record;
  if (!h.cycle(c, held, record, error)) return false;
  out = factsOf(record);
  return true;
}

class ReadAhead : public ::testing::Test {
 protected:
  void SetUp() override {
    auto program = test::compilePlant();
    ASSERT_TRUE(program);
    test::recordCycles(program, trace_, kCycles, kChunkCycles, test::plantStimulus(*program));
    reference_ = openHistory(trace_.string());
    ASSERT_TRUE(reference_);
    ASSERT_EQ(reference_->chunkCount(), kCycles / kChunkCycles);
  }
  const test::TempTrace trace_{"read_ahead"};
  std::unique_ptr<replay::History> reference_;
};

// Every cycle read in order, with the same held chunk and record (the cursor, reused lists) and the
// next chunk decoded ahead, is the cycle a fresh lookup finds; every chunk after the first came
// decoded from the thread.
TEST_F(ReadAhead, CyclesReadInOrderAreTheCyclesLookedUp) {
  auto h = openHistory(trace_.string());
  ASSERT_TRUE(h);
  h->readAhead(true);
  std::shared_ptr<const trace::ChunkData> held;
  replay::CycleRecord record;
  std::string error;
  size_t withInputs = 0;
  for (uint64_t c = 0; c < kCycles; ++c) {
    ASSERT_TRUE(h->cycle(c, held, record, error)) << "cycle " << c << ": " << error;
    // The thread's work done before the chunk is needed, so that it is taken whatever the schedule.
    if (c % kChunkCycles == 0) h->waitForReadAhead();
    Facts expected;
    ASSERT_TRUE(lookUp(*reference_, c, expected, error)) << error;
    ASSERT_EQ(factsOf(record), expected) << "cycle " << c;
    withInputs += !record.inputChanges.empty() || !record.writes.empty();
  }
  EXPECT_GT(withInputs, 10u);  // the stimulus is in the records compared
  EXPECT_EQ(h->readAheadTaken(), kCycles / kChunkCycles - 1);
}

// Back and forth, skipping chunks, with and without waiting for the thread: the same facts.
TEST_F(ReadAhead, AnyOrderGivesTheSameCycles) {
  auto h = openHistory(trace_.string());
  ASSERT_TRUE(h);
  h->readAhead(true);
  std::shared_ptr<const trace::ChunkData> held;
  replay::CycleRecord record;
  std::string error;
  const uint64_t order[] = {0, 1, 49, 50, 51, 10, 11, 120, 99, 100, 101, 650, 699, 0, 200, 201, 150, 151, 152, 300};
  for (size_t i = 0; i < std::size(order); ++i) {
    const uint64_t c = order[i];
    ASSERT_TRUE(h->cycle(c, held, record, error)) << "cycle " << c << ": " << error;
    if (i % 3 == 0) h->waitForReadAhead();
    Facts expected;
    ASSERT_TRUE(lookUp(*reference_, c, expected, error)) << error;
    ASSERT_EQ(factsOf(record), expected) << "cycle " << c << " (read " << i << ")";
    // Another caller's held chunk, or none: a lookup, the same facts.
    std::shared_ptr<const trace::ChunkData> other;
    replay::CycleRecord otherRecord;
    ASSERT_TRUE(h->cycle(c, other, otherRecord, error)) << error;
    ASSERT_EQ(factsOf(otherRecord), expected);
  }
  EXPECT_GT(h->readAheadTaken(), 0u);  // 50 and 100 came after the chunks before them
}

// A chunk that cannot be read (its payload damaged): the read-ahead does not keep it, and the
// caller fails at the same cycle with the same error as without read-ahead, the cycles before it
// read as recorded.
TEST_F(ReadAhead, ACorruptChunkFailsAsWithout) {
  std::vector<uint8_t> bytes;
  {
    std::ifstream in(trace_.string(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const trace::BlockInfo& damaged = reference_->chunkBlock(5);  // cycles 250..299
  ASSERT_EQ(damaged.firstCycle, 250u);
  bytes[static_cast<size_t>(damaged.offset + trace::kFrameHeaderBytes + damaged.storedSize / 2)] ^= 0xff;
  const test::TempTrace bad("read_ahead_corrupt");
  std::ofstream(bad.string(), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));

  auto without = openHistory(bad.string());
  auto with = openHistory(bad.string());
  ASSERT_TRUE(without && with);
  with->readAhead(true);
  std::string expectedError, error;
  Facts expected;
  EXPECT_FALSE(lookUp(*without, 260, expected, expectedError));
  ASSERT_NE(expectedError.find("byte offset " + std::to_string(damaged.offset)), std::string::npos) << expectedError;

  std::shared_ptr<const trace::ChunkData> held;
  replay::CycleRecord record;
  uint64_t c = 0;
  for (; c < kCycles; ++c) {
    if (!with->cycle(c, held, record, error)) break;
    if (c % kChunkCycles == 0) with->waitForReadAhead();  // chunk 5 was tried on the thread first
    ASSERT_TRUE(lookUp(*without, c, expected, expectedError)) << expectedError;
    ASSERT_EQ(factsOf(record), expected) << "cycle " << c;
  }
  EXPECT_EQ(c, 250u);
  EXPECT_EQ(error, expectedError);
  EXPECT_EQ(with->readAheadTaken(), 4u);  // chunks 1 to 4; not the damaged one
  // The chunks after it have their own keyframes: they read, ahead too.
  error.clear();
  ASSERT_TRUE(with->cycle(300, held, record, error)) << error;
  ASSERT_TRUE(lookUp(*without, 300, expected, expectedError)) << expectedError;
  EXPECT_EQ(factsOf(record), expected);
}

// The read-ahead alone: what it hands over, what it withdraws, and its thread stopped while busy.
TEST_F(ReadAhead, HandsOverOnlyTheChunkAskedForAsListed) {
  std::unique_ptr<trace::TraceReader> reader = test::openTrace(trace_.string());
  ASSERT_TRUE(reader);
  const trace::BlockInfo& second = reference_->chunkBlock(2);
  const trace::BlockInfo& third = reference_->chunkBlock(3);
  std::string error;
  trace::ChunkData direct;
  ASSERT_TRUE(reader->readChunk(third, direct, error)) << error;
  {
    replay::ChunkReadAhead ahead(*reader);
    EXPECT_EQ(ahead.take(3, third), nullptr);  // not asked for
    ahead.request(3, third);
    ahead.waitUntilDecoded();
    EXPECT_EQ(ahead.take(2, second), nullptr);  // another chunk: the third stays held
    trace::BlockInfo grown = third;
    ++grown.cycleCount;
    EXPECT_EQ(ahead.take(3, grown), nullptr);  // listed otherwise since (a chunk that grew)
    const std::shared_ptr<trace::ChunkData> taken = ahead.take(3, third);
    ASSERT_NE(taken, nullptr);
    EXPECT_EQ(taken->firstCycle, direct.firstCycle);
    EXPECT_EQ(taken->keyframe, direct.keyframe);
    EXPECT_EQ(taken->stepCounts, direct.stepCounts);
    EXPECT_EQ(taken->imageHashes, direct.imageHashes);
    EXPECT_EQ(taken->writes, direct.writes);
    EXPECT_EQ(ahead.take(3, third), nullptr);  // handed over once
    EXPECT_EQ(ahead.taken(), 1u);

    // A second request replaces the first.
    ahead.request(2, second);
    ahead.request(3, third);
    ahead.waitUntilDecoded();
    EXPECT_EQ(ahead.take(2, second), nullptr);
    EXPECT_NE(ahead.take(3, third), nullptr);
    // Dropped: nothing held.
    ahead.request(2, second);
    ahead.drop();
    EXPECT_EQ(ahead.take(2, second), nullptr);
    EXPECT_EQ(ahead.taken(), 2u);
    // Destroyed with a chunk asked for, maybe under way: the thread ends (ThreadSanitizer checks).
    ahead.request(4, reference_->chunkBlock(4));
  }
}

}  // namespace read_ahead_test
