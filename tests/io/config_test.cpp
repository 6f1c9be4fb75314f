// The I/O configuration (runtime/io/config.h): a full file read into its typed form, and each
// mistake refused with its FILE:LINE:COL and a message that says what is wrong.
#include "runtime/io/config.h"

#include <gtest/gtest.h>

#include "tests/vm/test_support.h"

namespace scanback::runtime::io {
namespace {

// %I: 16 bytes (through %IW7), %Q: 8 bytes (through %QW3); a DINT at %ID2 (bytes 8..11), an INT at %IW6.
const char* kProgram = R"(PROGRAM Main
VAR
  start AT %IX0.0 : BOOL;
  level AT %ID2 : DINT;
  temp AT %IW6 : INT;
  health AT %IW7 : WORD;
  valve AT %QX0.0 : BOOL;
  speed AT %QW3 : INT;
END_VAR
END_PROGRAM
)";

const char* kGood = R"(# the plant's remote I/O
[[device]]
name = "rack1"
endpoint = "tcp://127.0.0.1:1502"
unit = 3
period = "20ms"
timeout = "150ms"
on_fault = "zero"
write = "every-cycle"
status = "%IW7"
word_order = "little"
byte_order = "big"

[[device.map]]
area = "discrete_inputs"
address = 0
count = 8
to = "%IX0.0"

[[device.map]]
area = "input_registers"
address = 10
count = 2
to = "%ID2"
type = "DINT"

[[device.map]]
area = "holding_registers"
address = 100
count = 1
to = "%QW3"
type = "INT"

[[device]]
name = "drive"
endpoint = "tcp://10.0.0.7"

[[device.map]]
area = "coils"
address = 5
count = 3
to = "%QX0.0"
)";

class IoConfigTest : public ::testing::Test {
 protected:
  std::shared_ptr<const Program> program = test::mustCompile(kProgram);

  std::string errorOf(const std::string& text, bool withProgram = true) {
    std::string error;
    const std::optional<IoConfig> c =
        parseIoConfig(text, "plant-io.toml", withProgram ? program.get() : nullptr, error);
    EXPECT_FALSE(c) << "accepted:\n" << text;
    return error;
  }
  // kGood with `from` replaced by `to` (which must occur once).
  static std::string edited(const std::string& from, const std::string& to) {
    std::string s = kGood;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    EXPECT_EQ(s.find(from, at + 1), std::string::npos) << from << " occurs twice";
    return s.replace(at, from.size(), to);
  }
};

TEST_F(IoConfigTest, ReadsAFullConfiguration) {
  std::string error;
  const std::optional<IoConfig> c = parseIoConfig(kGood, "plant-io.toml", program.get(), error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->text, kGood);
  ASSERT_EQ(c->devices.size(), 2u);
  const Device& d = c->devices[0];
  EXPECT_EQ(d.name, "rack1");
  EXPECT_EQ(d.host, "127.0.0.1");
  EXPECT_EQ(d.port, 1502);
  EXPECT_EQ(d.unit, 3);
  EXPECT_EQ(d.periodNs, 20'000'000);
  EXPECT_EQ(d.timeoutNs, 150'000'000);
  EXPECT_EQ(d.onFault, OnFault::Zero);
  EXPECT_EQ(d.write, WriteMode::EveryPoll);
  EXPECT_EQ(d.statusByte, 14u);
  EXPECT_EQ(d.wordOrder, Order::Little);
  EXPECT_EQ(d.byteOrder, Order::Big);
  ASSERT_EQ(d.maps.size(), 3u);
  EXPECT_EQ(d.maps[0].area, Area::DiscreteInputs);
  EXPECT_EQ(d.maps[0].type, ValueType::Bool);
  EXPECT_EQ(d.maps[0].imageArea, 'I');
  EXPECT_EQ(d.maps[0].firstBit(), 0u);
  EXPECT_EQ(d.maps[0].bitCount(), 8u);
  EXPECT_EQ(d.maps[1].address, 10);
  EXPECT_EQ(d.maps[1].byte, 8u);
  EXPECT_EQ(d.maps[1].type, ValueType::DInt);
  EXPECT_EQ(d.maps[1].registersPerValue(), 2u);
  EXPECT_EQ(d.maps[1].place.line, 20u);
  EXPECT_TRUE(d.maps[2].toDevice());
  EXPECT_EQ(d.maps[2].byte, 6u);
  // Defaults.
  const Device& drive = c->devices[1];
  EXPECT_EQ(drive.port, 502);
  EXPECT_EQ(drive.unit, 1);
  EXPECT_EQ(drive.periodNs, 10'000'000);
  EXPECT_EQ(drive.timeoutNs, 100'000'000);
  EXPECT_EQ(drive.onFault, OnFault::Hold);
  EXPECT_EQ(drive.write, WriteMode::Changed);
  EXPECT_FALSE(drive.statusByte);
  EXPECT_EQ(drive.maps[0].firstBit(), 0u);
  EXPECT_EQ(drive.maps[0].imageArea, 'Q');
  EXPECT_EQ(describeDevice(drive),
            "drive (tcp://10.0.0.7, unit 1, every 10ms, timeout 100ms): 1 map, on_fault hold, write changed");
}

