#include "dap/transport/tcp_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace scanback::dap {

namespace {

std::string errnoText(int err) { return std::strerror(err); }

}  // namespace

std::unique_ptr<TcpListener> TcpListener::listen(uint16_t port, std::string& error) {
  const std::string where = "cannot listen on 127.0.0.1:" + std::to_string(port) + ": ";
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = where + errnoText(errno);
    return nullptr;
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // a restarted adapter gets its port back
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 8) != 0) {
    error = where + errnoText(errno);
    ::close(fd);
    return nullptr;
  }
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    error = where + errnoText(errno);
    ::close(fd);
    return nullptr;
  }
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    error = where + errnoText(errno);
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<TcpListener>(new TcpListener(fd, ntohs(addr.sin_port), wake[0], wake[1]));
}

TcpListener::TcpListener(int fd, uint16_t port, int wakeRead, int wakeWrite) : fd_(fd), port_(port) {
  wake_[0] = wakeRead;
  wake_[1] = wakeWrite;
}

TcpListener::~TcpListener() {
  close();
  ::close(fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

std::unique_ptr<FdStream> TcpListener::accept(std::string& error) {
  for (;;) {
    if (closed_.load(std::memory_order_acquire)) return nullptr;
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      error = "accept failed: " + errnoText(errno);
      return nullptr;
    }
    if (fds[1].revents != 0) return nullptr;
    if (fds[0].revents == 0) continue;
    const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) {
      // The client may have given up between poll and accept; the listening socket is
      // non-blocking so that this never blocks.
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) continue;
      error = "accept failed: " + errnoText(errno);
      return nullptr;
    }
    const int one = 1;
    ::setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    try {
      return FdStream::socket(conn);
    } catch (const std::exception& e) {
      ::close(conn);
      error = std::string("accept failed: ") + e.what();
      return nullptr;
    }
  }
}

void TcpListener::close() {
  if (closed_.exchange(true, std::memory_order_acq_rel)) return;
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
}

}  // namespace scanback::dap
