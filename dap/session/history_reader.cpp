#include "dap/session/history_reader.h"

#include <filesystem>

namespace scanback::dap {

namespace {

constexpr std::string_view kPartial = ".partial";

// Where the trace is now: a recording that finished renamed its `.partial` file.
std::string currentPath(const std::string& path) {
  std::error_code ignored;
  if (path.ends_with(kPartial) && !std::filesystem::exists(path, ignored))
    return path.substr(0, path.size() - kPartial.size());
  return path;
}

}  // namespace

replay::Replayer* HistoryReader::at(const std::string& requested, const std::shared_ptr<const Program>& program,
                                    std::string& error) {
  if (requested.empty()) {
    error = "this session's history is not in a trace file that can be read here";
    return nullptr;
  }
  const std::string path = currentPath(requested);
  if (replayer_ && path == path_) {
    replayer_->refresh();
    return replayer_.get();
  }
  replay::ReplayOptions options;
  options.program = program;
  replayer_ = replay::Replayer::open(path, options, error);
  if (!replayer_ && program) {
    // Another version than the session's newest (a trace begun before a reload): its own sources.
    std::string ignored;
    replayer_ = replay::Replayer::open(path, replay::ReplayOptions{}, ignored);
  }
  path_ = replayer_ ? path : std::string();
  return replayer_.get();
}

}  // namespace scanback::dap
