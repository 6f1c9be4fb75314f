#include "runtime/io/modbus_server.h"

#include <netdb.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <modbus/modbus.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>

namespace scanback::runtime {

namespace {

// The MBAP header of Modbus TCP: transaction id, protocol id, length (of what follows it: the
// unit id and the PDU), unit id. A frame is 6 + length bytes.
constexpr int kMbapBytes = 7;
constexpr uint32_t kMaxAddresses = 65536;  // a table's addresses are 16 bits

// The function codes whose requests write (Modbus application protocol, 6.5 to 6.17).
constexpr uint8_t kWriteSingleCoil = 0x05, kWriteSingleRegister = 0x06, kWriteMultipleCoils = 0x0F,
                  kWriteMultipleRegisters = 0x10, kMaskWriteRegister = 0x16, kReadWriteRegisters = 0x17,
                  kReadInputRegisters = 0x04;

uint32_t word(const uint8_t* p) { return static_cast<uint32_t>(p[0]) << 8 | p[1]; }

uint32_t wordsOf(size_t bytes) { return static_cast<uint32_t>((bytes + 1) / 2); }

// A register's value from image bytes [2n, 2n+1] (the VM's WORD: low byte first); a last register
// of an odd area has no high byte.
uint16_t registerOf(const std::vector<uint8_t>& bytes, uint32_t n) {
  const size_t lo = 2 * static_cast<size_t>(n);
  const uint16_t high = lo + 1 < bytes.size() ? bytes[lo + 1] : 0;
  return static_cast<uint16_t>(bytes[lo] | high << 8);
}

// "127.0.0.1:40312", "[::1]:40312".
std::string peerOf(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET6) {
    const auto& a6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &a6.sin6_addr, text, sizeof text);
    return fmt::format("[{}]:{}", text, ntohs(a6.sin6_port));
  }
  const auto& a4 = reinterpret_cast<const sockaddr_in&>(a);
  inet_ntop(AF_INET, &a4.sin_addr, text, sizeof text);
  return fmt::format("{}:{}", text, ntohs(a4.sin_port));
}

// Whether `a` is a loopback address (127.0.0.0/8, ::1): only this machine reaches it.
bool isLoopback(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET6) {
    const in6_addr& addr = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&addr) || (IN6_IS_ADDR_V4MAPPED(&addr) && addr.s6_addr[12] == 127);
  }
  return (ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr) >> 24) == 127;
}

// A host name as DNS spells one: letters, digits, '-' and '.'.
bool looksLikeHostName(const std::string& h) {
  return !h.empty() && h.size() <= 253 && h.front() != '-' && h.front() != '.' &&
         h.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") == std::string::npos;
}

}  // namespace

// The server thread's own: the libmodbus context (its socket set to the connection being
// answered), the mapping (the peers' view: tables built from the staged copies), and those copies.
struct ModbusServer::Tables {
  struct Connection {
    int fd = -1;
    std::string peer;  // "127.0.0.1:40312"
    int lowWater = 1;
  };
  // While a frame is incomplete, poll() wakes only once `bytes` are readable (or the peer has
  // closed): a frame that arrives in pieces is answered when whole, and a peer that stops in the
  // middle of one costs nothing. Back to 1 before libmodbus reads (its select() honours it too).
  static void setLowWater(Connection& c, int bytes) {
    if (c.lowWater == bytes) return;
    setsockopt(c.fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes);
    c.lowWater = bytes;
  }

  modbus_t* ctx = nullptr;
  modbus_mapping_t* map = nullptr;
  int header = kMbapBytes;
  uint32_t coils = 0, holding = 0, discrete = 0, outputRegisters = 0, memoryRegisters = 0;
  std::vector<uint8_t> latched, outputs, memory;
  std::vector<uint8_t> peer, mask;  // what the peers wrote: the bits of `mask`
  uint64_t seenGeneration = UINT64_MAX;
  std::vector<Connection> connections;
  int answerOut = -1, answerIn = -1;  // a datagram socket pair: libmodbus writes an answer, we read it
  std::chrono::steady_clock::time_point lastRefusalSaid{};
  uint64_t refusalsUnsaid = 0;

