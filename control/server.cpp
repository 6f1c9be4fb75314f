#include "control/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <thread>

#include "net/auth_token.h"
#include "traces/block_encoder.h"
#include "traces/trace_codec.h"

namespace scanback::control {

namespace {

// One streaming client's share of the history: what the flight recorder keeps, queued up to a
// byte limit. The recorder's writer thread adds (under its history lock: never waiting here for
// more than a push), the connection's thread sends. A chunk that does not fit is dropped, and the
// client gets a gap for the dropped cycles once its queue has drained, or before the next chunk
// that fits, whichever comes first.
class StreamSink final : public recorder::HistorySink {
 public:
  struct Item {
    enum class Kind { Chunk, Gap, Fault } kind = Kind::Chunk;
    std::shared_ptr<const trace::EncodedChunk> chunk;
    trace::GapData gap;
    trace::FaultData fault;
  };

  explicit StreamSink(size_t limit) : limit_(limit) {}

  void chunk(std::shared_ptr<const trace::EncodedChunk> chunk) override {
    std::lock_guard lock(mutex_);
    // A continuation of a chunk whose earlier block was dropped is of no use without it: dropped too.
    if ((queuedBytes_ + chunk->size() > limit_ && !items_.empty()) || (chunk->continuation() && droppingChunk_)) {
      if (!droppedFrom_) droppedFrom_ = chunk->firstCycle();
      droppedEnd_ = chunk->firstCycle() + chunk->cycleCount();
      ++droppedChunks_;
      droppingChunk_ = true;
      return;
    }
    droppingChunk_ = false;
    closeDroppedRun(chunk->firstCycle());
    queuedBytes_ += chunk->size();
    items_.push_back(Item{Item::Kind::Chunk, std::move(chunk), {}, {}});
    ready_.notify_one();
  }
  void gap(const trace::GapData& gap) override {
    std::lock_guard lock(mutex_);
    if (droppedFrom_) {  // the gap the client gets covers it
      droppedEnd_ = gap.firstCycle + gap.cycleCount;
      return;
    }
    items_.push_back(Item{Item::Kind::Gap, nullptr, gap, {}});
    ready_.notify_one();
  }
  void fault(const trace::FaultData& fault) override {
    std::lock_guard lock(mutex_);
    closeDroppedRun(fault.cycle + 1);
    items_.push_back(Item{Item::Kind::Fault, nullptr, {}, fault});
    ready_.notify_one();
  }

