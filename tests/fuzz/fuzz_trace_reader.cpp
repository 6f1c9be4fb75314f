// libFuzzer target: the trace reader (tests/fuzz/README.md). Any bytes are opened as a trace and
// every block is read; the inspect functions (info, dump, hits) run over whatever opened. Each input
// runs twice: as it is, and with every checksum recomputed (trace_bytes.h). The bytes are also
// decoded directly as each kind of capnp block message.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/trace_inspect.h"
#include "tests/fuzz/trace_bytes.h"
#include "traces/trace_codec.h"
#include "traces/trace_reader.h"

using namespace scanback::trace;
using namespace scanback::cli;  // the trace inspection commands

namespace {

// Whatever bytes came, a read or decode either succeeds or says why: a failure without a reason is
// a bug the fuzzer reports (architecture: conventions).
void saysWhy(bool ok, std::string& error) {
  if (!ok && error.empty()) __builtin_trap();
  error.clear();
}

void readEverything(std::vector<uint8_t> bytes) {
  std::string error;
  std::unique_ptr<TraceReader> reader = TraceReader::openBytes(std::move(bytes), error);
  saysWhy(reader != nullptr, error);
  if (!reader) return;
  for (const BlockInfo& b : reader->blocks()) {
    switch (b.kind) {
      case BlockKind::Chunk: {
        ChunkData c;
        const bool read = reader->readChunk(b, c, error);
        if (read) (void)cyclesExecuting(c, 0);
        saysWhy(read, error);
        break;
      }
      case BlockKind::Gap: {
        GapData g;
        saysWhy(reader->readGap(b, g, error), error);
        break;
      }
      case BlockKind::ProgramChange: {
        ProgramChangeData p;
        saysWhy(reader->readProgramChange(b, p, error), error);
        break;
      }
      case BlockKind::Fault: {
        FaultData f;
        saysWhy(reader->readFault(b, f, error), error);
        break;
      }
      case BlockKind::OpenCycle: {
        OpenCycleData o;
        saysWhy(reader->readOpenCycle(b, o, error), error);
        break;
      }
      default: break;
    }
  }
  (void)reader->damage();
  (void)traceInfoText(*reader);
  (void)traceInfoJson(*reader).dump();
  (void)traceDump(*reader, 0, UINT64_MAX);
  if (!reader->header().sources.empty()) {
    const std::string line = reader->header().sources.front().path + ":3";
    // Run for what it may do wrong; whether the line has hits does not matter here.
    (void)traceHits(*reader, line, error);
  }
  reader->refresh();
}

void decodeDirectly(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> message(data, size - size % 8);
  std::string error;
  HeaderData h;
  saysWhy(decodeHeader(message, 0, h, error), error);
  ChunkData c;
  saysWhy(decodeChunk(message, 0, ChunkLimits{64, 64}, c, error), error);
  GapData g;
  saysWhy(decodeGap(message, 0, g, error), error);
  ProgramChangeData p;
  saysWhy(decodeProgramChange(message, 0, p, error), error);
  FaultData f;
  saysWhy(decodeFault(message, 0, f, error), error);
  OpenCycleData o;
  saysWhy(decodeOpenCycle(message, 0, ChunkLimits{64, 64}, o, error), error);
  std::vector<BlockInfo> index;
  saysWhy(decodeIndex(message, 0, index, error), error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  readEverything(bytes);
  scanback::fuzz::fixTraceChecks(bytes);
  readEverything(std::move(bytes));
  decodeDirectly(data, size);
  return 0;
}
