#include "net/server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <system_error>

namespace scanback::net {

namespace {

// How long a kind of event is said once and then only counted.
constexpr auto kSayWindow = std::chrono::seconds(10);
// The back-off after accept fails: from the first to the last, doubling.
constexpr auto kFirstBackoff = std::chrono::milliseconds(10);
constexpr auto kLastBackoff = std::chrono::milliseconds(1000);
// Connections accepted in one round before the loop looks at its other work (reaping).
constexpr int kAcceptsPerRound = 64;
// An episode of accept failures ends after this long without one: a server short of descriptors
// that makes room for each new connection fails again and again, and that is one episode.
constexpr auto kCalmAfter = std::chrono::seconds(2);

void notify(int eventFd) {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(eventFd, &one, sizeof one);
}

void drain(int eventFd) {
  uint64_t count;
  [[maybe_unused]] const ssize_t n = ::read(eventFd, &count, sizeof count);
}

int milliseconds(std::chrono::milliseconds d) { return static_cast<int>(d.count()); }

// The descriptors open in this process below `limit` (the numbers a limit counts), not counting
// the one that lists them; 0 when they cannot be listed.
size_t openDescriptorsBelow(rlim_t limit) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return 0;
  const int own = ::dirfd(dir);
  size_t n = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const long fd = std::strtol(e->d_name, nullptr, 10);
    if (fd != own && static_cast<rlim_t>(fd) < limit) ++n;
  }
  ::closedir(dir);
  return n;
}

// The client of an accepted connection, for what the server says.
std::string peerText(int fd, const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    char text[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    return fmt::format("{}:{}", text, ntohs(in.sin_port));
  }
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof cred)
    return fmt::format("pid {}, uid {}", cred.pid, cred.uid);
  return "a client";
}

// accept()'s failures that concern the one connection that was waiting (it went away, its network
// failed), not the server: the next one is accepted at once.
bool connectionsOwnFailure(int err) {
  switch (err) {
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
    case EPERM:
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH: return true;
    default: return false;
  }
}

}  // namespace

void Connection::say(const std::string& kind, const std::string& text) {
  server_->say(kind, fmt::format("the connection from {}: {}", peer_, text));
}

void Connection::established() {
  if (established_.exchange(true, std::memory_order_acq_rel)) return;
  stream_->setReadDeadline(std::nullopt, "");
}

Server::Server(std::unique_ptr<Listener> listener, ServerOptions options, Handler handler)
    : listener_(std::move(listener)), options_(std::move(options)), handler_(std::move(handler)) {
  if (const auto* tcp = dynamic_cast<const TcpListener*>(listener_.get())) port_ = tcp->port();
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  stopFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_ < 0 || stopFd_ < 0) {
    const int err = errno;
    if (wake_ >= 0) ::close(wake_);
    if (stopFd_ >= 0) ::close(stopFd_);
    throw std::runtime_error(std::string("cannot create an eventfd: ") + std::strerror(err));
  }
  reserve_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  maxConnections_ = std::max<size_t>(1, options_.maxConnections);
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    // A connection costs one descriptor; what is open now, and the work's share, are not theirs.
    const size_t open = openDescriptorsBelow(limit.rlim_cur);
    const size_t room = limit.rlim_cur > open + kDescriptorsForWork ? limit.rlim_cur - open - kDescriptorsForWork : 1;
    if (room < maxConnections_) {
      maxConnections_ = std::max<size_t>(1, room);
      say("limit at start",
          fmt::format("serving at most {} connections, not {}: the descriptor limit ({}, ulimit -n) "
                      "leaves no more beside the {} open and {} kept for the connections' work",
                      maxConnections_, options_.maxConnections, limit.rlim_cur, open, kDescriptorsForWork));
    }
  }
  acceptTokens_ = options_.acceptBurst;
  acceptTokensAt_ = Clock::now();
  loopThread_ = std::thread([this] { loop(); });
}

Server::~Server() {
  close();
  ::close(wake_);
  ::close(stopFd_);
  if (reserve_ >= 0) ::close(reserve_);
}

void Server::wake() { notify(wake_); }

void Server::requestStop() { notify(stopFd_); }

void Server::waitForStopRequest() {
  pollfd fd{stopFd_, POLLIN, 0};
  while (::poll(&fd, 1, -1) < 0 && errno == EINTR) {
  }
  drain(stopFd_);
}

void Server::niceThisThread() const {
  if (options_.niceness <= 0) return;
  const auto tid = static_cast<id_t>(::gettid());
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (now == -1 && errno != 0) return;
  ::setpriority(PRIO_PROCESS, tid, now + options_.niceness);  // raising one's own nice needs no privilege
}

