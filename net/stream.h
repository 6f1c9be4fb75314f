// Byte streams under the framings of net/ (message_reader.h and message_writer.h: the Debug
// Adapter Protocol's Content-Length messages; json_lines.h: the control protocol's lines): a
// minimal interface and its two implementations.
//
//   FdStream    a pair of file descriptors: stdin/stdout (`scanback dap`), or one socket
//               (a connection of a net/listener.h listener, or one made by net/connect.h)
//   MemoryPipe  an in-memory, thread-safe, blocking byte pipe; MemoryPipe::pair() gives two
//               connected endpoints, for sessions and control servers run in-process by the tests
//
// Threading: one thread reads while any number of threads write (each write() is atomic with
// respect to the other writes on the same stream) and any thread may close().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace scanback::net {

using Clock = std::chrono::steady_clock;

// A timeout as net/'s messages say it: "10 s", "0.2 s".
std::string secondsText(std::chrono::milliseconds duration);

class Stream {
 public:
  virtual ~Stream() = default;

  // Blocks until at least one byte is available, then reads up to buffer.size() of them.
  // Returns how many (> 0); 0 at the end of the stream (the peer closed it, or close() was called
  // on this one); -1 on an error, described in `error` (a read deadline that passed among them).
  // An empty buffer returns 0 at once.
  [[nodiscard]] virtual ptrdiff_t read(std::span<char> buffer, std::string& error) = 0;

  // Writes all of `data`, blocking as long as needed. False, with `error`, when the stream is
  // closed or broken (the peer went away): then some of the bytes may have been written.
  [[nodiscard]] virtual bool write(std::string_view data, std::string& error) = 0;

  // Ends the stream, from any thread: a read blocked in another thread returns 0, as do all later
  // reads; later writes fail. The peer reads the bytes already written, then the end of the
  // stream. Idempotent.
  virtual void close() = 0;

  // Reads wait for bytes until `deadline` at most: past it, read() fails (-1) with `why` as its
  // error, and the stream stays open. nullopt (the default): reads wait as long as it takes. Set
  // by the thread that reads, or before reading starts: a server's handshake and idle timeouts.
  // FdStream and MemoryPipe keep it; a stream whose reads never wait (a test's script of bytes)
  // may leave it to this default, which ignores it.
  virtual void setReadDeadline(std::optional<Clock::time_point> /*deadline*/, std::string /*why*/) {}
};

// The process at the other end of a unix socket, as the kernel saw it connect (or listen).
struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// A stream over file descriptors: reads from `readFd`, writes to `writeFd` (the same descriptor
// for a socket). Reads and writes wait in poll(), so that close() interrupts a blocked read (and
// a write waiting for room) on any kind of descriptor: on a socket close() shuts it down, which
// wakes them; on anything else (standard input and output) they poll an eventfd of the stream's
// too. So a connection costs its socket and nothing else. Writes on a socket use MSG_NOSIGNAL;
// writes on a pipe whose reader is gone block SIGPIPE for the calling thread, so a vanished client
// is an error, never a signal that ends the process.
class FdStream : public Stream {
 public:
  // `owned`: the destructor closes the descriptor(s). close() on a socket calls shutdown(), which
  // the peer sees as the end of the stream at once; on an owned pipe it closes the write end
  // (after any write in progress), for the same effect. The read descriptor is closed only by the
  // destructor, so no thread still reading can be left with a descriptor number that is reused.
  // Throws std::runtime_error when the eventfd a stream that is no socket needs cannot be created
  // (no descriptors).
  FdStream(int readFd, int writeFd, bool owned);
  ~FdStream() override;
  FdStream(const FdStream&) = delete;
  FdStream& operator=(const FdStream&) = delete;

  // Standard input and output (not owned).
  static std::unique_ptr<FdStream> standardIo();
  // A connected socket (owned).
  static std::unique_ptr<FdStream> socket(int fd);

  [[nodiscard]] ptrdiff_t read(std::span<char> buffer, std::string& error) override;
  [[nodiscard]] bool write(std::string_view data, std::string& error) override;
  void close() override;
  void setReadDeadline(std::optional<Clock::time_point> deadline, std::string why) override;

  // On a socket: a write that passes no byte on for `stall` (the peer reads nothing), or that
  // takes longer than `stall` plus one second per 16 KiB written (the peer reads too slowly to
  // keep up), fails, and the stream closes: a client that never reads cannot hold a server's
  // thread, or a debug session writing to it, for ever. nullopt (the default): a write waits as
  // long as it takes. Set before the stream is used.
  void setSendTimeout(std::optional<std::chrono::milliseconds> stall);

  // Why the stream failed on its own — a read deadline passed, a write stalled — or why close()
  // was asked for with a reason (closeBecause); empty when none of these happened. Any thread.
  std::string failure() const;
  // close(), remembering `why` as the failure() (unless there is one already).
  void closeBecause(const std::string& why);

  // The process at the other end of a unix socket (SO_PEERCRED); nullopt for other streams.
  std::optional<PeerCredentials> peerCredentials() const;

 private:
  enum class Wait { Ready, Closed, TimedOut, Failed };
  // Waits until `fd` is ready for `events`, the stream is closed or `deadline` passes. Failed:
  // poll failed, `error` says why.
  [[nodiscard]] Wait waitFor(int fd, short events, std::optional<Clock::time_point> deadline, std::string& error);
  void fail(const std::string& why);

  int readFd_;
  int writeFd_;  // -1 once close() has closed an owned pipe's write end (under writeMutex_)
  bool owned_;
  bool isSocket_;
  int wake_ = -1;  // not a socket: an eventfd close() signals, which waits poll too
  std::atomic<bool> closed_{false};
  std::mutex writeMutex_;
  std::optional<Clock::time_point> readDeadline_;  // the reading thread's
  std::string readDeadlineWhy_;
  std::optional<std::chrono::milliseconds> sendStall_;
  mutable std::mutex failureMutex_;
  std::string failure_;
};

// One end of an in-memory byte pipe. Bytes written to one end are read from the other, in order.
// The buffer is unbounded: write() never blocks. Closing an end (or destroying it) makes the
// other end's reads return the bytes still buffered and then 0, and its writes fail.
class MemoryPipe : public Stream {
 public:
  struct Pair {
    std::unique_ptr<MemoryPipe> client;
    std::unique_ptr<MemoryPipe> server;
  };
  static Pair pair();

  ~MemoryPipe() override;
  MemoryPipe(const MemoryPipe&) = delete;
  MemoryPipe& operator=(const MemoryPipe&) = delete;

  [[nodiscard]] ptrdiff_t read(std::span<char> buffer, std::string& error) override;
  [[nodiscard]] bool write(std::string_view data, std::string& error) override;
  void close() override;
  void setReadDeadline(std::optional<Clock::time_point> deadline, std::string why) override;

 private:
  // One direction: written by one end, read by the other.
  struct Channel {
    std::mutex mutex;
    std::condition_variable readable;
    std::string bytes;
    size_t readPos = 0;
    bool writerClosed = false;  // no more bytes will come: the reader gets 0 once bytes are read
    bool readerClosed = false;  // nobody reads: writes fail, the reader's own reads return 0
  };
  MemoryPipe(std::shared_ptr<Channel> in, std::shared_ptr<Channel> out);

  std::shared_ptr<Channel> in_;
  std::shared_ptr<Channel> out_;
  std::optional<Clock::time_point> readDeadline_;  // the reading thread's
  std::string readDeadlineWhy_;
};

}  // namespace scanback::net
