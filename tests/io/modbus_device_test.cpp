// The Modbus TCP client driver (runtime/io/modbus_device.h) against libmodbus servers in this
// process (tests/support/modbus_server.h): values both ways in every order, changed-only and
// every-poll writes, exceptions, a device that goes away and comes back under each policy, a
// stalled device, the health word and health(), and the driver under a runtime host. Every wait is
// on a condition (the server's request counts, the driver's completed rounds).
#include "runtime/io/modbus_device.h"

#include <gtest/gtest.h>

#include <fstream>

#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <optional>

#include "control/client.h"
#include "runtime/host.h"
#include "tests/support/modbus_server.h"
#include "tests/support/wait.h"
#include "tests/vm/test_support.h"

namespace scanback::runtime::io {
namespace {

using test::eventually;
using test::ModbusTestServer;

IoConfig configOf(const std::string& text, const Program* program = nullptr) {
  std::string error;
  std::optional<IoConfig> c = parseIoConfig(text, "test.toml", program, error);
  EXPECT_TRUE(c) << error;
  return c ? *c : IoConfig{};
}

std::string deviceText(uint16_t port, const std::string& extra, const std::string& maps) {
  return "[[device]]\nname = \"dev\"\nendpoint = \"tcp://127.0.0.1:" + std::to_string(port) +
         "\"\nperiod = \"5ms\"\ntimeout = \"100ms\"\n" + extra + "\n" + maps;
}

// Waits until the device has completed `rounds` more poll rounds than now.
bool roundsPass(const ModbusDevice& d, uint64_t rounds = 2) {
  const uint64_t from = d.roundsCompleted();
  return eventually([&] { return d.roundsCompleted() >= from + rounds; });
}

TEST(ModbusCodec, WordAndByteOrders) {
  const uint8_t dint[4] = {0x04, 0x03, 0x02, 0x01};  // 0x01020304 in the image
  uint16_t r[4];
  imageToRegisters(dint, 1, ValueType::DInt, Order::Big, Order::Big, r);
  EXPECT_EQ(r[0], 0x0102);
  EXPECT_EQ(r[1], 0x0304);
  imageToRegisters(dint, 1, ValueType::DInt, Order::Little, Order::Big, r);
  EXPECT_EQ(r[0], 0x0304);
  EXPECT_EQ(r[1], 0x0102);
  imageToRegisters(dint, 1, ValueType::DInt, Order::Big, Order::Little, r);
  EXPECT_EQ(r[0], 0x0201);
  EXPECT_EQ(r[1], 0x0403);
  const float real = 1.5f;  // 0x3FC00000
  imageToRegisters(reinterpret_cast<const uint8_t*>(&real), 1, ValueType::Real, Order::Big, Order::Big, r);
  EXPECT_EQ(r[0], 0x3FC0);
  EXPECT_EQ(r[1], 0x0000);
  const double lreal = -2.0;  // 0xC000000000000000
  imageToRegisters(reinterpret_cast<const uint8_t*>(&lreal), 1, ValueType::LReal, Order::Little, Order::Little, r);
  EXPECT_EQ(r[3], 0x00C0);
  EXPECT_EQ(r[0] | r[1] | r[2], 0);
  // And back, in every order.
  for (Order w : {Order::Big, Order::Little})
    for (Order b : {Order::Big, Order::Little}) {
      uint8_t back[8] = {};
      imageToRegisters(reinterpret_cast<const uint8_t*>(&lreal), 1, ValueType::LReal, w, b, r);
      registersToImage(r, 1, ValueType::LReal, w, b, back);
      EXPECT_EQ(std::memcmp(back, &lreal, 8), 0);
    }
}

TEST(ModbusDevice, InputsInEveryOrderReachTheImage) {
  ModbusTestServer server;
  server.with([](modbus_mapping_t& m) {
    m.tab_input_bits[3] = 1;
    m.tab_input_bits[5] = 1;
    m.tab_input_registers[10] = 0x1234;
    m.tab_registers[20] = 0x0304;  // DINT 0x01020304, word order little
    m.tab_registers[21] = 0x0102;
    m.tab_registers[22] = 0x0000;  // REAL -1.5 (0xBFC00000), byte order little, word order little
    m.tab_registers[23] = 0xC0BF;
  });
  const std::string text = deviceText(server.port(), "word_order = \"little\"", R"(
[[device.map]]
area = "discrete_inputs"
address = 0
count = 8
to = "%IX0.0"
[[device.map]]
area = "input_registers"
address = 10
count = 1
to = "%IW1"
[[device.map]]
area = "holding_registers"
address = 20
count = 2
to = "%ID1"
type = "DINT"
)");
  ModbusDevice device(configOf(text).devices.at(0));
  ASSERT_TRUE(roundsPass(device));
  std::vector<uint8_t> image(24, 0xEE);
  device.readInputs(image);
  EXPECT_EQ(image[0], 0b00101000);
  uint16_t w;
  std::memcpy(&w, &image[2], 2);
  EXPECT_EQ(w, 0x1234);
  int32_t d;
  std::memcpy(&d, &image[4], 4);
  EXPECT_EQ(d, 0x01020304);
  EXPECT_EQ(image[8], 0xEE) << "bytes the device does not serve are left alone";
  EXPECT_EQ(image[1], 0xEE);

  // Byte order little: a REAL.
  const std::string little = deviceText(server.port(), "word_order = \"little\"\nbyte_order = \"little\"", R"(
[[device.map]]
area = "holding_registers"
address = 22
count = 2
to = "%ID0"
type = "REAL"
)");
  ModbusDevice device2(configOf(little).devices.at(0));
  ASSERT_TRUE(roundsPass(device2));
  device2.readInputs(image);
  float f;
  std::memcpy(&f, &image[0], 4);
  EXPECT_EQ(f, -1.5f);
}

// Whether this machine has the IPv6 loopback (lo's ::1 in /proc/net/if_inet6).
bool hasIpv6Loopback() {
  std::ifstream in("/proc/net/if_inet6");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("00000000000000000000000000000001", 0) == 0) return true;
  return false;
}

// Endpoints by host name and IPv6 address (docs/fieldbus.md): the device reaches a server at
// localhost and one on [::1]; a name that does not resolve is a device that is failing, said so.
TEST(ModbusDevice, HostNamesAndIpv6AddressesAreEndpoints) {
  const std::string map = "[[device.map]]\narea = \"input_registers\"\naddress = 0\ncount = 1\nto = \"%IW0\"\n";
  auto deviceAt = [&](const std::string& endpoint) {
    return "[[device]]\nname = \"dev\"\nendpoint = \"" + endpoint + "\"\nperiod = \"5ms\"\ntimeout = \"100ms\"\n" + map;
  };
  auto readsFrom = [](ModbusDevice& device, ModbusTestServer& server, uint16_t value) {
    server.with([&](modbus_mapping_t& m) { m.tab_input_registers[0] = value; });
    std::vector<uint8_t> image(4, 0);
    uint16_t w = 0;
    return eventually([&] {
      device.readInputs(image);
      std::memcpy(&w, image.data(), 2);
      return w == value;
    });
  };
  {
    ModbusTestServer server;  // 127.0.0.1
    ModbusDevice device(configOf(deviceAt("tcp://localhost:" + std::to_string(server.port()))).devices.at(0));
    EXPECT_TRUE(readsFrom(device, server, 0x4C48)) << device.health().error;
    EXPECT_EQ(device.health().state, "ok");
  }
  {
    ModbusDevice device(configOf(deviceAt("tcp://no-such-device.invalid:1502")).devices.at(0));
    ASSERT_TRUE(eventually([&] { return device.health().failures >= 1; }));
    EXPECT_EQ(device.health().error.rfind("dev (tcp://no-such-device.invalid:1502): cannot connect: cannot resolve "
                                          "'no-such-device.invalid': ",
                                          0),
              0u)
        << device.health().error;
  }
  if (!hasIpv6Loopback()) GTEST_SKIP() << "this machine has no IPv6 loopback (no ::1 in /proc/net/if_inet6)";
  ModbusTestServer server(0, 1000, "::1");
  ModbusDevice device(configOf(deviceAt("tcp://[::1]:" + std::to_string(server.port()))).devices.at(0));
  EXPECT_TRUE(readsFrom(device, server, 0x0006)) << device.health().error;
  EXPECT_EQ(device.health().state, "ok");
  EXPECT_EQ(device.health().device, "dev");
}

TEST(ModbusDevice, OutputsAreWrittenWhenTheyChangeOrEveryPoll) {
  ModbusTestServer server;
  const std::string maps = R"(
[[device.map]]
area = "holding_registers"
address = 0
count = 2
to = "%QD0"
type = "DINT"
[[device.map]]
area = "coils"
address = 7
count = 4
to = "%QX4.2"
)";
  std::vector<uint8_t> outputs(16, 0);
  const int32_t value = -123456;
  std::memcpy(outputs.data(), &value, 4);
  outputs[4] = 0b00110100;  // coils 7, 9, 10 (bits 2, 4, 5)
  {
    ModbusDevice device(configOf(deviceText(server.port(), "", maps)).devices.at(0));
    ASSERT_TRUE(roundsPass(device));
    EXPECT_EQ(server.requests(MODBUS_FC_WRITE_MULTIPLE_REGISTERS), 0u) << "nothing before the first cycle's outputs";
    device.writeOutputs(outputs);
    ASSERT_TRUE(eventually([&] { return server.requests(MODBUS_FC_WRITE_MULTIPLE_COILS) == 1; }));
    ASSERT_TRUE(roundsPass(device, 5));
    server.with([&](modbus_mapping_t& m) {
      EXPECT_EQ(static_cast<int32_t>((uint32_t{m.tab_registers[0]} << 16) | m.tab_registers[1]), value);
      EXPECT_EQ(m.tab_bits[7], 1);
      EXPECT_EQ(m.tab_bits[8], 0);
      EXPECT_EQ(m.tab_bits[9], 1);
      EXPECT_EQ(m.tab_bits[10], 1);
    });
    // Unchanged: written once; changed: once more.
    EXPECT_EQ(server.requests(MODBUS_FC_WRITE_MULTIPLE_REGISTERS), 1u);
    device.writeOutputs(outputs);
    outputs[0] ^= 1;
    device.writeOutputs(outputs);
    ASSERT_TRUE(eventually([&] { return server.requests(MODBUS_FC_WRITE_MULTIPLE_REGISTERS) == 2; }));
    ASSERT_TRUE(roundsPass(device, 5));
    EXPECT_EQ(server.requests(MODBUS_FC_WRITE_MULTIPLE_REGISTERS), 2u);
    EXPECT_EQ(server.requests(MODBUS_FC_WRITE_MULTIPLE_COILS), 1u);
  }
  // write = "every-cycle": at every poll round, changed or not.
  ModbusDevice every(configOf(deviceText(server.port(), "write = \"every-cycle\"", maps)).devices.at(0));
  every.writeOutputs(outputs);
  const uint64_t before = server.requests(MODBUS_FC_WRITE_MULTIPLE_REGISTERS);
  ASSERT_TRUE(eventually([&] { return server.requests(MODBUS_FC_WRITE_MULTIPLE_REGISTERS) >= before + 5; }));
}

