// The Modbus TCP server driver (runtime/io/modbus_server.h) against libmodbus's client in this
// process, the test playing the scan thread (readInputs, writeOutputs, writeMemory): the map, a
// peer's writes reaching the inputs at the next cycle start (its bits only), exceptions for
// addresses outside the map and unknown functions, the connection limit, and peers that stall or
// send what is not a frame, which never hold up the others. Then a runtime host with the server:
// a peer's write goes through the program to an output the peer reads back, and is recorded.
// Every wait is on a condition (tests/support/wait.h).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <modbus/modbus.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host.h"
#include "runtime/io/modbus_server.h"
#include "tests/support/shell.h"
#include "tests/support/trace_support.h"
#include "tests/support/wait.h"
#include "tests/vm/test_support.h"

namespace scanback::runtime {
namespace {

using test::eventually;

// A libmodbus client connected to the server, or not (connected() false).
class ModbusClient {
 public:
  explicit ModbusClient(uint16_t port, const char* host = "127.0.0.1")
      : ctx_(modbus_new_tcp_pi(host, std::to_string(port).c_str())) {
    if (!ctx_) return;
    modbus_set_response_timeout(ctx_, 5, 0);
    connected_ = modbus_connect(ctx_) == 0;
  }
  ~ModbusClient() {
    if (!ctx_) return;
    modbus_close(ctx_);
    modbus_free(ctx_);
  }
  bool connected() const { return connected_; }
  modbus_t* ctx() { return ctx_; }

 private:
  modbus_t* ctx_;
  bool connected_ = false;
};

struct ServerUnderTest {
  std::vector<std::string> lines;
  std::mutex mutex;
  std::unique_ptr<ModbusServer> server;

