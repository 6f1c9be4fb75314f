// net::Server in this process (one case in a child process with few descriptors), with clients
// on real sockets: the connection limit, closing the oldest connection still in its handshake, the
// handshake timeout, reaping without an accept, backing off when out of descriptors, a client that
// never reads, one descriptor per connection, and what the server says about each.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/json_lines.h"
#include "net/listener.h"
#include "net/server.h"
#include "tests/support/wait.h"

namespace scanback::net {
namespace {

using namespace std::chrono_literals;

// What a server said, for the test to look at (from the server's threads).
class Said {
 public:
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& text) {
      std::lock_guard lock(mutex_);
      lines_.push_back(text);
    };
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  // How many lines contain `part`.
  size_t count(const std::string& part) const {
    size_t n = 0;
    for (const std::string& l : lines()) n += l.find(part) != std::string::npos ? 1 : 0;
    return n;
  }
  std::string all() const {
    std::string text;
    for (const std::string& l : lines()) text += l + "\n";
    return text;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// The handler of these tests: a line "hello" finishes the handshake; every line is answered with
// itself; "flood" makes the server write until the write fails (a client that never reads).
struct Echo {
  std::atomic<int> floods{0};
  std::atomic<bool> floodFailed{false};
  std::mutex mutex;
  std::string floodError;

  void operator()(Connection& c) {
    LineReader reader(c.stream());
    std::string line, error;
    while (reader.readLine(line, error) == LineReader::Result::Line) {
      if (line == "hello") c.established();
      if (line == "flood") {
        ++floods;
        const std::string block(1 << 20, 'x');
        while (c.stream().write(block, error)) {
        }
        std::lock_guard lock(mutex);
        floodError = error;
        floodFailed = true;
        return;
      }
      if (!c.stream().write(line + "\n", error)) return;
    }
  }
};

// A client on a raw socket.
class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~Client() { close(); }
  Client(const Client&) = delete;
  bool connected() const { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool send(const std::string& line) {
    const std::string text = line + "\n";
    return ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
  }
  // The next line, or "<end>" when the server closed the connection; "<timeout>" when nothing came
  // within `timeout` (a deadline for a test that went wrong, not a wait the test relies on).
  std::string line(std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (const size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string l = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return l;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return "<timeout>";
      char chunk[4096];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return buffer_.empty() ? "<end>" : std::exchange(buffer_, "");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }
  // Whether the server has closed the connection (waits for it up to `timeout`).
  bool ended(std::chrono::milliseconds timeout = 20s) {
    for (;;) {
      const std::string l = line(timeout);
      if (l == "<end>") return true;
      if (l == "<timeout>") return false;
    }
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string buffer_;
};

std::unique_ptr<Server> startServer(ServerOptions options, Echo& echo) {
  std::string error;
  auto listener = TcpListener::listen(0, error);
  EXPECT_TRUE(listener) << error;
  if (!listener) return nullptr;
  options.refusal = [](const std::string& why) { return "refused: " + why + "\n"; };
  return std::make_unique<Server>(std::move(listener), std::move(options), [&echo](Connection& c) { echo(c); });
}

// The descriptors open in this process (not counting the one that lists them).
size_t openDescriptors() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;
}

TEST(NetServer, OverTheLimitANewConnectionIsRefusedWithItsReason) {
  Said said;
  Echo echo;
  ServerOptions options;
  options.maxConnections = 2;
  options.log = said.sink();
  auto server = startServer(options, echo);
  ASSERT_TRUE(server);
  Client a(server->port()), b(server->port());
  for (Client* c : {&a, &b}) {
    ASSERT_TRUE(c->send("hello"));
    ASSERT_EQ(c->line(), "hello");
  }
  // Both have finished their handshake: a third connection is refused, at once and with why.
  Client c(server->port());
  EXPECT_EQ(c.line(), "refused: this server serves at most 2 connections at once; try again later");
  EXPECT_TRUE(c.ended());
  EXPECT_EQ(server->counts().refused, 1u);
  EXPECT_EQ(said.count("refused a connection from 127.0.0.1:"), 1u) << said.all();  // said before refusing
  // The two served go on; once one leaves, a new one is served.
  ASSERT_TRUE(a.send("still here"));
  EXPECT_EQ(a.line(), "still here");
  b.close();
  ASSERT_TRUE(test::eventually([&] { return server->counts().open == 1; }));
  Client d(server->port());
  ASSERT_TRUE(d.send("hello"));
  EXPECT_EQ(d.line(), "hello");
  server->close();
}

TEST(NetServer, AnIdleFloodCannotLockAClientOut) {
  Said said;
  Echo echo;
  ServerOptions options;
  options.maxConnections = 4;
  options.log = said.sink();
  auto server = startServer(options, echo);
  ASSERT_TRUE(server);
  std::vector<std::unique_ptr<Client>> flood;
  for (int i = 0; i < 20; ++i) flood.push_back(std::make_unique<Client>(server->port()));
  // Each new connection beyond 4 closed the oldest one still in its handshake, never a new one.
  for (int i = 0; i < 16; ++i) EXPECT_TRUE(flood[i]->ended()) << i;
  for (int i = 16; i < 20; ++i) {
    ASSERT_TRUE(flood[i]->send("hello"));
    EXPECT_EQ(flood[i]->line(), "hello") << i;
  }
  EXPECT_EQ(server->counts().evicted, 16u);
  EXPECT_EQ(server->counts().refused, 0u);
  // Said once, then counted: 16 evictions are not 16 lines (each is said by the connection's own
  // thread as it ends, after its client has seen the end).
  server->close();
  EXPECT_EQ(said.count("had not finished its handshake"), 2u) << said.all();
  EXPECT_EQ(said.count("15 more like this"), 1u) << said.all();
}

TEST(NetServer, AConnectionWithoutAHandshakeIsClosedAndAnEstablishedOneIsNot) {
  Said said;
  Echo echo;
  ServerOptions options;
  options.handshakeTimeout = 200ms;
  options.log = said.sink();
  auto server = startServer(options, echo);
  ASSERT_TRUE(server);
  Client proven(server->port());
  ASSERT_TRUE(proven.send("hello"));
  ASSERT_EQ(proven.line(), "hello");
  // A client that sends nothing, and one that sends only what is no handshake: both closed.
  Client silent(server->port()), chatty(server->port());
  ASSERT_TRUE(chatty.send("no handshake here"));
  EXPECT_EQ(chatty.line(), "no handshake here");
  EXPECT_TRUE(silent.ended());
  EXPECT_TRUE(chatty.ended());
  // Said by the connection's thread as it ends: once, the second counted.
  EXPECT_TRUE(test::eventually([&] { return said.count("no handshake within 0.2 s of connecting") == 1; }))
      << said.all();
  // The proven one connected before them and has been idle longer than the timeout since.
  ASSERT_TRUE(proven.send("still here"));
  EXPECT_EQ(proven.line(), "still here");
  server->close();
}

TEST(NetServer, FinishedConnectionsAreReapedWithoutAnAccept) {
  Echo echo;
  ServerOptions options;
  options.maxConnections = 8;
  options.log = [](const std::string&) {};
  auto server = startServer(options, echo);
  ASSERT_TRUE(server);
  // The control server of issue 27 reaped only after an accept: connections that closed left
  // their slots taken until one more came in.
  for (int round = 0; round < 3; ++round) {
    {
      std::vector<std::unique_ptr<Client>> clients;
      for (int i = 0; i < 8; ++i) {
        clients.push_back(std::make_unique<Client>(server->port()));
        ASSERT_TRUE(clients.back()->send("hello"));
        ASSERT_EQ(clients.back()->line(), "hello");
      }
      EXPECT_EQ(server->counts().open, 8u);
    }
    ASSERT_TRUE(test::eventually([&] { return server->counts().open == 0; })) << server->counts().open;
  }
  EXPECT_EQ(server->counts().reaped, 24u);
  EXPECT_EQ(server->counts().refused, 0u);
  server->close();
}

TEST(NetServer, AConnectionCostsOneDescriptor) {
  Echo echo;
  ServerOptions options;
  options.log = [](const std::string&) {};
  auto server = startServer(options, echo);
  ASSERT_TRUE(server);
  const size_t before = openDescriptors();
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 10; ++i) {
    clients.push_back(std::make_unique<Client>(server->port()));
    ASSERT_TRUE(clients.back()->send("hello"));
    ASSERT_EQ(clients.back()->line(), "hello");
  }
  // Ten client sockets and ten served connections, nothing else (no wake-up pipe per stream).
  EXPECT_EQ(openDescriptors() - before, 20u);
  server->close();
}

TEST(NetServer, AClientThatNeverReadsIsClosedAfterTheSendTimeout) {
  Said said;
  Echo echo;
  ServerOptions options;
  options.sendTimeout = 200ms;
  options.log = said.sink();
  auto server = startServer(options, echo);
  ASSERT_TRUE(server);
  Client reader(server->port()), sleeper(server->port());
  ASSERT_TRUE(reader.send("hello"));
  ASSERT_EQ(reader.line(), "hello");
  ASSERT_TRUE(sleeper.send("hello"));
  ASSERT_EQ(sleeper.line(), "hello");
  ASSERT_TRUE(sleeper.send("flood"));  // and never reads again
  ASSERT_TRUE(test::eventually([&] { return echo.floodFailed.load(); }, 20s));
  {
    std::lock_guard lock(echo.mutex);
    EXPECT_EQ(echo.floodError, "the peer read nothing for 0.2 s: the connection is closed");
  }
  EXPECT_TRUE(test::eventually([&] { return said.count("the peer read nothing for 0.2 s") == 1; })) << said.all();
  // The other client was served all along, and still is.
  ASSERT_TRUE(reader.send("still here"));
  EXPECT_EQ(reader.line(), "still here");
  server->close();
}

TEST(NetServer, StopRequestedFromASignalHandlerWakesTheWaiter) {
  Echo echo;
  ServerOptions options;
  auto server = startServer(options, echo);
  ASSERT_TRUE(server);
  std::thread waiter([&] { server->waitForStopRequest(); });
  server->requestStop();  // what a signal handler calls: one write to an eventfd
  waiter.join();
  server->close();
  // Closed: nothing listens on its port any more.
  Client late(server->port());
  EXPECT_FALSE(late.connected());
}

// A descriptor limit that leaves room for fewer connections than asked: the server serves fewer,
// keeps descriptors for the connections' work, and says so once at start. In a child process (the
// limit is the process's).
TEST(NetServer, TheConnectionLimitLeavesDescriptorsForTheWork) {
  int toParent[2];
  ASSERT_EQ(::pipe2(toParent, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(toParent[0]);
    // Descriptor numbers free below the limit: the listener's 2, the server's 3 (two eventfds
    // and its spare), the work's share and 5.
    rlimit limit{};
    ::getrlimit(RLIMIT_NOFILE, &limit);
    size_t free = 0;
    int fd = 0;
    for (; free < 2 + 3 + kDescriptorsForWork + 5; ++fd)
      if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) ++free;
    limit.rlim_cur = static_cast<rlim_t>(fd);
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(11);
    std::string error;
    auto listener = TcpListener::listen(0, error);
    if (!listener) ::_exit(10);
    std::string said;
    ServerOptions options;
    options.maxConnections = 100;
    options.log = [&said](const std::string& text) { said += text + "\n"; };
    Server server(std::move(listener), options, [](Connection&) {});
    said += "limit " + std::to_string(server.connectionLimit()) + "\n";
    [[maybe_unused]] const ssize_t n = ::write(toParent[1], said.data(), said.size());
    server.close();
    ::_exit(0);
  }
  ::close(toParent[1]);
  std::string said;
  char chunk[4096];
  for (ssize_t n; (n = ::read(toParent[0], chunk, sizeof chunk)) > 0;) said.append(chunk, static_cast<size_t>(n));
  ::close(toParent[0]);
  EXPECT_EQ(test::exitCode(child, 20s), 0);
  EXPECT_NE(said.find("limit 5\n"), std::string::npos) << said;
  EXPECT_NE(said.find("serving at most 5 connections, not 100: the descriptor limit ("), std::string::npos) << said;
}

// Out of descriptors, in a child process whose limit is a few descriptors above what it has open:
// the server says so once, makes room by closing the oldest connections still in their handshake,
// takes and refuses new ones with its spare descriptor when every connection has finished its
// handshake, backs off, and goes on serving — it never ends.
TEST(NetServer, OutOfDescriptorsItBacksOffAndGoesOn) {
  int toParent[2], fromParent[2];
  ASSERT_EQ(::pipe2(toParent, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(fromParent, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(toParent[0]);
    ::close(fromParent[1]);
    std::string error;
    auto listener = TcpListener::listen(0, error);
    if (!listener) ::_exit(10);
    Echo echo;
    ServerOptions options;
    options.maxConnections = 100;
    const int out = toParent[1];
    options.log = [out](const std::string& text) {
      const std::string line = text + "\n";
      [[maybe_unused]] const ssize_t n = ::write(out, line.data(), line.size());
    };
    options.refusal = [](const std::string& why) { return "refused: " + why + "\n"; };
    {
      Server server(std::move(listener), options, [&echo](Connection& c) { echo(c); });
      // The server started with descriptors to spare (so its limit is 100 connections); now
      // something else has taken all but 4 of them: the limit is on descriptor numbers, so it goes
      // just past the 4th number not in use.
      rlimit limit{};
      ::getrlimit(RLIMIT_NOFILE, &limit);
      int free = 0, fd = 0;
      for (; free < 4; ++fd)
        if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) ++free;
      limit.rlim_cur = static_cast<rlim_t>(fd);
      if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(11);
      const std::string port = "port " + std::to_string(server.port()) + "\n";
      [[maybe_unused]] ssize_t n = ::write(out, port.data(), port.size());
      char byte;
      n = ::read(fromParent[0], &byte, 1);  // until the parent closes its end
      server.close();
    }
    ::_exit(0);
  }
  ::close(toParent[1]);
  ::close(fromParent[0]);
  // What the child says, line by line.
  std::string said;
  auto readSaid = [&](const std::string& until) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (said.find(until) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{toParent[0], POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char chunk[4096];
      const ssize_t n = ::read(toParent[0], chunk, sizeof chunk);
      if (n <= 0) break;
      said.append(chunk, static_cast<size_t>(n));
    }
    return said.find(until) != std::string::npos;
  };
  ASSERT_TRUE(readSaid("\n")) << said;
  const uint16_t port = static_cast<uint16_t>(std::stoi(said.substr(said.find("port ") + 5)));

  // An idle flood: the server makes room for each new connection by closing the oldest idle one.
  std::vector<std::unique_ptr<Client>> flood;
  for (int i = 0; i < 30; ++i) flood.push_back(std::make_unique<Client>(port));
  ASSERT_TRUE(readSaid("closing the oldest connections still in their handshake")) << said;
  // A well-behaved client is served once the flood has passed (it waits in the backlog meanwhile).
  Client good(port);
  ASSERT_TRUE(good.send("hello"));
  EXPECT_EQ(good.line(), "hello");

  // Now every connection has finished its handshake: a new one is refused through the spare
  // descriptor, at once, with why.
  std::vector<std::unique_ptr<Client>> proven;
  for (int i = 0; i < 3; ++i) {
    proven.push_back(std::make_unique<Client>(port));
    ASSERT_TRUE(proven.back()->send("hello"));
    const std::string answer = proven.back()->line();
    ASSERT_EQ(answer, "hello") << i << said;
  }
  Client refused(port);
  EXPECT_EQ(refused.line(), "refused: the server is out of file descriptors") << said;
  // Once descriptors are free again, the server accepts again by itself (within its 1 s back-off).
  proven.clear();
  Client later(port);
  ASSERT_TRUE(later.send("hello"));
  EXPECT_EQ(later.line(), "hello");
  ASSERT_TRUE(good.send("still here"));
  EXPECT_EQ(good.line(), "still here");
  ASSERT_TRUE(readSaid("accepting connections again")) << said;

  // One episode, said once (the failures themselves were many), and the child never ended.
  EXPECT_EQ(::waitpid(child, nullptr, WNOHANG), 0);
  ::close(fromParent[1]);
  EXPECT_EQ(test::exitCode(child, 20s), 0);
  readSaid("<the end>");
  size_t episodes = 0;
  for (size_t at = said.find("cannot accept connections: Too many open files"); at != std::string::npos;
       at = said.find("cannot accept connections: Too many open files", at + 1))
    ++episodes;
  EXPECT_GE(episodes, 1u) << said;
  EXPECT_LE(episodes, 2u) << said;  // the idle flood's, and the refusals' if the first had ended
  ::close(toParent[0]);
}

}  // namespace
}  // namespace scanback::net
