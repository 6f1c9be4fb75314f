#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// The text of a program file the client cannot open itself (one recorded elsewhere).
Reply sourceRequest(Session& session, const json& args) {
  json source = optionalMember<json>(args, "source").value_or(json::object());
  if (!source.is_object()) throw DapError("'source' must be a Source object, not " + describeValue(source));
  if (const auto ref = optionalMember<int64_t>(args, "sourceReference");
      ref && *ref > 0 && !source.contains("sourceReference"))
    source["sourceReference"] = *ref;
  const std::optional<FileId> file = session.sources().find(source);
  if (!file) throw DapError("no such source in the launched program");
  return Reply{json{{"content", session.sources().text(*file)}, {"mimeType", "text/x-iecst"}}};
}

}  // namespace scanback::dap
