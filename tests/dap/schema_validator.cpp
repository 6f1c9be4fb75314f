#include "tests/dap/schema_validator.h"

// valijson reports schema problems by exception only when asked to (else it aborts).
#include <stdexcept>
#ifndef VALIJSON_USE_EXCEPTIONS
#define VALIJSON_USE_EXCEPTIONS 1
#endif
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>

#ifndef SCANBACK_DAP_SCHEMA
#error "SCANBACK_DAP_SCHEMA must name tests/dap/debugAdapterProtocol.json"
#endif

namespace scanback::dap::testing {

namespace {

using json = nlohmann::json;

// Replaces the integer formats with the ranges they mean (see the header), everywhere.
void formatsToRanges(json& node) {
  if (node.is_array()) {
    for (json& item : node) formatsToRanges(item);
    return;
  }
  if (!node.is_object()) return;
  const auto format = node.find("format");
  if (format != node.end() && format->is_string()) {
    const std::string f = format->get<std::string>();
    std::optional<int64_t> min, max;
    if (f == "int32") {
      min = std::numeric_limits<int32_t>::min();
      max = std::numeric_limits<int32_t>::max();
    } else if (f == "uint32") {
      min = 0;
      max = std::numeric_limits<uint32_t>::max();
    } else if (f == "uint64") {
      min = 0;
    } else if (f != "int64") {
      throw std::runtime_error("debugAdapterProtocol.json: unexpected format '" + f + "'");
    }
    node.erase("format");
    if (min) {
      const auto it = node.find("minimum");
      if (it == node.end() || it->get<double>() < static_cast<double>(*min)) node["minimum"] = *min;
    }
    if (max) {
      const auto it = node.find("maximum");
      if (it == node.end() || it->get<double>() > static_cast<double>(*max)) node["maximum"] = *max;
    }
  }
  for (auto& [key, value] : node.items()) formatsToRanges(value);
}

// The single value of `definition`'s property `property` enum, looked for in the definition and
// the members of its allOf ("command": {"enum": ["next"]}).
std::optional<std::string> enumName(const json& definition, const char* property) {
  std::vector<const json*> parts{&definition};
  if (const auto all = definition.find("allOf"); all != definition.end() && all->is_array())
    for (const json& p : *all) parts.push_back(&p);
  for (const json* p : parts) {
    const auto props = p->find("properties");
    if (props == p->end() || !props->is_object()) continue;
    const auto prop = props->find(property);
    if (prop == props->end()) continue;
    const auto e = prop->find("enum");
    if (e != prop->end() && e->is_array() && e->size() == 1 && (*e)[0].is_string()) return (*e)[0].get<std::string>();
  }
  return std::nullopt;
}

// valijson's context ["<root>", "[body]", "[0]"] as a JSON pointer "/body/0".
std::string pointer(const std::vector<std::string>& context) {
  std::string p;
  for (size_t i = 0; i < context.size(); ++i) {
    std::string token = context[i];
    if (i == 0 && token == "<root>") continue;
    if (token.size() >= 2 && token.front() == '[' && token.back() == ']') token = token.substr(1, token.size() - 2);
    p += '/';
    for (const char c : token) {
      if (c == '~') {
        p += "~0";
      } else if (c == '/') {
        p += "~1";
      } else {
        p += c;
      }
    }
  }
  return p;
}

std::string stringMember(const json& message, const char* key) {
  const auto it = message.find(key);
  return it != message.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

DapSchema::DapSchema(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the DAP schema " + path);
  std::stringstream text;
  text << in.rdbuf();
  json document = json::parse(text.str());
  if (!document.contains("definitions") || !document["definitions"].is_object())
    throw std::runtime_error(path + " has no definitions");
  definitions_ = std::move(document["definitions"]);
  formatsToRanges(definitions_);
  for (const auto& [name, definition] : definitions_.items()) {
    const auto ends = [&](std::string_view suffix) {
      return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends("Request")) {
      if (auto command = enumName(definition, "command")) commands_.insert(*command);
    } else if (ends("Event")) {
      if (auto event = enumName(definition, "event")) events_.insert(*event);
    }
  }
}

DapSchema::~DapSchema() = default;

const DapSchema& DapSchema::instance() {
  static const DapSchema schema(SCANBACK_DAP_SCHEMA);
  return schema;
}

std::string DapSchema::capitalised(std::string_view name) {
  std::string s(name);
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

bool DapSchema::hasDefinition(const std::string& name) const { return definitions_.contains(name); }

const valijson::Schema& DapSchema::schemaFor(const std::string& definition) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = schemas_[definition];
  if (!slot) {
    if (!hasDefinition(definition)) {
      schemas_.erase(definition);
      throw std::runtime_error("the DAP schema has no definition '" + definition + "'");
    }
    // A document whose root refers to the definition; $ref resolves against its "definitions".
    const json root = {{"$ref", "#/definitions/" + definition}, {"definitions", definitions_}};
    auto schema = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft4);
    valijson::adapters::NlohmannJsonAdapter adapter(root);
    parser.populateSchema(adapter, *schema);
    slot = std::move(schema);
  }
  return *slot;
}

std::string DapSchema::validateAgainst(const json& value, const std::string& definition) const {
  valijson::ValidationResults results;
  try {
    const valijson::Schema& schema = schemaFor(definition);
    valijson::Validator validator;  // per call: it caches regexes, so it is not shared
    valijson::adapters::NlohmannJsonAdapter target(value);
    if (validator.validate(schema, target, &results)) return "";
  } catch (const std::exception& e) {
    return "cannot validate against " + definition + ": " + e.what();
  }
  std::string out = "not a valid " + definition + ":";
  for (const auto& error : results) {
    const std::string p = pointer(error.context);
    out += "\n  \"" + p + "\": " + error.description;
  }
  return out;
}

std::string DapSchema::definitionFor(const json& message) const {
  if (!message.is_object()) return "ProtocolMessage";
  const std::string type = stringMember(message, "type");
  if (type == "response") {
    const auto success = message.find("success");
    if (success != message.end() && success->is_boolean() && !success->get<bool>()) return "ErrorResponse";
    const std::string command = stringMember(message, "command");
    return commands_.count(command) ? capitalised(command) + "Response" : "Response";
  }
  if (type == "event") {
    const std::string event = stringMember(message, "event");
    return events_.count(event) ? capitalised(event) + "Event" : "Event";
  }
  if (type == "request") {
    const std::string command = stringMember(message, "command");
    return commands_.count(command) ? capitalised(command) + "Request" : "Request";
  }
  return "ProtocolMessage";
}

std::string DapSchema::validate(const json& message) const {
  const std::string definition = definitionFor(message);
  std::string out = validateAgainst(message, definition);
  if (definition == "ProtocolMessage") {
    const std::string problem = "\n  \"/type\": must be \"request\", \"response\" or \"event\"";
    out = out.empty() ? "not a valid message:" + problem : out + problem;
  }
  return out;
}

std::string DapSchema::validateRequest(const json& request) const {
  if (!request.is_object() || stringMember(request, "type") != "request") {
    std::string out = validateAgainst(request, "Request");
    return out.empty() ? "not a valid Request:\n  \"/type\": must be \"request\"" : out;
  }
  return validateAgainst(request, definitionFor(request));
}

}  // namespace scanback::dap::testing
