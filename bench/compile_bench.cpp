// compile_bench: the compiler's time and memory against the size of what it compiles.
//
//   BM_CompileVariables   one iteration compiles a PROGRAM with 10,000 variables, then the same
//                         with 100,000 (each also assigns every tenth variable; issue 18: it was
//                         quadratic, 1.6 s for 10,000 variables and 44 s for 40,000).
//                         counters: ms_10k, ms_100k (target: below 2000) and ratio_100k_to_10k
//                         = ms_100k / ms_10k (linear: about 10; quadratic would be about 100).
//   BM_CompileSourceSize  one iteration compiles a project of 1 MB, then one of 10 MB, written as
//                         PLC projects are (bench/large_source.h; issue 27: 10 MB took 9 s and
//                         2 GB). counters: ms_per_mb_1mb, ms_per_mb_10mb, linearity = the second
//                         over the first (linear: about 1), ms_10mb (target: below 2000), and the
//                         peak resident set of a process that compiles each, less that of one
//                         that compiles nothing, in MB (peak_rss_mb_1mb, peak_rss_mb_10mb; target:
//                         below 500 for 10 MB). Those processes are this program run again
//                         (--compile-only BYTES), with the allocator's default settings.
//
// Times are the CPU time of the benchmark thread (CLOCK_THREAD_CPUTIME_ID), both sizes measured in
// the same iteration, so the ratio compares them under the same machine load.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <malloc.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

#include "bench/large_source.h"
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

SourceSet projectOf(size_t bytes) {
  SourceSet sources;
  sources.add("plant.st", bench::largeSource(bytes));
  return sources;
}

// The peak resident set (VmHWM) of this process, in KiB; -1 when unknown.
long peakRssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// The peak resident set, in MB, of this program run again to compile a project of `bytes` bytes
// (main: --compile-only, which prints its VmHWM): a fresh process, so that nothing this one holds
// or keeps counts. (A child's ru_maxrss would not do: exec keeps the parent's peak in it.) -1 when
// it failed.
double compilePeakRssMb(size_t bytes) {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return -1;
  self[n] = 0;
  FILE* child = ::popen(fmt::format("'{}' --compile-only {}", self, bytes).c_str(), "r");
  if (!child) return -1;
  long kib = -1;
  if (std::fscanf(child, "%ld", &kib) != 1) kib = -1;
  if (::pclose(child) != 0) return -1;
  return kib < 0 ? -1 : static_cast<double>(kib) / 1024.0;
}

void BM_CompileSourceSize(benchmark::State& state) {
  const SourceSet small = projectOf(1'000'000);
  const SourceSet large = projectOf(10'000'000);
  const double mb = 1e6;
  const double smallMb = static_cast<double>(small.file(0).text.size()) / mb;
  const double largeMb = static_cast<double>(large.file(0).text.size()) / mb;
  const double baseline = compilePeakRssMb(0), smallPeak = compilePeakRssMb(1'000'000),
               largePeak = compilePeakRssMb(10'000'000);
  if (baseline < 0 || smallPeak < 0 || largePeak < 0) {
    state.SkipWithError("a --compile-only run failed");
    return;
  }
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
  const double perMbSmall = smallMs / static_cast<double>(runs) / smallMb;
  const double perMbLarge = largeMs / static_cast<double>(runs) / largeMb;
  state.counters["ms_per_mb_1mb"] = perMbSmall;
  state.counters["ms_per_mb_10mb"] = perMbLarge;
  state.counters["linearity"] = perMbLarge / perMbSmall;
  state.counters["ms_10mb"] = largeMs / static_cast<double>(runs);
  state.counters["peak_rss_mb_1mb"] = smallPeak - baseline;
  state.counters["peak_rss_mb_10mb"] = largePeak - baseline;
}
BENCHMARK(BM_CompileSourceSize)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  // A child of BM_CompileSourceSize: compiles a project of the size given (0: nothing) and exits.
  if (argc == 3 && std::string(argv[1]) == "--compile-only") {
    const size_t bytes = std::stoull(argv[2]);
    if (bytes > 0) {
      const SourceSet sources = projectOf(bytes);
      Diagnostics diagnostics;
      if (!compileProject(sources, diagnostics)) return 1;
    }
    std::printf("%ld\n", peakRssKib());
    return 0;
  }
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
