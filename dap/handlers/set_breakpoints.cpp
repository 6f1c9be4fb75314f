#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Replaces every breakpoint of one source; each is resolved to the first statement at or after
// the requested position and reported with its actual line and column.
Reply setBreakpointsRequest(Session& session, const json& args) {
  const json source = requiredMember<json>(args, "source");
  if (!source.is_object()) throw DapError("invalid arguments for 'setBreakpoints': 'source' must be a Source object");
  std::vector<SourceBreakpoint> requested;
  if (const auto list = optionalMember<std::vector<SourceBreakpoint>>(args, "breakpoints")) {
    requested = *list;
  } else if (const auto lines = optionalMember<std::vector<int64_t>>(args, "lines")) {
    for (int64_t line : *lines) requested.push_back(SourceBreakpoint{line, std::nullopt, {}, {}, {}});
  }
  for (SourceBreakpoint& b : requested) {
    b.line = session.lineIn(b.line);
    if (b.column) b.column = session.columnIn(*b.column);
  }
  // A file that is not part of the program: its breakpoints stay unverified (until a reload
  // brings the file in).
  const std::optional<FileId> file = session.sources().find(source);
  json list = json::array();
  std::vector<Breakpoint> result = session.breakpoints().set(session.sources(), source, file, requested);
  // Handed to the target before the response: a stop of the old set is never reported after it.
  session.applyStops();
  for (Breakpoint& b : result) {
    session.convertOut(b);
    list.push_back(b);
  }
  return Reply{json{{"breakpoints", list}}};
}

}  // namespace scanback::dap
