// A Modbus TCP server (slave) in this process, with libmodbus, on 127.0.0.1 and a free port: the
// device the client driver's tests (tests/io) and benchmarks (bench/io_bench.cpp) poll. It serves
// any number of connections on a thread of its own; the test reads and changes its registers under
// its lock (with()), can make it stop answering (silent: it reads requests and never replies, a
// stalled device), and counts the requests by function code.
#pragma once

#include <arpa/inet.h>
#include <modbus/modbus.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace scanback::test {

class ModbusTestServer {
 public:
  // `port` 0: a free one. `items`: coils, discrete inputs, holding and input registers from
  // address 0; a request beyond them is answered with the exception "illegal data address".
  // `node`: the address it listens on, IPv4 or IPv6 ("::1").
  explicit ModbusTestServer(uint16_t port = 0, int items = 1000, const char* node = "127.0.0.1") {
    ctx_ = modbus_new_tcp_pi(node, std::to_string(port).c_str());
    mapping_ = modbus_mapping_new(items, items, items, items);
    if (!ctx_ || !mapping_) throw std::runtime_error("modbus test server: out of memory");
    listen_ = modbus_tcp_pi_listen(ctx_, 16);
    if (listen_ < 0) throw std::runtime_error(std::string("modbus test server: listen: ") + modbus_strerror(errno));
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(addr).sin6_port
                                             : reinterpret_cast<const sockaddr_in&>(addr).sin_port);
    if (pipe(wake_) != 0) throw std::runtime_error("modbus test server: pipe");
    thread_ = std::thread([this] { serve(); });
  }
  ~ModbusTestServer() {
    const char c = 0;
    (void)!write(wake_[1], &c, 1);
    thread_.join();
    for (int fd : clients_) close(fd);
    close(listen_);
    close(wake_[0]);
    close(wake_[1]);
    modbus_mapping_free(mapping_);
    modbus_free(ctx_);
  }
  ModbusTestServer(const ModbusTestServer&) = delete;
  ModbusTestServer& operator=(const ModbusTestServer&) = delete;

  uint16_t port() const { return port_; }
  // Runs f(mapping) under the server's lock (it answers no request meanwhile).
  template <class F>
  void with(F f) {
    std::lock_guard lock(mutex_);
    f(*mapping_);
  }
  void setSilent(bool silent) { silent_.store(silent); }
  // Each request first adds 1 to input registers 0..n-1 (0: none): inputs that change at every poll.
  void setTickOnRequest(int n) { tick_.store(n); }
  // Requests received so far with this function code (3: read holding registers, 16: write
  // multiple registers, 15: write multiple coils, ...), and in all.
  uint64_t requests(int function) const { return counts_[function & 0x7F].load(); }
  uint64_t requests() const { return total_.load(); }

 private:
  void serve() {
    std::array<uint8_t, MODBUS_TCP_MAX_ADU_LENGTH> query{};
    for (;;) {
      std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listen_, POLLIN, 0}};
      for (int fd : clients_) fds.push_back({fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), -1) < 0) continue;
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) {
        const int fd = accept(listen_, nullptr, nullptr);
        if (fd >= 0) clients_.push_back(fd);
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        modbus_set_socket(ctx_, fds[i].fd);
        const int n = modbus_receive(ctx_, query.data());
        if (n <= 0) {
          close(fds[i].fd);
          std::erase(clients_, fds[i].fd);
          continue;
        }
        ++total_;
        ++counts_[query[modbus_get_header_length(ctx_)] & 0x7F];
        if (silent_.load()) continue;
        std::lock_guard lock(mutex_);
        for (int r = 0, ticks = std::min(tick_.load(), mapping_->nb_input_registers); r < ticks; ++r)
          ++mapping_->tab_input_registers[r];
        modbus_reply(ctx_, query.data(), n, mapping_);
      }
    }
  }

  modbus_t* ctx_ = nullptr;
  modbus_mapping_t* mapping_ = nullptr;
  int listen_ = -1;
  uint16_t port_ = 0;
  int wake_[2] = {-1, -1};
  std::vector<int> clients_;
  std::mutex mutex_;
  std::atomic<bool> silent_{false};
  std::atomic<int> tick_{0};
  std::array<std::atomic<uint64_t>, 128> counts_{};
  std::atomic<uint64_t> total_{0};
  std::thread thread_;
};

}  // namespace scanback::test