  // The next item, waiting until `until`; nullopt when there is none by then.
  std::optional<Item> next(std::chrono::steady_clock::time_point until) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_until(lock, until, [&] { return !items_.empty(); })) return std::nullopt;
    Item item = std::move(items_.front());
    items_.pop_front();
    if (item.chunk) queuedBytes_ -= item.chunk->size();
    if (items_.empty()) closeDroppedRun(droppedEnd_);  // drained: the client learns of its gap now
    return item;
  }
  bool empty() {
    std::lock_guard lock(mutex_);
    return items_.empty();
  }
  size_t size() {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  uint64_t droppedChunks() {
    std::lock_guard lock(mutex_);
    return droppedChunks_;
  }

 private:
  // Under mutex_: the cycles dropped before `end` become a gap in the queue.
  void closeDroppedRun(uint64_t end) {
    if (!droppedFrom_) return;
    if (end > *droppedFrom_)
      items_.push_back(Item{Item::Kind::Gap, nullptr, trace::GapData{*droppedFrom_, end - *droppedFrom_}, {}});
    droppedFrom_.reset();
  }

  const size_t limit_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Item> items_;
  size_t queuedBytes_ = 0;
  std::optional<uint64_t> droppedFrom_;  // the dropped cycles not yet told: droppedFrom_ .. droppedEnd_ - 1
  bool droppingChunk_ = false;           // a block of the newest chunk was dropped: its continuations go too
  uint64_t droppedEnd_ = 0;
  uint64_t droppedChunks_ = 0;
};

json failure(uint64_t number, const std::string& why) {
  return json{{"ok", false}, {"error", fmt::format("request {}: {}", number, why)}};
}

bool writeBlock(net::Stream& stream, json event, std::span<const uint8_t> bytes) {
  event["bytes"] = bytes.size();
  std::string text = event.dump();
  text += '\n';
  text.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::string error;
  return stream.write(text, error);
}

// The connection is a stream from now on: the header, the held history, then what is kept as it
// is kept, with the runtime's status every statusEvery, until the client goes or the server closes.
void runStream(net::Stream& stream, ControlledRuntime& runtime, recorder::Recorder& rec, uint64_t fromCycle,
               const ControlOptions& options, const std::atomic<bool>& closing) {
  std::string error;
  std::vector<uint8_t> header;
  {
    trace::BlockEncoder encoder(3);
    const std::span<const uint8_t> framed =
        encoder.frame(trace::BlockKind::Header, 0, 0, trace::encodeHeader(rec.header()), error);
    header.assign(framed.begin(), framed.end());
  }
  if (header.empty()) {
    net::writeLine(stream, json{{"event", "end"}, {"error", fmt::format("cannot encode the trace header: {}", error)}});
    return;
  }
  if (!writeBlock(stream, json{{"event", "header"}}, header)) return;
  auto sink = std::make_shared<StreamSink>(options.clientBufferBytes);
  if (!rec.addHistorySink(sink, fromCycle, options.clientBufferBytes)) {
    net::writeLine(stream, json{{"event", "end"}, {"error", "this runtime keeps no history in memory to stream"}});
    return;
  }
  // What the recorder held is queued (and maybe a chunk kept meanwhile): once it is sent, the
  // client is told, so that it starts where the runtime was when it attached.
  size_t backlog = sink->size();
  bool caughtUp = false;
  auto nextStatus = std::chrono::steady_clock::now();
  bool alive = true;
  while (alive) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= nextStatus) {
      json event = runtime.status();
      event["event"] = "status";
      event["droppedChunks"] = sink->droppedChunks();
      alive = net::writeLine(stream, event);
      nextStatus = now + options.statusEvery;
      continue;
    }
    if (closing.load(std::memory_order_acquire) && sink->empty()) break;
    if (!caughtUp && backlog == 0) {
      caughtUp = true;
      alive = net::writeLine(stream, json{{"event", "caughtUp"}});
      continue;
    }
    std::optional<StreamSink::Item> item = sink->next(closing.load() ? now : nextStatus);
    if (!item) continue;
    if (backlog > 0) --backlog;
    switch (item->kind) {
      case StreamSink::Item::Kind::Chunk:
        alive = writeBlock(stream,
                           json{{"event", "chunk"},
                                {"firstCycle", item->chunk->firstCycle()},
                                {"cycleCount", item->chunk->cycleCount()}},
                           item->chunk->bytes());
        break;
      case StreamSink::Item::Kind::Gap:
        alive = net::writeLine(
            stream, json{{"event", "gap"}, {"firstCycle", item->gap.firstCycle}, {"cycleCount", item->gap.cycleCount}});
        break;
      case StreamSink::Item::Kind::Fault: {
        const trace::FaultData& f = item->fault;
        alive = net::writeLine(stream, json{{"event", "fault"},
                                            {"cycle", f.cycle},
                                            {"step", f.step},
                                            {"statement", f.statement},
                                            {"code", f.code},
                                            {"message", f.message}});
        break;
      }
    }
  }
  rec.removeHistorySink(sink.get());
  if (alive) {
    json status = runtime.status();
    net::writeLine(stream, json{{"event", "end"}, {"state", status.value("state", "stopped")}});
  }
}

}  // namespace

namespace {

// A connection's requests, answered at most `perSecond` (a token bucket of `burst`): a client
// asking in a loop waits for its answers, and so leaves the processor to the scan thread.
class RequestPacer {
 public:
  RequestPacer(double perSecond, double burst) : perSecond_(perSecond), burst_(burst), tokens_(burst) {}
  // Waits until the next request may be answered; false when `closing` was set meanwhile.
  bool wait(const std::atomic<bool>& closing) {
    if (perSecond_ <= 0) return true;
    for (;;) {
      const auto now = std::chrono::steady_clock::now();
      tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * perSecond_);
      last_ = now;
      if (tokens_ >= 1) {
        tokens_ -= 1;
        return true;
      }
      if (closing.load(std::memory_order_acquire)) return false;
      // At most 20 ms at a time, so that a closing server is not kept waiting.
      const double wait = std::min((1 - tokens_) / perSecond_, 0.02);
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
  }