TEST_F(IoConfigTest, SyntaxErrorsHaveTheirPlace) {
  const std::string e = errorOf("[[device]]\nname = \"a\nendpoint = 3\n");
  EXPECT_TRUE(e.starts_with("plant-io.toml:2:")) << e;
}

TEST_F(IoConfigTest, UnknownKeys) {
  EXPECT_EQ(errorOf(edited("unit = 3", "unit = 3\nuint = 4")),
            "plant-io.toml:6:1: unknown key 'uint' in a [[device]] (known: name, endpoint, unit, period, timeout, "
            "on_fault, write, status, word_order, byte_order, map)");
  EXPECT_EQ(errorOf(edited("count = 8", "count = 8\nswap = true")),
            "plant-io.toml:18:1: unknown key 'swap' in a [[device.map]] of device 'rack1' (known: area, address, "
            "count, to, type)");
  EXPECT_EQ(errorOf(std::string("timeout = 3\n") + kGood),
            "plant-io.toml:1:1: unknown key 'timeout' in the I/O configuration (known: device)");
}

TEST_F(IoConfigTest, WrongTypes) {
  EXPECT_EQ(errorOf(edited("unit = 3", "unit = \"3\"")),
            "plant-io.toml:5:8: 'unit': expected an integer, found a string");
  EXPECT_EQ(errorOf(edited("period = \"20ms\"", "period = 20")),
            "plant-io.toml:6:10: 'period': expected a string, found an integer");
  EXPECT_EQ(errorOf(edited("on_fault = \"zero\"", "on_fault = \"ignore\"")),
            "plant-io.toml:8:12: 'on_fault': 'ignore' is not one of hold, zero, fault");
  EXPECT_EQ(errorOf(edited("type = \"DINT\"", "type = \"DUNT\"")),
            "plant-io.toml:25:8: 'type': 'DUNT' is not one of BOOL, INT, UINT, WORD, DINT, UDINT, DWORD, REAL, LINT, "
            "ULINT, LWORD, LREAL");
  EXPECT_EQ(errorOf(edited("type = \"DINT\"", "type = \"BOOL\"")),
            "plant-io.toml:25:8: 'type': input_registers holds 16-bit registers: BOOL is for coils and discrete "
            "inputs (map a register as WORD and read its bits, %IX..)");
  EXPECT_EQ(errorOf("[[device]]\nname = \"a\"\nendpoint = \"tcp://127.0.0.1\"\nmap = 3\n"),
            "plant-io.toml:4:7: 'map' of device 'a': expected [[device.map]] tables, found an integer");
}

TEST_F(IoConfigTest, MissingKeys) {
  EXPECT_EQ(errorOf("[[device]]\nendpoint = \"tcp://127.0.0.1\"\n"), "plant-io.toml:1:1: a [[device]] has no 'name'");
  EXPECT_EQ(errorOf("[[device]]\nname = \"a\"\nendpoint = \"tcp://127.0.0.1\"\n"),
            "plant-io.toml:1:1: device 'a' has no [[device.map]]: it would exchange nothing");
  EXPECT_EQ(errorOf(edited("count = 8\n", "")),
            "plant-io.toml:14:1: a [[device.map]] of device 'rack1' has no 'count'");
  EXPECT_EQ(errorOf(""), "plant-io.toml:1:1: no [[device]]: the configuration connects to nothing");
  EXPECT_EQ(errorOf(edited("name = \"drive\"", "name = \"rack1\"")),
            "plant-io.toml:35:8: a device named 'rack1' is configured already");
}

