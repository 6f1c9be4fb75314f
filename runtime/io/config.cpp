#include "runtime/io/config.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace scanback::runtime::io {

const char* areaName(Area area) {
  switch (area) {
    case Area::DiscreteInputs: return "discrete_inputs";
    case Area::InputRegisters: return "input_registers";
    case Area::Coils: return "coils";
    case Area::HoldingRegisters: return "holding_registers";
  }
  return "?";
}

namespace {

struct TypeInfo {
  ValueType type;
  const char* name;
  uint32_t bytes;
};
constexpr TypeInfo kTypes[] = {
    {ValueType::Bool, "BOOL", 0},   {ValueType::Int, "INT", 2},     {ValueType::UInt, "UINT", 2},
    {ValueType::Word, "WORD", 2},   {ValueType::DInt, "DINT", 4},   {ValueType::UDInt, "UDINT", 4},
    {ValueType::DWord, "DWORD", 4}, {ValueType::Real, "REAL", 4},   {ValueType::LInt, "LINT", 8},
    {ValueType::ULInt, "ULINT", 8}, {ValueType::LWord, "LWORD", 8}, {ValueType::LReal, "LREAL", 8},
};

}  // namespace

const char* typeName(ValueType type) {
  for (const TypeInfo& t : kTypes)
    if (t.type == type) return t.name;
  return "?";
}

uint32_t typeBytes(ValueType type) {
  for (const TypeInfo& t : kTypes)
    if (t.type == type) return t.bytes;
  return 0;
}

