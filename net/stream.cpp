#include "net/stream.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace scanback::net {

namespace {

std::string errnoText(const char* what, int err) { return std::string(what) + ": " + std::strerror(err); }

// Blocks SIGPIPE in the calling thread for the duration of a write() to a pipe; if that write
// raised one (EPIPE) and none was pending before, the signal is consumed before the mask is
// restored, so it is never delivered.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipeSet_);
    sigaddset(&pipeSet_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipeSet_, &oldSet_);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    wasPending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~SigpipeGuard() { pthread_sigmask(SIG_SETMASK, &oldSet_, nullptr); }
  void writeFailedWithEpipe() {
    if (wasPending_) return;
    const timespec zero{0, 0};
    while (sigtimedwait(&pipeSet_, nullptr, &zero) == -1 && errno == EINTR) {
    }
  }

 private:
  sigset_t pipeSet_;
  sigset_t oldSet_;
  bool wasPending_ = false;
};

}  // namespace

std::string secondsText(std::chrono::milliseconds duration) {
  return duration.count() % 1000 == 0 ? fmt::format("{} s", duration.count() / 1000)
                                      : fmt::format("{:.1f} s", static_cast<double>(duration.count()) / 1000.0);
}

// ---------------------------------------------------------------- FdStream

FdStream::FdStream(int readFd, int writeFd, bool owned) : readFd_(readFd), writeFd_(writeFd), owned_(owned) {
  struct stat st {};
  isSocket_ = readFd_ == writeFd_ && ::fstat(writeFd_, &st) == 0 && S_ISSOCK(st.st_mode);
  if (!isSocket_) {
    wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_ < 0) throw std::runtime_error(errnoText("cannot create an eventfd", errno));
  }
}

FdStream::~FdStream() {
  close();
  if (owned_) {
    if (readFd_ >= 0) ::close(readFd_);
    if (writeFd_ >= 0 && writeFd_ != readFd_) ::close(writeFd_);
  }
  if (wake_ >= 0) ::close(wake_);
}

std::unique_ptr<FdStream> FdStream::standardIo() {
  return std::make_unique<FdStream>(STDIN_FILENO, STDOUT_FILENO, false);
}

std::unique_ptr<FdStream> FdStream::socket(int fd) { return std::make_unique<FdStream>(fd, fd, true); }

FdStream::Wait FdStream::waitFor(int fd, short events, std::optional<Clock::time_point> deadline, std::string& error) {
  for (;;) {
    if (closed_.load(std::memory_order_acquire)) return Wait::Closed;
    int timeoutMs = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return Wait::TimedOut;
      timeoutMs = static_cast<int>(std::min<int64_t>(left, 1'000'000'000));
    }
    pollfd fds[2] = {{fd, events, 0}, {wake_, POLLIN, 0}};
    const int n = ::poll(fds, wake_ >= 0 ? 2 : 1, timeoutMs);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errnoText("poll failed", errno);
      return Wait::Failed;
    }
    // A shut-down socket is ready too: the closed flag says why.
    if (closed_.load(std::memory_order_acquire) || (wake_ >= 0 && fds[1].revents != 0)) return Wait::Closed;
    if (fds[0].revents != 0) return Wait::Ready;  // ready, or hung up / in error: the read or write says which
  }
}

void FdStream::fail(const std::string& why) {
  std::lock_guard lock(failureMutex_);
  if (failure_.empty()) failure_ = why;
}

std::string FdStream::failure() const {
  std::lock_guard lock(failureMutex_);
  return failure_;
}

void FdStream::closeBecause(const std::string& why) {
  fail(why);
  close();
}

void FdStream::setReadDeadline(std::optional<Clock::time_point> deadline, std::string why) {
  readDeadline_ = deadline;
  readDeadlineWhy_ = std::move(why);
}

void FdStream::setSendTimeout(std::optional<std::chrono::milliseconds> stall) { sendStall_ = stall; }