TEST_F(IoConfigTest, BadEndpoints) {
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "udp://10.0.0.7")),
            "plant-io.toml:36:12: endpoint 'udp://10.0.0.7': expected tcp://HOST or tcp://HOST:PORT, HOST an IPv4 "
            "address, [an IPv6 address] or a host name");
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "tcp://10.0.0.7:0")),
            "plant-io.toml:36:12: endpoint 'tcp://10.0.0.7:0': the port must be 1..65535");
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "tcp://10.0.0.7:http")),
            "plant-io.toml:36:12: endpoint 'tcp://10.0.0.7:http': the port must be 1..65535");
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "tcp://10.0.0.300:502")),
            "plant-io.toml:36:12: endpoint 'tcp://10.0.0.300:502': '10.0.0.300' is not an IPv4 address such as "
            "127.0.0.1");
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "tcp://plc_7.local")),
            "plant-io.toml:36:12: endpoint 'tcp://plc_7.local': 'plc_7.local' is neither an IPv4 address nor a host "
            "name (expected tcp://HOST or tcp://HOST:PORT, HOST an IPv4 address, [an IPv6 address] or a host name)");
  EXPECT_NE(errorOf(edited("tcp://10.0.0.7", "tcp://-plc.local:502")).find("'-plc.local' is neither an IPv4"),
            std::string::npos);
  EXPECT_NE(errorOf(edited("tcp://10.0.0.7", "tcp://plc..local")).find("'plc..local' is neither an IPv4"),
            std::string::npos);
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "tcp://::1:502")),
            "plant-io.toml:36:12: endpoint 'tcp://::1:502': an IPv6 address goes in brackets, as in "
            "tcp://[::1]:1502");
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "tcp://[::1")),
            "plant-io.toml:36:12: endpoint 'tcp://[::1': the IPv6 address has no closing ']'");
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "tcp://[fe80::zz]:502")),
            "plant-io.toml:36:12: endpoint 'tcp://[fe80::zz]:502': 'fe80::zz' is not an IPv6 address such as ::1");
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "tcp://[::1]502")),
            "plant-io.toml:36:12: endpoint 'tcp://[::1]502': expected ':PORT' or nothing after ']'");
  EXPECT_EQ(errorOf(edited("tcp://10.0.0.7", "tcp://[::1]:")),
            "plant-io.toml:36:12: endpoint 'tcp://[::1]:': the port must be 1..65535");
}

// Host names and IPv6 addresses (in brackets) are endpoints: read here, resolved when the device
// connects (tests/io/modbus_device_test.cpp connects to localhost and [::1]).
TEST_F(IoConfigTest, HostNamesAndIpv6Endpoints) {
  const std::pair<const char*, std::pair<const char*, int>> cases[] = {
      {"tcp://plc7.example.com:1502", {"plc7.example.com", 1502}},
      {"tcp://localhost", {"localhost", 502}},
      {"tcp://rack-2", {"rack-2", 502}},
      {"tcp://[::1]:1502", {"::1", 1502}},
      {"tcp://[fd00::20]", {"fd00::20", 502}},
      {"tcp://192.168.0.20:503", {"192.168.0.20", 503}},
  };
  for (const auto& [endpoint, want] : cases) {
    std::string error;
    const std::optional<IoConfig> c =
        parseIoConfig(edited("tcp://10.0.0.7", endpoint), "plant-io.toml", program.get(), error);
    ASSERT_TRUE(c) << endpoint << ": " << error;
    EXPECT_EQ(c->devices[1].endpoint, endpoint);
    EXPECT_EQ(c->devices[1].host, want.first) << endpoint;
    EXPECT_EQ(c->devices[1].port, want.second) << endpoint;
  }
}

TEST_F(IoConfigTest, DurationsMustBePositive) {
  EXPECT_EQ(errorOf(edited("period = \"20ms\"", "period = \"0ms\"")),
            "plant-io.toml:6:10: 'period' must be more than 0 (it is '0ms')");
  EXPECT_EQ(errorOf(edited("period = \"20ms\"", "period = \"-5ms\"")),
            "plant-io.toml:6:10: 'period': '-5ms' is not a duration like 10ms, 1.5s or 500us");
  EXPECT_EQ(errorOf(edited("timeout = \"150ms\"", "timeout = \"150 parsecs\"")),
            "plant-io.toml:7:11: 'timeout': '150 parsecs' is not a duration like 10ms, 1.5s or 500us");
}

