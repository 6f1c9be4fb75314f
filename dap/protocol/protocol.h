// The Debug Adapter Protocol as scanback speaks it: the typed structs of the requests' arguments
// and of the objects that go into responses and events, with their JSON conversions.
//
// Arguments are read with optionalMember / requiredMember, which refuse a value of the wrong type
// with a DapError naming the argument. Conversions to JSON write optional fields only when they
// are set, as the schema wants (no nulls).
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
  // `details`: members the error response's body carries beside `error`, for a client that
  // presents the failure itself (a launch that does not compile: `diagnostics`, docs/dap.md).
  DapError(const std::string& message, json details) : std::runtime_error(message), details_(std::move(details)) {}
  const json& details() const { return details_; }

 private:
  json details_;
};

// An argument of the wrong type or missing: the session adds the request's name ("invalid
// arguments for 'stackTrace': 'threadId' must be an integer, not \"one\"").
class ArgumentError : public DapError {
 public:
  explicit ArgumentError(const std::string& message) : DapError(message) {}
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
//
// Every argument is read through these: a value of the wrong type is a DapError that names the
// argument and says what it must be ("'frameId' must be an integer, not 1.5"), never a JSON
// library's exception text. Integers are whole numbers in range (1.0 is 1; 1.5 is refused, not
// truncated). `where` names the object the member is in, for nested objects ("breakpoints[2]");
// empty for the request's arguments.

// A short text of `value` for messages: the JSON, cut to a few dozen characters.
std::string describeValue(const json& value);

// Converts the argument named `name` to T (the specialisations below); DapError when it is not one.
template <class T>
struct ArgumentReader;

template <>
struct ArgumentReader<bool> {
  static bool read(const json& value, const std::string& name);
};
template <>
struct ArgumentReader<std::string> {
  static std::string read(const json& value, const std::string& name);
};
template <>
struct ArgumentReader<int64_t> {
  static int64_t read(const json& value, const std::string& name);
};
template <>
struct ArgumentReader<json> {
  static json read(const json& value, const std::string&) { return value; }
};
template <class T>
struct ArgumentReader<std::vector<T>> {
  static std::vector<T> read(const json& value, const std::string& name) {
    if (!value.is_array()) throw ArgumentError("'" + name + "' must be an array, not " + describeValue(value));
    std::vector<T> out;
    out.reserve(value.size());
    for (size_t i = 0; i < value.size(); ++i)
      out.push_back(ArgumentReader<T>::read(value[i], name + "[" + std::to_string(i) + "]"));
    return out;
  }
};

inline std::string memberName(std::string_view where, const char* key) {
  return where.empty() ? std::string(key) : std::string(where) + "." + key;
}
// DapError: `where` (the arguments when empty) is not an object.
[[noreturn]] void notAnObject(std::string_view where, const json& value);

// The member `key` of `args` if present (and not null), converted to T. Absent when `args` is not
// an object (a request whose arguments are optional); the session refuses non-object arguments.
template <class T>
std::optional<T> optionalMember(const json& args, const char* key, std::string_view where = {}) {
  if (!args.is_object()) return std::nullopt;
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) return std::nullopt;
  return ArgumentReader<T>::read(*it, memberName(where, key));
}

// The member `key`, which must be present.
template <class T>
T requiredMember(const json& args, const char* key, std::string_view where = {}) {
  if (!args.is_object()) notAnObject(where, args);
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) throw ArgumentError("missing argument '" + memberName(where, key) + "'");
  return ArgumentReader<T>::read(*it, memberName(where, key));
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
template <>
struct ArgumentReader<SourceBreakpoint> {
  static SourceBreakpoint read(const json& value, const std::string& name);
};

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
