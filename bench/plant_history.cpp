#include "bench/plant_history.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "recorder/recorder.h"
#include "traces/trace_reader.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/values.h"

namespace fs = std::filesystem;

namespace scanback::bench {

CommonFlags commonFlags;

namespace {
std::string gTracePath;  // the trace of this process's PlantHistory, once made (removed at the end)
}  // namespace

// ---------------------------------------------------------------- flags

bool parseFlag(std::string_view arg, std::string_view name, std::string& value) {
  if (!arg.starts_with(name) || arg.size() <= name.size() || arg[name.size()] != '=') return false;
  value = std::string(arg.substr(name.size() + 1));
  return true;
}

std::optional<std::vector<char*>> parseFlags(int argc, char** argv, const char* benchmark,
                                             const std::function<bool(std::string_view arg)>& ownFlag) {
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string value;
    try {
      if (parseFlag(argv[i], "--cycles", value)) {
        commonFlags.cycles = std::stoull(value);
      } else if (parseFlag(argv[i], "--stimulus-period", value)) {
        commonFlags.stimulusPeriod = std::stoull(value);
      } else if (parseFlag(argv[i], "--samples", value)) {
        commonFlags.samples = std::stod(value);
      } else if (!ownFlag(argv[i])) {
        rest.push_back(argv[i]);
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "%s: bad value in %s\n", benchmark, argv[i]);
      return std::nullopt;
    }
  }
  return rest;
}

bool runBenchmarks(std::vector<char*> args) {
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return false;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return true;
}

// ---------------------------------------------------------------- the history

uint64_t samples(uint64_t n) {
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(static_cast<double>(n) * commonFlags.samples)));
}

