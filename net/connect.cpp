#include "net/connect.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <optional>
#include <vector>

namespace scanback::net {

namespace {

// The connected `fd` as a stream (owned); null with `error` when no stream can be made of it.
[[nodiscard]] std::unique_ptr<FdStream> streamOf(int fd, std::string& error) {
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

namespace {

// "mallory (uid 1001)", or "uid 1001" for a user without a name.
std::string userText(uid_t uid) {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
    return std::string(found->pw_name) + " (uid " + std::to_string(uid) + ")";
  return "uid " + std::to_string(uid);
}

}  // namespace

namespace {

// Whether the socket at `path` (`st`) was shared with a group of this process (scanback run
// --control-group) by the user who owns it: its group is one of ours, with read and write, and the
// directory holding it is its owner's (or root's) and writable by no one else, so that only its
// owner can have put it there.
bool sharedWithOurGroup(const std::string& path, const struct stat& st) {
  if ((st.st_mode & 0060) != 0060) return false;
  const int count = ::getgroups(0, nullptr);
  std::vector<gid_t> groups(count > 0 ? static_cast<size_t>(count) : 0);
  if (count > 0 && ::getgroups(count, groups.data()) != count) return false;
  groups.push_back(::getegid());
  if (std::find(groups.begin(), groups.end(), st.st_gid) == groups.end()) return false;
  const std::string::size_type slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat d {};
  return ::lstat(dir.c_str(), &d) == 0 && S_ISDIR(d.st_mode) && (d.st_uid == st.st_uid || d.st_uid == 0) &&
         (d.st_mode & 022) == 0;
}

}  // namespace

bool checkUnixServerOwner(const std::string& path, const FdStream& stream, std::string& error) {
  const uid_t me = ::geteuid();
  const auto trusted = [me](uid_t uid) { return uid == me || uid == 0; };
  const std::string whom = me == 0 ? "root" : "you (" + userText(me) + ") or root";
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    error = "cannot check the owner of the socket " + path + ": " + std::strerror(errno) + "; the token is not sent";
    return false;
  }
  if (!S_ISSOCK(st.st_mode)) {
    error = path + " is not a socket; the token is not sent to it";
    return false;
  }
  const std::optional<PeerCredentials> peer = stream.peerCredentials();
  // Another user's runtime that gave its socket to a group of ours, listening on it itself.
  if (!trusted(st.st_uid) && peer && peer->uid == st.st_uid && sharedWithOurGroup(path, st)) return true;
  if (!trusted(st.st_uid)) {
    error = "the socket " + path + " belongs to user " + userText(st.st_uid) + ", not to " + whom +
            " (nor shared with a group of yours by its owner, from a directory only it writes)" +
            ": the token is not sent to it";
    return false;
  }
  if (!peer) {
    error = "cannot tell which user listens on " + path + "; the token is not sent to it";
    return false;
  }
  if (!trusted(peer->uid)) {
    error = "the process listening on " + path + " (pid " + std::to_string(peer->pid) + ") runs as user " +
            userText(peer->uid) + ", not as " + whom + ": the token is not sent to it";
    return false;
  }
  return true;
}

}  // namespace scanback::net
