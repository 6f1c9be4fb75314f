// The I/O drivers a runtime host exchanges its input and output images with (a fieldbus, a
// simulated plant). A driver talks to its devices on threads of its own; the host's scan thread
// only copies images from and to it, at fixed points of each cycle, and never waits on it
// (docs/architecture.md: the live task never waits; /work/shared/DESIGN.md, "In the field":
// fieldbus inputs are scan inputs).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "vm/runtime/write_author.h"

namespace scanback::runtime {

// A driver's state, for those who ask (`scanback ctl status`: `io`).
struct IoHealth {
  std::string device;     // what the driver exchanges images with, as messages name it
  bool ok = true;         // inputs and outputs are being exchanged now
  std::string error;      // (!ok) why not, naming the device
  uint32_t failures = 0;  // times the exchange failed so far
  // A fieldbus device's figures (runtime/io/modbus_device.h); empty or zero when a driver has none.
  std::string state;                       // "connecting", "ok", "failing"; empty: "ok" or "failing" from `ok`
  std::string endpoint;                    // where the device is: "tcp://127.0.0.1:1502"
  uint64_t requests = 0;                   // requests sent so far
  double requestRate = 0;                  // answered requests per second, lately
  std::optional<uint64_t> roundTripP50Ns;  // of the latest answered requests (up to 1024)
  std::optional<uint64_t> roundTripP99Ns;
  // A server's (runtime/io/modbus_server.h): its peers connected now (`requests` above: the requests
  // they made).
  std::optional<uint32_t> clients;
};

class IoDriver {
 public:
  virtual ~IoDriver() = default;
  // The scan thread, at each cycle start (after the task's release, before the inputs are latched
  // into the image): writes the newest complete input data it has into the bytes of the input
  // area (%I, `inputs`) that it serves, and leaves the others alone. It must return at once: one
  // copy of what its own threads last completed, never a wait for a device or for a lock held
  // across one. What it writes is a scan input: recorded like any %I change.
  virtual void readInputs(std::span<uint8_t> inputs) = 0;
  // Who the bytes readInputs changes come from, when the trace should name them (ImageWrite.author,
  // docs/explain.md): a Modbus server's are its peers' writes (WriteAuthor::ModbusPeer). Unknown (the
  // default): a device's latch, which the trace records as such.
  virtual WriteAuthor inputAuthor() const { return WriteAuthor::Unknown; }
  // The scan thread, after each cycle that ended (not after a fault): the output area (%Q) as that
  // cycle left it, for the driver to send. Must return at once, as readInputs (copy, never send).
  virtual void writeOutputs(std::span<const uint8_t> outputs) = 0;
  // The scan thread, right after writeOutputs: the memory area (%M) as the cycle left it, for a
  // driver that serves it to peers (a Modbus server: runtime/io/modbus_server.h). Must return at
  // once, as writeOutputs. Most drivers have no use for it.
  virtual void writeMemory(std::span<const uint8_t> memory) { (void)memory; }
  // Any thread but the scan thread (the control server's), at any time: thread-safe.
  virtual IoHealth health() const = 0;
  // The scan thread, after readInputs: true, with the message to end the run with ("scanback: I/O
  // fault: ..." naming the device and the error), once the driver wants the runtime to fault (a
  // device whose policy is on_fault = "fault" failed). One atomic load while it does not.
  virtual bool faulted(std::string& message) const {
    (void)message;
    return false;
  }
};

}  // namespace scanback::runtime