TEST(ModbusDevice, LongMapsAreSplitIntoRequests) {
  ModbusTestServer server;
  server.with([](modbus_mapping_t& m) {
    for (int i = 0; i < 300; ++i) m.tab_input_registers[i] = static_cast<uint16_t>(i * 7);
  });
  const std::string text = deviceText(server.port(), "", R"(
[[device.map]]
area = "input_registers"
address = 0
count = 300
to = "%IW0"
type = "UDINT"
)");
  ModbusDevice device(configOf(text).devices.at(0));
  ASSERT_TRUE(roundsPass(device));
  EXPECT_EQ(server.requests(MODBUS_FC_READ_INPUT_REGISTERS) % 3, 0u) << "124 + 124 + 52 registers";
  std::vector<uint8_t> image(600, 0);
  device.readInputs(image);
  for (int v = 0; v < 150; ++v) {
    uint32_t got;
    std::memcpy(&got, &image[v * 4], 4);
    ASSERT_EQ(got, (uint32_t{static_cast<uint16_t>(v * 14)} << 16) | static_cast<uint16_t>(v * 14 + 7)) << v;
  }
}

TEST(ModbusDevice, AnExceptionIsReportedAndTheConnectionKept) {
  ModbusTestServer server(0, 100);  // registers 0..99
  const std::string text = deviceText(server.port(), "status = \"%IW0\"", R"(
[[device.map]]
area = "holding_registers"
address = 95
count = 10
to = "%IW1"
)");
  ModbusDevice device(configOf(text).devices.at(0));
  ASSERT_TRUE(eventually([&] { return device.health().failures >= 3; }));
  const IoHealth h = device.health();
  EXPECT_EQ(h.state, "failing");
  EXPECT_FALSE(h.ok);
  EXPECT_EQ(h.error,
            "dev (tcp://127.0.0.1:" + std::to_string(server.port()) +
                "): reading holding_registers 95..104: the device answered with the Modbus exception 'Illegal data "
                "address'");
  // Polled at its period, not backed off: the device answers.
  EXPECT_GE(h.requests, 3u);
  std::vector<uint8_t> image(24, 0);
  device.readInputs(image);
  EXPECT_EQ(image[0] & 1, 0) << "the health word says: not answering";
  EXPECT_GE(image[1], 3) << "with its failures";
}

