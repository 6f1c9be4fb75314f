// libFuzzer target for the trace reader (SCANBACK_FUZZ=ON, clang): any bytes are opened as a trace
// and every block is read; the inspect functions run over whatever opened. Each input runs twice:
// as it is, and with every frame header check, payload hash and trailer check recomputed, so that
// mutations get past the checksums into zstd, the capnp decoder and the validation behind them.
// The bytes are also decoded directly as each kind of capnp block message.
//
//   fuzz_trace_reader -max_total_time=120 corpus/ seeds/
// Seeds: SCANBACK_FUZZ_SEEDS=seeds/ trace_tests --gtest_filter='FuzzSeeds.*'
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cli/trace_inspect.h"
#include "traces/framing.h"
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
      default: break;
    }
  }
  (void)traceInfoText(*reader);
  (void)traceInfoJson(*reader).dump();
  (void)traceDump(*reader, 0, UINT64_MAX);
  reader->refresh();
}

void fixChecks(std::vector<uint8_t>& b) {
  size_t off = sizeof kFileMagic;
  while (b.size() >= kFrameHeaderBytes && off <= b.size() - kFrameHeaderBytes) {
    uint8_t* frame = b.data() + off;
    uint32_t stored;
    std::memcpy(&stored, frame + 8, 4);
    const bool fits = stored <= b.size() - off - kFrameHeaderBytes;
    if (fits) {
      const uint64_t hash = payloadHash(frame + kFrameHeaderBytes, stored);
      std::memcpy(frame + 32, &hash, 8);
    }
    const uint32_t check = static_cast<uint32_t>(XXH3_64bits(frame, 44));
    std::memcpy(frame + 44, &check, 4);
    if (!fits) break;
    off += kFrameHeaderBytes + stored;
  }
  if (b.size() >= kTrailerBytes && std::memcmp(b.data() + b.size() - kTrailerBytes, kTrailerMagic, 8) == 0) {
    uint8_t* t = b.data() + b.size() - kTrailerBytes;
    const uint64_t check = XXH3_64bits(t, 24);
    std::memcpy(t + 24, &check, 8);
  }
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
  std::vector<BlockInfo> index;
  decodeIndex(message, 0, index, error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  readEverything(bytes);
  fixChecks(bytes);
  readEverything(std::move(bytes));
  decodeDirectly(data, size);
  return 0;
}
