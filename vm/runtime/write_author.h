// Who made a write from outside the program (an external write, or a change of the %I bytes):
// recorded with it (traces/trace.capnp: ImageWrite.author) so that an explanation names it
// (docs/explain.md, origins). It says where a value came from, never how replay applies it.
#pragma once

#include <cstdint>

namespace scanback {

// The values are the trace's (trace.capnp: WriteAuthor): only ever added, never renumbered.
enum class WriteAuthor : uint8_t {
  Unknown = 0,     // not recorded (a trace written before it), or a %I byte a device's latch changed
  Stimulus = 1,    // a stimulus file's row (`run --inputs`, a debug session's `inputs`)
  Debugger = 2,    // a debugger's setVariable or setExpression
  Force = 3,       // a recorded force that `scanback rerun` applies as a write at every cycle start
  ModbusPeer = 4,  // a Modbus TCP client of `run --io-serve` writing %I (runtime/io/modbus_server.h)
};
inline constexpr uint8_t kLastWriteAuthor = 4;

// Its name in JSON and messages: "stimulus", "debugger", "force", "modbusPeer"; "" for Unknown.
inline const char* writeAuthorName(WriteAuthor author) {
  switch (author) {
    case WriteAuthor::Unknown: return "";
    case WriteAuthor::Stimulus: return "stimulus";
    case WriteAuthor::Debugger: return "debugger";
    case WriteAuthor::Force: return "force";
    case WriteAuthor::ModbusPeer: return "modbusPeer";
  }
  return "";
}

}  // namespace scanback
