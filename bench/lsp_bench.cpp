// The language server's latencies as an editor sees them (issue 31; bench/README.md), measured by
// a scripted client (tests/lsp/lsp_client.h) driving `scanback lsp`'s Server in this process over an
// in-memory pipe:
//
//   plant_edit_p95_ms     an edit of examples/plant/programs.st until its diagnostics arrive, p95
//                         (the server's 25 ms debounce included; target < 100 ms)
//   plant_completion_p95_ms  completion requests in programs.st (members, names in scope), p95
//                         (target < 50 ms)
//   large_first_ms        a 30,000-line ST file opened until its first diagnostics (target < 1 s)
//   large_edit_p95_ms     an edit of that file until its diagnostics, p95 (target < 300 ms)
//   large_completion_p95_ms  completion in that file, p95 (large_completion_first_ms: the first
//                         one after an edit, which indexes the edited text)
//   large_rss_mb          the process's resident memory grown by the open large file (target < 200 MB)
//   edit_to_compile       plant_edit_p50 over the compiler's own time on the same sources, measured
//                         in the same run: what the server adds to a compile (debounce, parse for
//                         navigation, messages)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "bench/large_source.h"
#include "tests/lsp/lsp_client.h"
#include "vm/compiler/compiler.h"

namespace scanback::bench {
namespace {

using lsp::test::json;
using lsp::test::LspClient;
using Clock = std::chrono::steady_clock;

const std::string kPlant = std::string(SCANBACK_SOURCE_DIR) + "/examples/plant";

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

long rssKib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::string(field).size()));
  return -1;
}

void change(LspClient& c, const std::string& uri, const std::string& text, int version) {
  c.notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", version}}},
                                      {"contentChanges", json::array({{{"text", text}}})}});
}

// Until the diagnostics of `version` of `uri` arrive.
void waitVersion(LspClient& c, const std::string& uri, int version) {
  c.waitForDiagnostics(uri, [version](const json& p) { return p.value("version", -1) == version; });
}

double compileMs(const SourceSet& sources) {
  const auto start = Clock::now();
  Diagnostics d;
  benchmark::DoNotOptimize(compileProject(sources, d));
  return ms(Clock::now() - start);
}

void BM_LspPlant(benchmark::State& state) {
  LspClient c;
  c.initialize(kPlant);
  const std::string path = kPlant + "/programs.st", uri = lsp::test::uriOf(path);
  const std::string text = lsp::test::readFile(path);
  c.notify("textDocument/didOpen",
           {{"textDocument", {{"uri", uri}, {"languageId", "st"}, {"version", 1}, {"text", text}}}});
  c.server().waitForDiagnostics();
  // An edit as a user makes it: a ';' removed, then put back.
  std::string broken = text;
  broken.replace(broken.find("hornLatch := FALSE;"), 19, "hornLatch := FALSE");
  std::vector<double> edits, completions, compiles;
  SourceSet sources;
  for (const char* name : {"config.st", "fbs.st", "programs.st", "types.st"})
    sources.add(name, lsp::test::readFile(kPlant + "/" + name));
  int version = 1;
  const json member = lsp::test::positionOf(text, "motor.Reset", 0, 6);
  const json name = lsp::test::positionOf(text, "hornLatch := FALSE", 0, 4);
  for (auto _ : state) {
    for (int i = 0; i < 40; ++i) {
      ++version;
      const auto start = Clock::now();
      change(c, uri, i % 2 ? text : broken, version);
      waitVersion(c, uri, version);
      edits.push_back(ms(Clock::now() - start));
      compiles.push_back(compileMs(sources));
    }
    for (int i = 0; i < 200; ++i) {
      const auto start = Clock::now();
      json r =
          c.request("textDocument/completion", {{"textDocument", {{"uri", uri}}}, {"position", i % 2 ? member : name}});
      benchmark::DoNotOptimize(r);
      completions.push_back(ms(Clock::now() - start));
    }
  }
  state.counters["plant_edit_p50_ms"] = percentile(edits, 0.5);
  state.counters["plant_edit_p95_ms"] = percentile(edits, 0.95);
  state.counters["plant_completion_p95_ms"] = percentile(completions, 0.95);
  state.counters["plant_compile_p50_ms"] = percentile(compiles, 0.5);
  state.counters["edit_to_compile"] = percentile(edits, 0.5) / percentile(compiles, 0.5);
  c.shutdown();
}
BENCHMARK(BM_LspPlant)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_LspLargeFile(benchmark::State& state) {
  // ~30,000 lines of ST as PLC projects are written (bench/large_source.h).
  size_t bytes = 600'000;
  std::string text;
  for (;;) {
    text = largeSource(bytes);
    if (std::count(text.begin(), text.end(), '\n') >= 30'000) break;
    bytes += 50'000;
  }
  const long lines = std::count(text.begin(), text.end(), '\n');
  const std::string uri = "file:///tmp/scanback-lsp-bench/large.st";
  std::vector<double> edits, completions;
  double first = 0, rssMb = 0;
  for (auto _ : state) {
    LspClient c;
    c.initialize("");
    const long before = rssKib("VmRSS:");
    const auto start = Clock::now();
    c.notify("textDocument/didOpen",
             {{"textDocument", {{"uri", uri}, {"languageId", "st"}, {"version", 1}, {"text", text}}}});
    waitVersion(c, uri, 1);
    first = ms(Clock::now() - start);
    // Edits in the middle of the file: a statement added to a function block's body, then removed.
    const size_t at = text.find("cycleCounter := cycleCounter + 1;", text.size() / 2);
    std::string edited = text;
    edited.insert(at, "cycleCounter := cycleCounter + 2;\n");
    for (int i = 0; i < 12; ++i) {
      const auto s = Clock::now();
      change(c, uri, i % 2 ? text : edited, i + 2);
      waitVersion(c, uri, i + 2);
      edits.push_back(ms(Clock::now() - s));
    }
    const json position = lsp::test::positionOf(text, "recipe.targetLevel", 300, 7);
    for (int i = 0; i < 50; ++i) {
      const auto s = Clock::now();
      json r = c.request("textDocument/completion", {{"textDocument", {{"uri", uri}}}, {"position", position}});
      benchmark::DoNotOptimize(r);
      completions.push_back(ms(Clock::now() - s));
    }
    rssMb = static_cast<double>(rssKib("VmRSS:") - before) / 1024.0;
    c.shutdown();
  }
  state.counters["large_lines"] = static_cast<double>(lines);
  state.counters["large_first_ms"] = first;
  state.counters["large_edit_p95_ms"] = percentile(edits, 0.95);
  state.counters["large_completion_p95_ms"] = percentile(completions, 0.95);
  // The first request after an edit parses the edited file for navigation (the index is built
  // lazily, off the diagnostics' path).
  state.counters["large_completion_first_ms"] = completions.front();
  state.counters["large_rss_mb"] = rssMb;
  state.counters["peak_rss_mb"] = static_cast<double>(rssKib("VmHWM:")) / 1024.0;
}
BENCHMARK(BM_LspLargeFile)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace scanback::bench

BENCHMARK_MAIN();
