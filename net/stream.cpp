#include "net/stream.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

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

// ---------------------------------------------------------------- FdStream

FdStream::FdStream(int readFd, int writeFd, bool owned) : readFd_(readFd), writeFd_(writeFd), owned_(owned) {
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error(errnoText("cannot create a pipe", errno));
  struct stat st {};
  isSocket_ = ::fstat(writeFd_, &st) == 0 && S_ISSOCK(st.st_mode);
}

FdStream::~FdStream() {
  close();
  if (owned_) {
    if (readFd_ >= 0) ::close(readFd_);
    if (writeFd_ >= 0 && writeFd_ != readFd_) ::close(writeFd_);
  }
  ::close(wake_[0]);
  ::close(wake_[1]);
}

std::unique_ptr<FdStream> FdStream::standardIo() {
  return std::make_unique<FdStream>(STDIN_FILENO, STDOUT_FILENO, false);
}

std::unique_ptr<FdStream> FdStream::socket(int fd) { return std::make_unique<FdStream>(fd, fd, true); }

bool FdStream::waitFor(int fd, short events, std::string& error) {
  for (;;) {
    if (closed_.load(std::memory_order_acquire)) return false;
    pollfd fds[2] = {{fd, events, 0}, {wake_[0], POLLIN, 0}};
    const int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errnoText("poll failed", errno);
      return false;
    }
    if (fds[1].revents != 0) return false;  // closed
    if (fds[0].revents != 0) return true;   // ready, or hung up / in error: the read or write says which
  }
}

ptrdiff_t FdStream::read(std::span<char> buffer, std::string& error) {
  if (buffer.empty()) return 0;
  for (;;) {
    std::string pollError;
    if (!waitFor(readFd_, POLLIN, pollError)) {
      if (pollError.empty()) return 0;
      error = pollError;
      return -1;
    }
    const ssize_t n = ::read(readFd_, buffer.data(), buffer.size());
    if (n >= 0) return n;
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
    error = errnoText("read failed", errno);
    return -1;
  }
}

bool FdStream::write(std::string_view data, std::string& error) {
  std::lock_guard<std::mutex> lock(writeMutex_);
  size_t done = 0;
  while (done < data.size()) {
    std::string pollError;
    if (writeFd_ < 0 || !waitFor(writeFd_, POLLOUT, pollError)) {
      error = pollError.empty() ? "the stream is closed" : pollError;
      return false;
    }
    ssize_t n;
    int err = 0;
    if (isSocket_) {
      n = ::send(writeFd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
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
      continue;
    }
    if (n < 0 && (err == EINTR || err == EAGAIN || err == EWOULDBLOCK)) continue;
    if (n == 0) {
      error = "write failed: nothing written";
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
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
  if (isSocket_) {
    ::shutdown(writeFd_, SHUT_RDWR);
  } else if (owned_ && writeFd_ >= 0 && writeFd_ != readFd_) {
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

ptrdiff_t MemoryPipe::read(std::span<char> buffer, std::string& /*error*/) {
  if (buffer.empty()) return 0;
  Channel& c = *in_;
  std::unique_lock<std::mutex> lock(c.mutex);
  c.readable.wait(lock, [&] { return c.readPos < c.bytes.size() || c.writerClosed || c.readerClosed; });
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
