#include "runtime/io/modbus_device.h"

#include <netdb.h>

#include <fmt/format.h>
#include <modbus/modbus.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

namespace scanback::runtime::io {

static_assert(std::endian::native == std::endian::little, "the image holds values in the host's order: little endian");

namespace {

constexpr std::chrono::milliseconds kFirstBackOff{100};
constexpr std::chrono::milliseconds kLastBackOff{5000};
constexpr size_t kSamples = 1024;

uint16_t swapBytes(uint16_t v) { return static_cast<uint16_t>((v >> 8) | (v << 8)); }

modbus_t* context(void* ctx) { return static_cast<modbus_t*>(ctx); }

}  // namespace

void registersToImage(const uint16_t* registers, uint32_t values, ValueType type, Order wordOrder, Order byteOrder,
                      uint8_t* image) {
  const uint32_t size = typeBytes(type), perValue = size / 2;
  for (uint32_t v = 0; v < values; ++v) {
    const uint16_t* w = registers + v * perValue;
    uint64_t value = 0;
    for (uint32_t k = 0; k < perValue; ++k) {
      uint16_t r = w[wordOrder == Order::Big ? k : perValue - 1 - k];  // the k-th most significant word
      if (byteOrder == Order::Little) r = swapBytes(r);
      value = (value << 16) | r;
    }
    std::memcpy(image + v * size, &value, size);  // the low `size` bytes, little endian
  }
}

void imageToRegisters(const uint8_t* image, uint32_t values, ValueType type, Order wordOrder, Order byteOrder,
                      uint16_t* registers) {
  const uint32_t size = typeBytes(type), perValue = size / 2;
  for (uint32_t v = 0; v < values; ++v) {
    uint64_t value = 0;
    std::memcpy(&value, image + v * size, size);
    uint16_t* w = registers + v * perValue;
    for (uint32_t k = 0; k < perValue; ++k) {
      uint16_t r = static_cast<uint16_t>(value >> (16 * (perValue - 1 - k)));
      if (byteOrder == Order::Little) r = swapBytes(r);
      w[wordOrder == Order::Big ? k : perValue - 1 - k] = r;
    }
  }
}

ModbusDevice::ModbusDevice(Device device) : device_(std::move(device)) {
  // The device's spans of %I and %Q (bytes), and the requests, each at most what one request holds
  // and on whole values.
  uint64_t inLo = UINT64_MAX, inHi = 0, outLo = UINT64_MAX, outHi = 0;
  auto claim = [](uint64_t& lo, uint64_t& hi, uint64_t firstBit, uint64_t bits) {
    lo = std::min(lo, firstBit / 8);
    hi = std::max(hi, (firstBit + bits + 7) / 8);
  };
  for (const MapEntry& m : device_.maps)
    (m.toDevice() ? claim(outLo, outHi, m.firstBit(), m.bitCount()) : claim(inLo, inHi, m.firstBit(), m.bitCount()));
  if (device_.statusByte) claim(inLo, inHi, uint64_t{*device_.statusByte} * 8, 16);
  if (inHi == 0) inLo = 0;
  if (outHi == 0) outLo = 0;
  inFirst_ = static_cast<uint32_t>(inLo);
  outFirst_ = static_cast<uint32_t>(outLo);
  inMask_.assign(inHi - inLo, 0);
  outBytes_ = static_cast<uint32_t>(outHi - outLo);
  for (const MapEntry& m : device_.maps) {
    const bool bits = holdsBits(m.area);
    const uint32_t perValue = bits ? 1 : m.registersPerValue();
    const uint32_t limit = bits ? (m.toDevice() ? kMaxWriteBits : kMaxReadBits)
                                : (m.toDevice() ? kMaxWriteRegisters : kMaxReadRegisters) / perValue * perValue;
    const uint32_t first = m.toDevice() ? outFirst_ : inFirst_;
    for (uint32_t done = 0; done < m.count; done += limit) {
      Request r;
      r.map = &m;
      r.address = static_cast<uint16_t>(m.address + done);
      r.count = std::min(limit, m.count - done);
      const uint64_t bit = m.firstBit() + (bits ? done : uint64_t{done} * 16) - uint64_t{first} * 8;
      r.byte = static_cast<uint32_t>(bit / 8);
      r.bit = static_cast<uint8_t>(bit % 8);
      (m.toDevice() ? writes_ : reads_).push_back(std::move(r));
    }
    if (!m.toDevice())
      for (uint64_t b = m.firstBit() - uint64_t{inFirst_} * 8, e = b + m.bitCount(); b < e; ++b)
        inMask_[b / 8] |= static_cast<uint8_t>(1u << (b % 8));
  }
  if (device_.statusByte) inMask_[*device_.statusByte - inFirst_] = inMask_[*device_.statusByte - inFirst_ + 1] = 0xFF;
  inputs_.resize(inMask_.size());
  outputsHandOver_.resize(outBytes_);
  staging_.assign(inMask_.size(), 0);
  lastGood_.assign(inMask_.size(), 0);
  outputs_.assign(outBytes_, 0);
  registers_.resize(kMaxReadRegisters);
  bits_.resize(kMaxReadBits);
  thread_ = std::thread([this] { run(); });
}

ModbusDevice::~ModbusDevice() {
  {
    std::lock_guard lock(stopMutex_);
    stopping_ = true;
  }
  stopChanged_.notify_all();
  thread_.join();
  disconnect();
}

void ModbusDevice::readInputs(std::span<uint8_t> inputs) {
  inputs_.take();
  const std::vector<uint8_t>& newest = inputs_.readBuffer();
  const size_t n = std::min(newest.size(), inputs.size() > inFirst_ ? inputs.size() - inFirst_ : 0);
  uint8_t* to = inputs.data() + inFirst_;
  for (size_t i = 0; i < n; ++i) to[i] = static_cast<uint8_t>((to[i] & ~inMask_[i]) | (newest[i] & inMask_[i]));
}

void ModbusDevice::writeOutputs(std::span<const uint8_t> outputs) {
  if (!outBytes_ || outputs.size() < outFirst_ + outBytes_) return;
  std::memcpy(outputsHandOver_.writeBuffer().data(), outputs.data() + outFirst_, outBytes_);
  outputsHandOver_.publish();
}

bool ModbusDevice::faulted(std::string& message) const {
  if (!faulted_.load(std::memory_order_acquire)) return false;
  message = faultMessage_;
  return true;
}

IoHealth ModbusDevice::health() const {
  IoHealth h;
  h.device = device_.name;
  h.endpoint = device_.endpoint;
  std::vector<uint32_t> roundTrips;
  {
    std::lock_guard lock(healthMutex_);
    h.state = state_;
    h.ok = state_ == "ok";
    h.error = error_;
    h.failures = failures_;
    h.requests = requests_;
    roundTrips.reserve(samples_.size());
    for (const Sample& s : samples_) roundTrips.push_back(s.roundTripNs);
    // Answered requests over the last second; over the samples kept when they span less than that.
    const auto now = std::chrono::steady_clock::now();
    const size_t recent = static_cast<size_t>(std::count_if(
        samples_.begin(), samples_.end(), [&](const Sample& s) { return now - s.at <= std::chrono::seconds(1); }));
    const double span = recent == kSamples ? std::chrono::duration<double>(now - samples_.front().at).count() : 1.0;
    h.requestRate = static_cast<double>(recent) / std::max(span, 1e-3);
  }
  if (!roundTrips.empty()) {
    std::sort(roundTrips.begin(), roundTrips.end());
    auto quantile = [&](double q) {
      return uint64_t{roundTrips[std::min(roundTrips.size() - 1, static_cast<size_t>(q * roundTrips.size()))]};
    };
    h.roundTripP50Ns = quantile(0.5);
    h.roundTripP99Ns = quantile(0.99);
  }
  return h;
}

bool ModbusDevice::sleepUntil(std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(stopMutex_);
  return !stopChanged_.wait_until(lock, until, [this] { return stopping_; });
}

void ModbusDevice::run() {
  auto backOff = kFirstBackOff;
  auto next = std::chrono::steady_clock::now();
  const auto period = std::chrono::nanoseconds(device_.periodNs);
  for (;;) {
    {
      std::lock_guard lock(stopMutex_);
      if (stopping_) return;
    }
    std::string error;
    bool keepConnection = false;
    if (!ctx_ && !connect(error)) {
      failed(error);
    } else if (pollRound(error, keepConnection)) {
      succeeded();
      backOff = kFirstBackOff;
    } else {
      failed(error);
      if (keepConnection) {
        // The device answered, with an exception: the connection is sound, the poll goes on.
        backOff = kFirstBackOff;
      } else {
        disconnect();
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (!ctx_) {
      // Reconnect after the back-off, doubling up to kLastBackOff.
      if (!sleepUntil(now + backOff)) return;
      backOff = std::min(backOff * 2, kLastBackOff);
      next = std::chrono::steady_clock::now();
      continue;
    }
    next += period;
    if (next < now) next = now;  // late (a slow answer): the next round at once, no burst of missed rounds
    if (!sleepUntil(next)) return;
  }
}

bool ModbusDevice::connect(std::string& error) {
  // A host name is resolved at every connection (a device whose address changed is found at its
  // next reconnect). libmodbus says only "Connection refused" for a name it cannot resolve: resolve
  // it here first, for a message that says what is wrong.
  const std::string service = std::to_string(device_.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(device_.host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    error = fmt::format("{} ({}): cannot connect: cannot resolve '{}': {}", device_.name, device_.endpoint,
                        device_.host, gai_strerror(rc));
    return false;
  }
  freeaddrinfo(found);
  // The protocol-independent context: IPv4, IPv6 and host names alike.
  modbus_t* ctx = modbus_new_tcp_pi(device_.host.c_str(), service.c_str());
  if (!ctx) {
    error = fmt::format("{} ({}): cannot create a Modbus context: {}", device_.name, device_.endpoint,
                        modbus_strerror(errno));
    return false;
  }
  const int64_t us = device_.timeoutNs / 1000;
  modbus_set_slave(ctx, device_.unit);
  modbus_set_response_timeout(ctx, static_cast<uint32_t>(us / 1'000'000), static_cast<uint32_t>(us % 1'000'000));
  modbus_set_byte_timeout(ctx, static_cast<uint32_t>(us / 1'000'000), static_cast<uint32_t>(us % 1'000'000));
  const auto sent = std::chrono::steady_clock::now();
  if (modbus_connect(ctx) != 0) {
    const int err = errno;
    error = fmt::format("{} ({}): cannot connect: {}", device_.name, device_.endpoint,
                        err == ETIMEDOUT || err == EINPROGRESS
                            ? fmt::format("no answer within {}", durationText(device_.timeoutNs))
                            : std::string(modbus_strerror(err)));
    modbus_free(ctx);
    (void)sent;
    return false;
  }
  ctx_ = ctx;
  return true;
}

void ModbusDevice::disconnect() {
  if (!ctx_) return;
  modbus_close(context(ctx_));
  modbus_free(context(ctx_));
  ctx_ = nullptr;
}

std::string ModbusDevice::requestError(const char* verb, const Request& r, int err, bool& keepConnection) const {
  std::string why;
  if (err > MODBUS_ENOBASE && err <= EMBXGTAR) {
    keepConnection = true;
    why = fmt::format("the device answered with the Modbus exception '{}'", modbus_strerror(err));
  } else if (err == ETIMEDOUT) {
    why = fmt::format("no answer within {}", durationText(device_.timeoutNs));
  } else {
    why = modbus_strerror(err);
  }
  return fmt::format("{} ({}): {} {} {}..{}: {}", device_.name, device_.endpoint, verb, areaName(r.map->area),
                     r.address, r.address + r.count - 1, why);
}

void ModbusDevice::counted(std::chrono::steady_clock::time_point sent, bool ok) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(healthMutex_);
  ++requests_;
  if (!ok) return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - sent).count();
  samples_.push_back({now, static_cast<uint32_t>(std::min<int64_t>(ns, UINT32_MAX))});
  if (samples_.size() > kSamples) samples_.pop_front();
}

bool ModbusDevice::readRequest(Request& r, std::string& error, bool& keepConnection) {
  modbus_t* ctx = context(ctx_);
  const MapEntry& m = *r.map;
  const int count = static_cast<int>(r.count);
  const auto sent = std::chrono::steady_clock::now();
  int got = -1;
  switch (m.area) {
    case Area::Coils: got = modbus_read_bits(ctx, r.address, count, bits_.data()); break;
    case Area::DiscreteInputs: got = modbus_read_input_bits(ctx, r.address, count, bits_.data()); break;
    case Area::HoldingRegisters: got = modbus_read_registers(ctx, r.address, count, registers_.data()); break;
    case Area::InputRegisters: got = modbus_read_input_registers(ctx, r.address, count, registers_.data()); break;
  }
  const int err = errno;
  counted(sent, got == count);
  if (got != count) {
    error = requestError("reading", r, got < 0 ? err : EMBBADDATA, keepConnection);
    return false;
  }
  if (holdsBits(m.area)) {
    for (uint32_t i = 0; i < r.count; ++i) {
      const uint32_t b = r.bit + i;
      uint8_t& byte = staging_[r.byte + b / 8];
      const uint8_t mask = static_cast<uint8_t>(1u << (b % 8));
      byte = static_cast<uint8_t>(bits_[i] ? byte | mask : byte & ~mask);
    }
  } else {
    registersToImage(registers_.data(), r.count / m.registersPerValue(), m.type, device_.wordOrder, device_.byteOrder,
                     staging_.data() + r.byte);
  }
  return true;
}

bool ModbusDevice::writeRequest(Request& r, const std::vector<uint8_t>& outputs, std::string& error,
                                bool& keepConnection) {
  const MapEntry& m = *r.map;
  std::vector<uint16_t> values(r.count);
  if (holdsBits(m.area)) {
    for (uint32_t i = 0; i < r.count; ++i) {
      const uint32_t b = r.bit + i;
      values[i] = (outputs[r.byte + b / 8] >> (b % 8)) & 1u;
    }
  } else {
    imageToRegisters(outputs.data() + r.byte, r.count / m.registersPerValue(), m.type, device_.wordOrder,
                     device_.byteOrder, values.data());
  }
  if (device_.write == WriteMode::Changed && r.sent && values == r.lastSent) return true;
  modbus_t* ctx = context(ctx_);
  const int count = static_cast<int>(r.count);
  const auto sent = std::chrono::steady_clock::now();
  int done = -1;
  if (holdsBits(m.area)) {
    std::vector<uint8_t> bits(values.begin(), values.end());
    done = modbus_write_bits(ctx, r.address, count, bits.data());
  } else {
    done = modbus_write_registers(ctx, r.address, count, values.data());
  }
  const int err = errno;
  counted(sent, done == count);
  if (done != count) {
    error = requestError("writing", r, done < 0 ? err : EMBBADDATA, keepConnection);
    r.sent = false;  // written again at the next round, changed or not
    return false;
  }
  r.lastSent = std::move(values);
  r.sent = true;
  return true;
}

bool ModbusDevice::pollRound(std::string& error, bool& keepConnection) {
  staging_ = lastGood_;
  for (Request& r : reads_)
    if (!readRequest(r, error, keepConnection)) return false;
  // The newest outputs the scan thread handed over; none before its first cycle ended.
  if (outputsHandOver_.take()) {
    outputs_ = outputsHandOver_.readBuffer();
    haveOutputs_ = true;
  }
  if (haveOutputs_)
    for (Request& r : writes_)
      if (!writeRequest(r, outputs_, error, keepConnection)) return false;
  return true;
}

// The inputs (and the policy) are published before the health says so: whoever sees a device's new
// state, the control server or a test, finds the image and the fault that go with it.
void ModbusDevice::succeeded() {
  lastGood_ = staging_;
  answering_ = true;
  publishInputs();
  {
    std::lock_guard lock(healthMutex_);
    state_ = "ok";
    error_.clear();
  }
  rounds_.fetch_add(1, std::memory_order_acq_rel);
}

void ModbusDevice::failed(const std::string& error) {
  answering_ = false;
  ++failuresSeen_;
  if (device_.onFault == OnFault::Zero) std::fill(lastGood_.begin(), lastGood_.end(), 0);
  if (device_.onFault == OnFault::Fault && !faulted_.load(std::memory_order_relaxed)) {
    faultMessage_ = fmt::format("scanback: I/O fault: {} (device '{}' has on_fault = \"fault\")", error, device_.name);
    faulted_.store(true, std::memory_order_release);
  }
  publishInputs();
  std::lock_guard lock(healthMutex_);
  state_ = "failing";
  error_ = error;
  failures_ = failuresSeen_;
}

void ModbusDevice::publishInputs() {
  std::vector<uint8_t>& out = inputs_.writeBuffer();
  out = lastGood_;
  if (device_.statusByte) {
    // The health word (docs/fieldbus.md): bit 0 answering, bits 8..15 failures so far (saturated).
    const uint16_t word = static_cast<uint16_t>((answering_ ? 1u : 0u) | (std::min(failuresSeen_, 255u) << 8));
    std::memcpy(out.data() + (*device_.statusByte - inFirst_), &word, 2);
  }
  inputs_.publish();
}

std::vector<std::shared_ptr<IoDriver>> startDevices(const IoConfig& config) {
  std::vector<std::shared_ptr<IoDriver>> drivers;
  for (const Device& d : config.devices) drivers.push_back(std::make_shared<ModbusDevice>(d));
  return drivers;
}

}  // namespace scanback::runtime::io
