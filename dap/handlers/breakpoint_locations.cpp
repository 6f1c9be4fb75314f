#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// The statement starts in the requested range: where a breakpoint can be.
Reply breakpointLocationsRequest(Session& session, const json& args) {
  const std::optional<FileId> file = session.sources().find(requiredMember<json>(args, "source"));
  json locations = json::array();
  if (!file) return Reply{json{{"breakpoints", locations}}};
  const int64_t line = session.lineIn(requiredMember<int64_t>(args, "line"));
  const int64_t endLine =
      session.lineIn(optionalMember<int64_t>(args, "endLine").value_or(session.lineOut(static_cast<uint32_t>(line))));
  const std::optional<int64_t> column = optionalMember<int64_t>(args, "column");
  const std::optional<int64_t> endColumn = optionalMember<int64_t>(args, "endColumn");
  const Program& program = session.program();
  for (uint32_t s : session.sources().statements(*file)) {
    const SourceSpan& span = program.statements[s].span;
    const int64_t l = span.line, c = span.column;
    if (l < line || l > endLine) continue;
    if (column && l == line && c < session.columnIn(*column)) continue;
    if (endColumn && l == endLine && c > session.columnIn(*endColumn)) continue;
    json loc{{"line", session.lineOut(span.line)}, {"column", session.columnOut(span.column)}};
    if (span.endLine) {
      loc["endLine"] = session.lineOut(span.endLine);
      loc["endColumn"] = session.columnOut(span.endColumn);
    }
    if (locations.empty() || locations.back() != loc) locations.push_back(std::move(loc));
  }
  return Reply{json{{"breakpoints", locations}}};
}

}  // namespace scanback::dap