TEST(ModbusDevice, AStalledDeviceTimesOutAndTheScanNeverWaits) {
  ModbusTestServer server;
  server.setSilent(true);
  const std::string text =
      "[[device]]\nname = \"slow\"\nendpoint = \"tcp://127.0.0.1:" + std::to_string(server.port()) +
      "\"\nperiod = \"5ms\"\ntimeout = \"30ms\"\nstatus = \"%IW0\"\n[[device.map]]\narea = \"coils\"\naddress = "
      "0\ncount = 1\nto = \"%IX2.0\"\n";
  ModbusDevice device(configOf(text).devices.at(0));
  std::vector<uint8_t> image(24, 0);
  // While the device's thread waits for an answer, readInputs and writeOutputs return (they only
  // copy): a thousand of each here, whatever the device does.
  for (int i = 0; i < 1000; ++i) {
    device.readInputs(image);
    device.writeOutputs(std::vector<uint8_t>(16, 0));
  }
  ASSERT_TRUE(eventually([&] { return device.health().failures >= 1; }));
  EXPECT_EQ(device.health().error,
            "slow (tcp://127.0.0.1:" + std::to_string(server.port()) + "): reading coils 0..0: no answer within 30ms");
  // Answering again: the device reconnects (after its back-off) and is ok.
  server.setSilent(false);
  ASSERT_TRUE(eventually([&] { return device.health().state == "ok"; }));
  ASSERT_TRUE(roundsPass(device));
  device.readInputs(image);
  EXPECT_EQ(image[0] & 1, 1);
}