uint64_t breakpointSamples(uint64_t distance) { return samples(distance >= 500'000 ? 100 : 500); }

std::shared_ptr<const Program> plant() {
  static std::shared_ptr<const Program> program = [] {
    const fs::path dir = fs::path(SCANBACK_SOURCE_DIR) / "examples" / "plant";
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".st") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    Diagnostics d;
    SourceSet sources = loadSourceFiles(files, d);
    return compileProject(sources, d);
  }();
  return program;
}

PlantInputs::PlantInputs(std::string& error) {
  auto s =
      Stimulus::load((fs::path(SCANBACK_SOURCE_DIR) / "examples" / "plant" / "stimulus.csv").string(), *plant(), error);
  if (s) original_ = *s;
  current_ = original_;
}

void PlantInputs::apply(Runtime& rt) {
  uint64_t c = rt.cycle();
  if (commonFlags.stimulusPeriod) {
    c %= commonFlags.stimulusPeriod;
    if (c == 0) current_ = original_;
  }
  current_.apply(c, rt);
}

PlantHistory::PlantHistory(std::string benchmarkName)
    : benchmark(std::move(benchmarkName)),
      tracePath((fs::temp_directory_path() / ("scanback_" + benchmark + "_" + std::to_string(getpid()) + ".trace"))
                    .string()) {
  gTracePath = tracePath;
}

bool record(PlantHistory& h, const std::vector<std::string>& watchedNames) {
  const std::shared_ptr<const Program> program = plant();
  if (!program) {
    h.error = "examples/plant/*.st does not compile";
    return false;
  }
  std::string error;
  PlantInputs inputs(error);
  if (!error.empty()) {
    h.error = error;
    return false;
  }
  struct Watched {
    std::string name;
    VariableLocation where;
    std::vector<uint8_t> last;
  };
  std::vector<Watched> watched;
  for (const std::string& name : watchedNames) {
    auto v = findVariable(*program, name, error);
    if (!v) {
      h.error = "--watch: " + error;
      return false;
    }
    watched.push_back({name, *v, {}});
  }
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = h.tracePath;
  auto rec = recorder::Recorder::start(rt, options, error);
  if (!rec) {
    h.error = error;
    return false;
  }
  auto valueOf = [&](const Watched& w) {
    const uint8_t* image = rt.vm().image();
    if (w.where.bit >= 0) return std::vector<uint8_t>{static_cast<uint8_t>((image[w.where.offset] >> w.where.bit) & 1)};
    return std::vector<uint8_t>(image + w.where.offset, image + w.where.offset + w.where.type->size);
  };
  for (Watched& w : watched) w.last = valueOf(w);
  const double t0 = nowNs();
  for (uint64_t i = 0; i < commonFlags.cycles; ++i) {
    inputs.apply(rt);
    rt.runCycle();
    for (Watched& w : watched) {
      std::vector<uint8_t> now = valueOf(w);
      if (now != w.last) {
        h.changeCycles[w.name].push_back(i);
        w.last = std::move(now);
      }
    }
    // Faster than real time: wait for the writer rather than let the recorder drop cycles.
    while (rec->backlogged()) std::this_thread::yield();
  }
  if (!rec->finish(error)) {
    h.error = "recording: " + error;
    return false;
  }
  const double seconds = (nowNs() - t0) / 1e9;
  const recorder::RecorderStats st = rec->stats();
  std::fprintf(stderr,
               "%s: recorded %llu cycles of examples/plant (stimulus period %llu) in %.1f s "
               "(%.0f cycles/s): %.1f MB, %.1f bytes/cycle, %llu chunks, %llu dropped, %llu divergences\n",
               h.benchmark.c_str(), static_cast<unsigned long long>(st.cyclesRecorded),
               static_cast<unsigned long long>(commonFlags.stimulusPeriod), seconds,
               static_cast<double>(st.cyclesRecorded) / seconds, static_cast<double>(st.bytesWritten) / 1e6,
               static_cast<double>(st.bytesWritten) / static_cast<double>(st.cyclesRecorded),
               static_cast<unsigned long long>(st.chunks), static_cast<unsigned long long>(st.cyclesDropped),
               static_cast<unsigned long long>(st.divergences));
  for (const Watched& w : watched)
    std::fprintf(stderr, "%s: %s changed in %zu cycles\n", h.benchmark.c_str(), w.name.c_str(),
                 h.changeCycles[w.name].size());
  if (st.cyclesDropped || st.gaps || st.cyclesRecorded != commonFlags.cycles) {
    h.error = "the recording dropped cycles";
    return false;
  }
  if (st.divergences) {
    h.error = "the recorder's re-execution diverged: " + rec->firstDivergence();
    return false;
  }
  h.cycles = st.cyclesRecorded;
  return true;
}

bool analyse(PlantHistory& h, std::span<const uint64_t> distances, const std::vector<bool>& breakpointable) {
  std::string error;
  std::unique_ptr<trace::TraceReader> reader = trace::TraceReader::open(h.tracePath, error);
  if (!reader) {
    h.error = error;
    return false;
  }
  const size_t statementCount = plant()->statements.size();
  constexpr uint64_t kNone = UINT64_MAX;
  std::vector<uint64_t> last(statementCount, kNone);
  h.statementCycles.assign(statementCount, 0);
  h.stepCounts.assign(h.cycles, 0);
  std::map<uint64_t, std::mt19937_64> rngs;
  std::map<uint64_t, uint64_t> wanted;
  for (uint64_t d : distances) {
    rngs[d].seed(kSeed + d);
    wanted[d] = breakpointSamples(d);
  }
  auto offer = [&](uint64_t d, uint32_t statement, uint64_t hit) {
    if (hit + d >= h.cycles || (!breakpointable.empty() && !breakpointable[statement])) return;
    // Reservoir sampling: each case equally likely to be kept.
    std::vector<BreakpointCase>& kept = h.cases[d];
    const uint64_t n = ++h.caseCounts[d];
    if (kept.size() < wanted[d]) {
      kept.push_back({statement, hit});
    } else {
      const uint64_t j = rngs[d]() % n;
      if (j < kept.size()) kept[j] = {statement, hit};
    }
  };
  for (const trace::BlockInfo& block : reader->blocks()) {
    if (block.kind != trace::BlockKind::Chunk) continue;
    trace::ChunkData chunk;
    if (!reader->readChunk(block, chunk, error)) {
      h.error = error;
      return false;
    }
    // The distinct statements of each path, once per path.
    std::vector<std::vector<uint32_t>> distinct(chunk.pathTable.size());
    for (size_t p = 0; p < chunk.pathTable.size(); ++p) {
      distinct[p] = chunk.pathTable[p];
      std::sort(distinct[p].begin(), distinct[p].end());
      distinct[p].erase(std::unique(distinct[p].begin(), distinct[p].end()), distinct[p].end());
    }
    for (uint32_t k = 0; k < chunk.cycleCount(); ++k) {
      const uint64_t cycle = chunk.firstCycle + k;
      if (cycle >= h.cycles) break;
      if (chunk.stepCounts[k] > UINT16_MAX) {
        h.error = "a cycle has more than 65535 steps";
        return false;
      }
      h.stepCounts[cycle] = static_cast<uint16_t>(chunk.stepCounts[k]);
      if (chunk.paths.empty() || chunk.paths[k] == trace::kNoPath) {
        h.error = "a cycle has no recorded statement path";
        return false;
      }
      for (uint32_t statement : distinct[chunk.paths[k]]) {
        ++h.statementCycles[statement];
        const uint64_t previous = last[statement];
        last[statement] = cycle;
        if (previous == kNone) continue;
        for (uint64_t d : distances)
          if (cycle - previous > d) offer(d, statement, previous);
      }
    }
  }
  for (uint32_t statement = 0; statement < statementCount; ++statement)
    if (last[statement] != kNone)
      for (uint64_t d : distances) offer(d, statement, last[statement]);
  for (uint64_t d : distances) {
    std::vector<BreakpointCase>& kept = h.cases[d];
    std::shuffle(kept.begin(), kept.end(), rngs[d]);  // the reservoir keeps the order of the trace
  }
  return true;
}

bool plantHistoryMade() { return !gTracePath.empty(); }

void removePlantTrace() {
  if (gTracePath.empty()) return;
  std::error_code ignored;
  fs::remove(gTracePath, ignored);
  fs::remove(gTracePath + ".partial", ignored);
}

// ---------------------------------------------------------------- measuring

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

void report(benchmark::State& state, const Samples& s) {
  state.counters["median_ms"] = quantile(s.wallMs, 0.5);
  state.counters["p99_ms"] = quantile(s.wallMs, 0.99);
  state.counters["max_ms"] = quantile(s.wallMs, 1.0);
  state.counters["cpu_median_ms"] = quantile(s.cpuMs, 0.5);
  state.counters["cpu_p99_ms"] = quantile(s.cpuMs, 0.99);
  state.counters["samples"] = static_cast<double>(s.wallMs.size());
}

std::string verdict(bool met) { return met ? " (met)" : " (NOT met)"; }

}  // namespace scanback::bench