TEST_F(IoConfigTest, CountsAndAddresses) {
  EXPECT_EQ(errorOf(edited("count = 8", "count = 0")), "plant-io.toml:17:9: 'count' must be at least 1 (it is 0)");
  EXPECT_EQ(errorOf(edited("address = 5", "address = 65535")),
            "plant-io.toml:41:9: address 65535 + count 3 passes the last Modbus address, 65535");
  EXPECT_EQ(errorOf(edited("address = 5", "address = 70000")),
            "plant-io.toml:40:11: 'address' must be a Modbus address 0..65535 (it is 70000)");
  EXPECT_EQ(errorOf(edited("count = 2\nto = \"%ID2\"", "count = 3\nto = \"%ID2\"")),
            "plant-io.toml:23:9: 'count' 3 is not a whole number of DINT values (2 registers each)");
}

TEST_F(IoConfigTest, LongMapsAreSplitNotRefused) {
  // 300 registers is more than one request holds (125): the driver reads it in three.
  const std::string text = R"([[device]]
name = "big"
endpoint = "tcp://127.0.0.1:1502"
[[device.map]]
area = "holding_registers"
address = 0
count = 300
to = "%IW0"
)";
  std::string error;
  const std::optional<IoConfig> c = parseIoConfig(text, "big.toml", nullptr, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->devices[0].maps[0].count, 300u);
  // Against the program, 600 bytes are more than its %I area holds.
  EXPECT_EQ(errorOf(text),
            "plant-io.toml:4:1: this map of device 'big' covers %IB0..%IB599, beyond the %I area the program "
            "declares (16 bytes, through its located variables)");
}

TEST_F(IoConfigTest, AreasAndImageAddresses) {
  EXPECT_EQ(errorOf(edited("to = \"%IX0.0\"", "to = \"%QX1.0\"")),
            "plant-io.toml:18:6: 'to': discrete_inputs are read from the device, so they map onto %I, not '%QX1.0'");
  EXPECT_EQ(errorOf(edited("to = \"%IX0.0\"", "to = \"%IB0\"")),
            "plant-io.toml:18:6: 'to': discrete_inputs map onto bits: give the first one as %IX<byte>.<bit>, not "
            "'%IB0'");
  EXPECT_EQ(errorOf(edited("to = \"%QW3\"", "to = \"%QX6.0\"")),
            "plant-io.toml:31:6: 'to': holding_registers map onto whole bytes: give a %QW, %QD, %QB or %QL address, "
            "not the bit '%QX6.0'");
  EXPECT_EQ(errorOf(edited("to = \"%IX0.0\"", "to = \"%MX0.0\"")),
            "plant-io.toml:18:6: 'to': '%MX0.0' is not in %I or %Q");
  EXPECT_EQ(errorOf(edited("to = \"%IX0.0\"", "to = \"%IX0.9\"")),
            "plant-io.toml:18:6: 'to': '%IX0.9' has a bad bit number (0..7)");
  EXPECT_EQ(errorOf(edited("status = \"%IW7\"", "status = \"%QW7\"")),
            "plant-io.toml:10:10: 'status': the health word is a word of %I (%IW<n>), not '%QW7'");
}

TEST_F(IoConfigTest, OverlappingImageRanges) {
  // The status word %IW4 (bytes 8..9) lies on the DINT at %ID2 (bytes 8..11).
  EXPECT_EQ(errorOf(edited("status = \"%IW7\"", "status = \"%IW4\"")),
            "plant-io.toml:2:1: the status word of device 'rack1' covers %IB8..%IB9, which overlaps a map of device "
            "'rack1' (input_registers 2 from %ID2) at line 20 (%IB8..%IB9)")
      << "the status word is claimed after the maps";
  // A second device's coils on the first's discrete inputs... in %Q: the holding register at %QW3.
  EXPECT_EQ(errorOf(edited("to = \"%QX0.0\"", "to = \"%QX6.6\"")),
            "plant-io.toml:38:1: a map of device 'drive' (coils 3 from %QX6.6) covers %QX6.6..%QX7.0, which overlaps "
            "a map of device 'rack1' (holding_registers 1 from %QW3) at line 27 (%QX6.6..%QX7.0)");
}

TEST_F(IoConfigTest, TwoMapsWritingOneRegister) {
  const std::string text = edited("[[device]]\nname = \"drive\"", R"([[device.map]]
area = "holding_registers"
address = 100
count = 1
to = "%QW2"

[[device]]
name = "drive")");
  EXPECT_EQ(errorOf(text),
            "plant-io.toml:34:1: this map writes holding_registers 100..100 of device 'rack1', which the map at line "
            "27 writes too");
}

