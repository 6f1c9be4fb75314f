// libFuzzer target: the replayer (tests/fuzz/README.md). The bytes are opened as a trace (as they
// are, and with every checksum recomputed), the program it carries is compiled, and the replayer
// runs what a user runs: verify, replay to positions (start, end, a middle one, a step inside a
// cycle), and why (the last changes of a watched range). Seeds are small traces recorded with a
// small statement budget; a trace whose budget is 0 (the VM's default, 10 million statements per
// cycle) or large, or that holds many cycles, is opened and verified no further than that, so that
// one input never takes seconds.
#include <cstdint>
#include <string>
#include <vector>

#include "replayer/replayer.h"
#include "tests/fuzz/trace_bytes.h"
#include "traces/trace_reader.h"

using namespace scanback;

namespace {

constexpr uint64_t kMaxBudget = 20'000;  // statements per cycle
constexpr uint64_t kMaxCycles = 4'000;

void replayTrace(std::vector<uint8_t> bytes) {
  std::string error;
  std::unique_ptr<trace::TraceReader> reader = trace::TraceReader::openBytes(std::move(bytes), error);
  if (!reader) return;
  const uint64_t budget = reader->header().options.statementBudget;
  if (budget == 0 || budget > kMaxBudget) return;
  uint64_t cycles = 0;
  for (const trace::BlockInfo& b : reader->blocks())
    if (b.kind == trace::BlockKind::Chunk) cycles += b.cycleCount;
  if (cycles > kMaxCycles) return;
  std::unique_ptr<replay::Replayer> r = replay::Replayer::open(std::move(reader), replay::ReplayOptions{}, error);
  if (!r) return;
  // Each call below runs for what it may do wrong on any trace (crash, hang, leak, read out of
  // bounds): whether it succeeds, and what it finds, is the input's business.
  (void)r->verify(nullptr, error);
  const std::optional<replay::Position> start = r->start();
  const std::optional<replay::Position> end = r->end();
  if (!start || !end) return;
  std::vector<replay::Position> positions = {
      *start, *end, {(start->cycle + end->cycle) / 2, 0}, {(start->cycle + end->cycle) / 2, 3}};
  for (const replay::Position& p : positions) {
    error.clear();
    if (!r->seek(p, error)) continue;
    (void)r->vm().frames();
    (void)r->statement();
  }
  // why: the first bytes of the image, and a single bit, up to the end.
  const uint32_t imageSize = r->program().imageSize();
  if (imageSize >= 4) {
    error.clear();
    (void)r->lastChanges(replay::Watch{0, 4, -1}, *end, 3, error);
    error.clear();
    (void)r->lastChanges(replay::Watch{imageSize - 1, 1, 2}, *end, 2, error);
  }
  error.clear();
  (void)r->stepBack({}, error);
  error.clear();
  (void)r->reverseContinue({}, {replay::Watch{0, 1, -1}}, error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  replayTrace(bytes);
  fuzz::fixTraceChecks(bytes);
  replayTrace(std::move(bytes));
  return 0;
}
