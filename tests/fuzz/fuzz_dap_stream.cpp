// libFuzzer target: the DAP server's byte stream (tests/fuzz/README.md). The bytes are what a client
// sends: framed (or not) messages, fed to a Session over an in-memory pipe until their end. The
// session requires a token nobody can guess, so a launch in the bytes never runs a program (the
// typed request sequences of fuzz_dap_requests do that); everything before it — framing,
// resynchronisation, JSON, message checks, dispatch, argument reading — runs on any input. The same
// bytes also go through a net::MessageReader with tiny limits, to reach its limit paths.
#include <cstdint>
#include <string>

#include "dap/session/session.h"
#include "net/message_reader.h"
#include "net/stream.h"

using namespace scanback;
using namespace scanback::dap;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  {
    net::MemoryPipe::Pair pipe = net::MemoryPipe::pair();
    std::string error;
    // A fresh pipe takes any bytes (its buffer is unbounded): a failure would leave nothing to fuzz.
    if (!pipe.client->write(bytes, error)) __builtin_trap();
    pipe.client->close();
    Session session(*pipe.server, [](const std::string&) {});
    session.requireAuthToken("no client of the fuzzer knows this token");
    session.run();
  }
  {
    net::MemoryPipe::Pair pipe = net::MemoryPipe::pair();
    std::string error;
    // A fresh pipe takes any bytes (its buffer is unbounded): a failure would leave nothing to fuzz.
    if (!pipe.client->write(bytes, error)) __builtin_trap();
    pipe.client->close();
    net::ReaderLimits limits;
    limits.maxHeaderBytes = 64;
    limits.maxBodyBytes = 256;
    limits.maxNestingDepth = 4;
    net::MessageReader reader(*pipe.server, limits);
    for (int i = 0; i < 100000; ++i) {
      const net::ReadResult r = reader.next();
      if (r.isEnd()) break;
      if (r.isError()) (void)r.error.toString();
    }
  }
  return 0;
}
