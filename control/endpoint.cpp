#include "control/endpoint.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <charconv>

#include "net/connect.h"

namespace scanback::control {

std::string Endpoint::text() const {
  return kind == Kind::Unix ? "unix://" + path : fmt::format("tcp://{}:{}", host, port);
}

std::optional<Endpoint> parseEndpoint(std::string_view text, std::string& error) {
  auto fail = [&](std::string_view why) {
    error = fmt::format("control endpoint '{}': {}", text, why);
    return std::nullopt;
  };
  Endpoint e;
  if (text.starts_with("unix://")) {
    e.kind = Endpoint::Kind::Unix;
    e.path = std::string(text.substr(7));
    if (e.path.empty() || e.path[0] != '/') return fail("expected unix:///absolute/path.sock");
    if (e.path.size() >= sizeof(sockaddr_un{}.sun_path)) return fail("the socket path is too long");
    return e;
  }
  if (text.starts_with("tcp://")) {
    e.kind = Endpoint::Kind::Tcp;
    const std::string_view rest = text.substr(6);
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return fail("expected tcp://127.0.0.1:PORT");
    e.host = std::string(rest.substr(0, colon));
    in_addr addr{};
    if (::inet_pton(AF_INET, e.host.c_str(), &addr) != 1) return fail("the host must be an IPv4 address");
    const std::string_view port = rest.substr(colon + 1);
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535)
      return fail("the port must be a number from 0 to 65535");
    e.port = static_cast<uint16_t>(value);
    return e;
  }
  return fail("expected unix:///path.sock or tcp://127.0.0.1:PORT");
}

std::unique_ptr<net::Listener> listenOn(const Endpoint& endpoint, const std::string& bindAddress, std::string& error) {
  if (endpoint.kind == Endpoint::Kind::Unix) return net::UnixListener::listen(endpoint.path, error);
  return net::TcpListener::listen(endpoint.port, error, bindAddress);
}

uint16_t listeningPort(const net::Listener& listener) {
  const auto* tcp = dynamic_cast<const net::TcpListener*>(&listener);
  return tcp ? tcp->port() : 0;
}

std::unique_ptr<net::FdStream> connectTo(const Endpoint& endpoint, std::string& error) {
  std::unique_ptr<net::FdStream> stream = endpoint.kind == Endpoint::Kind::Unix
                                              ? net::connectUnix(endpoint.path, error)
                                              : net::connectTcp(endpoint.host, endpoint.port, error);
  if (!stream) error = fmt::format("cannot connect to {}: {}", endpoint.text(), error);
  return stream;
}

}  // namespace scanback::control
