// A Modbus TCP device polled by scanback as its client (master), with libmodbus: an I/O driver
// (runtime/io_driver.h) of its own per configured device (runtime/io/config.h, docs/fieldbus.md).
//
// Threads. Each device has one I/O thread, which connects, reads its inputs and writes its
// outputs every `period`, each request bounded by `timeout`. One thread per device, because
// libmodbus's calls block: a device that stalls (accepts and never answers) then delays only its
// own polls, never another device's. The scan thread never waits on it: readInputs and
// writeOutputs only copy through triple buffers (one writer, one reader, an atomic exchange each:
// no lock, no wait, the reader always gets the newest complete image), and health() takes a mutex
// the scan thread never takes.
//
// Faults of the field: no answer (timeout), a Modbus exception, a refused or dropped connection.
// The round fails, the device's policy applies (hold its last inputs, zero them, or fault the
// runtime), the health word says so, and the connection is made again with a back-off of 100 ms,
// doubling to 5 s (a Modbus exception keeps the connection: the device answered).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "runtime/io/config.h"
#include "runtime/io_driver.h"

namespace scanback::runtime::io {

// The newest of a stream of byte images, handed from one thread to one other without a lock: the
// writer fills writeBuffer() and publishes it; the reader takes the newest published one, if any
// is newer than what it holds. Neither ever waits.
class TripleBuffer {
 public:
  // Before either thread uses it: images of `bytes` bytes, all zero.
  void resize(size_t bytes) {
    for (std::vector<uint8_t>& b : buffers_) b.assign(bytes, 0);
  }
  // The writer's.
  std::vector<uint8_t>& writeBuffer() { return buffers_[back_]; }
  void publish() { back_ = middle_.exchange(back_ | kFresh, std::memory_order_acq_rel) & kIndex; }
  // The reader's: true when a newer image was taken; readBuffer() then holds it.
  bool take() {
    if (!(middle_.load(std::memory_order_acquire) & kFresh)) return false;
    front_ = middle_.exchange(front_, std::memory_order_acq_rel) & kIndex;
    return true;
  }
  const std::vector<uint8_t>& readBuffer() const { return buffers_[front_]; }

 private:
  static constexpr uint32_t kIndex = 3, kFresh = 4;
  std::array<std::vector<uint8_t>, 3> buffers_;
  std::atomic<uint32_t> middle_{1};
  uint32_t back_ = 0;   // the writer's
  uint32_t front_ = 2;  // the reader's
};

// Register values <-> image bytes for a register map's type and the device's orders (exposed for
// the tests): `values` values of typeBytes(type) bytes each.
void registersToImage(const uint16_t* registers, uint32_t values, ValueType type, Order wordOrder, Order byteOrder,
                      uint8_t* image);
void imageToRegisters(const uint8_t* image, uint32_t values, ValueType type, Order wordOrder, Order byteOrder,
                      uint16_t* registers);

class ModbusDevice final : public IoDriver {
 public:
  // Starts the device's I/O thread (it connects in the background).
  explicit ModbusDevice(Device device);
  // Stops the thread: at once, or after the request under way (at most `timeout`).
  ~ModbusDevice() override;
  ModbusDevice(const ModbusDevice&) = delete;
  ModbusDevice& operator=(const ModbusDevice&) = delete;

  void readInputs(std::span<uint8_t> inputs) override;
  void writeOutputs(std::span<const uint8_t> outputs) override;
  IoHealth health() const override;
  bool faulted(std::string& message) const override;

  const Device& device() const { return device_; }
  // Poll rounds completed (all requests answered) so far: for tests and benchmarks that wait for
  // the device to have answered.
  uint64_t roundsCompleted() const { return rounds_.load(std::memory_order_acquire); }

 private:
  // One request's worth of a map: `count` bits or registers from `address`, whose values start at
  // image byte `byte` and bit `bit` (relative to the device's span of its area).
  struct Request {
    const MapEntry* map = nullptr;
    uint16_t address = 0;
    uint32_t count = 0;
    uint32_t byte = 0;
    uint8_t bit = 0;
    std::vector<uint16_t> lastSent;  // writes: the values last written, for write = "changed"
    bool sent = false;
  };

  void run();
  [[nodiscard]] bool connect(std::string& error);
  void disconnect();
  // One poll round: reads every input request into the staging image, then writes the outputs.
  // False with `error` at the first request that fails; `keepConnection` when the device answered
  // (with an exception).
  [[nodiscard]] bool pollRound(std::string& error, bool& keepConnection);
  [[nodiscard]] bool readRequest(Request& r, std::string& error, bool& keepConnection);
  [[nodiscard]] bool writeRequest(Request& r, const std::vector<uint8_t>& outputs, std::string& error,
                                  bool& keepConnection);
  // The request's outcome, timed: the round trip and the rate go into the statistics.
  void counted(std::chrono::steady_clock::time_point sent, bool ok);
  std::string requestError(const char* verb, const Request& r, int err, bool& keepConnection) const;
  void succeeded();
  void failed(const std::string& error);
  // The inputs as the policy wants them now, with the health word, to the scan thread.
  void publishInputs();
  // Waits until `until` or a stop; false on a stop.
  bool sleepUntil(std::chrono::steady_clock::time_point until);

  const Device device_;
  // The device's spans of %I and %Q: [inFirst_, inFirst_ + inMask_.size()) bytes, same for out.
  uint32_t inFirst_ = 0, outFirst_ = 0;
  std::vector<uint8_t> inMask_;  // the bits of the span this device serves
  uint32_t outBytes_ = 0;
  std::vector<Request> reads_, writes_;

  // The I/O thread's.
  void* ctx_ = nullptr;  // modbus_t
  std::vector<uint8_t> staging_, lastGood_;
  std::vector<uint16_t> registers_;
  std::vector<uint8_t> bits_;
  std::vector<uint8_t> outputs_;  // the newest outputs taken from the scan thread
  bool haveOutputs_ = false;
  bool answering_ = false;
  uint32_t failuresSeen_ = 0;

  TripleBuffer inputs_, outputsHandOver_;
  std::atomic<uint64_t> rounds_{0};
  std::atomic<bool> faulted_{false};
  std::string faultMessage_;  // set once, before faulted_

  mutable std::mutex healthMutex_;
  std::string state_ = "connecting";
  std::string error_;
  uint32_t failures_ = 0;
  uint64_t requests_ = 0;
  struct Sample {
    std::chrono::steady_clock::time_point at;
    uint32_t roundTripNs;
  };
  std::deque<Sample> samples_;  // the newest kSamples answered requests

  std::mutex stopMutex_;
  std::condition_variable stopChanged_;
  bool stopping_ = false;
  std::thread thread_;
};

// The drivers of a configuration, one per device.
std::vector<std::shared_ptr<IoDriver>> startDevices(const IoConfig& config);

}  // namespace scanback::runtime::io