  explicit ServerUnderTest(size_t inputBytes = 8, size_t outputBytes = 6, size_t memoryBytes = 4,
                           size_t maxConnections = 8) {
    ModbusServerOptions options;
    options.port = 0;
    options.inputBytes = inputBytes;
    options.outputBytes = outputBytes;
    options.memoryBytes = memoryBytes;
    options.maxConnections = maxConnections;
    options.log = [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
    std::string error;
    server = ModbusServer::start(options, error);
    EXPECT_TRUE(server) << error;
  }
  bool said(const std::string& text) {
    std::lock_guard lock(mutex);
    for (const std::string& l : lines)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
};

// A plain TCP connection to the server, for what libmodbus's client would never send.
int rawConnect(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads until `n` bytes came or the peer closed; what came.
std::vector<uint8_t> readBytes(int fd, size_t n) {
  std::vector<uint8_t> got;
  uint8_t buffer[300];
  while (got.size() < n) {
    const ssize_t r = recv(fd, buffer, std::min(sizeof buffer, n - got.size()), 0);
    if (r <= 0) break;
    got.insert(got.end(), buffer, buffer + r);
  }
  return got;
}

TEST(ModbusServer, ServesOutputsAsDiscreteInputsAndInputRegistersAndMemoryFrom10000) {
  ServerUnderTest s;
  ASSERT_TRUE(s.server);
  const std::vector<uint8_t> outputs = {0x05, 0x80, 0x34, 0x12, 0xFF, 0x00};
  const std::vector<uint8_t> memory = {0x01, 0x00, 0xCD, 0xAB};
  s.server->writeOutputs(outputs);
  s.server->writeMemory(memory);
  ModbusClient c(s.server->port());
  ASSERT_TRUE(c.connected());

  uint8_t bits[16] = {};
  ASSERT_EQ(modbus_read_input_bits(c.ctx(), 0, 16, bits), 16) << modbus_strerror(errno);
  const uint8_t expectedBits[16] = {1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};  // %QX0.0, %QX0.2, %QX1.7
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bits[i], expectedBits[i]) << "discrete input " << i;
  uint16_t regs[3] = {};
  ASSERT_EQ(modbus_read_input_registers(c.ctx(), 0, 3, regs), 3) << modbus_strerror(errno);
  EXPECT_EQ(regs[0], 0x8005);  // %QW0: %QB0 is its low byte
  EXPECT_EQ(regs[1], 0x1234);
  EXPECT_EQ(regs[2], 0x00FF);
  ASSERT_EQ(modbus_read_input_registers(c.ctx(), ModbusServer::kMemoryRegisterBase, 2, regs), 2);
  EXPECT_EQ(regs[0], 0x0001);  // %MW0
  EXPECT_EQ(regs[1], 0xABCD);  // %MW1

  // The next cycle's outputs replace them.
  s.server->writeOutputs(std::vector<uint8_t>{0, 0, 0x78, 0x56, 0, 0});
  ASSERT_EQ(modbus_read_input_registers(c.ctx(), 1, 1, regs), 1);
  EXPECT_EQ(regs[0], 0x5678);
  EXPECT_EQ(s.server->requests(), 4u);
  EXPECT_EQ(s.server->errors(), 0u);
}

TEST(ModbusServer, APeersWritesReachTheInputsAtTheNextCycleStartAndOnlyTheBitsItWrote) {
  ServerUnderTest s;
  ASSERT_TRUE(s.server);
  ModbusClient c(s.server->port());
  ASSERT_TRUE(c.connected());
  ASSERT_EQ(modbus_write_bit(c.ctx(), 3, 1), 1) << modbus_strerror(errno);            // %IX0.3
  ASSERT_EQ(modbus_write_bit(c.ctx(), 4, 0), 1) << modbus_strerror(errno);            // %IX0.4
  ASSERT_EQ(modbus_write_register(c.ctx(), 2, 0xBEEF), 1) << modbus_strerror(errno);  // %IW2: %IB4, %IB5

  // The stimulus (or a debugger) set every input bit to 0x55 before the cycle start.
  std::vector<uint8_t> inputs(8, 0x55);
  s.server->readInputs(inputs);
  EXPECT_EQ(inputs[0], (0x55 | 0x08) & ~0x10);  // bits 3 and 4 are the peer's, the others the stimulus's
  EXPECT_EQ(inputs[4], 0xEF);
  EXPECT_EQ(inputs[5], 0xBE);
  for (size_t i : {1, 2, 3, 6, 7}) EXPECT_EQ(inputs[i], 0x55) << "%IB" << i;

  // The peer reads the inputs as latched: its own writes and the stimulus's bits.
  uint16_t regs[4] = {};
  ASSERT_EQ(modbus_read_registers(c.ctx(), 0, 4, regs), 4);
  EXPECT_EQ(regs[0], 0x5500 | ((0x55 | 0x08) & ~0x10));
  EXPECT_EQ(regs[2], 0xBEEF);
  EXPECT_EQ(regs[3], 0x5555);
  uint8_t bits[8] = {};
  ASSERT_EQ(modbus_read_bits(c.ctx(), 0, 8, bits), 8);
  const uint8_t expected[8] = {1, 0, 1, 1, 0, 0, 1, 0};  // 0x4D
  for (int i = 0; i < 8; ++i) EXPECT_EQ(bits[i], expected[i]) << "coil " << i;

  // A later cycle: the stimulus changes its bits, the peer's stay the peer's.
  std::vector<uint8_t> next(8, 0x00);
  s.server->readInputs(next);
  EXPECT_EQ(next[0], 0x08);
  EXPECT_EQ(next[4], 0xEF);
  EXPECT_EQ(next[1], 0x00);

  // Several coils and registers at once, and a read/write of registers.
  const uint8_t many[10] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 1};
  ASSERT_EQ(modbus_write_bits(c.ctx(), 8, 10, many), 10);  // %IB1 all set, %IX2.1
  const uint16_t words[2] = {0x1111, 0x2222};
  uint16_t back[1] = {};
  ASSERT_EQ(modbus_write_and_read_registers(c.ctx(), 3, 1, words + 1, 0, 1, back), 1);
  std::vector<uint8_t> third(8, 0x00);
  s.server->readInputs(third);
  EXPECT_EQ(third[1], 0xFF);
  EXPECT_EQ(third[2], 0x02);
  EXPECT_EQ(third[6], 0x22);
  EXPECT_EQ(third[7], 0x22);
  EXPECT_EQ(s.server->errors(), 0u);
}

TEST(ModbusServer, AddressesOutsideTheMapAndUnknownFunctionsAreAnsweredWithExceptions) {
  ServerUnderTest s(8, 6, 4);  // 64 coils, 4 holding registers, 48 discrete inputs, input registers 0..2, 10000..10001
  ASSERT_TRUE(s.server);
  ModbusClient c(s.server->port());
  ASSERT_TRUE(c.connected());
  uint8_t bits[8];
  uint16_t regs[8];
  EXPECT_EQ(modbus_read_bits(c.ctx(), 60, 8, bits), -1);
  EXPECT_EQ(errno, EMBXILADD);
  EXPECT_EQ(modbus_write_register(c.ctx(), 4, 1), -1);
  EXPECT_EQ(errno, EMBXILADD);
  EXPECT_EQ(modbus_read_input_bits(c.ctx(), 48, 1, bits), -1);
  EXPECT_EQ(errno, EMBXILADD);
  EXPECT_EQ(modbus_read_input_registers(c.ctx(), 3, 1, regs), -1);  // between %QW and %MW
  EXPECT_EQ(errno, EMBXILADD);
  EXPECT_EQ(modbus_read_input_registers(c.ctx(), 9999, 2, regs), -1);  // across the start of %MW
  EXPECT_EQ(errno, EMBXILADD);
  EXPECT_EQ(modbus_read_input_registers(c.ctx(), 10001, 2, regs), -1);  // past the end of %MW
  EXPECT_EQ(errno, EMBXILADD);
  // Function 0x2B (encapsulated interface) with data: libmodbus does not serve it.
  const uint8_t raw[] = {0x01, 0x2B, 0x0E, 0x01, 0x00};
  ASSERT_GT(modbus_send_raw_request(c.ctx(), raw, sizeof raw), 0);
  uint8_t answer[MODBUS_TCP_MAX_ADU_LENGTH];
  EXPECT_EQ(modbus_receive_confirmation(c.ctx(), answer), 9);
  EXPECT_EQ(answer[7], 0x80 | 0x2B);
  EXPECT_EQ(answer[8], MODBUS_EXCEPTION_ILLEGAL_FUNCTION);
  // None of that cost the connection, and nothing was written.
  ASSERT_EQ(modbus_read_input_registers(c.ctx(), 10000, 2, regs), 2) << modbus_strerror(errno);
  std::vector<uint8_t> inputs(8, 0);
  s.server->readInputs(inputs);
  EXPECT_EQ(inputs, std::vector<uint8_t>(8, 0));
  EXPECT_EQ(s.server->errors(), 7u);
  EXPECT_EQ(s.server->requests(), 8u);
  const IoHealth h = s.server->health();
  EXPECT_TRUE(h.ok);
  EXPECT_EQ(h.failures, 7u);
  EXPECT_EQ(h.requests, 8u);
  ASSERT_TRUE(h.clients);
  EXPECT_EQ(*h.clients, 1u);
}

TEST(ModbusServer, AConnectionBeyondTheLimitIsClosedAndTheOthersAreServed) {
  ServerUnderTest s(8, 6, 0, 2);
  ASSERT_TRUE(s.server);
  ModbusClient a(s.server->port()), b(s.server->port());
  ASSERT_TRUE(a.connected() && b.connected());
  ASSERT_TRUE(eventually([&] { return s.server->clients() == 2; }));
  ModbusClient extra(s.server->port());  // connects (the kernel accepts), then is closed
  uint16_t regs[1];
  EXPECT_EQ(modbus_read_input_registers(extra.ctx(), 0, 1, regs), -1);
  EXPECT_TRUE(eventually([&] { return s.said("2 clients are connected already (--io-max-connections 2)"); }));
  EXPECT_EQ(modbus_read_input_registers(a.ctx(), 0, 1, regs), 1);
  EXPECT_EQ(modbus_read_input_registers(b.ctx(), 0, 1, regs), 1);
  EXPECT_EQ(s.server->clients(), 2u);
  // One leaves: a new one is served.
  modbus_close(a.ctx());
  ASSERT_TRUE(eventually([&] { return s.server->clients() == 1; }));
  ModbusClient late(s.server->port());
  ASSERT_TRUE(late.connected());
  EXPECT_EQ(modbus_read_input_registers(late.ctx(), 0, 1, regs), 1) << modbus_strerror(errno);
}

TEST(ModbusServer, APeerThatStallsInTheMiddleOfARequestHoldsUpNoOther) {
  ServerUnderTest s;
  ASSERT_TRUE(s.server);
  s.server->writeOutputs(std::vector<uint8_t>{0x34, 0x12, 0, 0, 0, 0});
  // Read input registers 0, count 1: a whole frame is 12 bytes.
  const uint8_t frame[] = {0x00, 0x07, 0x00, 0x00, 0x00, 0x06, 0x01, 0x04, 0x00, 0x00, 0x00, 0x01};
  const int halfHeader = rawConnect(s.server->port());
  const int halfBody = rawConnect(s.server->port());
  ASSERT_GE(halfHeader, 0);
  ASSERT_GE(halfBody, 0);
  ASSERT_EQ(send(halfHeader, frame, 3, 0), 3);
  ASSERT_EQ(send(halfBody, frame, 9, 0), 9);
  ASSERT_TRUE(eventually([&] { return s.server->clients() == 2; }));
  ModbusClient c(s.server->port());
  ASSERT_TRUE(c.connected());
  uint16_t regs[1] = {};
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(modbus_read_input_registers(c.ctx(), 0, 1, regs), 1) << modbus_strerror(errno);
    EXPECT_EQ(regs[0], 0x1234);
  }
  // The stalled ones finish their frames and are answered.
  ASSERT_EQ(send(halfHeader, frame + 3, sizeof frame - 3, 0), static_cast<ssize_t>(sizeof frame - 3));
  ASSERT_EQ(send(halfBody, frame + 9, sizeof frame - 9, 0), static_cast<ssize_t>(sizeof frame - 9));
  for (int fd : {halfHeader, halfBody}) {
    const std::vector<uint8_t> answer = readBytes(fd, 11);
    ASSERT_EQ(answer.size(), 11u);
    EXPECT_EQ(answer[1], 0x07);  // its transaction id
    EXPECT_EQ(answer[7], 0x04);
    EXPECT_EQ(answer[9], 0x12);
    EXPECT_EQ(answer[10], 0x34);
    close(fd);
  }
  EXPECT_EQ(s.server->errors(), 0u);
}

TEST(ModbusServer, WhatIsNotAModbusFrameClosesItsConnectionOnly) {
  ServerUnderTest s;
  ASSERT_TRUE(s.server);
  ModbusClient c(s.server->port());
  ASSERT_TRUE(c.connected());
  const int fd = rawConnect(s.server->port());
  ASSERT_GE(fd, 0);
  const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";  // its "length" is 0x2F20 bytes
  ASSERT_GT(send(fd, http, sizeof http - 1, 0), 0);
  EXPECT_TRUE(readBytes(fd, 1).empty());  // closed without an answer
  close(fd);
  EXPECT_TRUE(eventually([&] { return s.said("not a Modbus TCP frame"); }));
  uint16_t regs[1];
  EXPECT_EQ(modbus_read_input_registers(c.ctx(), 0, 1, regs), 1);
  EXPECT_EQ(s.server->errors(), 1u);
}

TEST(ModbusServer, AnAddressInUseOrNotAnAddressIsAClearError) {
  ServerUnderTest first;
  ASSERT_TRUE(first.server);
  ModbusServerOptions options;
  options.port = first.server->port();
  std::string error;
  EXPECT_FALSE(ModbusServer::start(options, error));
  EXPECT_NE(error.find(fmt::format("cannot listen on 127.0.0.1:{}", options.port)), std::string::npos) << error;
  options.port = 0;
  options.bindAddress = "localhost:80";
  EXPECT_FALSE(ModbusServer::start(options, error));
  EXPECT_NE(error.find("--io-bind localhost:80: expected an IPv4 address"), std::string::npos) << error;
}

// The program copies a holding register and a coil to outputs, and counts its cycles in %MW.
const char* kModbusEcho = R"(PROGRAM Echo
VAR
  wordIn AT %IW1 : WORD;
  bitIn AT %IX0.2 : BOOL;
  wordOut AT %QW0 : WORD;
  bitOut AT %QX2.0 : BOOL;
  cycles AT %MW0 : WORD;
END_VAR
wordOut := wordIn + 1;
bitOut := bitIn;
cycles := cycles + 1;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Echo;
END_CONFIGURATION
)";

// A server of `program`'s %I, %Q and %M on a free port, as `run --io-serve` starts it.
std::shared_ptr<ModbusServer> serverFor(const Program& program, std::string& error) {
  ModbusServerOptions options;
  options.port = 0;
  options.inputBytes = program.input.size;
  options.outputBytes = program.output.size;
  options.memoryBytes = program.memory.size;
  return ModbusServer::start(options, error);
}

TEST(ModbusServer, InARuntimeHostAPeersWriteGoesThroughTheProgramToAnOutputItReadsBack) {
  std::shared_ptr<const Program> program = test::mustCompile(kModbusEcho);
  std::string error;
  std::shared_ptr<ModbusServer> server = serverFor(*program, error);
  ASSERT_TRUE(server) << error;
  HostOptions options;
  options.program = program;
  options.loop.realtime = true;
  options.drivers = {server};
  options.log = [](const std::string&) {};
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  std::thread scan([&] { host->run(); });

  ModbusClient c(server->port());
  ASSERT_TRUE(c.connected());
  ASSERT_EQ(modbus_write_register(c.ctx(), 1, 41), 1);
  ASSERT_EQ(modbus_write_bit(c.ctx(), 2, 1), 1);
  uint16_t out = 0;
  uint8_t bit = 0;
  EXPECT_TRUE(eventually([&] { return modbus_read_input_registers(c.ctx(), 0, 1, &out) == 1 && out == 42; })) << out;
  EXPECT_TRUE(eventually([&] { return modbus_read_input_bits(c.ctx(), 16, 1, &bit) == 1 && bit == 1; }));
  uint16_t first = 0, later = 0;
  ASSERT_EQ(modbus_read_input_registers(c.ctx(), ModbusServer::kMemoryRegisterBase, 1, &first), 1);
  EXPECT_TRUE(eventually([&] {
    return modbus_read_input_registers(c.ctx(), ModbusServer::kMemoryRegisterBase, 1, &later) == 1 && later > first;
  }));
  host->stop();
  scan.join();
  EXPECT_EQ(test::valueOf(host->runtime(), "Main.wordIn"), "41");
  EXPECT_EQ(test::valueOf(host->runtime(), "Main.bitIn"), "TRUE");
}

// Recorded, a peer's write is a %I change the trace says a Modbus peer made (ImageWrite.author):
// `trace why` names the peer as where the input's value came from, and through the program.
TEST(ModbusServer, ARecordedPeersWriteIsNamedAsTheModbusPeersByTraceWhy) {
  std::shared_ptr<const Program> program = test::mustCompile(kModbusEcho);
  std::string error;
  std::shared_ptr<ModbusServer> server = serverFor(*program, error);
  ASSERT_TRUE(server) << error;
  const std::filesystem::path trace =
      std::filesystem::path(::testing::TempDir()) / fmt::format("scanback_peer_{}.trace", ::getpid());
  struct Removed {
    std::filesystem::path path;
    ~Removed() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  } removed{trace};
  HostOptions options;
  options.program = program;
  options.loop.realtime = true;
  options.drivers = {server};
  options.recording = test::recordingTo(trace);
  options.log = [](const std::string&) {};
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  std::thread scan([&] { host->run(); });
  ModbusClient c(server->port());
  ASSERT_TRUE(c.connected());
  ASSERT_EQ(modbus_write_register(c.ctx(), 1, 41), 1);
  uint16_t out = 0;
  EXPECT_TRUE(eventually([&] { return modbus_read_input_registers(c.ctx(), 0, 1, &out) == 1 && out == 42; })) << out;
  host->stop();
  scan.join();
  const RecordingSummary finished = host->finish();
  ASSERT_TRUE(finished.ok) << finished.error;

  test::ShellResult r = test::runScanback("trace why " + test::shellQuote(trace.string()) + " Main.wordIn --json");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  const nlohmann::json why = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(why.is_object()) << r.out;
  EXPECT_EQ(why["value"], "41") << r.out;
  EXPECT_EQ(why["origin"], "input") << r.out;
  EXPECT_EQ(why["author"], "modbusPeer") << r.out;
  r = test::runScanback("trace why " + test::shellQuote(trace.string()) + " Main.wordOut --depth 2");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("  Main.wordIn = 41  <- scan input (%I, Modbus peer)  at "), std::string::npos) << r.out;
}

