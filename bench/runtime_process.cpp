#include "bench/runtime_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "control/client.h"

extern char** environ;

namespace scanback::bench {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path plantDirectory() { return fs::path(SCANBACK_SOURCE_DIR) / "examples" / "plant"; }

double loadAverage() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

RuntimeProcess::RuntimeProcess(const std::string& name, const SourceEdit& edit) {
  static int counter = 0;
  dir_ = fs::temp_directory_path() /
         ("scanback_" + name + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::create_directories(dir_);
  std::vector<std::string> args = {SCANBACK_BINARY, "run"};
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(plantDirectory())) {
    if (e.path().extension() != ".st") continue;
    if (!edit) {
      files.push_back(e.path().string());
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string edited = text.str();
    edit(e.path(), edited);
    const fs::path copy = dir_ / e.path().filename();
    std::ofstream(copy) << edited;
    files.push_back(copy.string());
  }
  std::sort(files.begin(), files.end());
  args.insert(args.end(), files.begin(), files.end());
  for (const char* a : {"--realtime", "--quiet", "--inputs"}) args.push_back(a);
  args.push_back((plantDirectory() / "stimulus.csv").string());
  args.push_back("--control");
  args.push_back(endpointText());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, (dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
  std::string error;
  // Our own endpoint text: it always parses.
  endpoint_ = control::parseEndpoint(endpointText(), error).value();
  // Ready once it answers.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!status() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

RuntimeProcess::~RuntimeProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::string RuntimeProcess::endpointText() const { return "unix://" + (dir_ / "rt.sock").string(); }

std::optional<json> RuntimeProcess::status() const {
  std::string error;
  auto client = control::ControlClient::connect(endpoint_, std::nullopt, error);
  if (!client) return std::nullopt;
  auto r = client->request(json{{"command", "status"}}, error);
  if (!r || !r->value("ok", false)) return std::nullopt;
  return (*r)["status"];
}

FastCycleTimes fastCycleTimes(const json& status) {
  const json& times = status["tasks"][0]["cycleTimeNs"];
  return {times["median"].get<double>() / 1e3, times["p99"].get<double>() / 1e3, times["max"].get<double>() / 1e3};
}

}  // namespace scanback::bench
