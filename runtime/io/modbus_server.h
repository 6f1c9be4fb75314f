// The Modbus TCP server (slave) I/O driver (`scanback run --io-serve [PORT]`): an HMI, a SCADA
// package or another PLC reads the runtime's %Q and %M and writes its %I, through libmodbus, on a
// thread of the driver's own. The map (docs/fieldbus-server.md):
//
//   coils 0..              %IX bits (coil n: %IX(n/8).(n%8))  read and write
//   holding registers 0..  %IW words (register n: %I bytes 2n, 2n+1)  read and write
//   discrete inputs 0..    %QX bits                                    read only
//   input registers 0..    %QW words (at most kMemoryRegisterBase of them)  read only
//   input registers 10000.. %MW words                                   read only
//
// A peer's write reaches the input image at the next cycle start, and from then on the bits it
// wrote are the peer's: readInputs() sets them at every cycle start, and leaves every other %I bit
// to the stimulus, a debugger or another driver. Addresses outside the map are answered with the
// Modbus exception ILLEGAL DATA ADDRESS.
//
// Threads (runtime/io_driver.h): the scan thread and the server thread share only staging
// buffers, under a mutex held for copies of them; the server thread owns the libmodbus context and
// mapping, and builds the peer's view of the image from the staged copies before it answers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "runtime/io_driver.h"

namespace scanback::runtime {

struct ModbusServerOptions {
  std::string bindAddress = "127.0.0.1";  // an IPv4 or IPv6 address (no brackets), or a host name
  uint16_t port = 1502;                   // 0: any free port (port() says which)
  size_t maxConnections = 8;              // clients served at once; beyond, a new one is closed
  // The sizes of the areas served, in bytes: the program's %I, %Q and %M.
  size_t inputBytes = 0;
  size_t outputBytes = 0;
  size_t memoryBytes = 0;
  // Where the server says what happens (a refused connection, a client closed for a bad frame), one
  // line without its newline, from the server thread; default: stderr.
  std::function<void(const std::string&)> log;
};

class ModbusServer final : public IoDriver {
 public:
  // The first input register of %MW; %QW is served below it.
  static constexpr uint32_t kMemoryRegisterBase = 10000;

  // Listens and starts the server thread. Null with `error` when it cannot listen.
  [[nodiscard]] static std::unique_ptr<ModbusServer> start(const ModbusServerOptions& options, std::string& error);
  // Stops the thread and closes every connection.
  ~ModbusServer() override;
  ModbusServer(const ModbusServer&) = delete;
  ModbusServer& operator=(const ModbusServer&) = delete;

  uint16_t port() const { return port_; }
  // "modbus server tcp://127.0.0.1:1502", "modbus server tcp://[::1]:1502"
  const std::string& name() const { return name_; }
  // Whether it listens on a loopback address (127.0.0.0/8, ::1), which only this machine reaches.
  bool loopback() const { return loopback_; }
  // The map as one line: which table holds which area, with its addresses (the CLI says it at start).
  std::string describeMap() const;

  void readInputs(std::span<uint8_t> inputs) override;
  WriteAuthor inputAuthor() const override { return WriteAuthor::ModbusPeer; }
  void writeOutputs(std::span<const uint8_t> outputs) override;
  void writeMemory(std::span<const uint8_t> memory) override;
  IoHealth health() const override;

  // Counters, any thread.
  size_t clients() const { return clients_.load(std::memory_order_relaxed); }
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }
  uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }

 private:
  struct Tables;  // the server thread's libmodbus context, mapping and views

  explicit ModbusServer(const ModbusServerOptions& options);
  void serve();
  void say(const std::string& line) const;

  const ModbusServerOptions options_;
  uint16_t port_ = 0;
  bool loopback_ = true;
  std::string name_;
  int listenFd_ = -1;
  int wakeFd_ = -1;  // an eventfd: the destructor's stop
  std::unique_ptr<Tables> tables_;
  std::thread thread_;

  // Shared by the scan thread and the server thread, under mutex_, only copied.
  mutable std::mutex mutex_;
  std::vector<uint8_t> stagedLatched_;  // %I as the last cycle start latched it
  std::vector<uint8_t> stagedOutputs_;  // %Q after the last cycle
  std::vector<uint8_t> stagedMemory_;   // %M after the last cycle
  uint64_t imageGeneration_ = 0;        // bumped at each of the copies above
  std::vector<uint8_t> stagedPeer_;     // the bits of %I the peers wrote (where stagedMask_ is set)
  std::vector<uint8_t> stagedMask_;
  size_t maskedBegin_ = 0, maskedEnd_ = 0;  // the bytes of stagedMask_ that have a bit set

  std::atomic<size_t> clients_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<bool> failed_{false};
  mutable std::mutex errorMutex_;
  std::string error_;  // (failed_) why the server stopped serving
};

}  // namespace scanback::runtime