  ~Tables() {
    if (answerOut >= 0) close(answerOut);
    if (answerIn >= 0) close(answerIn);
    if (map) modbus_mapping_free(map);
    if (ctx) modbus_free(ctx);
  }

  // The %I tables: the latched inputs with the peers' writes over them.
  void buildInputs() {
    std::vector<uint8_t> view(latched.size());
    for (size_t i = 0; i < view.size(); ++i)
      view[i] = static_cast<uint8_t>((latched[i] & ~mask[i]) | (peer[i] & mask[i]));
    for (uint32_t c = 0; c < coils; ++c) map->tab_bits[c] = (view[c / 8] >> (c % 8)) & 1;
    for (uint32_t r = 0; r < holding; ++r) map->tab_registers[r] = registerOf(view, r);
  }
  void buildOutputs() {
    for (uint32_t c = 0; c < discrete; ++c) map->tab_input_bits[c] = (outputs[c / 8] >> (c % 8)) & 1;
    for (uint32_t r = 0; r < outputRegisters; ++r) map->tab_input_registers[r] = registerOf(outputs, r);
    for (uint32_t r = 0; r < memoryRegisters; ++r)
      map->tab_input_registers[kMemoryRegisterBase + r] = registerOf(memory, r);
  }
  // After a write the reply accepted: the coils [first, first+count) are the peers' now.
  void takeCoils(uint32_t first, uint32_t count) {
    for (uint32_t c = first; c < first + count && c < coils; ++c) {
      const uint8_t bit = static_cast<uint8_t>(1u << (c % 8));
      peer[c / 8] = static_cast<uint8_t>(map->tab_bits[c] ? peer[c / 8] | bit : peer[c / 8] & ~bit);
      mask[c / 8] |= bit;
    }
  }
  void takeRegisters(uint32_t first, uint32_t count) {
    for (uint32_t r = first; r < first + count && r < holding; ++r) {
      const size_t lo = 2 * static_cast<size_t>(r);
      peer[lo] = static_cast<uint8_t>(map->tab_registers[r] & 0xFF);
      mask[lo] = 0xFF;
      if (lo + 1 < peer.size()) {
        peer[lo + 1] = static_cast<uint8_t>(map->tab_registers[r] >> 8);
        mask[lo + 1] = 0xFF;
      }
    }
  }
};

ModbusServer::ModbusServer(const ModbusServerOptions& options)
    : options_(options),
      tables_(std::make_unique<Tables>()),
      stagedLatched_(options.inputBytes),
      stagedOutputs_(options.outputBytes),
      stagedMemory_(options.memoryBytes),
      stagedPeer_(options.inputBytes),
      stagedMask_(options.inputBytes) {}