namespace {

// The first mistake, thrown from deep in the walk and caught once (parseIoConfig).
struct ConfigError {
  ConfigPlace place;
  std::string message;
};

[[noreturn]] void refuse(const toml::source_region& at, std::string message) {
  throw ConfigError{{static_cast<uint32_t>(at.begin.line), static_cast<uint32_t>(at.begin.column)}, std::move(message)};
}
[[noreturn]] void refuse(ConfigPlace at, std::string message) { throw ConfigError{at, std::move(message)}; }

ConfigPlace placeOf(const toml::node& n) {
  return {static_cast<uint32_t>(n.source().begin.line), static_cast<uint32_t>(n.source().begin.column)};
}

const char* tomlTypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// Every key of `table` is one of `known`; `what` names the table in the message.
void onlyKnownKeys(const toml::table& table, std::initializer_list<std::string_view> known, std::string_view what) {
  for (auto&& [key, value] : table) {
    if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    refuse(key.source(), fmt::format("unknown key '{}' in {} (known: {})", key.str(), what, list));
  }
}

const toml::node* optionalNode(const toml::table& table, std::string_view key) { return table.get(key); }

const toml::node& requiredNode(const toml::table& table, std::string_view key, std::string_view what) {
  const toml::node* n = table.get(key);
  if (!n) refuse(table.source(), fmt::format("{} has no '{}'", what, key));
  return *n;
}

std::string stringOf(const toml::node& n, std::string_view key) {
  if (const auto* s = n.as_string()) return s->get();
  refuse(n.source(), fmt::format("'{}': expected a string, found {}", key, tomlTypeName(n)));
}

int64_t integerOf(const toml::node& n, std::string_view key) {
  if (const auto* i = n.as_integer()) return i->get();
  refuse(n.source(), fmt::format("'{}': expected an integer, found {}", key, tomlTypeName(n)));
}

// "10ms", "1.5s", "500us", "250000ns".
int64_t durationOf(const toml::node& n, std::string_view key) {
  const std::string text = stringOf(n, key);
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  const std::string number = text.substr(0, i), unit = text.substr(i);
  static const std::pair<const char*, double> kUnits[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  double scale = 0;
  for (const auto& [name, s] : kUnits)
    if (unit == name) scale = s;
  char* end = nullptr;
  const double value = number.empty() ? 0 : std::strtod(number.c_str(), &end);
  if (number.empty() || *end || scale == 0)
    refuse(n.source(), fmt::format("'{}': '{}' is not a duration like 10ms, 1.5s or 500us", key, text));
  const double ns = value * scale;
  if (ns < 1) refuse(n.source(), fmt::format("'{}' must be more than 0 (it is '{}')", key, text));
  if (ns > 3600e9) refuse(n.source(), fmt::format("'{}' must be at most an hour (it is '{}')", key, text));
  return static_cast<int64_t>(ns);
}

template <class E>
E choiceOf(const toml::node& n, std::string_view key, std::initializer_list<std::pair<std::string_view, E>> choices) {
  const std::string text = stringOf(n, key);
  std::string list;
  for (const auto& [name, value] : choices) {
    if (text == name) return value;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  refuse(n.source(), fmt::format("'{}': '{}' is not one of {}", key, text, list));
}

// "tcp://HOST:PORT" (PORT defaults to 502), HOST an IPv4 address.
// A host name as DNS spells one (RFC 1123): labels of letters, digits and '-', not at either end.
bool isHostName(std::string_view h) {
  if (h.empty() || h.size() > 253) return false;
  size_t label = 0;
  for (size_t i = 0; i <= h.size(); ++i) {
    if (i == h.size() || h[i] == '.') {
      if (label == 0 || label > 63 || h[i - 1] == '-' || h[i - label] == '-') return false;
      label = 0;
    } else if (std::isalnum(static_cast<unsigned char>(h[i])) || h[i] == '-') {
      ++label;
    } else {
      return false;
    }
  }
  return true;
}

// tcp://HOST[:PORT]: HOST an IPv4 address, an IPv6 address in brackets, or a host name (resolved
// when the device connects, at every connection, so that a name that does not resolve yet is a
// device that is not answering, not a runtime that does not start).
void parseEndpoint(const toml::node& n, Device& d) {
  d.endpoint = stringOf(n, "endpoint");
  const std::string_view e = d.endpoint;
  constexpr const char* kForms =
      "tcp://HOST or tcp://HOST:PORT, HOST an IPv4 address, [an IPv6 address] or a host name";
  if (!e.starts_with("tcp://")) refuse(n.source(), fmt::format("endpoint '{}': expected {}", e, kForms));
  const std::string_view rest = e.substr(6);
  std::string_view host = rest, port;
  bool hasPort = false;
  if (rest.starts_with('[')) {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos)
      refuse(n.source(), fmt::format("endpoint '{}': the IPv6 address has no closing ']'", e));
    host = rest.substr(1, close - 1);
    const std::string_view after = rest.substr(close + 1);
    if (!after.empty() && !after.starts_with(':'))
      refuse(n.source(), fmt::format("endpoint '{}': expected ':PORT' or nothing after ']'", e));
    hasPort = !after.empty();
    if (hasPort) port = after.substr(1);
    in6_addr addr6{};
    if (inet_pton(AF_INET6, std::string(host).c_str(), &addr6) != 1)
      refuse(n.source(), fmt::format("endpoint '{}': '{}' is not an IPv6 address such as ::1", e, host));
  } else {
    const size_t colon = rest.find(':');
    if (colon != std::string_view::npos && rest.find(':', colon + 1) != std::string_view::npos)
      refuse(n.source(), fmt::format("endpoint '{}': an IPv6 address goes in brackets, as in tcp://[::1]:1502", e));
    host = rest.substr(0, colon);
    hasPort = colon != std::string_view::npos;
    if (hasPort) port = rest.substr(colon + 1);
    in_addr addr{};
    const bool dotsAndDigits = !host.empty() && host.find_first_not_of("0123456789.") == std::string_view::npos;
    if (dotsAndDigits && inet_pton(AF_INET, std::string(host).c_str(), &addr) != 1)
      refuse(n.source(), fmt::format("endpoint '{}': '{}' is not an IPv4 address such as 127.0.0.1", e, host));
    if (!dotsAndDigits && !isHostName(host))
      refuse(n.source(), fmt::format("endpoint '{}': '{}' is neither an IPv4 address nor a host name (expected {})", e,
                                     host, kForms));
  }
  d.host = std::string(host);
  if (hasPort) {
    const std::string p(port);
    char* end = nullptr;
    const long value = std::strtol(p.c_str(), &end, 10);
    if (p.empty() || *end || value < 1 || value > 65535)
      refuse(n.source(), fmt::format("endpoint '{}': the port must be 1..65535", e));
    d.port = static_cast<uint16_t>(value);
  }
}

// An image address of `to` or `status`: the area, its first byte and bit, its size letter.
struct ImageAddress {
  char area = 0;
  char size = 0;  // X B W D L
  uint32_t byte = 0;
  uint8_t bit = 0;
};

ImageAddress imageAddressOf(const toml::node& n, std::string_view key) {
  const std::string text = stringOf(n, key);
  std::string a;
  for (char c : text) a += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ImageAddress out;
  auto bad = [&](std::string why) -> ImageAddress { refuse(n.source(), fmt::format("'{}': '{}' {}", key, text, why)); };
  if (a.size() < 4 || a[0] != '%') return bad("is not an image address like %IX0.0 or %QW4");
  out.area = a[1];
  if (out.area != 'I' && out.area != 'Q') return bad("is not in %I or %Q");
  out.size = a[2];
  const uint32_t unit = out.size == 'X' || out.size == 'B' ? 1
                        : out.size == 'W'                  ? 2
                        : out.size == 'D'                  ? 4
                        : out.size == 'L'                  ? 8
                                                           : 0;
  if (!unit) return bad("has no size letter X, B, W, D or L (%IX0.0, %IW2)");
  const std::string rest = a.substr(3);
  char* end = nullptr;
  const unsigned long long number = std::strtoull(rest.c_str(), &end, 10);
  if (end == rest.c_str()) return bad("has no address number");
  if (out.size == 'X') {
    if (*end != '.') return bad("needs a bit: %IX<byte>.<bit>");
    char* end2 = nullptr;
    const unsigned long bit = std::strtoul(end + 1, &end2, 10);
    if (end2 == end + 1 || *end2 || bit > 7) return bad("has a bad bit number (0..7)");
    out.byte = static_cast<uint32_t>(std::min<unsigned long long>(number, 1ull << 20));
    out.bit = static_cast<uint8_t>(bit);
  } else {
    if (*end) return bad("is not an address like %IW2");
    out.byte = static_cast<uint32_t>(std::min<unsigned long long>(number * unit, 1ull << 20));
  }
  if (out.byte >= 65536) return bad("is beyond the 64 KiB I/O area");
  return out;
}

// A located variable of the program, in %I or %Q: the bits it covers and the size of its values.
struct Located {
  char area = 0;
  uint64_t firstBit = 0, bitCount = 0;
  uint32_t unitBits = 0;  // an array's element, else the whole variable
  std::string name, location;
};

void collectLocated(const Program& program, const std::vector<Variable>& vars, const std::string& prefix,
                    std::vector<Located>& out, int depth) {
  for (const Variable& v : vars) {
    if (!v.type) continue;
    if (v.absolute && v.location.size() >= 3 && (v.location[1] == 'I' || v.location[1] == 'Q') &&
        v.location[2] != '*') {
      const IoArea& area = v.location[1] == 'I' ? program.input : program.output;
      Located l;
      l.area = v.location[1];
      l.name = prefix + v.name;
      l.location = v.location;
      const uint64_t byte = v.offset - area.offset;
      if (v.bit >= 0) {
        l.firstBit = byte * 8 + static_cast<uint64_t>(v.bit);
        l.bitCount = l.unitBits = 1;
      } else {
        l.firstBit = byte * 8;
        l.bitCount = uint64_t{v.type->size} * 8;
        const Type* unit = v.type;
        while (unit->kind == TypeKind::Array && unit->base) unit = unit->base;
        l.unitBits = unit->size * 8;
      }
      out.push_back(std::move(l));
    } else if (v.type->kind == TypeKind::FunctionBlock && depth < 8) {
      collectLocated(program, v.type->fields, prefix + v.name + ".", out, depth + 1);
    }
  }
}

std::vector<Located> locatedVariables(const Program& program) {
  std::vector<Located> out;
  collectLocated(program, program.globals, "", out, 0);
  for (const ProgramInstanceInfo& p : program.instances)
    if (p.type) collectLocated(program, p.type->fields, p.name + ".", out, 1);
  return out;
}

// A range of image bits that a map or a status word claims, for the overlap check.
struct Claim {
  char area;
  uint64_t first, end;
  std::string what;
  ConfigPlace place;
};

MapEntry parseMap(const toml::table& t, const Device& device) {
  const std::string what = fmt::format("a [[device.map]] of device '{}'", device.name);
  onlyKnownKeys(t, {"area", "address", "count", "to", "type"}, what);
  MapEntry m;
  m.place = placeOf(t);
  m.area = choiceOf<Area>(requiredNode(t, "area", what), "area",
                          {{"discrete_inputs", Area::DiscreteInputs},
                           {"input_registers", Area::InputRegisters},
                           {"coils", Area::Coils},
                           {"holding_registers", Area::HoldingRegisters}});
  const toml::node& addressNode = requiredNode(t, "address", what);
  const int64_t address = integerOf(addressNode, "address");
  if (address < 0 || address > 65535)
    refuse(addressNode.source(), fmt::format("'address' must be a Modbus address 0..65535 (it is {})", address));
  m.address = static_cast<uint16_t>(address);
  const toml::node& countNode = requiredNode(t, "count", what);
  const int64_t count = integerOf(countNode, "count");
  if (count < 1) refuse(countNode.source(), fmt::format("'count' must be at least 1 (it is {})", count));
  if (address + count > 65536)
    refuse(countNode.source(),
           fmt::format("address {} + count {} passes the last Modbus address, 65535", address, count));
  m.count = static_cast<uint32_t>(count);
  const bool bits = holdsBits(m.area);
  m.type = bits ? ValueType::Bool : ValueType::Word;
  if (const toml::node* typeNode = optionalNode(t, "type")) {
    const std::string name = stringOf(*typeNode, "type");
    std::string upper;
    for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const TypeInfo* found = nullptr;
    for (const TypeInfo& info : kTypes)
      if (upper == info.name) found = &info;
    if (!found)
      refuse(typeNode->source(),
             fmt::format("'type': '{}' is not one of BOOL, INT, UINT, WORD, DINT, UDINT, DWORD, REAL, LINT, ULINT, "
                         "LWORD, LREAL",
                         name));
    if (bits && found->type != ValueType::Bool)
      refuse(typeNode->source(),
             fmt::format("'type': {} holds bits, so its values are BOOL, not {}", areaName(m.area), found->name));
    if (!bits && found->type == ValueType::Bool)
      refuse(typeNode->source(),
             fmt::format("'type': {} holds 16-bit registers: BOOL is for coils and discrete inputs (map a register "
                         "as WORD and read its bits, %IX..)",
                         areaName(m.area)));
    m.type = found->type;
  }
  if (!bits && m.count % m.registersPerValue())
    refuse(countNode.source(), fmt::format("'count' {} is not a whole number of {} values ({} registers each)", m.count,
                                           typeName(m.type), m.registersPerValue()));
  const toml::node& toNode = requiredNode(t, "to", what);
  m.to = stringOf(toNode, "to");
  const ImageAddress to = imageAddressOf(toNode, "to");
  m.imageArea = to.area;
  m.byte = to.byte;
  m.bit = to.bit;
  if ((m.area == Area::DiscreteInputs || m.area == Area::InputRegisters) && to.area != 'I')
    refuse(toNode.source(),
           fmt::format("'to': {} are read from the device, so they map onto %I, not '{}'", areaName(m.area), m.to));
  if (bits && to.size != 'X')
    refuse(toNode.source(), fmt::format("'to': {} map onto bits: give the first one as %{}X<byte>.<bit>, not '{}'",
                                        areaName(m.area), to.area, m.to));
  if (!bits && to.size == 'X')
    refuse(toNode.source(), fmt::format("'to': {} map onto whole bytes: give a %{}W, %{}D, %{}B or %{}L address, "
                                        "not the bit '{}'",
                                        areaName(m.area), to.area, to.area, to.area, to.area, m.to));
  return m;
}

Device parseDevice(const toml::table& t, std::set<std::string>& names) {
  onlyKnownKeys(t,
                {"name", "endpoint", "unit", "period", "timeout", "on_fault", "write", "status", "word_order",
                 "byte_order", "map"},
                "a [[device]]");
  Device d;
  d.place = placeOf(t);
  const toml::node& nameNode = requiredNode(t, "name", "a [[device]]");
  d.name = stringOf(nameNode, "name");
  if (d.name.empty()) refuse(nameNode.source(), "'name' is empty");
  if (!names.insert(d.name).second)
    refuse(nameNode.source(), fmt::format("a device named '{}' is configured already", d.name));
  const std::string what = fmt::format("device '{}'", d.name);
  parseEndpoint(requiredNode(t, "endpoint", what), d);
  if (const toml::node* n = optionalNode(t, "unit")) {
    const int64_t unit = integerOf(*n, "unit");
    if (unit < 0 || unit > 255) refuse(n->source(), fmt::format("'unit' must be 0..255 (it is {})", unit));
    d.unit = static_cast<uint8_t>(unit);
  }
  if (const toml::node* n = optionalNode(t, "period")) d.periodNs = durationOf(*n, "period");
  if (const toml::node* n = optionalNode(t, "timeout")) d.timeoutNs = durationOf(*n, "timeout");
  if (const toml::node* n = optionalNode(t, "on_fault"))
    d.onFault = choiceOf<OnFault>(*n, "on_fault",
                                  {{"hold", OnFault::Hold}, {"zero", OnFault::Zero}, {"fault", OnFault::Fault}});
  if (const toml::node* n = optionalNode(t, "write"))
    d.write =
        choiceOf<WriteMode>(*n, "write", {{"changed", WriteMode::Changed}, {"every-cycle", WriteMode::EveryPoll}});
  if (const toml::node* n = optionalNode(t, "word_order"))
    d.wordOrder = choiceOf<Order>(*n, "word_order", {{"big", Order::Big}, {"little", Order::Little}});
  if (const toml::node* n = optionalNode(t, "byte_order"))
    d.byteOrder = choiceOf<Order>(*n, "byte_order", {{"big", Order::Big}, {"little", Order::Little}});
  if (const toml::node* n = optionalNode(t, "status")) {
    const ImageAddress a = imageAddressOf(*n, "status");
    if (a.area != 'I' || a.size != 'W')
      refuse(n->source(),
             fmt::format("'status': the health word is a word of %I (%IW<n>), not '{}'", stringOf(*n, "status")));
    d.statusByte = a.byte;
  }
  const toml::node* maps = optionalNode(t, "map");
  if (!maps) refuse(t.source(), fmt::format("device '{}' has no [[device.map]]: it would exchange nothing", d.name));
  const toml::array* list = maps->as_array();
  if (!list || !list->is_array_of_tables())
    refuse(maps->source(),
           fmt::format("'map' of device '{}': expected [[device.map]] tables, found {}", d.name, tomlTypeName(*maps)));
  for (const toml::node& m : *list) d.maps.push_back(parseMap(*m.as_table(), d));
  // Two maps that write the same coils or holding registers would fight over them.
  for (size_t i = 0; i < d.maps.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const MapEntry &a = d.maps[i], &b = d.maps[j];
      if (!a.toDevice() || !b.toDevice() || a.area != b.area) continue;
      if (a.address < b.address + b.count && b.address < a.address + a.count)
        refuse(a.place, fmt::format("this map writes {} {}..{} of device '{}', which the map at line {} writes too",
                                    areaName(a.area), a.address, a.address + a.count - 1, d.name, b.place.line));
    }
  return d;
}

std::string bitRangeText(char area, uint64_t first, uint64_t end) {
  if (end - first == 1) return fmt::format("%{}X{}.{}", area, first / 8, first % 8);
  if (first % 8 == 0 && end % 8 == 0) return fmt::format("%{}B{}..%{}B{}", area, first / 8, area, end / 8 - 1);
  return fmt::format("%{}X{}.{}..%{}X{}.{}", area, first / 8, first % 8, area, (end - 1) / 8, (end - 1) % 8);
}

// Against the program: the maps fit its areas and agree with its located variables' sizes.
void checkAgainstProgram(const IoConfig& config, const Program& program) {
  const std::vector<Located> located = locatedVariables(program);
  for (const Device& d : config.devices) {
    for (const MapEntry& m : d.maps) {
      const uint32_t areaBytes = m.imageArea == 'I' ? program.input.size : program.output.size;
      const uint64_t end = m.firstBit() + m.bitCount();
      if (end > uint64_t{areaBytes} * 8)
        refuse(m.place, fmt::format("this map of device '{}' covers {}, beyond the %{} area the program declares ({} "
                                    "bytes, through its located variables)",
                                    d.name, bitRangeText(m.imageArea, m.firstBit(), end), m.imageArea, areaBytes));
      if (holdsBits(m.area)) continue;  // a bit is a bit: BYTE and WORD variables over bits read them as a whole
      const uint64_t valueBits = uint64_t{typeBytes(m.type)} * 8;
      for (const Located& v : located) {
        if (v.area != m.imageArea || v.firstBit >= end || v.firstBit + v.bitCount <= m.firstBit()) continue;
        if (v.bitCount == 1) continue;  // a BOOL on one bit of a register: a status bit, read as such
        const bool sameSize = v.unitBits == valueBits && (v.firstBit - m.firstBit()) % valueBits == 0 &&
                              v.firstBit >= m.firstBit() && v.firstBit + v.bitCount <= end;
        if (!sameSize)
          refuse(m.place, fmt::format("this map puts {} values ({} bytes each) on {}, where the program declares "
                                      "'{}' AT {} with values of {} bytes",
                                      typeName(m.type), typeBytes(m.type), bitRangeText(m.imageArea, m.firstBit(), end),
                                      v.name, v.location, v.unitBits / 8));
      }
    }
    if (d.statusByte && uint64_t{*d.statusByte} + 2 > program.input.size)
      refuse(d.place, fmt::format("the status word %IW{} of device '{}' is beyond the %I area the program declares "
                                  "({} bytes)",
                                  *d.statusByte / 2, d.name, program.input.size));
  }
}

}  // namespace

std::optional<IoConfig> parseIoConfig(std::string_view text, const std::string& path, const Program* program,
                                      std::string& error) {
  IoConfig config;
  config.path = path;
  config.text = std::string(text);
  try {
    toml::table root;
    try {
      root = toml::parse(text, path);
    } catch (const toml::parse_error& e) {
      refuse(e.source(), std::string(e.description()));
    }
    onlyKnownKeys(root, {"device"}, "the I/O configuration");
    const toml::node* devices = root.get("device");
    if (!devices) refuse(ConfigPlace{1, 1}, "no [[device]]: the configuration connects to nothing");
    const toml::array* list = devices->as_array();
    if (!list || !list->is_array_of_tables())
      refuse(devices->source(), fmt::format("'device': expected [[device]] tables, found {}", tomlTypeName(*devices)));
    std::set<std::string> names;
    for (const toml::node& d : *list) config.devices.push_back(parseDevice(*d.as_table(), names));
    // No two maps or status words claim the same image bits.
    std::vector<Claim> claims;
    for (const Device& d : config.devices) {
      for (const MapEntry& m : d.maps)
        claims.push_back({m.imageArea, m.firstBit(), m.firstBit() + m.bitCount(),
                          fmt::format("a map of device '{}' ({} {} from {})", d.name, areaName(m.area), m.count, m.to),
                          m.place});
      if (d.statusByte)
        claims.push_back({'I', uint64_t{*d.statusByte} * 8, uint64_t{*d.statusByte} * 8 + 16,
                          fmt::format("the status word of device '{}'", d.name), d.place});
    }
    for (size_t i = 0; i < claims.size(); ++i)
      for (size_t j = 0; j < i; ++j) {
        const Claim &a = claims[i], &b = claims[j];
        if (a.area != b.area || a.first >= b.end || b.first >= a.end) continue;
        refuse(a.place, fmt::format("{} covers {}, which overlaps {} at line {} ({})", a.what,
                                    bitRangeText(a.area, a.first, a.end), b.what, b.place.line,
                                    bitRangeText(b.area, std::max(a.first, b.first), std::min(a.end, b.end))));
      }
    if (program) checkAgainstProgram(config, *program);
  } catch (const ConfigError& e) {
    error = fmt::format("{}:{}:{}: {}", path, e.place.line, e.place.column, e.message);
    return std::nullopt;
  }
  return config;
}

std::optional<IoConfig> loadIoConfig(const std::string& path, const Program* program, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("{}: cannot read the I/O configuration", path);
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parseIoConfig(text.str(), path, program, error);
}

std::string durationText(int64_t ns) {
  if (ns % 1'000'000'000 == 0) return fmt::format("{}s", ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) return fmt::format("{}ms", ns / 1'000'000);
  if (ns % 1'000 == 0) return fmt::format("{}us", ns / 1'000);
  return fmt::format("{}ns", ns);
}

namespace {

// "coil", "coils"; "holding_register", "holding_registers".
std::string itemName(Area area, bool several) {
  std::string plural = areaName(area);
  return several ? plural : plural.substr(0, plural.size() - 1);
}

std::string itemRange(const std::string& device, Area area, uint64_t first, uint64_t count) {
  if (count == 1) return fmt::format("{}.{}_{}", device, itemName(area, false), first);
  return fmt::format("{}.{}_{}_{}", device, itemName(area, true), first, first + count - 1);
}

}  // namespace

std::optional<std::string> modbusName(const IoConfig& config, char area, uint64_t firstBit, uint64_t bitCount) {
  if (bitCount == 0) return std::nullopt;
  const uint64_t end = firstBit + bitCount;
  for (const Device& d : config.devices) {
    const uint64_t statusBit = d.statusByte ? uint64_t{*d.statusByte} * 8 : 0;
    if (area == 'I' && d.statusByte && firstBit >= statusBit && end <= statusBit + 16) {
      // The health word is a WORD the runtime writes: its image bits are its value's bits.
      if (bitCount == 16) return d.name + ".status";
      if (bitCount == 1) return fmt::format("{}.status_bit_{}", d.name, firstBit - statusBit);
      return std::nullopt;
    }
    for (const MapEntry& m : d.maps) {
      if (m.imageArea != area || firstBit < m.firstBit() || end > m.firstBit() + m.bitCount()) continue;
      const uint64_t offset = firstBit - m.firstBit();  // bits from the map's first
      if (holdsBits(m.area)) return itemRange(d.name, m.area, m.address + offset, bitCount);
      if (bitCount == 1) {
        // Which register, and which bit of its value, holds this image bit (registersToImage's
        // order: the value's k-th most significant word is register k, or perValue-1-k with
        // word_order little; a register's bytes swapped with byte_order little).
        const uint64_t valueBits = uint64_t{typeBytes(m.type)} * 8, perValue = m.registersPerValue();
        const uint64_t value = offset / valueBits, bit = offset % valueBits;
        const uint64_t k = perValue - 1 - bit / 16;
        const uint64_t reg = value * perValue + (d.wordOrder == Order::Big ? k : perValue - 1 - k);
        const uint64_t inRegister = d.byteOrder == Order::Big ? bit % 16 : (bit % 16 + 8) % 16;
        return fmt::format("{}_bit_{}", itemRange(d.name, m.area, m.address + reg, 1), inRegister);
      }
      // Whole values only: part of a DINT is one of its registers or the other as word_order says,
      // and the configuration lets no variable of another size lie over a register map anyway.
      const uint64_t valueBits = uint64_t{typeBytes(m.type)} * 8;
      if (offset % valueBits != 0 || bitCount % valueBits != 0) return std::nullopt;
      return itemRange(d.name, m.area, m.address + offset / 16, bitCount / 16);
    }
  }
  return std::nullopt;
}

std::string describeDevice(const Device& d) {
  static constexpr const char* kPolicies[] = {"hold", "zero", "fault"};
  std::string s =
      fmt::format("{} ({}, unit {}, every {}, timeout {}): {} map{}, on_fault {}, write {}", d.name, d.endpoint, d.unit,
                  durationText(d.periodNs), durationText(d.timeoutNs), d.maps.size(), d.maps.size() == 1 ? "" : "s",
                  kPolicies[static_cast<int>(d.onFault)], d.write == WriteMode::Changed ? "changed" : "every-cycle");
  if (d.statusByte) s += fmt::format(", status %IW{}", *d.statusByte / 2);
  return s;
}

}  // namespace scanback::runtime::io