// A device that goes away and comes back on the same port, under each policy.
class DeviceRestart : public ::testing::TestWithParam<const char*> {};

TEST_P(DeviceRestart, ThePolicyAppliesAndTheDeviceReconnects) {
  const std::string policy = GetParam();
  auto server = std::make_unique<ModbusTestServer>();
  const uint16_t port = server->port();
  server->with([](modbus_mapping_t& m) { m.tab_input_registers[0] = 4242; });
  const std::string text = deviceText(port, "status = \"%IW5\"\non_fault = \"" + policy + "\"", R"(
[[device.map]]
area = "input_registers"
address = 0
count = 1
to = "%IW0"
)");
  ModbusDevice device(configOf(text).devices.at(0));
  ASSERT_TRUE(roundsPass(device));
  std::vector<uint8_t> image(24, 0);
  device.readInputs(image);
  uint16_t value, status;
  std::memcpy(&value, &image[0], 2);
  std::memcpy(&status, &image[10], 2);
  EXPECT_EQ(value, 4242);
  EXPECT_EQ(status, 1);
  std::string message;
  EXPECT_FALSE(device.faulted(message));

  server.reset();  // killed
  ASSERT_TRUE(eventually([&] { return device.health().state == "failing"; }));
  device.readInputs(image);
  std::memcpy(&value, &image[0], 2);
  std::memcpy(&status, &image[10], 2);
  EXPECT_EQ(status & 1, 0);
  EXPECT_GE(status >> 8, 1);
  EXPECT_EQ(value, policy == "zero" ? 0 : 4242);
  EXPECT_EQ(device.faulted(message), policy == "fault");
  if (policy == "fault") {
    EXPECT_NE(message.find("scanback: I/O fault: dev (tcp://127.0.0.1:" + std::to_string(port) + "): "),
              std::string::npos)
        << message;
  }

  // Restarted: the device reconnects after its back-off.
  server = std::make_unique<ModbusTestServer>(port);
  server->with([](modbus_mapping_t& m) { m.tab_input_registers[0] = 77; });
  ASSERT_TRUE(eventually([&] { return device.health().state == "ok"; }));
  ASSERT_TRUE(roundsPass(device));
  device.readInputs(image);
  std::memcpy(&value, &image[0], 2);
  std::memcpy(&status, &image[10], 2);
  EXPECT_EQ(value, 77);
  EXPECT_EQ(status & 1, 1);
  const IoHealth h = device.health();
  EXPECT_TRUE(h.ok);
  EXPECT_TRUE(h.error.empty());
  EXPECT_GE(h.failures, 1u);
  EXPECT_TRUE(h.roundTripP50Ns && h.roundTripP99Ns && *h.roundTripP50Ns <= *h.roundTripP99Ns);
  EXPECT_GT(h.requestRate, 0);
}

