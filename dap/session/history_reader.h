// A reader of a session's history of its own: a replayer over the trace file the target records
// in or reads (TargetHistory::traceFile), on the session's thread. scanback/signals answers from
// it, and scanback/timeline while the target runs, so neither waits for the target's thread nor
// moves what the user looks at.
#pragma once

#include <memory>
#include <string>

#include "replayer/replayer.h"

namespace scanback::dap {

class HistoryReader {
 public:
  // The replayer over `path` (a `.partial` trace that was finished meanwhile is read under its
  // final name): opened the first time, and after that refreshed to what the file gained. It
  // replays with `program` when its hash is the trace's (else with the sources the trace carries).
  // Null with `error` when it cannot be read.
  [[nodiscard]] replay::Replayer* at(const std::string& path, const std::shared_ptr<const Program>& program,
                                     std::string& error);

 private:
  std::string path_;  // what replayer_ reads
  std::unique_ptr<replay::Replayer> replayer_;
};

}  // namespace scanback::dap
