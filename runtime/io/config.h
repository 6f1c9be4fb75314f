// The I/O configuration of a runtime (`scanback run --io plant-io.toml`, docs/fieldbus.md): the
// Modbus TCP devices it polls, and where each one's coils, discrete inputs and registers sit in the
// process image. Read with toml++ and checked against the program before anything connects: every
// mistake is refused with its FILE:LINE:COL, so that a wrong map never reaches a machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/bytecode/program.h"

namespace scanback::runtime::io {

// Modbus's four data areas.
enum class Area { DiscreteInputs, InputRegisters, Coils, HoldingRegisters };
const char* areaName(Area area);
// Coils and discrete inputs hold bits; the two others 16-bit registers.
inline bool holdsBits(Area area) { return area == Area::DiscreteInputs || area == Area::Coils; }

// The IEC type of the values of a register map (a bit map's values are BOOL).
enum class ValueType { Bool, Int, UInt, Word, DInt, UDInt, DWord, Real, LInt, ULInt, LWord, LReal };
const char* typeName(ValueType type);
uint32_t typeBytes(ValueType type);  // BOOL: 0 (a bit)

enum class OnFault { Hold, Zero, Fault };
enum class WriteMode { Changed, EveryPoll };
enum class Order { Big, Little };

// Where a TOML value sat, for messages: "plant-io.toml:12:9".
struct ConfigPlace {
  uint32_t line = 0;
  uint32_t column = 0;
};

// One [[device.map]]: `count` Modbus items (bits or registers) from `address`, onto the image from
// `to` on.
struct MapEntry {
  Area area = Area::Coils;
  uint16_t address = 0;
  uint32_t count = 0;
  char imageArea = 'I';  // 'I' (read from the device) or 'Q' (written to it)
  uint32_t byte = 0;     // the first image byte, from the start of its area
  uint8_t bit = 0;       // bit maps: the first bit in `byte`
  ValueType type = ValueType::Word;
  std::string to;  // as written: "%IX0.0"
  ConfigPlace place;

  bool toDevice() const { return imageArea == 'Q'; }
  // Registers one value takes (bit maps: 0).
  uint32_t registersPerValue() const { return typeBytes(type) / 2; }
  // The image bits it covers, from the start of its area: [firstBit, firstBit + bitCount).
  uint64_t firstBit() const { return uint64_t{byte} * 8 + bit; }
  uint64_t bitCount() const { return holdsBits(area) ? count : uint64_t{count} * 16; }
};

struct Device {
  std::string name;
  std::string endpoint;  // as written: "tcp://127.0.0.1:1502"
  std::string host;      // an IPv4 or IPv6 address (no brackets) or a host name
  uint16_t port = 502;
  uint8_t unit = 1;
  int64_t periodNs = 10'000'000;
  int64_t timeoutNs = 100'000'000;
  OnFault onFault = OnFault::Hold;
  WriteMode write = WriteMode::Changed;
  // The byte of %I where the program reads the device's health word (bit 0: answering; bits 8..15:
  // failures so far, saturated at 255); none when the configuration names no `status`.
  std::optional<uint32_t> statusByte;
  Order wordOrder = Order::Big;  // of a 32- or 64-bit value's registers: big = most significant first
  Order byteOrder = Order::Big;  // within a register: big = Modbus's own (most significant byte first)
  std::vector<MapEntry> maps;
  ConfigPlace place;
};

struct IoConfig {
  std::string path;  // the file, as messages name it
  std::string text;  // its text (a trace carries it)
  std::vector<Device> devices;
};

// Modbus's limits for one request (the application protocol's PDU of 253 bytes). A map longer than
// them is read or written as several requests, each on whole values (a 32-bit value is never torn
// between two requests).
inline constexpr uint32_t kMaxReadBits = 2000;
inline constexpr uint32_t kMaxReadRegisters = 125;
inline constexpr uint32_t kMaxWriteBits = 1968;
inline constexpr uint32_t kMaxWriteRegisters = 123;

// Parses and checks `text` (from `path`). With a program, also that every map fits in its %I and %Q
// areas and agrees with the sizes of the located variables it covers. Null with `error`
// ("FILE:LINE:COL: what is wrong") at the first mistake.
[[nodiscard]] std::optional<IoConfig> parseIoConfig(std::string_view text, const std::string& path,
                                                    const Program* program, std::string& error);
// Reads the file, then parseIoConfig.
[[nodiscard]] std::optional<IoConfig> loadIoConfig(const std::string& path, const Program* program, std::string& error);

// What a device calls the image bits [firstBit, firstBit + bitCount) of area 'I' or 'Q' (a located
// variable's bits), for `trace export --names modbus` (docs/fieldbus.md, "Signals by their Modbus
// address"): "DEVICE.coil_3", "DEVICE.discrete_inputs_0_7" (a BYTE over bits),
// "DEVICE.input_register_2", "DEVICE.holding_registers_100_101" (a DINT or REAL),
// "DEVICE.holding_register_4_bit_3" (a BOOL on a bit of a register, counted in the register's value
// as the device sends it, after its byte and word order), "DEVICE.status" (the health word),
// "DEVICE.status_bit_0". None when no single map (or status word) holds all of them, or when they
// are part of a register map but neither one bit nor whole values of its type.
std::optional<std::string> modbusName(const IoConfig& config, char area, uint64_t firstBit, uint64_t bitCount);

// 10000000 -> "10ms", 1500000 -> "1500us": as a configuration writes durations.
std::string durationText(int64_t ns);

// "rack1 (tcp://127.0.0.1:1502, unit 1, every 10ms): 3 maps, on_fault hold" — for trace info.
std::string describeDevice(const Device& device);

}  // namespace scanback::runtime::io
