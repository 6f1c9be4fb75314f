// A runtime the benchmarks measure from outside, as on a line: `scanback run` of examples/plant,
// a child process, with its stimulus, paced in real time, on a control socket of its own
// (control_bench, attach_bench):
//   scanback run examples/plant/*.st --realtime --quiet --inputs stimulus.csv --control unix://DIR/rt.sock
// Its directory (a temporary one) holds its stderr and, when the sources are edited, their copies.
#pragma once

#include <sys/types.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "control/endpoint.h"

namespace scanback::bench {

// The examples/plant directory.
std::filesystem::path plantDirectory();

// The 1-minute load average, -1 when unknown.
double loadAverage();

class RuntimeProcess {
 public:
  // Edits the text of one of the plant's .st files (named by `file`) before the runtime reads it.
  using SourceEdit = std::function<void(const std::filesystem::path& file, std::string& text)>;

  // Starts the runtime (`name` names its directory) and waits up to 20 s until it answers
  // `status`. Without `edit` it runs the plant's files as they are.
  explicit RuntimeProcess(const std::string& name, const SourceEdit& edit = nullptr);
  // Stops it (SIGTERM) and removes its directory.
  ~RuntimeProcess();
  RuntimeProcess(const RuntimeProcess&) = delete;
  RuntimeProcess& operator=(const RuntimeProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string endpointText() const;
  const control::Endpoint& endpoint() const { return endpoint_; }
  // The runtime's `status` over a connection of its own; nullopt when it does not answer.
  std::optional<nlohmann::json> status() const;

 private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  control::Endpoint endpoint_;
};

// The Fast task's (the plant's first) cycle times over the runtime's life, from its status, in
// microseconds.
struct FastCycleTimes {
  double medianUs = 0, p99Us = 0, maxUs = 0;
};
FastCycleTimes fastCycleTimes(const nlohmann::json& status);

}  // namespace scanback::bench
