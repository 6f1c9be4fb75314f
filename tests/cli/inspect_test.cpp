// trace info / dump / hits on small traces of a real (compiled) program.
#include "cli/trace_inspect.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>

#include "tests/traces/trace_test_support.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/forces.h"

namespace scanback::trace::testing {
namespace {

using namespace scanback::cli;

const char* const kMain =
    "PROGRAM Main\n"                       // 1
    "VAR\n"                                // 2
    "  count : INT;\n"                     // 3
    "  i : INT;\n"                         // 4
    "  sum : INT;\n"                       // 5
    "END_VAR\n"                            // 6
    "count := count + 1;\n"                // 7
    "IF count MOD 2 = 0 THEN\n"            // 8
    "  sum := sum + 1;\n"                  // 9
    "END_IF\n"                             // 10
    "FOR i := 1 TO 3 DO\n"                 // 11
    "  sum := sum + i; sum := sum - 1;\n"  // 12: two statements
    "END_FOR\n"                            // 13
    "END_PROGRAM\n";                       // 14

struct Project {
  std::vector<SourceFile> files;
  std::shared_ptr<const Program> program;
};

Project compile(std::vector<SourceFile> files) {
  Project p;
  p.files = std::move(files);
  SourceSet sources;
  for (const SourceFile& f : p.files) sources.add(f.path, f.text);
  Diagnostics d;
  p.program = compileProject(sources, d);
  EXPECT_TRUE(p.program) << d.format(sources);
  return p;
}

class TraceInspect : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = compile({{"src/main.st", kMain}});
    ASSERT_TRUE(project_.program);
    const Program& program = *project_.program;
    ASSERT_GT(program.statements.size(), 5u);
    header_.scanbackVersion = "0.1.0";
    header_.programHash = program.hash;
    header_.sources = project_.files;
    for (const TaskInfo& t : program.tasks) header_.tasks.push_back({t.name, t.intervalNs, t.priority});
    header_.imageSize = program.imageSize();
    header_.statementCount = static_cast<uint32_t>(program.statements.size());
    header_.options.keyframeEvery = 20;
    path_ = dir_.file("inspect.trace");
  }

  // Chunks of random paths over the real statement ids, then optionally a fault.
  void writeTrace(bool statements, bool fault) {
    header_.options.statements = statements;
    Rng rng(99);
    std::string error;
    auto writer = TraceWriter::create(path_, header_, error);
    ASSERT_TRUE(writer) << error;
    uint64_t cycle = 0;
    for (int k = 0; k < 5; ++k) {
      ChunkData c = randomChunk(rng, cycle, 20, header_.imageSize, header_.statementCount,
                                static_cast<uint16_t>(header_.tasks.size()), statements);
      for (uint32_t i = 0; i < c.cycleCount(); ++i) c.startTimes[i] = static_cast<int64_t>(cycle + i) * 10'000'000;
      cycle += 20;
      ASSERT_TRUE(writer->writeChunk(c)) << writer->lastError();
      chunks_.push_back(std::move(c));
      if (k == 2) {
        ASSERT_TRUE(writer->writeGap(GapData{cycle, 5}));
        cycle += 5;
      }
    }
    if (fault) {
      ASSERT_TRUE(writer->writeFault(FaultData{cycle - 1, 4, 2, 1, "src/main.st:9:3: fault: overflow"}));
    }
    ASSERT_TRUE(writer->close()) << writer->lastError();
    reader_ = TraceReader::open(path_, error);
    ASSERT_TRUE(reader_) << error;
  }

  // (cycle -> times a statement starting on `line` ran) by decoding every path directly.
  std::map<uint64_t, uint32_t> bruteForce(uint32_t line) const {
    std::map<uint64_t, uint32_t> hits;
    for (const ChunkData& c : chunks_) {
      for (uint32_t i = 0; i < c.cycleCount(); ++i) {
        if (c.paths.empty() || c.paths[i] == kNoPath) continue;
        for (uint32_t id : c.pathTable[c.paths[i]]) {
          if (project_.program->statements[id].span.line == line) ++hits[c.firstCycle + i];
        }
      }
    }
    return hits;
  }

  TempDir dir_;
  Project project_;
  HeaderData header_;
  std::string path_;
  std::vector<ChunkData> chunks_;
  std::unique_ptr<TraceReader> reader_;
};

