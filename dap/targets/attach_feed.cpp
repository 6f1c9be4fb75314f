#include "dap/targets/attach_feed.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "control/client.h"
#include "traces/trace_writer.h"
#include "vm/base/out_of_memory.h"

namespace scanback::dap {

namespace {

using control::json;
using History = control::ControlClient::HistoryEvent;

// How long attaching waits for the history the runtime holds.
constexpr auto kCatchUpTimeout = std::chrono::seconds(30);

std::string refusal(const control::Endpoint& endpoint, const json& response) {
  const auto message = response.find("error");
  std::string why =
      message != response.end() && message->is_string() ? message->get<std::string>() : std::string("no reason given");
  // The control server numbers its answers by the request on the connection ("request 1: ...",
  // docs/control.md), which means nothing to whoever attaches: one request was sent.
  if (why.starts_with("request ")) {
    const size_t digits = why.find_first_not_of("0123456789", 8);
    if (digits > 8 && digits != std::string::npos && why.compare(digits, 2, ": ") == 0) why.erase(0, digits + 2);
  }
  return fmt::format("the runtime at {} refused: {}", endpoint.text(), why);
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
    std::optional<History> header = client_->nextHistoryEvent(error);
    if (!header) return false;
    if (header->kind != History::Kind::Header) {
      error = fmt::format("{} streamed no trace header first", where);
      return false;
    }
    if (!createLocalTrace(header->block, error)) return false;
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
  // Forcing acts on the runtime, over a connection of its own (the stream's only streams): the
  // runtime records each force in the history this session follows.
  std::optional<Force> force(const std::string& target, const std::string& value, std::string& error) override {
    const std::optional<json> r = ask(json{{"command", "force"}, {"target", target}, {"value", value}}, error);
    if (!r) return std::nullopt;
    const json f = r->value("force", json::object());
    Force out;
    out.target = f.value("target", target);
    out.value = f.value("value", value);
    out.type = f.value("type", "");
    return out;
  }
  std::optional<std::vector<std::string>> release(const std::string& target, std::string& error) override {
    json request{{"command", "release"}};
    if (!target.empty()) request["target"] = target;
    const std::optional<json> r = ask(request, error);
    if (!r) return std::nullopt;
    std::vector<std::string> released;
    for (const json& t : r->value("released", json::array()))
      if (t.is_string()) released.push_back(t.get<std::string>());
    return released;
  }
  std::optional<std::vector<Force>> forced(std::string& error) override {
    const std::optional<json> r = ask(json{{"command", "forced"}}, error);
    if (!r) return std::nullopt;
    std::vector<Force> forces;
    for (const json& f : r->value("forced", json::array())) {
      if (!f.is_object()) continue;
      Force out;
      out.target = f.value("target", "");
      out.value = f.value("value", "");
      out.type = f.value("type", "");
      out.sinceCycle = f.value("sinceCycle", uint64_t{0});
      forces.push_back(std::move(out));
    }
    return forces;
  }
  void stop() override {
    if (stopped_.exchange(true)) return;
    if (client_) client_->close();
    if (thread_.joinable()) thread_.join();
    writer_.reset();  // not closed: the file goes
    if (!path_.empty()) std::remove(path_.c_str());
  }

 private:
  // One request on a connection of its own; the response when the runtime said ok, else nullopt
  // with its reason.
  std::optional<json> ask(const json& request, std::string& error) const {
    std::unique_ptr<control::ControlClient> client =
        control::ControlClient::connect(options_.endpoint, options_.token, error);
    if (!client) return std::nullopt;
    std::optional<json> response = client->request(request, error);
    if (!response) return std::nullopt;
    if (!response->value("ok", false)) {
      error = refusal(options_.endpoint, *response);
      return std::nullopt;
    }
    return response;
  }

  bool createLocalTrace(const std::vector<uint8_t>& header, std::string& error) {
    static std::atomic<uint64_t> sessions{0};
    const std::string path = options_.localTrace.empty()
                                 ? (std::filesystem::temp_directory_path() /
                                    fmt::format("scanback-attach-{}-{}.trace.partial", ::getpid(), sessions++))
                                       .string()
                                 : options_.localTrace;
    writer_ = trace::TraceWriter::createExclusive(path, header, error);
    if (!writer_) {
      error = fmt::format("cannot create {}: {}", path, error);
      return false;
    }
    path_ = path;
    return true;
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
  bool take(History& event, bool& ended, std::string& error) {
    switch (event.kind) {
      case History::Kind::Header: error = "a second trace header"; return false;
      case History::Kind::Chunk:
        if (writer_->writeFramedChunk(event.block)) return true;
        error = "a streamed block: " + writer_->lastError();
        return false;
      case History::Kind::Gap: {
        const trace::GapData& gap = event.gap;
        if (!writer_->writeGap(gap)) {
          error = "a streamed gap: " + writer_->lastError();
          return false;
        }
        listener_.output("console", fmt::format("the debugger fell behind the runtime: cycles {}..{} are not in its "
                                                "history\n",
                                                gap.firstCycle, gap.firstCycle + gap.cycleCount - 1));
        return true;
      }
      case History::Kind::Fault:
        ended = true;  // nothing follows a fault
        if (writer_->writeFault(event.fault)) return true;
        error = "a streamed fault: " + writer_->lastError();
        return false;
      case History::Kind::Status: noteStatus(event.status); return true;
      case History::Kind::CaughtUp: {
        std::lock_guard lock(mutex_);
        caughtUp_ = true;
        changed_.notify_all();
        return true;
      }
      case History::Kind::End: ended = true; return true;
      case History::Kind::Other: return true;
    }
    return true;
  }

  // The receiving thread's entry point: nothing may leave it (std::terminate would end the server).
  void receive() {
    std::string error;
    bool ended = false;
    try {
      while (!ended) {
        std::optional<History> event = client_->nextHistoryEvent(error);
        if (!event) {
          if (!stopped_.load()) error = fmt::format("{}; the history ends here", error);
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
  std::thread thread_;
  std::atomic<bool> stopped_{false};
  // the receiving thread's (once open() started it): the local trace, checked as it is appended to
  std::unique_ptr<trace::TraceWriter> writer_;
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
