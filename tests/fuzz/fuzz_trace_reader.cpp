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

void readEverything(std::vector<uint8_t> bytes) {
  std::string error;
  std::unique_ptr<TraceReader> reader = TraceReader::openBytes(std::move(bytes), error);
  if (!reader) return;
  for (const BlockInfo& b : reader->blocks()) {
    switch (b.kind) {
      case BlockKind::Chunk: {
        ChunkData c;
        if (reader->readChunk(b, c, error)) (void)cyclesExecuting(c, 0);
        break;
      }
      case BlockKind::Gap: {
        GapData g;
        reader->readGap(b, g, error);
        break;
      }
      case BlockKind::ProgramChange: {
        ProgramChangeData p;
        reader->readProgramChange(b, p, error);
        break;
      }
      case BlockKind::Fault: {
        FaultData f;
        reader->readFault(b, f, error);
        break;
      }
      case BlockKind::OpenCycle: {
        OpenCycleData o;
        reader->readOpenCycle(b, o, error);
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
    (void)traceHits(*reader, line, error);
  }
  reader->refresh();
}

void decodeDirectly(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> message(data, size - size % 8);
  std::string error;
  HeaderData h;
  decodeHeader(message, 0, h, error);
  ChunkData c;
  decodeChunk(message, 0, ChunkLimits{64, 64}, c, error);
  GapData g;
  decodeGap(message, 0, g, error);
  ProgramChangeData p;
  decodeProgramChange(message, 0, p, error);
  FaultData f;
  decodeFault(message, 0, f, error);
  OpenCycleData o;
  decodeOpenCycle(message, 0, ChunkLimits{64, 64}, o, error);
  std::vector<BlockInfo> index;
  decodeIndex(message, 0, index, error);
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