// --io-bind with an IPv6 address or a host name (docs/fieldbus-server.md): the server listens there,
// names itself as a client writes the endpoint, and says whether only this machine reaches it.
TEST(ModbusServer, ListensOnIpv6AndHostNames) {
  auto startOn = [](const std::string& bind, std::string& error) {
    ModbusServerOptions options;
    options.port = 0;
    options.bindAddress = bind;
    options.inputBytes = 4;
    options.outputBytes = 4;
    return ModbusServer::start(options, error);
  };
  auto servesAt = [](ModbusServer& server, const char* host) {
    server.writeOutputs(std::vector<uint8_t>{0x34, 0x12, 0, 0});
    ModbusClient client(server.port(), host);
    if (!client.connected()) return false;
    uint16_t reg = 0;
    return eventually([&] { return modbus_read_input_registers(client.ctx(), 0, 1, &reg) == 1 && reg == 0x1234; });
  };
  std::string error;
  std::unique_ptr<ModbusServer> local = startOn("localhost", error);
  ASSERT_TRUE(local) << error;
  EXPECT_EQ(local->name(), fmt::format("modbus server tcp://localhost:{}", local->port()));
  EXPECT_TRUE(local->loopback());
  EXPECT_TRUE(servesAt(*local, "localhost"));
  local.reset();

  EXPECT_FALSE(startOn("no-such-host.invalid", error));
  EXPECT_EQ(error.rfind("--io-bind no-such-host.invalid: cannot resolve it: ", 0), 0u) << error;
  EXPECT_FALSE(startOn("plc 7", error));
  EXPECT_EQ(error,
            "--io-bind plc 7: expected an IPv4 address (127.0.0.1, 0.0.0.0), an IPv6 address (::1, ::) or a host name");

  std::ifstream interfaces("/proc/net/if_inet6");
  std::string line;
  bool ipv6Loopback = false;
  while (std::getline(interfaces, line)) ipv6Loopback |= line.rfind("00000000000000000000000000000001", 0) == 0;
  if (!ipv6Loopback) GTEST_SKIP() << "this machine has no IPv6 loopback (no ::1 in /proc/net/if_inet6)";
  std::unique_ptr<ModbusServer> v6 = startOn("::1", error);
  ASSERT_TRUE(v6) << error;
  EXPECT_EQ(v6->name(), fmt::format("modbus server tcp://[::1]:{}", v6->port()));
  EXPECT_TRUE(v6->loopback());
  EXPECT_TRUE(servesAt(*v6, "::1"));
  // Every interface: not loopback, so scanback run warns that Modbus has no authentication.
  std::unique_ptr<ModbusServer> any = startOn("::", error);
  ASSERT_TRUE(any) << error;
  EXPECT_FALSE(any->loopback());
  EXPECT_TRUE(servesAt(*any, "::1"));
}

}  // namespace
}  // namespace scanback::runtime