std::unique_ptr<ModbusServer> ModbusServer::start(const ModbusServerOptions& options, std::string& error) {
  std::unique_ptr<ModbusServer> s(new ModbusServer(options));
  Tables& t = *s->tables_;
  // An IPv4 address, an IPv6 address (no brackets: --io-bind ::1) or a host name, which
  // getaddrinfo resolves (libmodbus's protocol-independent context listens on the first address
  // it can bind).
  in_addr address4{};
  in6_addr address6{};
  const std::string& bind = options.bindAddress;
  if (inet_pton(AF_INET, bind.c_str(), &address4) != 1 && inet_pton(AF_INET6, bind.c_str(), &address6) != 1 &&
      !looksLikeHostName(bind)) {
    error = fmt::format(
        "--io-bind {}: expected an IPv4 address (127.0.0.1, 0.0.0.0), an IPv6 address (::1, ::) or a host name", bind);
    return nullptr;
  }
  if (inet_pton(AF_INET, bind.c_str(), &address4) != 1 && inet_pton(AF_INET6, bind.c_str(), &address6) != 1) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    if (const int rc = getaddrinfo(bind.c_str(), nullptr, &hints, &found); rc != 0) {
      error = fmt::format("--io-bind {}: cannot resolve it: {}", bind, gai_strerror(rc));
      return nullptr;
    }
    freeaddrinfo(found);
  }
  // As a client writes the endpoint: an IPv6 address in brackets.
  const std::string hostText = bind.find(':') != std::string::npos ? "[" + bind + "]" : bind;
  t.ctx = modbus_new_tcp_pi(bind.c_str(), std::to_string(options.port).c_str());
  if (!t.ctx) {
    error = fmt::format("modbus server: {}", modbus_strerror(errno));
    return nullptr;
  }
  t.header = modbus_get_header_length(t.ctx);
  // The server reads a request only once it is whole in the socket (setLowWater): these bound what
  // a frame that lies about its length can cost the other peers, to a millisecond.
  modbus_set_indication_timeout(t.ctx, 0, 1000);
  modbus_set_byte_timeout(t.ctx, 0, 1000);
  s->listenFd_ = modbus_tcp_pi_listen(t.ctx, static_cast<int>(std::min<size_t>(options.maxConnections, 128)));
  if (s->listenFd_ < 0) {
    error = fmt::format("modbus server: cannot listen on {}:{}: {}", hostText, options.port, modbus_strerror(errno));
    return nullptr;
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  getsockname(s->listenFd_, reinterpret_cast<sockaddr*>(&bound), &length);
  s->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                                               : reinterpret_cast<const sockaddr_in&>(bound).sin_port);
  s->loopback_ = isLoopback(bound);
  s->name_ = fmt::format("modbus server tcp://{}:{}", hostText, s->port_);
  fcntl(s->listenFd_, F_SETFL, fcntl(s->listenFd_, F_GETFL) | O_NONBLOCK);
  fcntl(s->listenFd_, F_SETFD, FD_CLOEXEC);
  s->wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wakeFd_ < 0) {
    error = fmt::format("{}: eventfd: {}", s->name_, std::strerror(errno));
    return nullptr;
  }

  int pair[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) != 0) {
    error = fmt::format("{}: socketpair: {}", s->name_, std::strerror(errno));
    return nullptr;
  }
  t.answerOut = pair[0];
  t.answerIn = pair[1];

  t.coils = static_cast<uint32_t>(std::min<size_t>(options.inputBytes * 8, kMaxAddresses));
  t.holding = std::min(wordsOf(options.inputBytes), kMaxAddresses);
  t.discrete = static_cast<uint32_t>(std::min<size_t>(options.outputBytes * 8, kMaxAddresses));
  t.outputRegisters = std::min(wordsOf(options.outputBytes), kMemoryRegisterBase);
  t.memoryRegisters = std::min(wordsOf(options.memoryBytes), kMaxAddresses - kMemoryRegisterBase);
  const uint32_t inputRegisters = t.memoryRegisters ? kMemoryRegisterBase + t.memoryRegisters : t.outputRegisters;
  t.map = modbus_mapping_new_start_address(0, t.coils, 0, t.discrete, 0, t.holding, 0, inputRegisters);
  if (!t.map) {
    error = fmt::format("{}: {}", s->name_, modbus_strerror(errno));
    return nullptr;
  }
  t.latched.assign(options.inputBytes, 0);
  t.outputs.assign(options.outputBytes, 0);
  t.memory.assign(options.memoryBytes, 0);
  t.peer.assign(options.inputBytes, 0);
  t.mask.assign(options.inputBytes, 0);
  s->thread_ = std::thread([server = s.get()] { server->serve(); });
  return s;
}

ModbusServer::~ModbusServer() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    if (write(wakeFd_, &one, sizeof one) < 0) {
      // An eventfd's counter cannot overflow from one write: nothing to do but join.
    }
    thread_.join();
  }
  if (tables_)
    for (const Tables::Connection& c : tables_->connections) close(c.fd);
  if (listenFd_ >= 0) close(listenFd_);
  if (wakeFd_ >= 0) close(wakeFd_);
}