INSTANTIATE_TEST_SUITE_P(Policies, DeviceRestart, ::testing::Values("hold", "zero", "fault"));

// Its output word is its input word plus one, and its status word is copied to %QW1.
const char* kLoop = R"(PROGRAM Loop
VAR
  x AT %IW0 : INT;
  health AT %IW1 : WORD;
  y AT %QW0 : INT;
END_VAR
y := x + 1;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#2ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Loop;
END_CONFIGURATION
)";

TEST(ModbusDevice, UnderARuntimeHostTheLoopCloses) {
  ModbusTestServer server;
  server.with([](modbus_mapping_t& m) { m.tab_input_registers[0] = 41; });
  std::shared_ptr<const Program> program = test::mustCompile(kLoop);
  const std::string text = deviceText(server.port(), "status = \"%IW1\"", R"(
[[device.map]]
area = "input_registers"
address = 0
count = 1
to = "%IW0"
type = "INT"
[[device.map]]
area = "holding_registers"
address = 0
count = 1
to = "%QW0"
type = "INT"
)");
  HostOptions options;
  options.program = program;
  options.loop.realtime = true;
  options.drivers = startDevices(configOf(text, program.get()));
  std::string error;
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  std::thread scan([&] { host->run(); });
  const bool closed = eventually([&] {
    uint16_t got = 0;
    server.with([&](modbus_mapping_t& m) { got = m.tab_registers[0]; });
    return got == 42;
  });
  server.with([](modbus_mapping_t& m) { m.tab_input_registers[0] = static_cast<uint16_t>(-8); });
  const bool followed = eventually([&] {
    uint16_t got = 0;
    server.with([&](modbus_mapping_t& m) { got = m.tab_registers[0]; });
    return got == static_cast<uint16_t>(-7);
  });
  host->stop();
  scan.join();
  EXPECT_TRUE(closed);
  EXPECT_TRUE(followed);
}