 private:
  double perSecond_, burst_, tokens_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The server's threads, against the runtime's scan thread (docs/control.md, "Limits"): when both
// want the processor, the scan thread gets it.
constexpr int kServerNiceness = 10;

}  // namespace

void ControlServer::serve(net::Stream& stream, ControlledRuntime& runtime, const ControlOptions& options,
                          const std::atomic<bool>& closing, const Hooks& hooks) {
  net::LineReader reader(stream, kMaxLineBytes);
  RequestPacer pacer(options.requestsPerSecond, options.requestBurst);
  bool established = false;
  std::string line, error;
  for (uint64_t number = 1;; ++number) {
    // Until the first valid request the server's handshake deadline holds; after it, each request
    // must come within the idle timeout of the answer before.
    if (established)
      stream.setReadDeadline(std::chrono::steady_clock::now() + options.idleTimeout,
                             fmt::format("no request for {}", net::secondsText(options.idleTimeout)));
    const net::LineReader::Result read = reader.readLine(line, error);
    if (read == net::LineReader::Result::End || read == net::LineReader::Result::Failed) return;
    if (closing.load(std::memory_order_acquire)) return;
    if (!pacer.wait(closing)) return;
    if (read == net::LineReader::Result::TooLong) {
      if (!net::writeLine(stream, failure(number, fmt::format("longer than {} bytes", kMaxLineBytes)))) return;
      continue;
    }
    std::optional<Request> request = parseRequest(line, error);
    if (!request) {
      if (!net::writeLine(stream, failure(number, error))) return;
      continue;
    }
    if (!established && options.token) {
      // A wrong or missing token ends the connection: nothing more is read from it.
      if (!request->token) {
        net::writeLine(stream, failure(number,
                                       "this runtime requires a token: give it as 'token' (scanback ctl "
                                       "--auth-token-file FILE; 'authToken' of a debugger's attach)"));
        return;
      }
      if (!net::sameAuthToken(*request->token, *options.token)) {
        net::writeLine(stream, failure(number, "wrong token: it is not the token this runtime was started with"));
        return;
      }
    }
    if (!established) {
      established = true;
      if (hooks.established) hooks.established();
    }
    recorder::Recorder* rec = runtime.recorder();
    json response{{"ok", true}, {"command", commandName(request->command)}};
    switch (request->command) {
      case Request::Command::Status: response["status"] = runtime.status(); break;
      case Request::Command::Stop:
        if (!net::writeLine(stream, response)) return;
        runtime.stop();
        continue;
      case Request::Command::Pause:
      case Request::Command::Resume: {
        std::string why;
        if (!runtime.setPaused(request->command == Request::Command::Pause, why)) response = failure(number, why);
        break;
      }
      case Request::Command::Force: {
        std::string why;
        if (std::optional<json> f = runtime.force(request->target, request->value, why))
          response["force"] = std::move(*f);
        else
          response = failure(number, why);
        break;
      }
      case Request::Command::Release: {
        std::string why;
        if (std::optional<json> released = runtime.release(request->target, why))
          response["released"] = std::move(*released);
        else
          response = failure(number, why);
        break;
      }
      case Request::Command::Forced: response["forced"] = runtime.forced(); break;
      case Request::Command::Snapshot: {
        if (!rec) {
          response = failure(number, "this runtime keeps no history");
          break;
        }
        std::future<recorder::SnapshotResult> done = rec->requestSnapshot(request->path);
        if (done.wait_for(options.snapshotTimeout) != std::future_status::ready) {
          response = failure(number, fmt::format("the snapshot to {} was not written within {} s", request->path,
                                                 options.snapshotTimeout.count()));
          break;
        }
        const recorder::SnapshotResult r = done.get();
        if (!r.ok) {
          response = failure(number, r.error);
          break;
        }
        response["path"] = r.path;
        response["firstCycle"] = r.firstCycle;
        response["endCycle"] = r.endCycle;
        response["bytes"] = r.bytes;
        break;
      }
      case Request::Command::Stream:
        if (!options.debugEnabled) {
          response = failure(number, "debugging is disabled on this runtime (it was started with --no-debug)");
          break;
        }
        if (!rec) {
          response = failure(number, "this runtime keeps no history");
          break;
        }
        if (!net::writeLine(stream, response)) return;
        // A stream only writes: no request deadline from here on.
        stream.setReadDeadline(std::nullopt, "");
        if (hooks.streaming) hooks.streaming();
        runStream(stream, runtime, *rec, request->fromCycle, options, closing);
        return;
    }
    if (!net::writeLine(stream, response)) return;
  }
}

ControlServer::ControlServer(std::unique_ptr<net::Listener> listener, ControlledRuntime& runtime,
                             ControlOptions options)
    : runtime_(runtime), options_(std::move(options)) {
  net::ServerOptions serverOptions;
  serverOptions.name = options_.name;
  serverOptions.maxConnections = options_.maxConnections;
  serverOptions.handshakeTimeout = options_.handshakeTimeout;
  serverOptions.sendTimeout = options_.sendTimeout;
  serverOptions.niceness = kServerNiceness;
  serverOptions.acceptsPerSecond = options_.acceptsPerSecond;
  serverOptions.log = options_.log;
  // A refused client reads why, as the protocol's error line (it answers no request: no number).
  serverOptions.refusal = [](const std::string& why) { return json{{"ok", false}, {"error", why}}.dump() + "\n"; };
  server_ = std::make_unique<net::Server>(std::move(listener), serverOptions, [this](net::Connection& connection) {
    bool streamed = false;
    Hooks hooks;
    hooks.established = [&connection] { connection.established(); };
    hooks.streaming = [this, &streamed] {
      streamed = true;
      std::lock_guard lock(streamsMutex_);
      ++streams_;
    };
    serve(connection.stream(), runtime_, options_, closing_, hooks);
    if (streamed) {
      {
        std::lock_guard lock(streamsMutex_);
        --streams_;
      }
      streamsChanged_.notify_all();
    }
  });
}

ControlServer::~ControlServer() { close(); }

void ControlServer::close(std::chrono::milliseconds drain) {
  if (closed_.exchange(true)) return;
  closing_.store(true, std::memory_order_release);
  server_->stopAccepting();
  // Streams send what they have and their end; then whatever is left is cut off.
  {
    std::unique_lock lock(streamsMutex_);
    streamsChanged_.wait_for(lock, drain, [this] { return streams_ == 0; });
  }
  server_->close();
}

}  // namespace scanback::control
