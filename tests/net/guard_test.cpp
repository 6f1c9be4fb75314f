// The pieces of net/ that guard a server: token files, generated tokens, the constant-time
// comparison, and the unix socket's privacy.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "net/auth_token.h"
#include "net/connect.h"
#include "net/listener.h"
#include "tests/support/files.h"

namespace scanback::net {
namespace {

namespace fs = std::filesystem;
using test::readText;

// A directory for one test, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("scanback_net_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// ---------------------------------------------------------------- tokens

TEST(NetAuthToken, ComparisonIsExactAndGeneratedTokensAreRandomHex) {
  EXPECT_TRUE(sameAuthToken("abc123", "abc123"));
  EXPECT_FALSE(sameAuthToken("abc124", "abc123"));
  EXPECT_FALSE(sameAuthToken("abc12", "abc123"));
  EXPECT_FALSE(sameAuthToken("abc1234", "abc123"));
  EXPECT_FALSE(sameAuthToken("", "abc123"));
  EXPECT_FALSE(sameAuthToken("", ""));  // no token matches nothing
  std::string error;
  const std::optional<std::string> a = generateAuthToken(error), b = generateAuthToken(error);
  ASSERT_TRUE(a && b) << error;
  EXPECT_TRUE(std::regex_match(*a, std::regex("[0-9a-f]{64}"))) << *a;
  EXPECT_NE(*a, *b);
}

TEST(NetAuthToken, AFileGivesItsFirstLineAndAnEmptyOneIsRefused) {
  TempDir dir;
  std::ofstream(dir.file("token")) << "  s3cret-token-of-24-bytes \nsecond line\n";
  ::chmod(dir.file("token").c_str(), 0600);
  std::string error, warning;
  EXPECT_EQ(readAuthToken(dir.file("token"), error, warning), "s3cret-token-of-24-bytes");
  EXPECT_EQ(warning, "");
  ::chmod(dir.file("token").c_str(), 0644);
  EXPECT_EQ(readAuthToken(dir.file("token"), error, warning), "s3cret-token-of-24-bytes");
  EXPECT_NE(warning.find("can be read by other users"), std::string::npos) << warning;
  std::ofstream(dir.file("empty")) << "\n";
  EXPECT_FALSE(readAuthToken(dir.file("empty"), error, warning));
  EXPECT_NE(error.find("holds no token"), std::string::npos) << error;
  EXPECT_FALSE(readAuthToken(dir.file("missing"), error, warning));
  EXPECT_NE(error.find("cannot read the token file"), std::string::npos) << error;
}

TEST(NetAuthToken, ATokenShorterThan16BytesIsRefused) {
  TempDir dir;
  std::ofstream(dir.file("short")) << "fifteen-bytes-x\n";
  std::ofstream(dir.file("enough")) << "sixteen-bytes-xx\n";
  ::chmod(dir.file("short").c_str(), 0600);
  ::chmod(dir.file("enough").c_str(), 0600);
  std::string error, warning;
  EXPECT_FALSE(readAuthToken(dir.file("short"), error, warning));
  EXPECT_EQ(error, "the token in " + dir.file("short") +
                       " has 15 bytes; a token needs at least 16 (head -c 24 /dev/urandom | base64 makes one)");
  EXPECT_EQ(readAuthToken(dir.file("enough"), error, warning), "sixteen-bytes-xx");
}

// ---------------------------------------------------------------- unix sockets

TEST(NetUnixListener, TheSocketIsPrivateAndGoesWithTheListener) {
  TempDir dir;
  const std::string path = dir.file("dap.sock");
  std::string error;
  {
    auto listener = UnixListener::listen(path, error);
    ASSERT_TRUE(listener) << error;
    struct stat st {};
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    auto client = connectUnix(path, error);
    ASSERT_TRUE(client) << error;
    auto connection = listener->accept(error);
    ASSERT_TRUE(connection) << error;
    ASSERT_TRUE(client->write("ping", error)) << error;
    char buf[8];
    ASSERT_EQ(connection->read(std::span<char>(buf, 4), error), 4) << error;
    EXPECT_EQ(std::string(buf, 4), "ping");
    // A second server on the same path is refused while the first one answers.
    EXPECT_FALSE(UnixListener::listen(path, error));
    EXPECT_EQ(error, "cannot listen on " + path + ": another server is listening there");
  }
  EXPECT_FALSE(fs::exists(path));

  // A stale socket (its server gone without cleaning up) is replaced; a file is left alone.
  {
    const int stale = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    ASSERT_EQ(::bind(stale, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    ::close(stale);
  }
  EXPECT_TRUE(UnixListener::listen(path, error)) << error;
  std::ofstream(dir.file("file")) << "keep";
  EXPECT_FALSE(UnixListener::listen(dir.file("file"), error));
  EXPECT_NE(error.find("exists and is not a socket"), std::string::npos) << error;
  EXPECT_EQ(readText(dir.file("file")), "keep");
}

// A runtime's socket shared with a group (scanback run --control-group, docs/service.md): a member
// of the group sends its token to it when the runtime's user owns the socket, listens on it, and
// owns the directory it is in with no one else writing there; not to one in a directory others may
// write. A user outside the group cannot connect at all. Processes of other users need root (as CI
// runs); the rest of the owner checks run for everyone in the test below.
TEST(NetUnixSocketOwner, ATokenGoesToASocketSharedWithAGroupOfOursByItsOwner) {
  TempDir dir;
  if (::geteuid() != 0) return;  // only root makes processes of other users
  constexpr gid_t kGroup = 4242;
  constexpr uid_t kRuntime = 65534, kMember = 4243, kOther = 4244;
  ::chmod(dir.path.c_str(), 0755);
  const std::string runtimeDir = dir.file("runtime"), openDir = dir.file("open");
  fs::create_directories(runtimeDir);
  fs::create_directories(openDir);
  ASSERT_EQ(::chown(runtimeDir.c_str(), kRuntime, kRuntime), 0);
  ASSERT_EQ(::chown(openDir.c_str(), kRuntime, kRuntime), 0);
  ::chmod(runtimeDir.c_str(), 0755);
  ::chmod(openDir.c_str(), 0777);
  const std::string sock = runtimeDir + "/control.sock", openSock = openDir + "/control.sock";
  // Runs `body` in a child as `uid` with the supplementary groups `groups`; its exit code.
  auto as = [](uid_t uid, std::vector<gid_t> groups, const std::function<int()>& body) {
    const pid_t child = ::fork();
    if (child == 0) {
      if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(90);
      ::_exit(body());
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
  };
  // The runtime: a child as kRuntime in kGroup, listening on both sockets until told to end.
  int ready[2], done[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(done), 0);
  const pid_t runtime = ::fork();
  ASSERT_GE(runtime, 0);
  if (runtime == 0) {
    ::close(ready[0]);
    ::close(done[1]);
    const gid_t groups[] = {kGroup};
    if (::setgroups(1, groups) != 0 || ::setgid(kRuntime) != 0 || ::setuid(kRuntime) != 0) ::_exit(1);
    std::string childError;
    // As the runtime host does with --control-group: listen (0600), then the group, then 0660.
    auto a = UnixListener::listen(sock, childError);
    auto b = UnixListener::listen(openSock, childError);
    bool shared = a && b;
    for (const std::string& p : {sock, openSock})
      shared = shared && ::chown(p.c_str(), static_cast<uid_t>(-1), kGroup) == 0 && ::chmod(p.c_str(), 0660) == 0;
    char byte = shared ? 1 : 0;
    [[maybe_unused]] ssize_t n = ::write(ready[1], &byte, 1);
    n = ::read(done[0], &byte, 1);
    ::_exit(0);
  }
  struct Reap {
    pid_t child;
    int done;
    ~Reap() {
      ::close(done);
      ::waitpid(child, nullptr, 0);
    }
  } reap{runtime, done[1]};
  ::close(ready[1]);
  ::close(done[0]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(byte, 1) << "the runtime's child could not listen";
  struct stat st {};
  ASSERT_EQ(::lstat(sock.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, kGroup);
  EXPECT_EQ(st.st_uid, kRuntime);
  // A member connects, and would send its token; to the socket in a directory others write, not.
  EXPECT_EQ(as(kMember, {kGroup},
               [&] {
                 std::string e;
                 auto s = connectUnix(sock, e);
                 if (!s) return 2;
                 if (!checkUnixServerOwner(sock, *s, e)) return 3;
                 auto o = connectUnix(openSock, e);
                 if (!o) return 4;
                 if (checkUnixServerOwner(openSock, *o, e)) return 5;
                 return e.find("nor shared with a group of yours") != std::string::npos ? 0 : 6;
               }),
            0);
  // Another user, outside the group: the kernel refuses the connection.
  EXPECT_EQ(as(kOther, {},
               [&] {
                 std::string e;
                 auto s = connectUnix(sock, e);
                 return !s && e.find("Permission denied") != std::string::npos ? 0 : 7;
               }),
            0);
}

// Before a token goes over a unix socket, its owner and the listening process's are checked. Only
// root can make a socket that belongs to someone else (chown, or a child that drops to another
// user), so the refusals are checked when the test runs as root (as CI does); the acceptance of
// one's own socket always.
TEST(NetUnixSocketOwner, ATokenGoesOnlyToASocketOfThisUserOrRoot) {
  TempDir dir;
  const std::string path = dir.file("mine.sock");
  std::string error;
  auto listener = UnixListener::listen(path, error);
  ASSERT_TRUE(listener) << error;
  auto mine = connectUnix(path, error);
  ASSERT_TRUE(mine) << error;
  EXPECT_TRUE(checkUnixServerOwner(path, *mine, error)) << error;
  EXPECT_FALSE(checkUnixServerOwner(dir.file("missing.sock"), *mine, error));
  EXPECT_NE(error.find("cannot check the owner of the socket"), std::string::npos) << error;
  if (::geteuid() != 0) return;

  // The socket file belongs to another user (uid 65534): refused, naming that user.
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  EXPECT_FALSE(checkUnixServerOwner(path, *mine, error));
  EXPECT_NE(error.find("the socket " + path + " belongs to user "), std::string::npos) << error;
  EXPECT_NE(error.find("uid 65534)"), std::string::npos) << error;
  EXPECT_NE(error.find("the token is not sent to it"), std::string::npos) << error;

  // The file is root's, but the process listening on it runs as uid 65534: refused too.
  ::chmod(dir.path.c_str(), 0777);
  const std::string theirs = dir.file("theirs.sock");
  int ready[2], done[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(done), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    ::close(done[1]);  // so that the parent's closing its end is the end of the pipe
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(1);
    std::string childError;
    auto theirListener = UnixListener::listen(theirs, childError);
    char byte = theirListener ? 1 : 0;
    [[maybe_unused]] ssize_t n = ::write(ready[1], &byte, 1);
    n = ::read(done[0], &byte, 1);
    ::_exit(0);
  }
  // Whatever happens below, the child is let go and waited for.
  struct Reap {
    pid_t child;
    int done;
    ~Reap() {
      ::close(done);
      ::waitpid(child, nullptr, 0);
    }
  } reap{child, done[1]};
  ::close(ready[1]);
  ::close(done[0]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 1);
  auto toTheirs = connectUnix(theirs, error);
  ASSERT_TRUE(toTheirs) << error;
  EXPECT_FALSE(checkUnixServerOwner(theirs, *toTheirs, error));
  EXPECT_NE(error.find("belongs to user"), std::string::npos) << error;
  ASSERT_EQ(::chown(theirs.c_str(), 0, 0), 0);
  EXPECT_FALSE(checkUnixServerOwner(theirs, *toTheirs, error));
  EXPECT_NE(error.find("the process listening on " + theirs + " (pid " + std::to_string(child) + ") runs as user "),
            std::string::npos)
      << error;
  ::close(ready[0]);
}

}  // namespace
}  // namespace scanback::net