std::optional<PeerCredentials> FdStream::peerCredentials() const {
  if (!isSocket_) return std::nullopt;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(readFd_, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return std::nullopt;
  sockaddr_storage addr{};
  socklen_t addrLen = sizeof addr;
  if (::getsockname(readFd_, reinterpret_cast<sockaddr*>(&addr), &addrLen) != 0 || addr.ss_family != AF_UNIX)
    return std::nullopt;
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

ptrdiff_t FdStream::read(std::span<char> buffer, std::string& error) {
  if (buffer.empty()) return 0;
  for (;;) {
    std::string pollError;
    switch (waitFor(readFd_, POLLIN, readDeadline_, pollError)) {
      case Wait::Ready: break;
      case Wait::Closed: return 0;
      case Wait::TimedOut:
        error = readDeadlineWhy_.empty() ? "nothing was read before the deadline" : readDeadlineWhy_;
        fail(error);
        return -1;
      case Wait::Failed: error = pollError; return -1;
    }
    const ssize_t n = ::read(readFd_, buffer.data(), buffer.size());
    if (n >= 0) return closed_.load(std::memory_order_acquire) ? 0 : n;
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
    error = errnoText("read failed", errno);
    return -1;
  }
}

bool FdStream::write(std::string_view data, std::string& error) {
  std::lock_guard<std::mutex> lock(writeMutex_);
  // On a socket with a send timeout: no byte passed on for sendStall_, or the whole write taking
  // longer than sendStall_ and a second per 16 KiB, fails the write and closes the stream.
  const bool timed = isSocket_ && sendStall_.has_value();
  const auto start = Clock::now();
  const auto total = timed ? start + *sendStall_ + std::chrono::seconds(data.size() / 16384) : Clock::time_point{};
  auto stalledAt = timed ? start + *sendStall_ : Clock::time_point{};
  size_t done = 0;
  while (done < data.size()) {
    std::string pollError;
    const Wait wait =
        writeFd_ < 0
            ? Wait::Closed
            : waitFor(writeFd_, POLLOUT,
                      timed ? std::optional<Clock::time_point>(std::min(stalledAt, total)) : std::nullopt, pollError);
    if (wait == Wait::TimedOut) {
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      error = done == 0 || stalledAt <= total
                  ? fmt::format("the peer read nothing for {}: the connection is closed", secondsText(*sendStall_))
                  : fmt::format("the peer read {} of {} bytes in {:.0f} s: too slow, the connection is closed", done,
                                data.size(), seconds);
      fail(error);
      close();
      return false;
    }
    if (wait != Wait::Ready) {
      error = pollError.empty() ? "the stream is closed" : pollError;
      return false;
    }
    ssize_t n;
    int err = 0;
    if (isSocket_) {
      // Not blocking: poll said there is room, and a blocking send would wait until all of a large
      // write fits, past any timeout.
      n = ::send(writeFd_, data.data() + done, data.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) err = errno;
    } else {
      SigpipeGuard guard;
      n = ::write(writeFd_, data.data() + done, data.size() - done);
      if (n < 0) {
        err = errno;
        if (err == EPIPE) guard.writeFailedWithEpipe();
      }
    }
    if (n > 0) {
      done += static_cast<size_t>(n);
      if (timed) stalledAt = Clock::now() + *sendStall_;
      continue;
    }
    if (n < 0 && (err == EINTR || err == EAGAIN || err == EWOULDBLOCK)) continue;
    if (n == 0) {
      error = "write failed: nothing written";
      return false;
    }
    if (closed_.load(std::memory_order_acquire)) {
      error = "the stream is closed";
      return false;
    }
    error = err == EPIPE || err == ECONNRESET ? "write failed: the other end closed the stream"
                                              : errnoText("write failed", err);
    return false;
  }
  return true;
}

void FdStream::close() {
  if (closed_.exchange(true, std::memory_order_acq_rel)) return;
  if (isSocket_) {
    // Wakes a read or write waiting in poll, in any thread, and tells the peer.
    ::shutdown(writeFd_, SHUT_RDWR);
    return;
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_, &one, sizeof one);
  if (owned_ && writeFd_ >= 0 && writeFd_ != readFd_) {
    // The peer of a pipe sees the end once the write end is closed. A write in progress has been
    // woken (or finishes); the mutex makes sure none is using the descriptor any more.
    std::lock_guard<std::mutex> lock(writeMutex_);
    ::close(writeFd_);
    writeFd_ = -1;
  }
}

// ---------------------------------------------------------------- MemoryPipe

MemoryPipe::Pair MemoryPipe::pair() {
  auto clientToServer = std::make_shared<Channel>();
  auto serverToClient = std::make_shared<Channel>();
  Pair p;
  p.client.reset(new MemoryPipe(serverToClient, clientToServer));
  p.server.reset(new MemoryPipe(clientToServer, serverToClient));
  return p;
}

MemoryPipe::MemoryPipe(std::shared_ptr<Channel> in, std::shared_ptr<Channel> out)
    : in_(std::move(in)), out_(std::move(out)) {}

MemoryPipe::~MemoryPipe() { close(); }

ptrdiff_t MemoryPipe::read(std::span<char> buffer, std::string& error) {
  if (buffer.empty()) return 0;
  Channel& c = *in_;
  std::unique_lock<std::mutex> lock(c.mutex);
  const auto ready = [&] { return c.readPos < c.bytes.size() || c.writerClosed || c.readerClosed; };
  if (!readDeadline_) {
    c.readable.wait(lock, ready);
  } else if (!c.readable.wait_until(lock, *readDeadline_, ready)) {
    error = readDeadlineWhy_.empty() ? "nothing was read before the deadline" : readDeadlineWhy_;
    return -1;
  }
  if (c.readerClosed || c.readPos == c.bytes.size()) return 0;
  const size_t n = std::min(buffer.size(), c.bytes.size() - c.readPos);
  std::memcpy(buffer.data(), c.bytes.data() + c.readPos, n);
  c.readPos += n;
  if (c.readPos == c.bytes.size()) {
    c.bytes.clear();
    c.readPos = 0;
  } else if (c.readPos > 65536 && c.readPos > c.bytes.size() / 2) {
    c.bytes.erase(0, c.readPos);
    c.readPos = 0;
  }
  return static_cast<ptrdiff_t>(n);
}

bool MemoryPipe::write(std::string_view data, std::string& error) {
  Channel& c = *out_;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.writerClosed) {
      error = "the pipe is closed";
      return false;
    }
    if (c.readerClosed) {
      error = "the other end of the pipe is closed";
      return false;
    }
    c.bytes.append(data);
  }
  c.readable.notify_all();
  return true;
}

void MemoryPipe::setReadDeadline(std::optional<Clock::time_point> deadline, std::string why) {
  readDeadline_ = deadline;
  readDeadlineWhy_ = std::move(why);
}

void MemoryPipe::close() {
  {
    std::lock_guard<std::mutex> lock(out_->mutex);
    out_->writerClosed = true;
  }
  out_->readable.notify_all();
  {
    std::lock_guard<std::mutex> lock(in_->mutex);
    in_->readerClosed = true;
    in_->bytes.clear();
    in_->readPos = 0;
  }
  in_->readable.notify_all();
}

}  // namespace scanback::net
