#include "net/connect.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace scanback::net {

namespace {

// The connected `fd` as a stream (owned); null with `error` when no stream can be made of it.
std::unique_ptr<FdStream> streamOf(int fd, std::string& error) {
  try {
    return FdStream::socket(fd);
  } catch (const std::exception& e) {
    ::close(fd);
    error = e.what();
    return nullptr;
  }
}

}  // namespace

std::unique_ptr<FdStream> connectUnix(const std::string& path, std::string& error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    error = "a socket path has 1 to " + std::to_string(sizeof addr.sun_path - 1) + " bytes";
    return nullptr;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    error = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return nullptr;
  }
  return streamOf(fd, error);
}

std::unique_ptr<FdStream> connectTcp(const std::string& host, uint16_t port, std::string& error) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    error = "not an IPv4 address";
    return nullptr;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    error = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return nullptr;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return streamOf(fd, error);
}

}  // namespace scanback::net
