#include "dap/targets/attach_feed.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include "control/client.h"
#include "traces/block_encoder.h"
#include "traces/framing.h"
#include "traces/trace_codec.h"
#include "vm/base/out_of_memory.h"

namespace scanback::dap {

namespace {

using control::json;

// How long attaching waits for the history the runtime holds.
constexpr auto kCatchUpTimeout = std::chrono::seconds(30);

std::string refusal(const control::Endpoint& endpoint, const json& response) {
  const auto message = response.find("error");
  return fmt::format(
      "the runtime at {} refused: {}", endpoint.text(),
      message != response.end() && message->is_string() ? message->get<std::string>() : std::string("no reason given"));
}

// Checks a streamed block's frame against what its event says. Empty when it is sound.
std::string checkBlock(const std::vector<uint8_t>& bytes, trace::BlockKind kind, trace::FrameHeader& frame) {
  if (bytes.size() < trace::kFrameHeaderBytes) return fmt::format("a block of {} bytes (no frame)", bytes.size());
  std::string error;
  const std::optional<trace::FrameHeader> h = trace::decodeFrameHeader(bytes.data(), error);
  if (!h) return "a block with a bad frame: " + error;
  if (h->kind != kind) return "a block of another kind than its event says";
  if (trace::kFrameHeaderBytes + h->storedSize != bytes.size()) return "a block whose size is not its frame's";
  if (trace::payloadHash(bytes.data() + trace::kFrameHeaderBytes, h->storedSize) != h->payloadHash)
    return "a block whose payload does not match its hash";
  frame = *h;
  return {};
}

std::optional<uint64_t> unsignedMember(const json& message, const char* name) {
  const auto it = message.find(name);
  if (it == message.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<uint64_t>();
}

class AttachFeed final : public HistoryFeed {
 public:
  AttachFeed(AttachOptions options, TargetListener& listener) : options_(std::move(options)), listener_(listener) {}
  ~AttachFeed() override { stop(); }

  bool open(std::string& error) {
    const std::string where = options_.endpoint.text();
    // Status first: a wrong token or debugging disabled is said as such.
    {
      std::unique_ptr<control::ControlClient> status =
          control::ControlClient::connect(options_.endpoint, options_.token, error);
      if (!status) return false;
      const std::optional<json> response = status->request(json{{"command", "status"}}, error);
      if (!response) return false;
      if (!response->value("ok", false)) {
        error = refusal(options_.endpoint, *response);
        return false;
      }
      const json s = response->value("status", json::object());
      if (!s.value("debugEnabled", false)) {
        error = fmt::format("debugging is disabled on the runtime at {} (it was started with --no-debug)", where);
        return false;
      }
      noteStatus(s);
    }
    client_ = control::ControlClient::connect(options_.endpoint, options_.token, error);
    if (!client_) return false;
    const std::optional<json> response = client_->request(json{{"command", "stream"}, {"fromCycle", 0}}, error);
    if (!response) return false;
    if (!response->value("ok", false)) {
      error = refusal(options_.endpoint, *response);
      return false;
    }
    std::optional<control::ControlClient::Event> header = client_->nextEvent(error);
    if (!header) return false;
    trace::FrameHeader frame;
    if (header->message.value("event", "") != "header") {
      error = fmt::format("{} streamed no trace header first", where);
      return false;
    }
    if (const std::string bad = checkBlock(header->bytes, trace::BlockKind::Header, frame); !bad.empty()) {
      error = fmt::format("{} streamed {}", where, bad);
      return false;
    }
    if (!createLocalTrace(header->bytes, error)) return false;
    thread_ = std::thread([this] { receive(); });
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, kCatchUpTimeout, [&] { return caughtUp_ || ended_; })) {
      error = fmt::format("{} did not send the history it holds within {} s", where, kCatchUpTimeout.count());
      return false;
    }
    if (!caughtUp_ && !failure_.empty()) {
      error = failure_;
      return false;
    }
    return true;
  }

  std::string partialPath() const override { return path_; }
  std::shared_ptr<const Program> program() const override { return nullptr; }  // the trace's own
  const std::atomic<bool>* executing() const override { return nullptr; }      // it runs elsewhere
  void start(std::function<void()> ended) override {
    std::unique_lock lock(mutex_);
    if (ended_) {
      lock.unlock();
      ended();
      return;
    }
    onEnded_ = std::move(ended);
  }
  std::optional<Timeline::CycleTime> cycleTime() const override {
    std::lock_guard lock(mutex_);
    return cycleTime_;
  }
  bool paused() const override { return runtimePaused_.load(std::memory_order_relaxed); }
  void stop() override {
    if (stopped_.exchange(true)) return;
    if (client_) client_->close();
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!path_.empty()) std::remove(path_.c_str());
  }

