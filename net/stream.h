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

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

namespace scanback::net {

class Stream {
 public:
  virtual ~Stream() = default;

  // Blocks until at least one byte is available, then reads up to buffer.size() of them.
  // Returns how many (> 0); 0 at the end of the stream (the peer closed it, or close() was called
  // on this one); -1 on an error, described in `error`. An empty buffer returns 0 at once.
  virtual ptrdiff_t read(std::span<char> buffer, std::string& error) = 0;

  // Writes all of `data`, blocking as long as needed. False, with `error`, when the stream is
  // closed or broken (the peer went away): then some of the bytes may have been written.
  virtual bool write(std::string_view data, std::string& error) = 0;

  // Ends the stream, from any thread: a read blocked in another thread returns 0, as do all later
  // reads; later writes fail. The peer reads the bytes already written, then the end of the
  // stream. Idempotent.
  virtual void close() = 0;
};

// A stream over file descriptors: reads from `readFd`, writes to `writeFd` (the same descriptor
// for a socket). Reads and writes wait in poll() together with an internal wake-up pipe, so that
// close() interrupts a blocked read (and a write waiting for room) on any kind of descriptor.
// Writes on a socket use MSG_NOSIGNAL; writes on a pipe whose reader is gone block SIGPIPE for the
// calling thread, so a vanished client is an error, never a signal that ends the process.
class FdStream : public Stream {
 public:
  // `owned`: the destructor closes the descriptor(s). close() on a socket calls shutdown(), which
  // the peer sees as the end of the stream at once; on an owned pipe it closes the write end
  // (after any write in progress), for the same effect. The read descriptor is closed only by the
  // destructor, so no thread still reading can be left with a descriptor number that is reused.
  // Throws std::runtime_error when the internal wake-up pipe cannot be created (no descriptors).
  FdStream(int readFd, int writeFd, bool owned);
  ~FdStream() override;
  FdStream(const FdStream&) = delete;
  FdStream& operator=(const FdStream&) = delete;

  // Standard input and output (not owned).
  static std::unique_ptr<FdStream> standardIo();
  // A connected socket (owned).
  static std::unique_ptr<FdStream> socket(int fd);

  ptrdiff_t read(std::span<char> buffer, std::string& error) override;
  bool write(std::string_view data, std::string& error) override;
  void close() override;

 private:
  // Waits until `fd` is ready for `events` or the stream is closed. False when closed (or on a
  // poll error, then `error` is set).
  bool waitFor(int fd, short events, std::string& error);

  int readFd_;
  int writeFd_;  // -1 once close() has closed an owned pipe's write end (under writeMutex_)
  bool owned_;
  bool isSocket_;
  int wake_[2] = {-1, -1};  // close() writes one byte to wake_[1]; waits poll wake_[0] too
  std::atomic<bool> closed_{false};
  std::mutex writeMutex_;
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

  ptrdiff_t read(std::span<char> buffer, std::string& error) override;
  bool write(std::string_view data, std::string& error) override;
  void close() override;

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
};

}  // namespace scanback::net
