// Shared helpers for the tests that record and replay traces (recorder, replayer, DAP replay):
// programs for tests (the plant example and its stimulus, projects on disk; ST text through
// tests/vm/test_support.h), temporary traces removed at the end, and recording N cycles of a
// program without dropping any.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "recorder/recorder.h"
#include "tests/vm/test_support.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/stimulus.h"

namespace scanback::test {

// The .st files directly in `dir`, sorted: the files of one project.
inline std::vector<std::string> stFilesIn(const std::filesystem::path& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".st") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// Compiles the project made of the files at `paths`; reports the diagnostics as a test failure
// when it does not compile (and returns null).
inline std::shared_ptr<const Program> mustCompileSourceFiles(const std::vector<std::string>& paths,
                                                             const CompileOptions& options = {}) {
  Diagnostics diagnostics;
  SourceSet sources = loadSourceFiles(paths, diagnostics);
  std::shared_ptr<const Program> program = compileProject(sources, diagnostics, options);
  EXPECT_TRUE(program) << diagnostics.format(sources);
  return program;
}

// A copy of `trace` at `copy` whose chunks `edit` changed (a crafted trace: wrong hashes, step
// counts, no write index); returns `copy`, or "" and a test failure when it cannot be written.
inline std::string copyWithChunksEdited(const std::string& trace, const std::string& copy,
                                        const std::function<void(trace::ChunkData&)>& edit) {
  std::string error;
  auto reader = trace::TraceReader::open(trace, error);
  EXPECT_TRUE(reader) << error;
  if (!reader) return {};
  auto writer = trace::TraceWriter::create(copy, reader->header(), error);
  EXPECT_TRUE(writer) << error;
  if (!writer) return {};
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (b.kind != trace::BlockKind::Chunk) continue;
    trace::ChunkData chunk;
    EXPECT_TRUE(reader->readChunk(b, chunk, error)) << error;
    edit(chunk);
    EXPECT_TRUE(writer->writeChunk(chunk)) << writer->lastError();
  }
  EXPECT_TRUE(writer->close()) << writer->lastError();
  return copy;
}

// examples/plant: a bottling line of three programs on two tasks, driven by its stimulus.csv.
inline std::filesystem::path plantDirectory() {
  return std::filesystem::path(SCANBACK_SOURCE_DIR) / "examples" / "plant";
}

inline std::shared_ptr<const Program> compilePlant() { return mustCompileSourceFiles(stFilesIn(plantDirectory())); }

// The plant's stimulus for `program` (the compiled plant); nullopt and a test failure if it does
// not load.
inline std::optional<Stimulus> plantStimulus(const Program& program) {
  std::string error;
  std::optional<Stimulus> stimulus = Stimulus::load((plantDirectory() / "stimulus.csv").string(), program, error);
  EXPECT_TRUE(stimulus) << error;
  return stimulus;
}

// A trace path in the temporary directory, named after `name` and this process. The trace and its
// .partial are removed when it is made (what an earlier run left) and when it goes out of scope.
// It converts to its path.
class TempTrace {
 public:
  explicit TempTrace(std::string name) {
    std::replace(name.begin(), name.end(), '/', '_');  // parameterized tests are named "Test/Param"
    path_ = std::filesystem::temp_directory_path() / ("scanback_" + name + "_" + std::to_string(::getpid()) + ".trace");
    remove();
  }
  ~TempTrace() { remove(); }
  TempTrace(const TempTrace&) = delete;
  TempTrace& operator=(const TempTrace&) = delete;

  operator const std::filesystem::path&() const { return path_; }
  std::string string() const { return path_.string(); }

 private:
  void remove() const {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
    std::filesystem::remove(path_.string() + ".partial", ignored);
  }

  std::filesystem::path path_;
};

// Recorder options writing to `path`, a chunk every `keyframeEvery` cycles, the rest the defaults.
inline recorder::RecorderOptions recordingTo(const std::filesystem::path& path,
                                             uint32_t keyframeEvery = recorder::RecorderOptions{}.keyframeEvery) {
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = keyframeEvery;
  return options;
}

// Starts recording `runtime`; null, and a test failure saying why, when it cannot.
inline std::unique_ptr<recorder::Recorder> startRecording(Runtime& runtime, const recorder::RecorderOptions& options) {
  std::string error;
  std::unique_ptr<recorder::Recorder> rec = recorder::Recorder::start(runtime, options, error);
  if (!rec) ADD_FAILURE() << "cannot record to " << options.path << ": " << error;
  return rec;
}

// Finishes a recording; false, and a test failure saying why, when the trace could not be finished.
inline bool finishRecording(recorder::Recorder& rec) {
  std::string error;
  const bool finished = rec.finish(error);
  if (!finished) ADD_FAILURE() << "the recording did not finish: " << error;
  return finished;
}

// Opens a trace; null, and a test failure saying why, when it cannot.
inline std::unique_ptr<trace::TraceReader> openTrace(const std::filesystem::path& path) {
  std::string error;
  std::unique_ptr<trace::TraceReader> reader = trace::TraceReader::open(path.string(), error);
  if (!reader) ADD_FAILURE() << "cannot open " << path.string() << ": " << error;
  return reader;
}

// Records `cycles` cycles of a fresh run of `program` (up to the fault if one faults) to `path`,
// `keyframeEvery` cycles a chunk, applying `stimulus` when given. Between cycles it waits while the
// recorder is backlogged, as `scanback run` does without --realtime, so that no cycle is dropped.
inline void recordCycles(std::shared_ptr<const Program> program, const std::filesystem::path& path, uint64_t cycles,
                         uint32_t keyframeEvery, std::optional<Stimulus> stimulus = std::nullopt,
                         bool statementPaths = true) {
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = keyframeEvery;
  options.statements = statementPaths;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  for (uint64_t c = 0; c < cycles; ++c) {
    if (stimulus) stimulus->apply(c, rt);
    if (rt.runCycle() != RunStatus::CycleDone) break;
    while (rec->backlogged()) rec->waitUntilNotBacklogged(std::chrono::seconds(1));
  }
  ASSERT_TRUE(rec->finish(error)) << error;
  ASSERT_EQ(rec->stats().cyclesDropped, 0u);
}

}  // namespace scanback::test
