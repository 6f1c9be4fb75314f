#include "dap/protocol/protocol.h"

#include <cmath>

namespace scanback::dap {

namespace {
template <class T>
void put(json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}
}  // namespace

void to_json(json& j, const Source& s) {
  j = json::object();
  j["name"] = s.name;
  if (!s.path.empty()) j["path"] = s.path;
  if (s.sourceReference > 0) j["sourceReference"] = s.sourceReference;
}

SourceBreakpoint ArgumentReader<SourceBreakpoint>::read(const json& j, const std::string& name) {
  SourceBreakpoint b;
  b.line = requiredMember<int64_t>(j, "line", name);
  b.column = optionalMember<int64_t>(j, "column", name);
  b.condition = optionalMember<std::string>(j, "condition", name);
  b.hitCondition = optionalMember<std::string>(j, "hitCondition", name);
  b.logMessage = optionalMember<std::string>(j, "logMessage", name);
  return b;
}

std::string describeValue(const json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

void notAnObject(std::string_view where, const json& value) {
  if (where.empty()) throw ArgumentError("the arguments must be an object, not " + describeValue(value));
  throw ArgumentError("'" + std::string(where) + "' must be an object, not " + describeValue(value));
}

bool ArgumentReader<bool>::read(const json& value, const std::string& name) {
  if (!value.is_boolean()) throw ArgumentError("'" + name + "' must be true or false, not " + describeValue(value));
  return value.get<bool>();
}

std::string ArgumentReader<std::string>::read(const json& value, const std::string& name) {
  if (!value.is_string()) throw ArgumentError("'" + name + "' must be a string, not " + describeValue(value));
  return value.get<std::string>();
}

int64_t ArgumentReader<int64_t>::read(const json& value, const std::string& name) {
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw ArgumentError("'" + name + "' is out of range: " + describeValue(value));
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    // JSON has one number type: 3.0 is the integer 3. Anything with a fraction is not.
    const double d = value.get<double>();
    if (std::trunc(d) == d && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18) return static_cast<int64_t>(d);
  }
  throw ArgumentError("'" + name + "' must be an integer, not " + describeValue(value));
}

void to_json(json& j, const Breakpoint& b) {
  j = json::object();
  put(j, "id", b.id);
  j["verified"] = b.verified;
  put(j, "message", b.message);
  put(j, "source", b.source);
  put(j, "line", b.line);
  put(j, "column", b.column);
  put(j, "endLine", b.endLine);
  put(j, "endColumn", b.endColumn);
  put(j, "reason", b.reason);
}

void to_json(json& j, const StackFrame& f) {
  j = json::object();
  j["id"] = f.id;
  j["name"] = f.name;
  put(j, "source", f.source);
  j["line"] = f.line;
  j["column"] = f.column;
  put(j, "endLine", f.endLine);
  put(j, "endColumn", f.endColumn);
  put(j, "presentationHint", f.presentationHint);
}

void to_json(json& j, const Scope& s) {
  j = json::object();
  j["name"] = s.name;
  put(j, "presentationHint", s.presentationHint);
  j["variablesReference"] = s.variablesReference;
  put(j, "namedVariables", s.namedVariables);
  put(j, "indexedVariables", s.indexedVariables);
  j["expensive"] = s.expensive;
}

void to_json(json& j, const Variable& v) {
  j = json::object();
  j["name"] = v.name;
  j["value"] = v.value;
  put(j, "type", v.type);
  put(j, "evaluateName", v.evaluateName);
  j["variablesReference"] = v.variablesReference;
  put(j, "namedVariables", v.namedVariables);
  put(j, "indexedVariables", v.indexedVariables);
  if (v.presentationHint) {
    json h = json::object();
    put(h, "kind", v.presentationHint->kind);
    if (!v.presentationHint->attributes.empty()) h["attributes"] = v.presentationHint->attributes;
    j["presentationHint"] = h;
  }
}

void to_json(json& j, const Thread& t) { j = json{{"id", t.id}, {"name", t.name}}; }

}  // namespace scanback::dap
