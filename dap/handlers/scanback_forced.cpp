#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

void markForced(Session& session, const Program& program) {
  std::string ignored;  // (forces that cannot be listed here mark nothing)
  std::vector<std::pair<uint32_t, int8_t>> storage;
  // What was forced where the session looks: in history, the forces recorded at the position shown
  // (storage as recorded: the program shown is that position's); else the task's, found by target
  // in the program shown (an attached session's forces come by name only).
  if (const std::optional<ForcesShown> shown = session.target().forced(ignored))
    for (const Force& f : shown->forces) {
      if (shown->recordedAt)
        storage.emplace_back(f.offset, f.bit);
      else if (const std::optional<VariableLocation> at = findWritableScalar(program, f.target, ignored))
        storage.emplace_back(at->offset, at->bit);
    }
  session.variables().setForced(std::move(storage));
}

// scanback/forced: the forces where the session looks, in the order they were set: target, value,
// type and the cycle whose start first applied it. Showing history (a replay, or a session paused in
// its history), those the trace recorded at the position shown, with that position (`cycle`,
// `step`); showing the live task, the task's (with those requested for its next cycle start).
Reply forcedRequest(Session& session, const json&) {
  std::string error;
  const std::optional<ForcesShown> shown = session.target().forced(error);
  if (!shown) throw DapError(error);
  json list = json::array();
  for (const Force& f : shown->forces)
    list.push_back(json{{"target", f.target}, {"value", f.value}, {"type", f.type}, {"sinceCycle", f.sinceCycle}});
  json body{{"forced", list}};
  if (shown->recordedAt) body["at"] = json{{"cycle", shown->recordedAt->cycle}, {"step", shown->recordedAt->step}};
  return Reply{std::move(body)};
}

}  // namespace scanback::dap
