// libFuzzer target: the control protocol's server side (tests/fuzz/README.md, docs/control.md). The
// bytes are what a client sends to a runtime's control endpoint — request lines, broken JSON, lines
// over the limit, bytes that are no text — served by ControlServer::serve over an in-memory pipe
// until their end. The runtime behind it holds no history (snapshot and stream are refused) and
// ignores stop; the first byte picks whether debugging is enabled and whether a token ("t": short,
// so that the fuzzer finds it) is required, so the refusals and the authentication run too.
#include <atomic>
#include <cstdint>
#include <string>

#include "control/server.h"
#include "net/stream.h"

using namespace scanback;

namespace {

class NoHistoryRuntime final : public control::ControlledRuntime {
 public:
  control::json status() const override { return control::json{{"state", "running"}, {"cycles", 1}}; }
  recorder::Recorder* recorder() override { return nullptr; }
  void stop() override {}
  bool setPaused(bool, std::string&) override { return true; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  control::ControlOptions options;
  options.requestsPerSecond = 0;  // no pacing: the fuzzer's requests come as fast as it makes them
  if (size > 0) {
    options.debugEnabled = (data[0] & 1) != 0;
    if (data[0] & 2) options.token.emplace(1, 't');  // "t" (assigning the literal trips a false -Wrestrict in GCC 12)
  }
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  net::MemoryPipe::Pair pipe = net::MemoryPipe::pair();
  std::string error;
  // A fresh pipe takes any bytes (its buffer is unbounded): a failure would leave nothing to fuzz.
  if (!pipe.client->write(bytes, error)) __builtin_trap();
  pipe.client->close();
  NoHistoryRuntime runtime;
  const std::atomic<bool> closing{false};
  control::ControlServer::serve(*pipe.server, runtime, options, closing);
  return 0;
}