TEST_F(TraceInspect, InfoText) {
  writeTrace(true, true);
  const std::string info = traceInfoText(*reader_);
  for (const char* what : {"cycles", "100 recorded (cycles 0..104)", "chunks", "5", "compression ratio",
                           "bytes per cycle", "src/main.st (14 lines", "gaps", "1 (5 cycles not recorded)",
                           "fault in cycle 104", "overflow", "duration T#1s40ms", "file size"}) {
    EXPECT_NE(info.find(what), std::string::npos) << "missing '" << what << "' in\n" << info;
  }
}

TEST_F(TraceInspect, InfoJson) {
  writeTrace(true, false);
  const nlohmann::ordered_json j = traceInfoJson(*reader_);
  EXPECT_EQ(j["formatVersion"], kFormatVersion);
  EXPECT_EQ(j["program"]["hash"], project_.program->hash);
  EXPECT_EQ(j["program"]["files"][0]["path"], "src/main.st");
  EXPECT_EQ(j["cycles"]["recorded"], 100);
  EXPECT_EQ(j["cycles"]["first"], 0);
  EXPECT_EQ(j["cycles"]["last"], 104);
  EXPECT_EQ(j["chunks"], 5);
  EXPECT_EQ(j["gaps"]["count"], 1);
  EXPECT_EQ(j["gaps"]["cycles"], 5);
  EXPECT_EQ(j["endsInFault"], false);
  EXPECT_TRUE(j["fault"].is_null());
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["virtualTime"]["durationNs"], 1'040'000'000);
  EXPECT_EQ(j["sizes"]["fileBytes"], fs::file_size(path_));
  EXPECT_GT(j["compressionRatio"].get<double>(), 1.0);
  EXPECT_NEAR(j["bytesPerCycle"].get<double>(), fs::file_size(path_) / 100.0, 1e-9);
  EXPECT_TRUE(j["warnings"].empty());
}

// Forces recorded in the chunks (Chunk.forces): count set at cycle 5 and released at 12; sum set
// at 15, restated by the next chunk, forced again to another value at 30, restated by the chunk
// after, and not by the one after the gap (its release fell in the gap).
TEST_F(TraceInspect, InfoListsTheForcesAndTheCyclesTheyWereHeldIn) {
  std::string error;
  const std::optional<VariableLocation> count = findVariable(*project_.program, "Main.count", error);
  const std::optional<VariableLocation> sum = findVariable(*project_.program, "Main.sum", error);
  ASSERT_TRUE(count && sum) << error;
  const auto force = [](uint32_t index, const VariableLocation& at, const char* target, std::vector<uint8_t> bytes,
                        uint64_t since, bool restated = false) {
    ForceData f;
    f.cycleIndex = index;
    f.offset = at.offset;
    f.target = target;
    f.bytes = std::move(bytes);
    f.release = f.bytes.empty();
    f.sinceCycle = since;
    f.restated = restated;
    return f;
  };
  header_.options.statements = false;
  Rng rng(7);
  auto writer = TraceWriter::create(path_, header_, error);
  ASSERT_TRUE(writer) << error;
  uint64_t cycle = 0;
  for (int k = 0; k < 4; ++k) {
    ChunkData c = randomChunk(rng, cycle, 20, header_.imageSize, header_.statementCount,
                              static_cast<uint16_t>(header_.tasks.size()), false);
    c.forces.clear();
    if (k == 0) {
      c.forces = {force(5, *count, "Main.count", {7, 0}, 5), force(12, *count, "Main.count", {}, 12),
                  force(15, *sum, "Main.sum", {0xFE, 0xFF}, 15)};
    } else if (k == 1) {
      c.forces = {force(0, *sum, "Main.sum", {0xFE, 0xFF}, 15, true), force(10, *sum, "Main.sum", {9, 0}, 30)};
    } else if (k == 2) {
      c.forces = {force(0, *sum, "Main.sum", {9, 0}, 30, true)};
    }
    cycle += 20;
    ASSERT_TRUE(writer->writeChunk(c)) << writer->lastError();
    if (k == 2) {
      ASSERT_TRUE(writer->writeGap(GapData{cycle, 5}));
      cycle += 5;
    }
  }
  ASSERT_TRUE(writer->close()) << writer->lastError();
  reader_ = TraceReader::open(path_, error);
  ASSERT_TRUE(reader_) << error;

  const std::string info = traceInfoText(*reader_);
  for (const char* what :
       {"forces            4 changes recorded, 3 forced\n", "Main.count = 7 (INT): cycles 5..11\n",
        "Main.sum = -2 (INT): cycles 15..29\n",
        "Main.sum = 9 (INT): cycles 30..59 (released in cycles not recorded: a gap or a damaged part follows)\n"})
    EXPECT_NE(info.find(what), std::string::npos) << "missing '" << what << "' in\n" << info;
  const nlohmann::ordered_json j = traceInfoJson(*reader_);
  EXPECT_EQ(j["forces"]["changes"], 4);
  ASSERT_EQ(j["forces"]["forced"].size(), 3u) << j["forces"].dump();
  EXPECT_EQ(j["forces"]["forced"][0].dump(),
            R"({"target":"Main.count","value":"7","type":"INT","fromCycle":5,"toCycle":11,"releaseRecorded":true})");
  EXPECT_EQ(j["forces"]["forced"][1]["toCycle"], 29);
  EXPECT_EQ(j["forces"]["forced"][2]["value"], "9");
  EXPECT_EQ(j["forces"]["forced"][2]["fromCycle"], 30);
  EXPECT_EQ(j["forces"]["forced"][2]["toCycle"], 59);
  EXPECT_EQ(j["forces"]["forced"][2]["releaseRecorded"], false);
}

