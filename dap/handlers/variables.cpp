#include <fmt/format.h>

#include <algorithm>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// The children of a scope, struct, FB instance or array (arrays page with start/count).
Reply variablesRequest(Session& session, const json& args) {
  const int64_t reference = requiredMember<int64_t>(args, "variablesReference");
  const Vm& vm = session.pausedTarget().vm();
  const Container* container = session.variables().find(reference);
  if (!container)
    throw DapError(fmt::format("no variables with reference {} (references end when the program resumes)", reference));
  const Container copy = *container;  // variables() may add containers
  markForced(session, vm.program());
  json list = json::array();
  // Arrays have indexed children only; everything else named ones only.
  const bool indexed = copy.kind == Container::Kind::Value && copy.type && copy.type->kind == TypeKind::Array;
  const std::string filter = optionalMember<std::string>(args, "filter").value_or("");
  if (!filter.empty() && filter != "indexed" && filter != "named")
    throw DapError(fmt::format("unknown filter '{}' (indexed or named)", filter));
  if ((filter == "indexed" && !indexed) || (filter == "named" && indexed)) return Reply{json{{"variables", list}}};
  // Where the target cannot be written (history), every variable says so: VS Code then offers no
  // Set Value for it, rather than opening an editor whose write fails (issue 31).
  const bool readOnly = session.pausedTarget().readOnly();
  for (Variable& v : session.variables().variables(copy, vm, optionalMember<int64_t>(args, "start"),
                                                   optionalMember<int64_t>(args, "count"))) {
    if (readOnly) {
      if (!v.presentationHint) v.presentationHint = VariablePresentationHint{};
      std::vector<std::string>& attributes = v.presentationHint->attributes;
      if (std::ranges::find(attributes, "readOnly") == attributes.end()) attributes.push_back("readOnly");
    }
    list.push_back(v);
  }
  return Reply{json{{"variables", list}}};
}

}  // namespace scanback::dap