// ---------------------------------------------------------------- what the server says

void Server::say(const std::string& kind, const std::string& text) {
  std::lock_guard lock(sayMutex_);
  const auto now = Clock::now();
  auto it = said_.find(kind);
  if (it != said_.end() && now - it->second.at < kSayWindow) {
    ++it->second.more;
    it->second.last = text;
    return;
  }
  if (it != said_.end() && it->second.more > 0)
    emit(fmt::format("{} more like this in {:.0f} s: {}", it->second.more,
                     std::chrono::duration<double>(now - it->second.at).count(), it->second.last));
  said_[kind] = Said{now, 0, text};
  emit(text);
}

void Server::emit(const std::string& text) {
  if (options_.log)
    options_.log(text);
  else
    std::cerr << fmt::format("scanback: {}: {}\n", options_.name, text) << std::flush;
}

void Server::flushSaid(bool all) {
  std::lock_guard lock(sayMutex_);
  const auto now = Clock::now();
  for (auto it = said_.begin(); it != said_.end();) {
    Said& s = it->second;
    const bool windowEnded = now - s.at >= kSayWindow;
    if (s.more > 0 && (all || windowEnded)) {
      emit(fmt::format("{} more like this in {:.0f} s: {}", s.more, std::chrono::duration<double>(now - s.at).count(),
                       s.last));
      s.more = 0;
      s.at = now;  // a flood that goes on is told again a window later
    } else if (windowEnded) {
      it = said_.erase(it);
      continue;
    }
    ++it;
  }
}

std::optional<Clock::time_point> Server::nextFlush() {
  std::lock_guard lock(sayMutex_);
  std::optional<Clock::time_point> next;
  for (const auto& [kind, s] : said_)
    if (s.more > 0 && (!next || s.at + kSayWindow < *next)) next = s.at + kSayWindow;
  return next;
}

// ---------------------------------------------------------------- accepting

void Server::loop() {
  niceThisThread();
  for (;;) {
    if (stopAccepting_.load(std::memory_order_acquire)) break;
    std::optional<Clock::time_point> retryAt, calmAt;
    bool roomComing = false;
    {
      std::lock_guard lock(mutex_);
      retryAt = retryAt_;
      if (failingSince_) calmAt = lastFailure_ + kCalmAfter;
      roomComing = awaitingRoom();
    }
    std::optional<Clock::time_point> until = nextFlush();
    for (const auto& t : {retryAt, calmAt})
      if (t && (!until || *t < *until)) until = t;
    int timeoutMs = -1;
    if (until) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*until - Clock::now());
      timeoutMs = std::max(0, milliseconds(left));
    }
    // While backing off, or while the connections closed to make room still hold their
    // descriptors (their threads' ends wake this loop), the listener is not watched: what waits
    // there waits in the backlog.
    const bool watchListener = !retryAt && !roomComing;
    pollfd fds[2] = {{wake_, POLLIN, 0}, {listener_->fd(), POLLIN, 0}};
    const int n = ::poll(fds, watchListener ? 2 : 1, timeoutMs);
    if (n < 0 && errno != EINTR) {
      say("poll", fmt::format("poll failed: {}", std::strerror(errno)));
      std::this_thread::sleep_for(kFirstBackoff);
    }
    if (n > 0 && fds[0].revents != 0) drain(wake_);
    reap();
    if (stopAccepting_.load(std::memory_order_acquire)) break;
    bool tryAccept = false;
    if (retryAt) {
      std::lock_guard lock(mutex_);
      if (retryAt_ && Clock::now() >= *retryAt_) {
        retryAt_.reset();
        tryAccept = !awaitingRoom();
      }
    } else if (roomComing) {
      std::lock_guard lock(mutex_);
      tryAccept = !awaitingRoom();  // reaped meanwhile: a connection may wait
    } else {
      tryAccept = n > 0 && fds[1].revents != 0;
    }
    if (tryAccept) acceptReady();
    endCalmEpisode();
    flushSaid(false);
  }
}

bool Server::awaitingRoom() const {
  size_t held = 0;
  bool closing = false;
  for (const Slot& s : slots_) {
    ++held;
    closing = closing || s.closing;
  }
  return closing && held >= maxConnections_;
}

