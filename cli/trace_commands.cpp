// `scanback trace info | dump | hits`: reading a trace for people and tools.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/trace_inspect.h"
#include "traces/trace_reader.h"

namespace scanback::cli {

namespace {

std::unique_ptr<trace::TraceReader> openTrace(const std::string& path) {
  std::string error;
  auto reader = trace::TraceReader::open(path, error);
  if (!reader) {
    std::cerr << fmt::format("scanback: {}: {}\n", path, error);
    return nullptr;
  }
  for (const std::string& w : reader->warnings()) std::cerr << fmt::format("scanback: warning: {}: {}\n", path, w);
  return reader;
}

}  // namespace

int traceInfoCommand(const std::string& path, bool json) {
  auto reader = openTrace(path);
  if (!reader) return kExitUsage;
  if (json)
    std::cout << traceInfoJson(*reader).dump(2) << "\n";
  else
    std::cout << traceInfoText(*reader);
  return kExitOk;
}

int traceDumpCommand(const std::string& path, const std::string& cycles, const std::string& source) {
  if (!source.empty()) {
    // The recorded text of one source file, as it was: what `trace hits` line numbers refer to.
    auto reader = openTrace(path);
    if (!reader) return kExitUsage;
    std::string error;
    const std::optional<std::string> text = recordedSource(*reader, source, error);
    if (!text) {
      std::cerr << fmt::format("scanback: {}\n", error);
      return kExitUsage;
    }
    std::cout << *text;
    return kExitOk;
  }
  uint64_t from = 0, to = UINT64_MAX;
  if (!cycles.empty()) {
    std::string error;
    if (!parseCycleRange(cycles, from, to, error)) {
      std::cerr << fmt::format("scanback: --cycles {}: {}\n", cycles, error);
      return kExitUsage;
    }
  }
  auto reader = openTrace(path);
  if (!reader) return kExitUsage;
  traceDump(*reader, from, to, std::cout);
  return kExitOk;
}

int traceHitsCommand(const std::string& path, const std::string& fileLine, bool json) {
  auto reader = openTrace(path);
  if (!reader) return kExitUsage;
  // Line numbers are those of the recorded sources, whatever the file on disk says now.
  if (const std::string notice = editedSourceNotice(*reader, fileLine, path); !notice.empty())
    std::cerr << fmt::format("scanback: warning: {}\n", notice);
  std::string error;
  std::optional<HitsResult> hits = traceHits(*reader, fileLine, error);
  if (!hits) {
    std::cerr << fmt::format("scanback: {}: {}\n", path, error);
    return kExitUsage;
  }
  for (const std::string& w : hits->warnings) std::cerr << fmt::format("scanback: warning: {}\n", w);
  if (json)
    std::cout << hitsJson(*hits).dump(2) << "\n";
  else
    std::cout << hitsText(*hits);
  return kExitOk;
}

}  // namespace scanback::cli
