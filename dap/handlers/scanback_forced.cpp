#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

void markForced(Session& session, const Program& program) {
  std::string ignored;  // (a replayed trace holds no force to mark)
  std::vector<std::pair<uint32_t, int8_t>> storage;
  // Found by target in the program shown (an attached session's forces come by name only).
  if (const std::optional<std::vector<Force>> forces = session.target().forced(ignored))
    for (const Force& f : *forces)
      if (const std::optional<VariableLocation> at = findWritableScalar(program, f.target, ignored))
        storage.emplace_back(at->offset, at->bit);
  session.variables().setForced(std::move(storage));
}

// scanback/forced: the forces the task holds (with those requested for its next cycle start), in
// the order they were set: target, value, type and the cycle whose start first applied it.
Reply forcedRequest(Session& session, const json&) {
  std::string error;
  const std::optional<std::vector<Force>> forces = session.target().forced(error);
  if (!forces) throw DapError(error);
  json list = json::array();
  for (const Force& f : *forces)
    list.push_back(json{{"target", f.target}, {"value", f.value}, {"type", f.type}, {"sinceCycle", f.sinceCycle}});
  return Reply{json{{"forced", list}}};
}

}  // namespace scanback::dap
