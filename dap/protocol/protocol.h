// The Debug Adapter Protocol as scanback speaks it: the typed structs of the requests' arguments
// and of the objects that go into responses and events, with their JSON conversions.
//
// Conversions from JSON (requests) throw nlohmann::json exceptions on a wrong type; the session
// turns them into one error response ("invalid arguments for <command>: ..."). Conversions to JSON
// write optional fields only when they are set, as the schema wants (no nulls).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace scanback::dap {

using json = nlohmann::json;

// A request that cannot be carried out: becomes an ErrorResponse whose `message` is this text,
// written for the user ("cannot step: the program is running").
class DapError : public std::runtime_error {
 public:
  explicit DapError(const std::string& message) : std::runtime_error(message) {}
};

// What a handler returns: the response body (null: none), and what to do once the response has
// been sent (events that must follow it, resuming the target).
struct Reply {
  Reply() = default;
  explicit Reply(json responseBody, std::function<void()> after = {})
      : body(std::move(responseBody)), afterResponse(std::move(after)) {}
  json body;
  std::function<void()> afterResponse;
};

// ---------------------------------------------------------------- reading arguments

// The member `key` of `args` if present (and not null), converted to T.
template <class T>
std::optional<T> optionalMember(const json& args, const char* key) {
  if (!args.is_object()) return std::nullopt;
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

// The member `key`, which must be present.
template <class T>
T requiredMember(const json& args, const char* key) {
  if (!args.is_object()) throw DapError("the arguments must be an object");
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) throw DapError(std::string("missing argument '") + key + "'");
  return it->get<T>();
}

// ---------------------------------------------------------------- protocol objects

struct Source {
  std::string name;
  std::string path;             // absolute; empty when the source has no file on this machine
  int64_t sourceReference = 0;  // > 0: fetch the text with a `source` request
};
void to_json(json& j, const Source& s);

struct SourceBreakpoint {
  int64_t line = 0;
  std::optional<int64_t> column;
  std::optional<std::string> condition;
  std::optional<std::string> hitCondition;
  std::optional<std::string> logMessage;
};
void from_json(const json& j, SourceBreakpoint& b);

struct Breakpoint {
  std::optional<int64_t> id;
  bool verified = false;
  std::optional<std::string> message;
  std::optional<Source> source;
  std::optional<int64_t> line, column, endLine, endColumn;
  std::optional<std::string> reason;  // "pending" | "failed"
};
void to_json(json& j, const Breakpoint& b);

struct StackFrame {
  int64_t id = 0;
  std::string name;
  std::optional<Source> source;
  int64_t line = 0, column = 0;
  std::optional<int64_t> endLine, endColumn;
  std::optional<std::string> presentationHint;  // "normal" | "label" | "subtle"
};
void to_json(json& j, const StackFrame& f);

struct Scope {
  std::string name;
  std::optional<std::string> presentationHint;  // "arguments" | "locals" | "registers" | other
  int64_t variablesReference = 0;
  std::optional<int64_t> namedVariables, indexedVariables;
  bool expensive = false;
};
void to_json(json& j, const Scope& s);

struct VariablePresentationHint {
  std::optional<std::string> kind;
  std::vector<std::string> attributes;
};

struct Variable {
  std::string name;
  std::string value;
  std::optional<std::string> type;
  std::optional<std::string> evaluateName;
  int64_t variablesReference = 0;
  std::optional<int64_t> namedVariables, indexedVariables;
  std::optional<VariablePresentationHint> presentationHint;
};
void to_json(json& j, const Variable& v);

struct Thread {
  int64_t id = 0;
  std::string name;
};
void to_json(json& j, const Thread& t);

}  // namespace scanback::dap
