#include "response_format_parser.h"

#include <nlohmann/json.hpp>

#include "quire/server/api_error.h"

namespace quire::server {
namespace {

[[noreturn]] void refuse_format(std::string message) {
  throw ApiException(invalid_request(std::move(message), "response_format"));
}

// OpenAI's rule for the name: letters, digits, '_' and '-', 64 at most.
bool valid_schema_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!allowed) return false;
  }
  return true;
}

}  // namespace

ResponseFormat parse_response_format(const nlohmann::json* format, std::string_view body) {
  ResponseFormat parsed;
  if (format == nullptr || format->is_null()) return parsed;
  if (!format->is_object() || !format->contains("type") || !(*format)["type"].is_string()) {
    refuse_format("response_format must be an object with a string \"type\".");
  }
  const std::string type = (*format)["type"].get<std::string>();
  if (type == "text") return parsed;
  if (type == "json_object") {
    parsed.type = ResponseFormat::Type::JsonObject;
    return parsed;
  }
  if (type != "json_schema") {
    refuse_format("response_format type \"" + type +
                  "\" is not supported by this server; use \"text\", \"json_object\" or "
                  "\"json_schema\".");
  }
  parsed.type = ResponseFormat::Type::JsonSchema;
  const auto found = format->find("json_schema");
  if (found == format->end() || !found->is_object()) {
    refuse_format("response_format of type \"json_schema\" needs a \"json_schema\" object.");
  }
  const nlohmann::json& json_schema = *found;
  const auto name = json_schema.find("name");
  if (name == json_schema.end() || !name->is_string() ||
      !valid_schema_name(name->get<std::string>())) {
    refuse_format(
        "response_format.json_schema.name must be a string of letters, digits, '_' and '-', "
        "64 at most.");
  }
  parsed.name = name->get<std::string>();
  const auto schema = json_schema.find("schema");
  if (schema == json_schema.end() || !schema->is_object()) {
    refuse_format("response_format.json_schema.schema must be a JSON Schema object.");
  }
  // The body parsed as JSON once already, with its depth checked; the same
  // parser cannot refuse it now, but only ApiException may leave a parser.
  try {
    const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(body);
    parsed.schema = ordered.at("response_format").at("json_schema").at("schema").dump();
  } catch (const nlohmann::ordered_json::exception&) {
    parsed.schema = schema->dump();
  }
  if (const auto strict = json_schema.find("strict"); strict != json_schema.end()) {
    if (!strict->is_boolean() && !strict->is_null()) {
      refuse_format("response_format.json_schema.strict must be a boolean.");
    }
    parsed.strict = strict->is_boolean() && strict->get<bool>();
  }
  return parsed;
}

}  // namespace quire::server
