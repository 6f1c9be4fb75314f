// Traces crafted against the image limit (docs/language.md, "Limits"): what a malicious or broken
// file may claim, for the tests of every command and session that opens one
// (tests/fault/crafted_trace.sh through tests/fault/craft_trace.cpp, the replayer's and the DAP
// server's tests). The writer takes any header, so each is a well-formed trace whose lie is in its
// header or its sources.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "traces/trace_writer.h"
#include "vm/compiler/compiler.h"

namespace scanback::test {

enum class CraftedTrace {
  // Sources declaring 4 GiB of variables (sixteen globals of 256 MiB: the crash of issue 27,
  // where 32-bit offsets wrapped), under a header that claims a small image.
  HugeSources,
  // Sources declaring a 200 MB program, below the limit, under a header that claims 72 bytes:
  // replaying must refuse it without allocating the 200 MB.
  SourcesBeyondHeader,
  // A small valid program under a header claiming an image of 4294967295 bytes.
  ImageBeyondLimit,
  // A small valid program (the right hash) under a header claiming 8 bytes more than its image.
  ImageMismatch,
  // Format version 3 (a STRING was a 2-byte length, then the characters): a program with a
  // STRING, refused when replayed; the small program without one, replayed.
  OldLayoutWithStrings,
  OldLayoutWithoutStrings,
};

inline const char* craftedTraceName(CraftedTrace kind) {
  switch (kind) {
    case CraftedTrace::HugeSources: return "huge-sources";
    case CraftedTrace::SourcesBeyondHeader: return "sources-beyond-header";
    case CraftedTrace::ImageBeyondLimit: return "image-beyond-limit";
    case CraftedTrace::ImageMismatch: return "image-mismatch";
    case CraftedTrace::OldLayoutWithStrings: return "old-layout-strings";
    case CraftedTrace::OldLayoutWithoutStrings: return "old-layout-no-strings";
  }
  return "?";
}

inline constexpr std::string_view kCraftedSmallProgram =
    "PROGRAM Main\nVAR\n  count : DINT;\nEND_VAR\ncount := count + 1;\nEND_PROGRAM\n";

// Writes the trace `kind` at `path` (one chunk of one cycle, unless its header makes that
// impossible); false with `error` when it could not.
[[nodiscard]] inline bool writeCraftedTrace(CraftedTrace kind, const std::string& path, std::string& error) {
  trace::HeaderData h;
  h.scanbackVersion = "crafted";
  h.tasks.push_back(trace::TaskData{"Main", 10'000'000, 0});
  std::string text;
  switch (kind) {
    case CraftedTrace::HugeSources:
      text = "VAR_GLOBAL\n";
      for (int i = 0; i < 16; ++i) text += fmt::format("  g{} : ARRAY[0..268435455] OF BYTE;\n", i);
      text += "END_VAR\nPROGRAM Main\nVAR x : BYTE; END_VAR\nx := g15[268435455];\nEND_PROGRAM\n";
      break;
    case CraftedTrace::SourcesBeyondHeader:
      text = "PROGRAM Main\nVAR\n  big : ARRAY[0..199999999] OF BYTE;\nEND_VAR\nbig[0] := 1;\nEND_PROGRAM\n";
      break;
    case CraftedTrace::ImageBeyondLimit:
    case CraftedTrace::ImageMismatch:
    case CraftedTrace::OldLayoutWithoutStrings: text = std::string(kCraftedSmallProgram); break;
    case CraftedTrace::OldLayoutWithStrings:
      text = "PROGRAM Main\nVAR\n  name : STRING(4) := 'ab';\nEND_VAR\nname := CONCAT(name, 'c');\nEND_PROGRAM\n";
      break;
  }
  const bool oldLayout = kind == CraftedTrace::OldLayoutWithStrings || kind == CraftedTrace::OldLayoutWithoutStrings;
  if (oldLayout) {
    h.formatVersion = 3;
    h.minReaderVersion = 3;
    h.scanbackVersion = "0.9-old-layout";
  }
  h.sources.push_back(SourceFile{"main.st", text});
  h.programHash = "crafted";
  h.imageSize = 72;
  h.statementCount = 1;
  if (kind == CraftedTrace::ImageBeyondLimit || kind == CraftedTrace::ImageMismatch || oldLayout) {
    // The real program's identity, so that only the image size is wrong.
    SourceSet sources;
    sources.add("main.st", text);
    Diagnostics diagnostics;
    const std::shared_ptr<const Program> program = compileProject(sources, diagnostics);
    if (!program) {
      error = "the small program does not compile:\n" + diagnostics.format(sources);
      return false;
    }
    h.programHash = program->hash;
    h.statementCount = static_cast<uint32_t>(program->statements.size());
    h.imageSize = kind == CraftedTrace::ImageBeyondLimit ? UINT32_MAX
                  : kind == CraftedTrace::ImageMismatch  ? program->imageSize() + 8
                                                         : program->imageSize();
  }
  std::unique_ptr<trace::TraceWriter> writer = trace::TraceWriter::create(path, h, error);
  if (!writer) return false;
  if (kind != CraftedTrace::ImageBeyondLimit) {  // no keyframe of 4 GiB
    trace::ChunkData chunk;
    chunk.keyframe.assign(h.imageSize, 0);
    chunk.tasks = {0};
    chunk.startTimes = {0};
    chunk.stepCounts = {1};
    chunk.imageHashes = {0};
    if (!writer->writeChunk(chunk)) {
      error = writer->lastError();
      return false;
    }
  }
  if (!writer->close()) {
    error = writer->lastError();
    return false;
  }
  return true;
}

}  // namespace scanback::test
