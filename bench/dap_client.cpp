#include "bench/dap_client.h"

#include <chrono>
#include <cstdio>

#include "dap/session/session.h"

namespace scanback::bench {

namespace {

double nowNs() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

constexpr size_t kRequestOutputs = 64;

}  // namespace

DapClient::DapClient(std::string benchmark, double timeoutSeconds)
    : benchmark_(std::move(benchmark)), timeoutSeconds_(timeoutSeconds) {
  net::MemoryPipe::Pair pipe = net::MemoryPipe::pair();
  client_ = std::move(pipe.client);
  // The session's thread owns its end of the pipe, so that it outlives this client after a hang.
  std::shared_ptr<net::Stream> server = std::move(pipe.server);
  session_ = std::thread([server, name = benchmark_] {
    dap::Session session(*server, [&name](const std::string& text) {
      std::fprintf(stderr, "%s: the session logged: %s\n", name.c_str(), text.c_str());
    });
    session.run();
  });
  reader_ = std::make_unique<net::MessageReader>(*client_);
  writer_ = std::make_unique<net::MessageWriter>(*client_);
  watchdog_ = std::thread([this] { watch(); });
}

void DapClient::close() {
  if (closed_) return;
  closed_ = true;
  if (!hung_) {
    try {
      request("disconnect", json::object());
    } catch (const std::exception&) {
    }
  }
  client_->close();
  {
    std::lock_guard lock(watchMutex_);
    stopWatch_ = true;
  }
  watchWake_.notify_all();
  watchdog_.join();
  if (hung_)
    session_.detach();  // its thread may never return
  else
    session_.join();
}

DapClient::json DapClient::request(const std::string& command, json arguments) {
  const int64_t seq = send(command, std::move(arguments));
  json body = awaitResponse(seq, command);
  pendingSince_ = 0;
  return body;
}

DapClient::json DapClient::move(const std::string& command, json arguments) {
  const int64_t seq = send(command, std::move(arguments));
  awaitResponse(seq, command);
  json stop = awaitStopped(command);
  pendingSince_ = 0;
  return stop;
}

int64_t DapClient::send(const std::string& command, json arguments) {
  const int64_t seq = seq_++;
  {
    std::lock_guard lock(watchMutex_);
    pendingCommand_ = command;
  }
  requestOutputs_.clear();
  pendingSince_ = nowNs();
  std::string error;
  if (!writer_->send(json{{"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", std::move(arguments)}},
                     &error))
    throw ClientError("cannot send '" + command + "': " + error + lastOutput());
  return seq;
}

DapClient::json DapClient::next(const std::string& waitingFor) {
  net::ReadResult r = reader_->next();
  if (!r.isMessage()) {
    if (hung_)
      throw ClientError("no answer to '" + waitingFor + "' within " + std::to_string(timeoutSeconds_) +
                        " s: the session hangs" + lastOutput());
    throw ClientError("the session ended while waiting for '" + waitingFor + "'" + lastOutput());
  }
  json& m = r.message;
  if (m["type"] == "event") {
    const std::string event = m.value("event", "");
    if (event == "output") {
      const json& body = m["body"];
      const std::string text = body.value("output", "");
      outputs_.push_back(body.value("category", "console") + ": " + text);
      if (outputs_.size() > 8) outputs_.erase(outputs_.begin());
      requestOutputs_.push_back(text);
      if (requestOutputs_.size() > kRequestOutputs) requestOutputs_.erase(requestOutputs_.begin());
    } else if (event == "terminated" || event == "exited") {
      throw ClientError("the session sent '" + event + "' while waiting for '" + waitingFor + "'" + lastOutput());
    }
  }
  return std::move(m);
}

DapClient::json DapClient::awaitResponse(int64_t seq, const std::string& command) {
  for (;;) {
    json m = next(command);
    if (m["type"] == "event" && m["event"] == "stopped")
      throw ClientError("a 'stopped' event came before the response to '" + command + "': " + m.dump());
    if (m["type"] == "response" && m["request_seq"] == seq) {
      if (!m.value("success", false)) throw ClientError("'" + command + "' failed: " + m.value("message", m.dump()));
      return m.contains("body") ? m["body"] : json::object();
    }
  }
}

DapClient::json DapClient::awaitStopped(const std::string& command) {
  for (;;) {
    json m = next(command);
    if (m["type"] == "event" && m["event"] == "stopped") return m["body"];
  }
}

std::string DapClient::lastOutput() const {
  std::string s;
  for (const std::string& o : outputs_) s += "\n  output " + o;
  return s.empty() ? s : "; the last output events:" + s;
}

void DapClient::watch() {
  std::unique_lock lock(watchMutex_);
  while (!stopWatch_) {
    watchWake_.wait_for(lock, std::chrono::milliseconds(500));
    const double since = pendingSince_;
    if (stopWatch_ || since == 0 || nowNs() - since < timeoutSeconds_ * 1e9) continue;
    std::fprintf(stderr, "%s: '%s' unanswered for %.0f s: the session hangs; closing the pipe\n", benchmark_.c_str(),
                 pendingCommand_.c_str(), timeoutSeconds_);
    hung_ = true;
    client_->close();
    return;
  }
}

}  // namespace scanback::bench