void Server::acceptReady() {
  for (int i = 0; i < kAcceptsPerRound; ++i) {
    {
      // A connection closed to make room holds its descriptor until its thread ends: taking the
      // next one before would hold more descriptors than connections are allowed.
      std::lock_guard lock(mutex_);
      if (awaitingRoom()) return;
    }
    if (options_.acceptsPerSecond > 0) {
      // Pacing: without a token, the listener is left alone until the next one (what connects
      // meanwhile waits in the backlog, then in connect()).
      const auto now = Clock::now();
      std::lock_guard lock(mutex_);
      acceptTokens_ =
          std::min(options_.acceptBurst, acceptTokens_ + std::chrono::duration<double>(now - acceptTokensAt_).count() *
                                                             options_.acceptsPerSecond);
      acceptTokensAt_ = now;
      if (acceptTokens_ < 1) {
        retryAt_ = now + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>((1 - acceptTokens_) / options_.acceptsPerSecond));
        return;
      }
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int fd = ::accept4(listener_->fd(), reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      {
        std::lock_guard lock(mutex_);
        backoff_ = std::chrono::milliseconds(0);
        acceptTokens_ -= 1;
      }
      admit(fd, peerText(fd, addr));
      continue;
    }
    const int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK) return;
    if (connectionsOwnFailure(err)) continue;
    if (err == EMFILE || err == ENFILE) {
      // accept() takes a descriptor before it looks for a connection: with none free it fails even
      // when nobody waits. Then there is nothing to make room for until someone connects.
      pollfd waiting{listener_->fd(), POLLIN, 0};
      if (::poll(&waiting, 1, 0) <= 0 || (waiting.revents & POLLIN) == 0) return;
    }
    // The server is out of something — descriptors (EMFILE, ENFILE), memory (ENOMEM, ENOBUFS) —
    // or meets a failure nobody foresaw: it makes room where it can, waits and tries again.
    std::string remedy = "waiting";
    bool roomComing = false;
    {
      std::lock_guard lock(mutex_);
      ++counts_.acceptErrors;
      // A connection closed to make room gives its descriptor back once its thread has ended: until
      // it is reaped, closing another would make room twice.
      for (const Slot& slot : slots_) roomComing = roomComing || slot.closing;
      if (roomComing ||
          evictOldestInHandshake("room was needed for a new connection (the server is out of descriptors), and "
                                 "this one had not finished its handshake"))
        remedy = "closing the oldest connections still in their handshake";
    }
    if (!roomComing && remedy == "waiting" && (err == EMFILE || err == ENFILE) && reserve_ >= 0) {
      // The spare descriptor takes the connection that waits, so that it learns why at once
      // instead of waiting in the backlog (and the listener does not stay readable for nothing).
      ::close(reserve_);
      reserve_ = -1;
      const int waiting = ::accept4(listener_->fd(), nullptr, nullptr, SOCK_CLOEXEC);
      if (waiting >= 0) refuse(waiting, "the server is out of file descriptors");
      reserve_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // again -1 if another thread took it: retried next time
      remedy = "refusing new connections";
    }
    bool first = false;
    size_t open = 0;
    {
      std::lock_guard lock(mutex_);
      first = !failingSince_;
      if (first) {
        failingSince_ = Clock::now();
        refusedInEpisode_ = 0;
        evictedInEpisode_ = counts_.evicted;
      }
      lastFailure_ = Clock::now();
      backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kLastBackoff);
      retryAt_ = Clock::now() + backoff_;
      for (const Slot& s : slots_) open += s.done.load(std::memory_order_acquire) ? 0 : 1;
    }
    if (first)
      say("cannot accept",
          fmt::format("cannot accept connections: {} ({} connections open); {} and retrying, "
                      "waiting from {} ms up to {} s between tries",
                      std::strerror(err), open, remedy, kFirstBackoff.count(), kLastBackoff.count() / 1000));
    return;
  }
}