TEST(ModbusDevice, ADeviceWhosePolicyIsFaultEndsTheRun) {
  // Nothing listens on the port: the first connection fails.
  uint16_t port;
  { port = ModbusTestServer().port(); }
  std::shared_ptr<const Program> program = test::mustCompile(kLoop);
  const std::string text = deviceText(port, "on_fault = \"fault\"", R"(
[[device.map]]
area = "input_registers"
address = 0
count = 1
to = "%IW0"
)");
  HostOptions options;
  options.program = program;
  options.loop.realtime = true;
  options.drivers = startDevices(configOf(text, program.get()));
  std::vector<std::string> said;
  options.log = [&](const std::string& line) { said.push_back(line); };
  std::string error;
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  EXPECT_EQ(host->run().end, RunSummary::End::Faulted);
  ASSERT_FALSE(said.empty());
  EXPECT_EQ(said.back(), "scanback: I/O fault: dev (tcp://127.0.0.1:" + std::to_string(port) +
                             "): cannot connect: Connection refused (device 'dev' has on_fault = \"fault\")");
}

TEST(ModbusDevice, WithAControlEndpointAnIoFaultHoldsTheRuntimeFaulted) {
  uint16_t port;
  { port = ModbusTestServer().port(); }
  std::shared_ptr<const Program> program = test::mustCompile(kLoop);
  const std::string text = deviceText(port, "on_fault = \"fault\"", R"(
[[device.map]]
area = "input_registers"
address = 0
count = 1
to = "%IW0"
)");
  std::string pattern = (std::filesystem::temp_directory_path() / "scanback_io_XXXXXX").string();
  ASSERT_TRUE(mkdtemp(pattern.data()));
  const std::filesystem::path dir = pattern;
  HostOptions options;
  options.program = program;
  options.loop.realtime = true;
  options.drivers = startDevices(configOf(text, program.get()));
  options.log = [](const std::string&) {};
  std::string error;
  options.control.emplace().endpoint = *control::parseEndpoint("unix://" + (dir / "rt.sock").string(), error);
  std::unique_ptr<RuntimeHost> host = RuntimeHost::create(std::move(options), error);
  ASSERT_TRUE(host) << error;
  RunSummary summary;
  std::thread scan([&] { summary = host->run(); });
  std::unique_ptr<control::ControlClient> client =
      control::ControlClient::connect(*control::parseEndpoint(host->controlEndpoint(), error), std::nullopt, error);
  ASSERT_TRUE(client) << error;
  control::json s;
  const bool faulted = eventually([&] {
    const std::optional<control::json> r = client->request({{"command", "status"}}, error);
    if (!r) return false;
    s = r->value("status", control::json());
    return s.value("state", "") == "faulted";
  });
  host->stop();
  scan.join();
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(faulted) << s.dump();
  EXPECT_EQ(summary.end, RunSummary::End::Faulted);
  EXPECT_EQ(s["fault"]["code"], "io");
  EXPECT_EQ(s["fault"]["message"], "scanback: I/O fault: dev (tcp://127.0.0.1:" + std::to_string(port) +
                                       "): cannot connect: Connection refused (device 'dev' has on_fault = \"fault\")");
  ASSERT_EQ(s["io"].size(), 1u);
  EXPECT_EQ(s["io"][0]["state"], "failing");
  EXPECT_EQ(s["io"][0]["endpoint"], "tcp://127.0.0.1:" + std::to_string(port));
}

}  // namespace
}  // namespace scanback::runtime::io
