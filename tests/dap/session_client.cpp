#include "tests/dap/session_client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "dap/session/session.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "tests/dap/schema_validator.h"

namespace scanback::dap::testing {

SessionClient::SessionClient() {
  net::MemoryPipe::Pair pipe = net::MemoryPipe::pair();
  client_ = std::move(pipe.client);
  server_ = std::move(pipe.server);
  session_ = std::thread([this] {
    Session session(*server_, [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      logs_.push_back(line);
    });
    session.run();
    server_->close();
  });
  reader_ = std::thread([this] {
    net::MessageReader reader(*client_);
    for (;;) {
      net::ReadResult r = reader.next();
      std::lock_guard lock(mutex_);
      if (r.isEnd()) {
        ended_ = true;
        arrived_.notify_all();
        return;
      }
      if (r.isError()) {
        schemaErrors_ += "unreadable message from the session: " + r.error.toString() + "\n";
        continue;
      }
      const std::string problems = DapSchema::instance().validate(r.message);
      if (!problems.empty()) schemaErrors_ += r.message.dump() + ":\n" + problems + "\n";
      messages_.push_back(std::move(r.message));
      taken_.push_back(false);
      arrived_.notify_all();
    }
  });
}

SessionClient::~SessionClient() {
  client_->close();  // the session sees the end of its input and stops
  if (session_.joinable()) session_.join();
  if (reader_.joinable()) reader_.join();
}

int64_t SessionClient::send(const std::string& command, json arguments, bool check) {
  int64_t seq;
  {
    std::lock_guard lock(mutex_);
    seq = seq_++;
  }
  json request{{"seq", seq}, {"type", "request"}, {"command", command}};
  if (!arguments.is_null()) request["arguments"] = std::move(arguments);
  if (check) {
    EXPECT_EQ(DapSchema::instance().validateRequest(request), "") << "the test sends an invalid request";
  }
  sendRaw(net::MessageWriter::frame(request));
  return seq;
}

void SessionClient::sendRaw(const std::string& bytes) {
  std::string error;
  EXPECT_TRUE(client_->write(bytes, error)) << error;
}

json SessionClient::response(int64_t seq, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  json found;
  const bool ok = arrived_.wait_for(lock, timeout, [&] {
    for (size_t i = 0; i < messages_.size(); ++i) {
      const json& m = messages_[i];
      if (m["type"] == "response" && m.value("request_seq", int64_t{-1}) == seq) {
        found = m;
        taken_[i] = true;
        return true;
      }
    }
    return ended_;
  });
  EXPECT_TRUE(ok && !found.is_null()) << "no response to request " << seq;
  return found.is_null() ? json{{"success", false}, {"body", json::object()}, {"message", "no response"}} : found;
}

json SessionClient::request(const std::string& command, json arguments, std::chrono::milliseconds timeout) {
  return response(send(command, std::move(arguments)), timeout);
}

json SessionClient::event(const std::string& name, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  json found;
  arrived_.wait_for(lock, timeout, [&] {
    for (size_t i = 0; i < messages_.size(); ++i) {
      if (!taken_[i] && messages_[i]["type"] == "event" && messages_[i]["event"] == name) {
        found = messages_[i];
        taken_[i] = true;
        return true;
      }
    }
    return ended_;
  });
  EXPECT_FALSE(found.is_null()) << "no '" << name << "' event";
  return found.is_null() ? json{{"body", json::object()}} : found;
}

bool SessionClient::noEvent(const std::string& name, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  return !arrived_.wait_for(lock, wait, [&] {
    for (size_t i = 0; i < messages_.size(); ++i)
      if (!taken_[i] && messages_[i]["type"] == "event" && messages_[i]["event"] == name) return true;
    return false;
  });
}

json SessionClient::awaitMessage(const std::function<bool(const json&)>& matches, size_t from,
                                 std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  json found;
  size_t seen = from;
  arrived_.wait_for(lock, timeout, [&] {
    for (; seen < messages_.size(); ++seen) {
      if (matches(messages_[seen])) {
        found = messages_[seen];
        return true;
      }
    }
    return ended_;
  });
  return found;
}

json SessionClient::awaitOutput(const std::string& prefix, size_t from, std::chrono::milliseconds timeout) {
  return awaitMessage(
      [&](const json& m) {
        return m.value("event", "") == "output" && m["body"].value("output", "").starts_with(prefix);
      },
      from, timeout);
}

std::vector<json> SessionClient::messages() {
  std::lock_guard lock(mutex_);
  return messages_;
}

int SessionClient::indexOfResponse(int64_t seq) {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < messages_.size(); ++i)
    if (messages_[i]["type"] == "response" && messages_[i].value("request_seq", int64_t{-1}) == seq)
      return static_cast<int>(i);
  return -1;
}

int SessionClient::indexOfEvent(const std::string& name, size_t from) {
  std::lock_guard lock(mutex_);
  for (size_t i = from; i < messages_.size(); ++i)
    if (messages_[i]["type"] == "event" && messages_[i]["event"] == name) return static_cast<int>(i);
  return -1;
}

std::string SessionClient::schemaErrors() {
  std::lock_guard lock(mutex_);
  return schemaErrors_;
}

std::vector<std::string> SessionClient::logs() {
  std::lock_guard lock(mutex_);
  return logs_;
}

void SessionClient::start(json launchArguments, json initializeArguments) {
  initializeArguments["adapterID"] = "scanback";
  const json init = request("initialize", initializeArguments);
  ASSERT_TRUE(init["success"]) << init.dump();
  const json launch = request("launch", launchArguments);
  ASSERT_TRUE(launch["success"]) << launch.dump();
  event("initialized");  // after the launch response
}

void SessionClient::configured() {
  const json r = request("configurationDone");
  ASSERT_TRUE(r["success"]) << r.dump();
}

TempProject::TempProject(const std::vector<std::pair<std::string, std::string>>& files) {
  std::random_device random;
  dir_ = std::filesystem::temp_directory_path() /
         ("scanback_dap_" + std::to_string(::getpid()) + "_" + std::to_string(random()));
  std::filesystem::create_directories(dir_);
  for (const auto& [name, text] : files) std::ofstream(dir_ / name) << text;
}

TempProject::~TempProject() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace scanback::dap::testing