std::string ModbusServer::describeMap() const {
  const Tables& t = *tables_;
  auto range = [](uint32_t first, uint32_t count) {
    return count ? fmt::format("{}..{}", first, first + count - 1) : std::string("none");
  };
  std::string text = fmt::format(
      "coils {} (%IX) and holding registers {} (%IW) writable; discrete inputs {} (%QX), input registers {} "
      "(%QW)",
      range(0, t.coils), range(0, t.holding), range(0, t.discrete), range(0, t.outputRegisters));
  if (t.memoryRegisters) text += fmt::format(" and {} (%MW)", range(kMemoryRegisterBase, t.memoryRegisters));
  text += " read-only";
  if (wordsOf(options_.outputBytes) > t.outputRegisters)
    text += fmt::format("; %Q beyond %QW{} is not served", t.outputRegisters - 1);
  if (options_.inputBytes * 8 > t.coils) text += fmt::format("; %I beyond %IB{} has no coils", t.coils / 8 - 1);
  return text;
}

void ModbusServer::readInputs(std::span<uint8_t> inputs) {
  std::lock_guard lock(mutex_);
  const size_t n = std::min(inputs.size(), stagedLatched_.size());
  for (size_t i = maskedBegin_; i < std::min(maskedEnd_, n); ++i)
    inputs[i] = static_cast<uint8_t>((inputs[i] & ~stagedMask_[i]) | (stagedPeer_[i] & stagedMask_[i]));
  if (n) std::memcpy(stagedLatched_.data(), inputs.data(), n);
  ++imageGeneration_;
}

void ModbusServer::writeOutputs(std::span<const uint8_t> outputs) {
  std::lock_guard lock(mutex_);
  const size_t n = std::min(outputs.size(), stagedOutputs_.size());
  if (n) std::memcpy(stagedOutputs_.data(), outputs.data(), n);
  ++imageGeneration_;
}

void ModbusServer::writeMemory(std::span<const uint8_t> memory) {
  std::lock_guard lock(mutex_);
  const size_t n = std::min(memory.size(), stagedMemory_.size());
  if (n) std::memcpy(stagedMemory_.data(), memory.data(), n);
  ++imageGeneration_;
}

IoHealth ModbusServer::health() const {
  IoHealth h;
  h.device = name_;
  h.ok = !failed_.load();
  if (!h.ok) {
    std::lock_guard lock(errorMutex_);
    h.error = error_;
  }
  h.failures = static_cast<uint32_t>(std::min<uint64_t>(errors(), UINT32_MAX));
  h.clients = static_cast<uint32_t>(clients());
  h.requests = requests();
  return h;
}

void ModbusServer::say(const std::string& line) const {
  if (options_.log)
    options_.log(line);
  else
    std::cerr << line + "\n";
}

