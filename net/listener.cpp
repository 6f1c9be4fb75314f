#include "net/listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace scanback::net {

namespace {

std::string errnoText(int err) { return std::strerror(err); }

// The wake-up eventfd of a listener: close() signals it, accept() polls it. -1 when none can be made.
int makeWake() { return ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

}  // namespace

Listener::Listener(int fd, int wake) : fd_(fd), wake_(wake) {}

Listener::~Listener() {
  close();
  ::close(fd_);
  ::close(wake_);
}

std::unique_ptr<FdStream> Listener::accept(std::string& error) {
  for (;;) {
    if (closed_.load(std::memory_order_acquire)) return nullptr;
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_, POLLIN, 0}};
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
    configure(conn);
    try {
      return FdStream::socket(conn);
    } catch (const std::exception& e) {
      ::close(conn);
      error = std::string("accept failed: ") + e.what();
      return nullptr;
    }
  }
}

void Listener::close() {
  if (closed_.exchange(true, std::memory_order_acq_rel)) return;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_, &one, sizeof one);
}

// ---------------------------------------------------------------- TCP

std::unique_ptr<TcpListener> TcpListener::listen(uint16_t port, std::string& error, const std::string& address) {
  const std::string where = "cannot listen on " + address + ":" + std::to_string(port) + ": ";
  in_addr bindAddress{};
  if (::inet_pton(AF_INET, address.c_str(), &bindAddress) != 1) {
    error = where + "not an IPv4 address";
    return nullptr;
  }
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
  addr.sin_addr = bindAddress;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, kListenBacklog) != 0) {
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
  const int wake = makeWake();
  if (wake < 0) {
    error = where + errnoText(errno);
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<TcpListener>(new TcpListener(fd, ntohs(addr.sin_port), wake));
}

TcpListener::TcpListener(int fd, uint16_t port, int wake) : Listener(fd, wake), port_(port) {}

void TcpListener::configure(int connection) {
  const int one = 1;
  ::setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// ---------------------------------------------------------------- unix socket

std::unique_ptr<UnixListener> UnixListener::listen(const std::string& path, std::string& error) {
  const std::string where = "cannot listen on " + path + ": ";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    error = where + "a socket path has 1 to " + std::to_string(sizeof addr.sun_path - 1) + " bytes";
    return nullptr;
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      error = where + "the path exists and is not a socket (it is left alone)";
      return nullptr;
    }
    // A socket nobody answers on is what a server that ended without cleaning up leaves.
    const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = probe >= 0 && ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    if (probe >= 0) ::close(probe);
    if (live) {
      error = where + "another server is listening there";
      return nullptr;
    }
    ::unlink(path.c_str());
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = where + errnoText(errno);
    return nullptr;
  }
  // The socket file is created 0600 from the start (no moment where others may connect): the
  // umask applies to bind(). No other thread creates files while the adapter starts.
  const mode_t old = ::umask(0177);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int bindErrno = errno;
  ::umask(old);
  if (bound != 0 || ::listen(fd, kListenBacklog) != 0) {
    error = where + errnoText(bound != 0 ? bindErrno : errno);
    ::close(fd);
    return nullptr;
  }
  if (::chmod(path.c_str(), 0600) != 0 || ::lstat(path.c_str(), &st) != 0) {
    error = where + errnoText(errno);
    ::close(fd);
    ::unlink(path.c_str());
    return nullptr;
  }
  const int wake = makeWake();
  if (wake < 0) {
    error = where + errnoText(errno);
    ::close(fd);
    ::unlink(path.c_str());
    return nullptr;
  }
  return std::unique_ptr<UnixListener>(new UnixListener(fd, path, st.st_dev, st.st_ino, wake));
}

UnixListener::UnixListener(int fd, std::string path, dev_t device, ino_t inode, int wake)
    : Listener(fd, wake), path_(std::move(path)), device_(device), inode_(inode) {}

UnixListener::~UnixListener() {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == device_ && st.st_ino == inode_) ::unlink(path_.c_str());
}

}  // namespace scanback::net
