// `scanback dap --port` and `--socket` as a separate process, the way an editor reaches them. Any
// local process can connect to a TCP port, so launch (and attach) need the token the server was
// started with; a recording never replaces a file that is not a trace; the unix socket is 0600.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "net/auth_token.h"
#include "net/listener.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "net/stream.h"
#include "tests/support/files.h"

namespace scanback::dap {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A directory for one test, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path =
        fs::temp_directory_path() / ("scanback_server_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

using test::readText;

// `scanback dap ARGS` in a child process; its stderr is read line by line.
class ServerProcess {
 public:
  explicit ServerProcess(const std::vector<std::string>& args) {
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(err[1], 2);
      std::vector<char*> argv;
      std::string binary = SCANBACK_BINARY, dap = "dap";
      argv.push_back(binary.data());
      argv.push_back(dap.data());
      std::vector<std::string> copies = args;
      for (std::string& a : copies) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(err[1]);
    stderr_ = err[0];
  }
  ~ServerProcess() {
    stop();
    if (stderr_ >= 0) ::close(stderr_);
  }

  // The next line on its stderr, waiting up to `limit` (a polled condition, not a sleep).
  std::optional<std::string> line(std::chrono::seconds limit = std::chrono::seconds(20)) {
    const auto deadline = Clock::now() + limit;
    for (;;) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string l = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return l;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return std::nullopt;
      pollfd p{stderr_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[512];
      const ssize_t n = ::read(stderr_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // SIGTERM, then waits for it to exit; returns its exit status.
  int stop() {
    if (pid_ <= 0) return status_;
    ::kill(pid_, SIGTERM);
    return wait();
  }
  // Waits for it to exit by itself; returns its exit status (-1 when a signal ended it).
  int wait() {
    if (pid_ <= 0) return status_;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int stderr_ = -1;
  int status_ = -1;
  std::string buffer_;
};

// A DAP client over a socket: requests and their responses (events are skipped).
class SocketClient {
 public:
  explicit SocketClient(int fd) : stream_(net::FdStream::socket(fd)), reader_(*stream_), writer_(*stream_) {}
  json request(const std::string& command, json arguments = json::object()) {
    const int64_t seq = seq_++;
    EXPECT_TRUE(writer_.send(json{{"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", arguments}}));
    for (;;) {
      net::ReadResult r = reader_.next();
      if (!r.isMessage()) {
        ADD_FAILURE() << "no response to " << command;
        return json();
      }
      if (r.message["type"] == "response" && r.message["request_seq"] == seq) return r.message;
    }
  }

 private:
  std::unique_ptr<net::FdStream> stream_;
  net::MessageReader reader_;
  net::MessageWriter writer_;
  int64_t seq_ = 1;
};

int connectTcp(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int connectUnix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), std::min(path.size(), sizeof addr.sun_path - 1));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

const char* kProgram = "PROGRAM Main\nVAR n : INT; END_VAR\nn := n + 1;\nEND_PROGRAM\n";

// ---------------------------------------------------------------- the server

struct TcpServer {
  uint16_t port = 0;
  std::string token;
};

// Starts `scanback dap --port 0 EXTRA...` and reads the port and the token it prints.
std::optional<TcpServer> startTcp(ServerProcess& server, const std::string& tokenFileToken = "") {
  const std::optional<std::string> banner = server.line();
  if (!banner) return std::nullopt;
  std::smatch m;
  TcpServer s;
  if (tokenFileToken.empty()) {
    if (!std::regex_search(
            *banner, m,
            std::regex(R"re(127\.0\.0\.1:(\d+); launch and attach must give "authToken": "([0-9a-f]{64})")re"))) {
      ADD_FAILURE() << *banner;
      return std::nullopt;
    }
    s.token = m[2];
  } else {
    if (!std::regex_search(*banner, m, std::regex(R"(127\.0\.0\.1:(\d+); launch and attach must give the token of)"))) {
      ADD_FAILURE() << *banner;
      return std::nullopt;
    }
    s.token = tokenFileToken;
  }
  s.port = static_cast<uint16_t>(std::stoi(m[1]));
  return s;
}

// The issue's reproducers: over TCP, a launch without the token could overwrite any file with a
// trace (`record`) and echo the first token of a private file (`program`). Now it is refused, and
// even with the token a recording never replaces a file that is no trace.
TEST(DapServer, TcpLaunchNeedsTheTokenAndNeverOverwritesAFile) {
  TempDir dir;
  std::ofstream(dir.file("main.st")) << kProgram;
  const std::string precious = dir.file("precious.txt");
  std::ofstream(precious) << "do not overwrite";
  const std::string secret = dir.file("secret.txt");
  std::ofstream(secret) << "SECRETWORD and more\n";

  ServerProcess server({"--port", "0"});
  const std::optional<TcpServer> s = startTcp(server);
  ASSERT_TRUE(s);
  const int fd = connectTcp(s->port);
  ASSERT_GE(fd, 0);
  SocketClient client(fd);
  ASSERT_TRUE(client.request("initialize", json{{"adapterID", "test"}})["success"]);

  json r = client.request("launch", json{{"program", dir.file("main.st")}, {"record", precious}});
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r["message"].get<std::string>().find("'launch' refused"), std::string::npos) << r.dump();
  EXPECT_NE(r["message"].get<std::string>().find("'authToken'"), std::string::npos) << r.dump();
  r = client.request("launch", json{{"program", secret}});
  EXPECT_FALSE(r["success"]);
  EXPECT_EQ(r.dump().find("SECRETWORD"), std::string::npos) << r.dump();
  std::string wrong = s->token;
  wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
  r = client.request("launch", json{{"program", dir.file("main.st")}, {"record", precious}, {"authToken", wrong}});
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r["message"].get<std::string>().find("'authToken' is not the token"), std::string::npos) << r.dump();
  EXPECT_EQ(r.dump().find(s->token), std::string::npos) << "the token is never echoed";
  EXPECT_EQ(readText(precious), "do not overwrite");

  // With the token, the launch runs, but `record` still never replaces a file that is no trace.
  r = client.request("launch", json{{"program", dir.file("main.st")}, {"record", precious}, {"authToken", s->token}});
  EXPECT_FALSE(r["success"]);
  EXPECT_EQ(r["message"], "cannot record the session to " + precious +
                              ": the file exists and is not a scanback trace: a recording only ever replaces a trace");
  EXPECT_EQ(readText(precious), "do not overwrite");
  r = client.request("launch", json{{"program", dir.file("main.st")},
                                    {"record", dir.file("run.trace")},
                                    {"authToken", s->token},
                                    {"realtime", false},
                                    {"cycles", 5}});
  EXPECT_TRUE(r["success"]) << r.dump();
  client.request("disconnect", json{{"terminateDebuggee", true}});
  EXPECT_EQ(server.stop(), 0);
}

TEST(DapServer, ATokenFileGivesTheToken) {
  TempDir dir;
  std::ofstream(dir.file("main.st")) << kProgram;
  std::ofstream(dir.file("token")) << "file-token-of-24-bytes-42\n";
  ::chmod(dir.file("token").c_str(), 0600);
  ServerProcess server({"--port", "0", "--auth-token-file", dir.file("token")});
  const std::optional<TcpServer> s = startTcp(server, "file-token-of-24-bytes-42");
  ASSERT_TRUE(s);
  const int fd = connectTcp(s->port);
  ASSERT_GE(fd, 0);
  SocketClient client(fd);
  ASSERT_TRUE(client.request("initialize", json{{"adapterID", "test"}})["success"]);
  const json launch = json{{"program", dir.file("main.st")}, {"record", false}, {"realtime", false}, {"cycles", 3}};
  EXPECT_FALSE(client.request("launch", launch)["success"]);
  json withToken = launch;
  withToken["authToken"] = "file-token-of-24-bytes-42";
  EXPECT_TRUE(client.request("launch", withToken)["success"]);
  client.request("disconnect", json{{"terminateDebuggee", true}});
  EXPECT_EQ(server.stop(), 0);
}

TEST(DapServer, AUnixSocketIsPrivateNeedsNoTokenAndIsRemovedAtTheEnd) {
  TempDir dir;
  std::ofstream(dir.file("main.st")) << kProgram;
  const std::string path = dir.file("dap.sock");
  ServerProcess server({"--socket", path});
  const std::optional<std::string> banner = server.line();
  ASSERT_TRUE(banner);
  EXPECT_NE(banner->find("serving DAP on the unix socket " + path + " (mode 0600"), std::string::npos) << *banner;
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const int fd = connectUnix(path);
  ASSERT_GE(fd, 0);
  SocketClient client(fd);
  ASSERT_TRUE(client.request("initialize", json{{"adapterID", "test"}})["success"]);
  EXPECT_TRUE(client.request(
      "launch",
      json{{"program", dir.file("main.st")}, {"record", false}, {"realtime", false}, {"cycles", 3}})["success"]);
  client.request("disconnect", json{{"terminateDebuggee", true}});
  EXPECT_EQ(server.stop(), 0);
  EXPECT_FALSE(fs::exists(path));
}

TEST(DapServer, ListenErrorsAreSaidOnce) {
  std::string error;
  auto taken = net::TcpListener::listen(0, error);
  ASSERT_TRUE(taken) << error;
  ServerProcess server({"--port", std::to_string(taken->port())});
  const std::optional<std::string> line = server.line();
  ASSERT_TRUE(line);
  EXPECT_EQ(*line,
            "scanback: cannot listen on 127.0.0.1:" + std::to_string(taken->port()) + ": Address already in use");
  EXPECT_EQ(server.wait(), 2);
}

}  // namespace
}  // namespace scanback::dap
