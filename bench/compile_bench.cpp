// compile_bench: the compiler's time against the number of variables a POU declares (issue 18: it
// was quadratic, 1.6 s for 10,000 variables and 44 s for 40,000).
//
//   BM_CompileVariables  one iteration compiles a PROGRAM with 10,000 variables, then the same
//                        with 100,000 (each also assigns every tenth variable).
//                        counters: ms_10k, ms_100k (target: below 2000) and ratio_100k_to_10k
//                        = ms_100k / ms_10k (linear: about 10; quadratic would be about 100).
//
// Times are the CPU time of the benchmark thread (CLOCK_THREAD_CPUTIME_ID), both sizes measured in
// the same iteration, so the ratio compares them under the same machine load.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <malloc.h>

#include <ctime>
#include <string>

#include "vm/compiler/compiler.h"

using namespace scanback;

namespace {

int64_t threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

SourceSet programWith(int variables) {
  std::string text = "PROGRAM Main\nVAR\n";
  for (int i = 0; i < variables; ++i) text += fmt::format("  v{} : INT := {};\n", i, i % 1000);
  text += "END_VAR\n";
  for (int i = 10; i < variables; i += 10) text += fmt::format("v{} := v{} + 1;\n", i, i - 1);
  text += "END_PROGRAM\n";
  SourceSet sources;
  sources.add("variables.st", std::move(text));
  return sources;
}

// CPU milliseconds to compile `sources`; negative (and the benchmark skipped) when it fails.
double compileMs(benchmark::State& state, const SourceSet& sources) {
  Diagnostics diagnostics;
  const int64_t t0 = threadCpuNs();
  std::shared_ptr<const Program> program = compileProject(sources, diagnostics);
  const int64_t t1 = threadCpuNs();
  if (!program) {
    state.SkipWithError(diagnostics.format(sources).c_str());
    return -1;
  }
  benchmark::DoNotOptimize(program);
  return static_cast<double>(t1 - t0) / 1e6;
}

void BM_CompileVariables(benchmark::State& state) {
  const SourceSet small = programWith(10'000);
  const SourceSet large = programWith(100'000);
  double smallMs = 0, largeMs = 0;
  int64_t runs = 0;
  for (auto _ : state) {
    const double s = compileMs(state, small);
    const double l = compileMs(state, large);
    if (s < 0 || l < 0) return;
    smallMs += s;
    largeMs += l;
    ++runs;
  }
  if (runs == 0) return;
  state.counters["ms_10k"] = smallMs / static_cast<double>(runs);
  state.counters["ms_100k"] = largeMs / static_cast<double>(runs);
  state.counters["ratio_100k_to_10k"] = largeMs / smallMs;
}
BENCHMARK(BM_CompileVariables)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

int main(int argc, char** argv) {
  // Both sizes on a warm heap: glibc would map each block over 32 MB fresh from the kernel (and
  // fault in every page again) for the large program only, so the ratio would weigh the kernel's
  // page faults, not the compiler's work. Kept on the heap, freed memory is reused by both.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, -1);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