TEST_F(TraceInspect, InfoOfATraceWithoutForcesSaysNone) {
  writeTrace(true, false);
  EXPECT_NE(traceInfoText(*reader_).find("forces            none\n"), std::string::npos) << traceInfoText(*reader_);
  const nlohmann::ordered_json j = traceInfoJson(*reader_);
  EXPECT_EQ(j["forces"]["changes"], 0);
  EXPECT_EQ(j["forces"]["forced"], nlohmann::ordered_json::array());
}

TEST_F(TraceInspect, InfoListsAForceHeldAtTheEndAndOneSetBeforeTheRecordingBegan) {
  std::string error;
  const std::optional<VariableLocation> count = findVariable(*project_.program, "Main.count", error);
  ASSERT_TRUE(count) << error;
  header_.options.statements = false;
  Rng rng(8);
  auto writer = TraceWriter::create(path_, header_, error);
  ASSERT_TRUE(writer) << error;
  // A flight recorder's trace: it begins at cycle 100, with count forced since cycle 40.
  ChunkData c = randomChunk(rng, 100, 20, header_.imageSize, header_.statementCount,
                            static_cast<uint16_t>(header_.tasks.size()), false);
  ForceData f;
  f.offset = count->offset;
  f.target = "Main.count";
  f.bytes = {3, 0};
  f.sinceCycle = 40;
  f.restated = true;
  c.forces = {f};
  ASSERT_TRUE(writer->writeChunk(c)) << writer->lastError();
  ASSERT_TRUE(writer->close()) << writer->lastError();
  reader_ = TraceReader::open(path_, error);
  ASSERT_TRUE(reader_) << error;
  const std::string info = traceInfoText(*reader_);
  EXPECT_NE(info.find("forces            0 changes recorded, 1 forced\n"), std::string::npos) << info;
  EXPECT_NE(info.find("Main.count = 3 (INT): cycles 40.. (held at the end) (forced before the recording began)\n"),
            std::string::npos)
      << info;
  const nlohmann::ordered_json j = traceInfoJson(*reader_);
  EXPECT_TRUE(j["forces"]["forced"][0]["toCycle"].is_null());
  EXPECT_EQ(j["forces"]["forced"][0]["fromCycle"], 40);
}

TEST_F(TraceInspect, InfoOnACutTraceWarns) {
  writeTrace(true, true);
  std::vector<uint8_t> bytes = readBytes(path_);
  bytes.resize(reader_->blocks()[2].offset + 30);
  std::string error;
  auto cut = TraceReader::openBytes(bytes, error);
  ASSERT_TRUE(cut) << error;
  const std::string info = traceInfoText(*cut);
  EXPECT_NE(info.find("cut off"), std::string::npos) << info;
  EXPECT_NE(info.find("40 recorded"), std::string::npos) << info;
  EXPECT_NE(info.find("still being written"), std::string::npos) << info;
}