void ModbusServer::serve() {
  Tables& t = *tables_;
  uint8_t request[MODBUS_TCP_MAX_ADU_LENGTH];
  bool acceptPaused = false;  // out of descriptors: accept again after a pause
  std::vector<pollfd> fds;

  auto closeConnection = [&](size_t i, const std::string& why) {
    if (!why.empty()) say(fmt::format("scanback: {}: {}: {}", name_, t.connections[i].peer, why));
    close(t.connections[i].fd);
    t.connections.erase(t.connections.begin() + static_cast<std::ptrdiff_t>(i));
    clients_.store(t.connections.size(), std::memory_order_relaxed);
  };

  auto accept = [&] {
    for (;;) {
      sockaddr_storage from{};
      socklen_t length = sizeof from;
      const int fd = accept4(listenFd_, reinterpret_cast<sockaddr*>(&from), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          say(fmt::format("scanback: {}: cannot accept a connection: {}; trying again in 100 ms", name_,
                          std::strerror(errno)));
          acceptPaused = true;
        }
        return;  // EAGAIN: none left; a connection that went away before it was accepted: the same
      }
      if (t.connections.size() >= options_.maxConnections) {
        close(fd);
        ++t.refusalsUnsaid;
        // Said at most once a second, with the count, so a flood of connections cannot flood the log.
        const auto now = std::chrono::steady_clock::now();
        if (now - t.lastRefusalSaid >= std::chrono::seconds(1)) {
          say(
              fmt::format("scanback: {}: connection from {} closed: {} clients are connected already "
                          "(--io-max-connections {}){}",
                          name_, peerOf(from), t.connections.size(), options_.maxConnections,
                          t.refusalsUnsaid > 1 ? fmt::format("; {} refused since the last such line", t.refusalsUnsaid)
                                               : std::string()));
          t.lastRefusalSaid = now;
          t.refusalsUnsaid = 0;
        }
        continue;
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      Tables::Connection c;
      c.fd = fd;
      c.peer = peerOf(from);
      t.connections.push_back(std::move(c));
      clients_.store(t.connections.size(), std::memory_order_relaxed);
    }
  };

  // The newest images the scan thread staged, into the peers' tables.
  auto refresh = [&] {
    {
      std::lock_guard lock(mutex_);
      if (imageGeneration_ == t.seenGeneration) return;
      t.seenGeneration = imageGeneration_;
      if (!t.latched.empty()) std::memcpy(t.latched.data(), stagedLatched_.data(), t.latched.size());
      if (!t.outputs.empty()) std::memcpy(t.outputs.data(), stagedOutputs_.data(), t.outputs.size());
      if (!t.memory.empty()) std::memcpy(t.memory.data(), stagedMemory_.data(), t.memory.size());
    }
    t.buildInputs();
    t.buildOutputs();
  };

  auto publishPeerWrites = [&] {
    size_t begin = t.mask.size(), end = 0;
    for (size_t i = 0; i < t.mask.size(); ++i)
      if (t.mask[i]) {
        begin = std::min(begin, i);
        end = i + 1;
      }
    std::lock_guard lock(mutex_);
    if (!t.peer.empty()) {
      std::memcpy(stagedPeer_.data(), t.peer.data(), t.peer.size());
      std::memcpy(stagedMask_.data(), t.mask.data(), t.mask.size());
    }
    maskedBegin_ = begin < end ? begin : 0;
    maskedEnd_ = end;
  };

  // A write the answer accepted: the coils or registers it wrote are the peers' now. False for a
  // function that does not write.
  auto takeWrite = [&](uint8_t function, uint32_t address, uint32_t count, int read) -> bool {
    const int h = t.header;
    switch (function) {
      case kWriteSingleCoil: t.takeCoils(address, 1); break;
      case kWriteMultipleCoils: t.takeCoils(address, count); break;
      case kWriteSingleRegister:
      case kMaskWriteRegister: t.takeRegisters(address, 1); break;
      case kWriteMultipleRegisters: t.takeRegisters(address, count); break;
      case kReadWriteRegisters:
        if (read >= h + 9) t.takeRegisters(word(request + h + 5), word(request + h + 7));
        break;
      default: return false;
    }
    return true;
  };

  // One request of connection i, if it is whole: false when the connection is to be closed (said).
  auto answer = [&](size_t i, bool hungUp, std::string& why) -> bool {
    Tables::Connection& c = t.connections[i];
    uint8_t head[kMbapBytes];
    const ssize_t got = recv(c.fd, head, sizeof head, MSG_PEEK | MSG_DONTWAIT);
    if (got == 0) return false;  // closed by the peer: nothing to say
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
      why = std::strerror(errno);
      return false;
    }
    if (got < kMbapBytes) {
      if (!hungUp) {
        Tables::setLowWater(c, kMbapBytes);
        return true;
      }
      why = "closed in the middle of a request";
      return false;
    }
    const uint32_t length = word(head + 4);
    const uint32_t frame = 6 + length;
    if (length < 2 || frame > MODBUS_TCP_MAX_ADU_LENGTH) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      why = fmt::format("not a Modbus TCP frame (its header gives a length of {}), connection closed", length);
      return false;
    }
    const ssize_t whole = recv(c.fd, request, frame, MSG_PEEK | MSG_DONTWAIT);
    if (whole < static_cast<ssize_t>(frame)) {
      if (hungUp) {
        why = "closed in the middle of a request";
        return false;
      }
      Tables::setLowWater(c, static_cast<int>(frame));
      return true;
    }
    Tables::setLowWater(c, 1);
    modbus_set_socket(t.ctx, c.fd);
    const int read = modbus_receive(t.ctx, request);
    if (read < 0 || read > static_cast<int>(frame)) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      why = fmt::format("a request its header does not describe ({}), connection closed",
                        read < 0 ? modbus_strerror(errno) : "longer than its frame");
      return false;
    }
    // What libmodbus did not read of the frame (a function it does not know reads no data): dropped,
    // so that the next frame starts where it should.
    if (read < static_cast<int>(frame)) {
      uint8_t rest[MODBUS_TCP_MAX_ADU_LENGTH];
      if (recv(c.fd, rest, frame - static_cast<uint32_t>(read), MSG_DONTWAIT) < 0) {
        why = std::strerror(errno);
        return false;
      }
    }
    if (read == 0) return true;  // libmodbus ignores it (not for this unit)
    requests_.fetch_add(1, std::memory_order_relaxed);
    refresh();
    const int h = t.header;
    const uint8_t function = request[h];
    const uint32_t address = read >= h + 3 ? word(request + h + 1) : 0;
    const uint32_t count = read >= h + 5 ? word(request + h + 3) : 0;
    // Input registers between %QW and %MW are outside the map, though libmodbus's table covers them.
    const bool gap = function == kReadInputRegisters && t.memoryRegisters && address < kMemoryRegisterBase &&
                     address + count > t.outputRegisters;
    // libmodbus answers into the server's own socket pair, not to the peer: a write is handed to the
    // scan thread before the peer has its answer, so that the next cycle start after the answer
    // reads it; and the answer shows whether it is an exception.
    modbus_set_socket(t.ctx, t.answerOut);
    const int built = gap ? modbus_reply_exception(t.ctx, request, MODBUS_EXCEPTION_ILLEGAL_DATA_ADDRESS)
                          : modbus_reply(t.ctx, request, read, t.map);
    uint8_t response[MODBUS_TCP_MAX_ADU_LENGTH];
    const ssize_t answered = built < 0 ? -1 : recv(t.answerIn, response, sizeof response, MSG_DONTWAIT);
    if (answered <= h) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      why = fmt::format("no answer to a request of function {}: {}", function, modbus_strerror(errno));
      return false;
    }
    if (response[h] & 0x80) {
      errors_.fetch_add(1, std::memory_order_relaxed);  // an exception
    } else if (takeWrite(function, address, count, read)) {
      t.buildInputs();
      publishPeerWrites();
    }
    // The socket is non-blocking: a peer that does not read its answers fills its buffer and ends here.
    if (send(c.fd, response, static_cast<size_t>(answered), MSG_NOSIGNAL | MSG_DONTWAIT) != answered) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      why = "it does not read its answers (its socket's buffer is full), connection closed";
      return false;
    }
    return true;
  };

  for (;;) {
    fds.clear();
    fds.push_back({wakeFd_, POLLIN, 0});
    fds.push_back({acceptPaused ? -1 : listenFd_, POLLIN, 0});
    for (const Tables::Connection& c : t.connections) fds.push_back({c.fd, POLLIN | POLLRDHUP, 0});
    const int ready = poll(fds.data(), fds.size(), acceptPaused ? 100 : -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      std::lock_guard lock(errorMutex_);
      error_ = fmt::format("{}: poll: {}", name_, std::strerror(errno));
      failed_.store(true);
      say("scanback: " + error_);
      return;
    }
    if (fds[0].revents) return;
    if (ready == 0) acceptPaused = false;
    // Connections first (by index, from the end: an answer may close one), then new ones.
    for (size_t i = t.connections.size(); i-- > 0;) {
      const short revents = fds[2 + i].revents;
      if (!revents) continue;
      std::string why;
      const bool hungUp = revents & (POLLRDHUP | POLLHUP | POLLERR);
      if (revents & POLLNVAL || !answer(i, hungUp, why)) closeConnection(i, why);
    }
    if (fds[1].revents & POLLIN) accept();
  }
}

}  // namespace scanback::runtime