TEST_F(IoConfigTest, SizesTheProgramDeclares) {
  // %ID2 is a DINT in the program: two INTs on it are refused, ...
  EXPECT_EQ(errorOf(edited("type = \"DINT\"", "type = \"INT\"")),
            "plant-io.toml:20:1: this map puts INT values (2 bytes each) on %IB8..%IB11, where the program declares "
            "'Main.level' AT %ID2 with values of 4 bytes");
  // ... and so is a REAL at %QD1 (bytes 4..7) over the INT at %QW3 (bytes 6..7).
  EXPECT_EQ(errorOf(edited("count = 1\nto = \"%QW3\"\ntype = \"INT\"", "count = 2\nto = \"%QD1\"\ntype = \"REAL\"")),
            "plant-io.toml:27:1: this map puts REAL values (4 bytes each) on %QB4..%QB7, where the program declares "
            "'Main.speed' AT %QW3 with values of 2 bytes");
  // Without the program, only the file is checked.
  std::string error;
  EXPECT_TRUE(parseIoConfig(edited("type = \"DINT\"", "type = \"UDINT\""), "x.toml", nullptr, error)) << error;
}

// What a device calls a variable's bits (trace export --names modbus): bits, bit ranges, registers
// of a DINT in kGood's little word order, a bit of a register counted in the register's value, the
// health word, and what no single map holds whole.
TEST_F(IoConfigTest, ModbusNamesOfImageBits) {
  std::string error;
  const std::optional<IoConfig> c = parseIoConfig(kGood, "plant-io.toml", program.get(), error);
  ASSERT_TRUE(c) << error;
  auto name = [&](char area, uint64_t firstBit, uint64_t bits) {
    return modbusName(*c, area, firstBit, bits).value_or("(none)");
  };
  EXPECT_EQ(name('I', 0, 1), "rack1.discrete_input_0");
  EXPECT_EQ(name('I', 3, 1), "rack1.discrete_input_3");
  EXPECT_EQ(name('I', 0, 8), "rack1.discrete_inputs_0_7");
  EXPECT_EQ(name('I', 64, 32), "rack1.input_registers_10_11");  // level AT %ID2 : DINT
  // word_order little: the DINT's low word is register 10, its high word register 11.
  EXPECT_EQ(name('I', 64, 1), "rack1.input_register_10_bit_0");  // %IX8.0
  EXPECT_EQ(name('I', 72, 1), "rack1.input_register_10_bit_8");  // %IX9.0
  EXPECT_EQ(name('I', 81, 1), "rack1.input_register_11_bit_1");  // %IX10.1
  EXPECT_EQ(name('I', 112, 16), "rack1.status");                 // %IW7
  EXPECT_EQ(name('I', 112, 1), "rack1.status_bit_0");
  EXPECT_EQ(name('I', 120, 1), "rack1.status_bit_8");
  EXPECT_EQ(name('Q', 48, 16), "rack1.holding_register_100");  // speed AT %QW3
  EXPECT_EQ(name('Q', 1, 1), "drive.coil_6");                  // %QX0.1, the map's second coil
  EXPECT_EQ(name('Q', 0, 3), "drive.coils_5_7");
  EXPECT_EQ(name('I', 24, 1), "(none)");   // %IX3.0: no map
  EXPECT_EQ(name('I', 64, 8), "(none)");   // a BYTE inside a register: neither a bit nor a register
  EXPECT_EQ(name('Q', 0, 8), "(none)");    // %QB0: three coils and five bits of no map
  EXPECT_EQ(name('I', 56, 16), "(none)");  // across the discrete inputs' end and a register's start
  // byte_order little: a register's bytes are swapped, so image bit 0 of the value is its bit 8.
  const std::optional<IoConfig> swapped =
      parseIoConfig(edited("byte_order = \"big\"", "byte_order = \"little\""), "plant-io.toml", program.get(), error);
  ASSERT_TRUE(swapped) << error;
  EXPECT_EQ(modbusName(*swapped, 'I', 64, 1).value_or("(none)"), "rack1.input_register_10_bit_8");
  EXPECT_EQ(modbusName(*swapped, 'I', 72, 1).value_or("(none)"), "rack1.input_register_10_bit_0");
}

}  // namespace
}  // namespace scanback::runtime::io