 private:
  bool createLocalTrace(const std::vector<uint8_t>& header, std::string& error) {
    static std::atomic<uint64_t> sessions{0};
    path_ = options_.localTrace.empty() ? (std::filesystem::temp_directory_path() /
                                           fmt::format("scanback-attach-{}-{}.trace.partial", ::getpid(), sessions++))
                                              .string()
                                        : options_.localTrace;
    // Exclusively: never through a link, never over another file.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) {
      error = fmt::format("cannot create {}: {}", path_, std::strerror(errno));
      path_.clear();
      return false;
    }
    return append(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(trace::kFileMagic), 8), error) &&
           append(header, error);
  }

  bool append(std::span<const uint8_t> bytes, std::string& error) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = fmt::format("cannot write {}: {}", path_, std::strerror(errno));
        return false;
      }
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // A block renumbered to follow the blocks before it in the local trace.
  bool appendBlock(std::vector<uint8_t> block, std::string& error) {
    trace::setFrameSequence(block.data(), nextSequence_++);
    return append(block, error);
  }

  bool appendEncoded(trace::BlockKind kind, uint64_t firstCycle, uint64_t cycleCount,
                     const std::vector<uint8_t>& message, std::string& error) {
    const std::span<const uint8_t> framed = encoder_.frame(kind, firstCycle, cycleCount, message, error);
    if (framed.empty()) return false;
    return appendBlock(std::vector<uint8_t>(framed.begin(), framed.end()), error);
  }

  void noteStatus(const json& s) {
    const auto state = s.find("state");
    runtimePaused_.store(state != s.end() && *state == "paused", std::memory_order_relaxed);
    std::optional<Timeline::CycleTime> all;
    // The busiest task's times stand for the runtime's (a timeline shows one distribution).
    for (const json& t : s.value("tasks", json::array())) {
      if (!t.is_object()) continue;
      const json times = t.value("cycleTimeNs", json::object());
      const uint64_t cycles = t.value("cycles", uint64_t{0});
      if (all && all->cycles >= cycles) continue;
      all = Timeline::CycleTime{cycles, times.value("median", uint64_t{0}), times.value("p99", uint64_t{0}),
                                times.value("max", uint64_t{0})};
    }
    std::lock_guard lock(mutex_);
    cycleTime_ = all;
  }

  // One streamed event into the local trace. False with `error` when the stream is unusable.
  bool take(const control::ControlClient::Event& event, bool& ended, std::string& error) {
    const std::string kind = event.message.value("event", "");
    if (kind == "chunk") {
      trace::FrameHeader frame;
      // A chunk's first block or one of its continuations: either follows on from the cycles before.
      std::string bad = checkBlock(event.bytes, trace::BlockKind::Chunk, frame);
      if (!bad.empty() && checkBlock(event.bytes, trace::BlockKind::Continuation, frame).empty()) bad.clear();
      if (!bad.empty()) {
        error = "a streamed chunk is " + bad;
        return false;
      }
      if (frame.firstCycle != unsignedMember(event.message, "firstCycle") ||
          frame.cycleCount != unsignedMember(event.message, "cycleCount") || frame.cycleCount == 0 ||
          (wroteCycles_ && frame.firstCycle != nextCycle_)) {
        error =
            fmt::format("a streamed chunk at cycle {} does not follow on from cycle {}", frame.firstCycle, nextCycle_);
        return false;
      }
      nextCycle_ = frame.firstCycle + frame.cycleCount;
      wroteCycles_ = true;
      return appendBlock(event.bytes, error);
    }
    if (kind == "gap") {
      const std::optional<uint64_t> first = unsignedMember(event.message, "firstCycle");
      const std::optional<uint64_t> count = unsignedMember(event.message, "cycleCount");
      if (!first || !count || *count == 0 || (wroteCycles_ && *first != nextCycle_)) {
        error = "a streamed gap that does not follow on";
        return false;
      }
      listener_.output("console", fmt::format("the debugger fell behind the runtime: cycles {}..{} are not in its "
                                              "history\n",
                                              *first, *first + *count - 1));
      nextCycle_ = *first + *count;
      wroteCycles_ = true;
      return appendEncoded(trace::BlockKind::Gap, *first, *count, trace::encodeGap(trace::GapData{*first, *count}),
                           error);
    }
    if (kind == "fault") {
      trace::FaultData f;
      const std::optional<uint64_t> cycle = unsignedMember(event.message, "cycle");
      const std::optional<uint64_t> step = unsignedMember(event.message, "step");
      const std::optional<uint64_t> statement = unsignedMember(event.message, "statement");
      const std::optional<uint64_t> code = unsignedMember(event.message, "code");
      const auto message = event.message.find("message");
      if (!cycle || !step || !statement || !code || *statement > UINT32_MAX || *code > UINT32_MAX ||
          message == event.message.end() || !message->is_string()) {
        error = "a streamed fault without its cycle, step, statement, code and message";
        return false;
      }
      f.cycle = *cycle;
      f.step = *step;
      f.statement = static_cast<uint32_t>(*statement);
      f.code = static_cast<uint32_t>(*code);
      f.message = message->get<std::string>();
      ended = true;  // nothing follows a fault
      return appendEncoded(trace::BlockKind::Fault, f.cycle, 0, trace::encodeFault(f),
                           error);  // as TraceWriter frames it
    }
    if (kind == "status") {
      noteStatus(event.message);
      return true;
    }
    if (kind == "caughtUp") {
      std::lock_guard lock(mutex_);
      caughtUp_ = true;
      changed_.notify_all();
      return true;
    }
    if (kind == "end") {
      ended = true;
      return true;
    }
    return true;  // an event of a later version: not ours to read
  }

  // The receiving thread's entry point: nothing may leave it (std::terminate would end the server).
  void receive() {
    std::string error;
    bool ended = false;
    try {
      while (!ended) {
        std::optional<control::ControlClient::Event> event = client_->nextEvent(error);
        if (!event) {
          if (!stopped_.load())
            error = fmt::format("the connection to the runtime at {} ended: {}", options_.endpoint.text(), error);
          break;
        }
        if (!take(*event, ended, error)) {
          error = fmt::format("{}: {}; the history ends here", options_.endpoint.text(), error);
          break;
        }
      }
    } catch (const std::bad_alloc& e) {
      error = fmt::format("{}: {}; the history ends here", options_.endpoint.text(),
                          outOfMemoryText(e, "receiving the runtime's history"));
    } catch (const std::exception& e) {
      error = fmt::format("{}: {}; the history ends here", options_.endpoint.text(), e.what());
    }
    std::function<void()> onEnded;
    {
      std::lock_guard lock(mutex_);
      ended_ = true;
      failure_ = error;
      onEnded = std::move(onEnded_);
      changed_.notify_all();
    }
    if (!error.empty() && !stopped_.load() && caughtUp_) listener_.output("console", error + "\n");
    if (onEnded) onEnded();
  }

  AttachOptions options_;
  TargetListener& listener_;
  std::unique_ptr<control::ControlClient> client_;
  std::string path_;
  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
  // the receiving thread
  trace::BlockEncoder encoder_{3};
  uint32_t nextSequence_ = 1;  // the header is block 0
  uint64_t nextCycle_ = 0;
  bool wroteCycles_ = false;
  // shared
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool caughtUp_ = false;
  bool ended_ = false;
  std::string failure_;
  std::function<void()> onEnded_;
  std::optional<Timeline::CycleTime> cycleTime_;
  std::atomic<bool> runtimePaused_{false};  // as the runtime's last status said
};

}  // namespace

std::unique_ptr<HistoryFeed> attachFeed(const AttachOptions& options, TargetListener& listener, std::string& error) {
  auto feed = std::make_unique<AttachFeed>(options, listener);
  if (!feed->open(error)) return nullptr;
  return feed;
}

bool stopRuntime(const AttachOptions& options, std::string& error) {
  std::unique_ptr<control::ControlClient> client =
      control::ControlClient::connect(options.endpoint, options.token, error);
  if (!client) return false;
  const std::optional<json> response = client->request(json{{"command", "stop"}}, error);
  if (!response) return false;
  if (!response->value("ok", false)) {
    error = refusal(options.endpoint, *response);
    return false;
  }
  return true;
}

}  // namespace scanback::dap
