#include <fmt/format.h>

#include <cstdio>

#include "dap/handlers/handlers.h"
#include "dap/session/expressions.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Replaces every data breakpoint. Only writes can be watched.
Reply setDataBreakpointsRequest(Session& session, const json& args) {
  const json requested = requiredMember<json>(args, "breakpoints");
  if (!requested.is_array()) throw DapError("'breakpoints' must be an array, not " + describeValue(requested));
  const Program& program = session.program();
  const uint32_t imageSize = program.imageSize();
  std::vector<DataWatch> watches;
  json out = json::array();
  for (size_t i = 0; i < requested.size(); ++i) {
    const json& b = requested[i];
    const std::string where = fmt::format("breakpoints[{}]", i);
    const std::string dataId = requiredMember<std::string>(b, "dataId", where);
    const std::string access = optionalMember<std::string>(b, "accessType", where).value_or("write");
    unsigned version = 0, offset = 0, size = 0;
    int bit = -1, consumed = 0;
    DataWatch w;
    const bool parsed = std::sscanf(dataId.c_str(), "%u:%u:%u:%d:%n", &version, &offset, &size, &bit, &consumed) == 4 &&
                        consumed > 0 && offset < imageSize && size > 0 && size <= imageSize - offset && bit >= -1 &&
                        bit < 8;
    if (!parsed) {
      out.push_back(json{{"verified", false}, {"message", fmt::format("unknown dataId '{}'", dataId)}});
      continue;
    }
    w.name = dataId.substr(static_cast<size_t>(consumed));
    if (version != session.programVersion()) {
      // Made for another program version: the variable is found again by name in this layout.
      std::string error;
      std::optional<DataWatch> again = locateWatch(program, w.name, error);
      if (!again) {
        out.push_back(json{{"verified", false}, {"message", fmt::format("{} cannot be watched: {}", w.name, error)}});
        continue;
      }
      offset = again->offset;
      size = again->size;
      bit = again->bit;
    }
    if (access != "write") {
      out.push_back(
          json{{"verified", false}, {"message", fmt::format("only writes can be watched, not '{}' access", access)}});
      continue;
    }
    w.id = session.breakpoints().newId();
    w.offset = offset;
    w.size = size;
    w.bit = static_cast<int8_t>(bit);
    watches.push_back(w);
    out.push_back(json{{"id", w.id}, {"verified", true}, {"description", w.name}});
  }
  session.breakpoints().setDataWatches(std::move(watches));
  session.applyStops();
  return Reply{json{{"breakpoints", out}}};
}

}  // namespace scanback::dap