TEST_F(TraceInspect, Dump) {
  writeTrace(true, true);
  const std::string dump = traceDump(*reader_);
  const ChunkData& c = chunks_[0];
  EXPECT_NE(dump.find("header @8"), std::string::npos);
  EXPECT_NE(dump.find("source src/main.st"), std::string::npos);
  EXPECT_NE(dump.find("chunk @"), std::string::npos);
  EXPECT_NE(dump.find("keyframe " + std::to_string(header_.imageSize) + " bytes, hash "), std::string::npos);
  const std::string cycle0 = fmt::format("cycle 0 task {} start T#0s steps {} hash {:08x} path",
                                         header_.tasks[c.tasks[0]].name, c.stepCounts[0], c.imageHashes[0]);
  EXPECT_NE(dump.find(cycle0), std::string::npos) << cycle0 << "\n" << dump.substr(0, 2000);
  EXPECT_NE(dump.find("gap @"), std::string::npos);
  EXPECT_NE(dump.find("cycles 60..64 not recorded"), std::string::npos);
  EXPECT_NE(dump.find("fault @"), std::string::npos);
  EXPECT_NE(dump.find("index @"), std::string::npos);
  if (!c.inputChanges.empty()) {
    const ImageWriteData& w = c.inputChanges[0];
    const std::string text =
        w.bit >= 0 ? fmt::format("input {}.{}=", w.offset, w.bit) : fmt::format("input {}=", w.offset);
    EXPECT_NE(dump.find(text), std::string::npos) << text;
  }

  const std::string some = traceDump(*reader_, 21, 22);
  EXPECT_NE(some.find("cycle 21 task"), std::string::npos);
  EXPECT_NE(some.find("cycle 22 task"), std::string::npos);
  EXPECT_EQ(some.find("cycle 20 task"), std::string::npos);
  EXPECT_EQ(some.find("cycle 23 task"), std::string::npos);
  EXPECT_EQ(some.find("gap @"), std::string::npos);
}

TEST(TraceInspectRange, ParseCycleRange) {
  uint64_t a = 0, b = 0;
  std::string error;
  EXPECT_TRUE(parseCycleRange("10..20", a, b, error));
  EXPECT_EQ(a, 10u);
  EXPECT_EQ(b, 20u);
  EXPECT_TRUE(parseCycleRange("5..", a, b, error));
  EXPECT_EQ(a, 5u);
  EXPECT_EQ(b, UINT64_MAX);
  EXPECT_TRUE(parseCycleRange("..7", a, b, error));
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 7u);
  EXPECT_TRUE(parseCycleRange("3", a, b, error));
  EXPECT_EQ(a, 3u);
  EXPECT_EQ(b, 3u);
  EXPECT_FALSE(parseCycleRange("x..2", a, b, error));
  EXPECT_FALSE(parseCycleRange("..", a, b, error));
  EXPECT_FALSE(parseCycleRange("9..2", a, b, error));
  EXPECT_NE(error.find("9 > 2"), std::string::npos);
}

TEST_F(TraceInspect, HitsMatchABruteForceCount) {
  writeTrace(true, false);
  for (uint32_t line : {7u, 8u, 9u, 11u, 12u}) {
    SCOPED_TRACE("line " + std::to_string(line));
    std::string error;
    const std::optional<HitsResult> hits = traceHits(*reader_, "src/main.st:" + std::to_string(line), error);
    ASSERT_TRUE(hits) << error;
    EXPECT_EQ(hits->file, "src/main.st");
    EXPECT_EQ(hits->statements.size(), line == 12 ? 2u : 1u);
    const std::map<uint64_t, uint32_t> expected = bruteForce(line);
    ASSERT_EQ(hits->cycles.size(), expected.size());
    uint64_t total = 0;
    size_t k = 0;
    for (const auto& [cycle, count] : expected) {
      EXPECT_EQ(hits->cycles[k].first, cycle);
      EXPECT_EQ(hits->cycles[k].second, count);
      total += count;
      ++k;
    }
    EXPECT_EQ(hits->totalHits, total);
    uint64_t withPath = 0;
    for (const ChunkData& c : chunks_) {
      for (uint32_t p : c.paths) withPath += p != kNoPath;
    }
    EXPECT_EQ(hits->cyclesSearched, withPath);
    EXPECT_EQ(hits->cyclesSearched + hits->cyclesWithoutPath, 100u);
    const std::string text = hitsText(*hits);
    EXPECT_NE(text.find(fmt::format("executed {} time", total)), std::string::npos) << text;
    EXPECT_EQ(hitsJson(*hits)["totalHits"], total);
  }
}

TEST_F(TraceInspect, HitsResolvesFileNames) {
  writeTrace(true, false);
  std::string error;
  for (const char* name : {"main.st:7", "src/main.st:7", "/home/someone/project/src/main.st:7"}) {
    const std::optional<HitsResult> hits = traceHits(*reader_, name, error);
    ASSERT_TRUE(hits) << name << ": " << error;
    EXPECT_EQ(hits->file, "src/main.st");
  }
}

