// Test support: checks Debug Adapter Protocol messages against the official JSON schema
// (tests/dap/debugAdapterProtocol.json, draft 4), with valijson.
//
//   const DapSchema& schema = DapSchema::instance();
//   EXPECT_EQ(schema.validate(response), "");          // what the adapter sends
//   EXPECT_EQ(schema.validateRequest(request), "");    // what a test sends
//
// Which definition a message is checked against:
//   response, success true    "<Command>Response"  ("stackTrace" -> StackTraceResponse)
//   response, success false   "ErrorResponse"
//   event                     "<Event>Event"       ("stopped" -> StoppedEvent)
//   request                   "<Command>Request"   (a reverse request: runInTerminal, startDebugging)
// where <Command> is the name with its first letter upper-cased ("setBreakpoints" ->
// SetBreakpointsResponse). Names the schema does not define as a command or event (custom
// requests such as "scanback/timeline") are checked against the base "Response", "Event" or
// "Request".
//
// One liberty with the schema text, taken in memory (the file is never changed):
//  * `"format": "int32" | "uint32" | "int64" | "uint64"` on integers become the matching
//    minimum/maximum. valijson 1.0 checks "format" by reading the value as a string, and throws
//    instead of reporting when a non-empty object or array stands where such an integer belongs;
//    and the ranges are what the formats mean: a variablesReference of 2^31 is reported. (int64
//    adds nothing; uint64 adds minimum 0.)
// Everything else is as written: enums stay enums, and `_enum` (the schema's open "suggested
// values") is ignored as JSON Schema ignores unknown keywords — a stopped event's reason may be
// any string.
//
// Thread-safe: one instance, schemas for each definition built on first use under a mutex.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace valijson {
class Schema;
}

namespace scanback::dap::testing {

class DapSchema {
 public:
  // Loads the schema once, from the path in the compile definition SCANBACK_DAP_SCHEMA. Throws
  // std::runtime_error when it cannot be read.
  static const DapSchema& instance();

  // Validates one message the adapter sends (a response, an event or a reverse request; see
  // above). Returns "" when valid, else the definition and every error, one per line, each with the
  // JSON pointer of the value at fault ("" is the message itself).
  std::string validate(const nlohmann::json& message) const;
  // Validates a request a client sends, against "<Command>Request" (or "Request").
  std::string validateRequest(const nlohmann::json& request) const;
  // Validates any value against the named definition ("Capabilities", "StackFrame", ...).
  std::string validateAgainst(const nlohmann::json& value, const std::string& definition) const;

  // The definition validate() would use for `message` ("ProtocolMessage" when `type` is none of
  // request, response, event).
  std::string definitionFor(const nlohmann::json& message) const;

  bool hasDefinition(const std::string& name) const;
  // Every command (the `command` enum of each "...Request" definition) and every event (the
  // `event` enum of each "...Event" definition) the schema defines.
  const std::set<std::string>& commands() const { return commands_; }
  const std::set<std::string>& events() const { return events_; }

  // "setBreakpoints" -> "SetBreakpoints".
  static std::string capitalised(std::string_view name);

  ~DapSchema();

 private:
  explicit DapSchema(const std::string& path);
  const valijson::Schema& schemaFor(const std::string& definition) const;

  nlohmann::json definitions_;  // the schema's "definitions", formats turned into ranges
  std::set<std::string> commands_;
  std::set<std::string> events_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<valijson::Schema>> schemas_;
};

}  // namespace scanback::dap::testing
