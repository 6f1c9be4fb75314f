#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/expressions.h"
#include "dap/session/session.h"

namespace scanback::dap {

// A data breakpoint can watch any variable, struct field or array element for writes. Its dataId
// is "VERSION:OFFSET:SIZE:BIT:NAME": the offset holds for that program version; after a reload
// the watch is found again by NAME.
Reply dataBreakpointInfoRequest(Session& session, const json& args) {
  const std::string name = requiredMember<std::string>(args, "name");
  Target& target = session.pausedTarget();
  std::optional<VariableSlot> slot;
  std::string error;
  if (const auto reference = optionalMember<int64_t>(args, "variablesReference"); reference && *reference > 0) {
    const Container* container = session.variables().find(*reference);
    if (!container) throw DapError(fmt::format("no variables with reference {}", *reference));
    const Container copy = *container;
    slot = session.variables().child(copy, target.vm(), name);
    if (!slot) error = fmt::format("no variable '{}' there", name);
  } else {
    std::optional<Frame> frame;
    if (const auto frameId = optionalMember<int64_t>(args, "frameId")) frame = session.frame(*frameId);
    const std::optional<Evaluated> result =
        evaluateExpression(target.vm().program(), target.vm(), frame ? &*frame : nullptr, name, error);
    if (result && result->slot)
      slot = result->slot;
    else if (result)
      error = fmt::format("'{}' is a value, not a variable", name);
  }
  if (!slot || slot->offset >= target.vm().imageSize()) {
    return Reply{json{{"dataId", nullptr},
                      {"description", error.empty() ? fmt::format("'{}' cannot be watched", name) : error}}};
  }
  const std::string path = slot->evaluateName.empty() ? name : slot->evaluateName;
  const uint32_t size = slot->bit >= 0 ? 1u : std::max<uint32_t>(slot->type->size, 1);
  // The VM may still be finishing a cycle of the version before a reload: then the offset is of
  // an older layout than the session's, and the version says so.
  const uint32_t version =
      &target.vm().program() == session.programPtr().get() ? session.programVersion() : session.programVersion() - 1;
  return Reply{json{{"dataId", fmt::format("{}:{}:{}:{}:{}", version, slot->offset, size, int{slot->bit}, path)},
                    {"description", fmt::format("{} (written)", path)},
                    {"accessTypes", json::array({"write"})},
                    {"canPersist", false}}};
}

}  // namespace scanback::dap