void Server::admit(int fd, const std::string& peer) {
  listener_->configure(fd);
  std::unique_lock lock(mutex_);
  size_t open = 0;
  for (const Slot& s : slots_) open += s.done.load(std::memory_order_acquire) || s.closing ? 0 : 1;
  if (open >= maxConnections_ &&
      !evictOldestInHandshake(fmt::format("room was needed for a new connection ({} are open, the most this "
                                          "server serves at once), and this one had not finished its handshake",
                                          maxConnections_))) {
    lock.unlock();
    // Said and counted before the client can see the refusal.
    say("limit", fmt::format("refused a connection from {}: {} connections are open, the most it serves at once "
                             "(--max-connections)",
                             peer, maxConnections_));
    refuse(fd, fmt::format("this server serves at most {} connections at once; try again later", maxConnections_));
    return;
  }
  std::unique_ptr<FdStream> stream;
  try {
    stream = FdStream::socket(fd);
  } catch (const std::exception& e) {
    lock.unlock();
    say("stream", fmt::format("refused a connection from {}: {}", peer, e.what()));
    refuse(fd, "the server cannot take it now");
    return;
  }
  stream->setSendTimeout(options_.sendTimeout);
  stream->setReadDeadline(Clock::now() + options_.handshakeTimeout,
                          fmt::format("no handshake within {} of connecting", secondsText(options_.handshakeTimeout)));
  Slot& slot = slots_.emplace_back();
  slot.connection.server_ = this;
  slot.connection.stream_ = std::move(stream);
  slot.connection.peer_ = peer;
  try {
    slot.thread = std::thread([this, &slot] {
      niceThisThread();
      try {
        handler_(slot.connection);
      } catch (const std::exception& e) {
        say("handler", fmt::format("the connection from {} failed: {}", slot.connection.peer(), e.what()));
      }
      FdStream& served = slot.connection.stream();
      served.close();
      const std::string why = served.failure();
      if (!why.empty()) say(why, fmt::format("closed the connection from {}: {}", slot.connection.peer(), why));
      slot.done.store(true, std::memory_order_release);
      wake();
    });
  } catch (const std::system_error& e) {
    // No thread for it (the process's limit): the connection is refused like one over the limit.
    // The refusal is a courtesy to a client about to be dropped anyway: if it cannot take it, the
    // connection closes all the same.
    std::string ignored;
    if (options_.refusal)
      static_cast<void>(slot.connection.stream().write(options_.refusal("the server cannot take it now"), ignored));
    slots_.pop_back();
    ++counts_.refused;
    ++refusedInEpisode_;
    lock.unlock();
    say("thread", fmt::format("refused a connection from {}: no thread for it ({})", peer, e.what()));
    return;
  }
  ++counts_.accepted;
}

void Server::refuse(int fd, const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    ++counts_.refused;
    ++refusedInEpisode_;
  }
  const std::string bytes = options_.refusal ? options_.refusal(why) : std::string();
  if (!bytes.empty()) ::send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  // What the client sent already is read and dropped, so that closing does not reset a TCP
  // connection before the client has read the refusal.
  char sink[4096];
  for (int i = 0; i < 16 && ::recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; ++i) {
  }
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

void Server::endCalmEpisode() {
  double seconds = 0;
  uint64_t refused = 0, evicted = 0;
  {
    std::lock_guard lock(mutex_);
    if (!failingSince_ || Clock::now() - lastFailure_ < kCalmAfter) return;
    seconds = std::chrono::duration<double>(lastFailure_ - *failingSince_).count();
    refused = refusedInEpisode_;
    evicted = counts_.evicted - evictedInEpisode_;
    failingSince_.reset();
  }
  say("accepting again", fmt::format("accepting connections again: accept failed for {:.1f} s; meanwhile {} "
                                     "connections were refused and {} closed to make room",
                                     seconds, refused, evicted));
}

bool Server::evictOldestInHandshake(const std::string& why) {
  for (Slot& s : slots_) {
    if (s.closing || s.done.load(std::memory_order_acquire) || s.connection.isEstablished()) continue;
    s.closing = true;
    ++counts_.evicted;
    s.connection.stream_->closeBecause(why);
    return true;
  }
  return false;
}

void Server::reap() {
  std::list<Slot> finished;
  {
    std::lock_guard lock(mutex_);
    for (auto it = slots_.begin(); it != slots_.end();) {
      const auto next = std::next(it);
      if (it->done.load(std::memory_order_acquire)) finished.splice(finished.end(), slots_, it);
      it = next;
    }
    counts_.reaped += finished.size();
  }
  for (Slot& s : finished) s.thread.join();  // their threads have ended: this does not wait
}

// ---------------------------------------------------------------- stopping

void Server::stopAccepting() {
  std::lock_guard lock(stopMutex_);
  if (!loopThread_.joinable()) return;
  stopAccepting_.store(true, std::memory_order_release);
  wake();
  loopThread_.join();
  listener_.reset();
}

void Server::close() {
  if (closed_.exchange(true)) return;
  stopAccepting();
  std::list<Slot> all;
  {
    std::lock_guard lock(mutex_);
    for (Slot& s : slots_) s.connection.stream_->close();
    all.splice(all.end(), slots_);
  }
  for (Slot& s : all)
    if (s.thread.joinable()) s.thread.join();
  {
    std::lock_guard lock(mutex_);
    counts_.reaped += all.size();
  }
  flushSaid(true);
}

Server::Counts Server::counts() const {
  std::lock_guard lock(mutex_);
  Counts c = counts_;
  c.open = slots_.size();
  return c;
}

}  // namespace scanback::net