TEST_F(TraceInspect, HitsErrors) {
  writeTrace(true, false);
  std::string error;
  EXPECT_FALSE(traceHits(*reader_, "main.st:3", error));
  EXPECT_NE(error.find("no statement starts on line 3 of src/main.st"), std::string::npos) << error;
  EXPECT_NE(error.find("line 7"), std::string::npos) << error;
  EXPECT_FALSE(traceHits(*reader_, "other.st:7", error));
  EXPECT_NE(error.find("no file 'other.st'"), std::string::npos) << error;
  EXPECT_NE(error.find("src/main.st"), std::string::npos) << error;
  EXPECT_FALSE(traceHits(*reader_, "main.st", error));
  EXPECT_NE(error.find("expected FILE:LINE"), std::string::npos) << error;
  EXPECT_FALSE(traceHits(*reader_, "main.st:x", error));
  EXPECT_FALSE(traceHits(*reader_, "main.st:0", error));
}

TEST_F(TraceInspect, HitsWithoutStatementPaths) {
  writeTrace(false, false);
  std::string error;
  EXPECT_FALSE(traceHits(*reader_, "main.st:7", error));
  EXPECT_NE(error.find("no statement paths"), std::string::npos) << error;
}

TEST(TraceInspectFiles, AmbiguousFileName) {
  const Project p = compile({{"a/util.st", "FUNCTION FA : INT\nFA := 1;\nEND_FUNCTION\n"},
                             {"b/util.st", "FUNCTION FB : INT\nFB := 2;\nEND_FUNCTION\n"},
                             {"main.st", "PROGRAM Main\nVAR x : INT; END_VAR\nx := FA() + FB();\nEND_PROGRAM\n"}});
  ASSERT_TRUE(p.program);
  TempDir dir;
  HeaderData h;
  h.sources = p.files;
  h.imageSize = p.program->imageSize();
  h.statementCount = static_cast<uint32_t>(p.program->statements.size());
  h.tasks.push_back({"T", 10'000'000, 0});
  std::string error;
  auto writer = TraceWriter::create(dir.file("u.trace"), h, error);
  ASSERT_TRUE(writer) << error;
  ChunkData c;
  c.keyframe.resize(h.imageSize);
  c.tasks = {0};
  c.startTimes = {0};
  c.stepCounts = {3};
  c.imageHashes = {0};
  c.pathTable = {{0, 1, 2}};
  c.paths = {0};
  ASSERT_TRUE(writer->writeChunk(c)) << writer->lastError();
  ASSERT_TRUE(writer->close());
  auto r = TraceReader::open(dir.file("u.trace"), error);
  ASSERT_TRUE(r) << error;
  EXPECT_FALSE(traceHits(*r, "util.st:2", error));
  EXPECT_NE(error.find("ambiguous"), std::string::npos) << error;
  const std::optional<HitsResult> hits = traceHits(*r, "b/util.st:2", error);
  ASSERT_TRUE(hits) << error;
  EXPECT_EQ(hits->file, "b/util.st");
  EXPECT_EQ(hits->statements.size(), 1u);
}

}  // namespace
}  // namespace scanback::trace::testing

namespace scanback::trace::testing {
namespace {

// Recorded text need not be UTF-8 (Latin-1 sources, names); the JSON forms still serialize.
TEST(TraceInspectJson, TextThatIsNotUtf8) {
  TempDir dir;
  HeaderData h;
  h.scanbackVersion = "0.1\xff";
  h.programHash = "\xc3\x28hash";
  h.sources = {{"dir/\xe4rger.st", "x"}, {"ok/\xc3\xa4.st", "y"}};  // Latin-1, then valid UTF-8
  h.tasks = {{"T\xed\xa0\x80", 1, 0}};                              // an encoded surrogate
  h.statementCount = 1;
  std::string error;
  auto writer = TraceWriter::create(dir.file("l.trace"), h, error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->writeFault(FaultData{0, 0, 0, 0, "f\xe4il"}));
  ASSERT_TRUE(writer->close());
  auto r = TraceReader::open(dir.file("l.trace"), error);
  ASSERT_TRUE(r) << error;
  std::string text;
  ASSERT_NO_THROW(text = traceInfoJson(*r).dump());
  EXPECT_NE(text.find("dir/\xef\xbf\xbdrger.st"), std::string::npos) << text;
  EXPECT_NE(text.find("f\xef\xbf\xbdil"), std::string::npos) << text;
  EXPECT_NE(text.find("ok/\xc3\xa4.st"), std::string::npos) << text;
  EXPECT_NE(text.find("0.1\xef\xbf\xbd"), std::string::npos) << text;
}

}  // namespace
}  // namespace scanback::trace::testing
