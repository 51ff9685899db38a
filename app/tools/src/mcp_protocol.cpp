#include "quire/tools/mcp_protocol.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace quire::tools {
namespace {

using json = nlohmann::json;

constexpr std::string_view kKnownVersions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The start of `text` for a message, quoted, at most 80 bytes, cut at a
// UTF-8 boundary.
std::string quoted_start(std::string_view text) {
  std::size_t n = std::min<std::size_t>(text.size(), 80);
  while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80)
    --n;
  std::string out = "\"";
  for (char c : text.substr(0, n)) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += '?';
    } else {
      out += c;
    }
  }
  out += n < text.size() ? "...\"" : "\"";
  return out;
}

std::optional<json> parse_value(std::string_view text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

bool is_valid_id(const json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned();
}

std::string read_one(const json& value, JsonRpcMessage& out) {
  if (!value.is_object()) return "not JSON-RPC 2.0: a message must be a JSON object";
  const auto version = value.find("jsonrpc");
  if (version == value.end()) return "not JSON-RPC 2.0: the \"jsonrpc\" member is missing";
  if (!version->is_string() || version->get_ref<const std::string&>() != "2.0") {
    return "not JSON-RPC 2.0: \"jsonrpc\" is " + dump(*version) + ", not \"2.0\"";
  }
  const auto method = value.find("method");
  const auto id = value.find("id");
  const auto result = value.find("result");
  const auto error = value.find("error");
  if (method != value.end()) {
    if (!method->is_string()) return "not JSON-RPC 2.0: \"method\" is not a string";
    if (result != value.end() || error != value.end()) {
      return "not JSON-RPC 2.0: a message has both \"method\" and \"result\" or \"error\"";
    }
    out.method = method->get<std::string>();
    if (out.method.empty()) return "not JSON-RPC 2.0: \"method\" is empty";
    const auto params = value.find("params");
    if (params != value.end()) {
      if (!params->is_object() && !params->is_array()) {
        return "not JSON-RPC 2.0: \"params\" of " + out.method +
               " is neither an object nor an array";
      }
      out.params = dump(*params);
    }
    if (id == value.end()) {
      out.kind = JsonRpcKind::Notification;
      return {};
    }
    if (!is_valid_id(*id)) {
      return "not JSON-RPC 2.0: the id of request " + out.method + " is " + dump(*id) +
             ", not a string or an integer";
    }
    out.kind = JsonRpcKind::Request;
    out.id = dump(*id);
    return {};
  }
  if (result != value.end() && error != value.end()) {
    return "not JSON-RPC 2.0: a response has both \"result\" and \"error\"";
  }
  if (result == value.end() && error == value.end()) {
    return "not JSON-RPC 2.0: neither a request, a notification nor a response (no \"method\", "
           "\"result\" or \"error\")";
  }
  if (id == value.end()) return "not JSON-RPC 2.0: a response without an \"id\"";
  if (result != value.end()) {
    if (!is_valid_id(*id)) return "not JSON-RPC 2.0: a response's id is " + dump(*id);
    out.kind = JsonRpcKind::Response;
    out.id = dump(*id);
    out.result = dump(*result);
    return {};
  }
  if (!is_valid_id(*id) && !id->is_null()) {
    return "not JSON-RPC 2.0: an error response's id is " + dump(*id);
  }
  if (!error->is_object()) return "not JSON-RPC 2.0: \"error\" is not an object";
  const auto code = error->find("code");
  const auto message = error->find("message");
  if (code == error->end() || !code->is_number_integer()) {
    return "not JSON-RPC 2.0: the error has no integer \"code\"";
  }
  if (message == error->end() || !message->is_string()) {
    return "not JSON-RPC 2.0: the error has no \"message\" string";
  }
  out.kind = JsonRpcKind::ErrorResponse;
  out.id = dump(*id);
  out.error_code = code->get<std::int64_t>();
  out.error_message = message->get<std::string>();
  const auto data = error->find("data");
  if (data != error->end()) out.error_data = dump(*data);
  return {};
}

json object_or_empty(std::string_view text) {
  if (text.empty()) return json::object();
  json value = json::parse(text, nullptr, false);
  if (value.is_discarded()) return json::object();
  return value;
}

std::string string_member(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

// The number of bytes base64 text decodes to.
std::size_t base64_bytes(const std::string& data) {
  std::size_t n = 0;
  std::size_t padding = 0;
  for (char c : data) {
    if (c == '=') {
      ++padding;
    } else if (c != '\n' && c != '\r' && c != ' ') {
      ++n;
    }
  }
  (void)padding;
  return n * 3 / 4;
}

std::string describe_part(const json& part, std::string& error) {
  if (!part.is_object()) {
    error = "a content part is not an object";
    return {};
  }
  const std::string type = string_member(part, "type");
  if (type == "text") {
    const auto text = part.find("text");
    if (text == part.end() || !text->is_string()) {
      error = "a text content part has no \"text\" string";
      return {};
    }
    return text->get<std::string>();
  }
  if (type == "image" || type == "audio") {
    const std::string mime = string_member(part, "mimeType");
    return "[" + type + ": " + (mime.empty() ? "unknown type" : mime) + ", " +
           std::to_string(base64_bytes(string_member(part, "data"))) + " bytes]";
  }
  if (type == "resource_link") {
    std::string name = string_member(part, "title");
    if (name.empty()) name = string_member(part, "name");
    std::string out = "[resource link: " + name + " <" + string_member(part, "uri") + ">";
    const std::string mime = string_member(part, "mimeType");
    if (!mime.empty()) out += ", " + mime;
    const std::string description = string_member(part, "description");
    if (!description.empty()) out += ": " + description;
    return out + "]";
  }
  if (type == "resource") {
    const auto resource = part.find("resource");
    if (resource == part.end() || !resource->is_object()) {
      error = "a resource content part has no \"resource\" object";
      return {};
    }
    const std::string uri = string_member(*resource, "uri");
    const std::string mime = string_member(*resource, "mimeType");
    const auto text = resource->find("text");
    if (text != resource->end() && text->is_string()) {
      return "[resource " + uri + (mime.empty() ? "" : ", " + mime) + "]\n" +
             text->get<std::string>();
    }
    return "[resource: " + uri + (mime.empty() ? "" : ", " + mime) + ", " +
           std::to_string(base64_bytes(string_member(*resource, "blob"))) + " bytes]";
  }
  return "[" + (type.empty() ? std::string("untyped") : type) + " content]";
}

// Letters, digits, "_" and "-"; anything else becomes "_".
std::string function_safe(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty()) out = "tool";
  return out;
}

std::string cut_name(std::string name, std::size_t limit) {
  if (name.size() > limit) name.resize(limit);
  return name;
}

}  // namespace

bool is_known_protocol_version(std::string_view version) {
  return std::find(std::begin(kKnownVersions), std::end(kKnownVersions), version) !=
         std::end(kKnownVersions);
}

std::string known_protocol_versions() {
  std::string out;
  for (std::string_view version : kKnownVersions) {
    if (!out.empty()) out += ", ";
    out += version;
  }
  return out;
}

JsonRpcParse parse_json_rpc(std::string_view text) {
  JsonRpcParse out;
  const std::optional<json> value = parse_value(text);
  if (!value) {
    out.error = "not JSON: " + quoted_start(text);
    return out;
  }
  if (value->is_array()) {
    if (value->empty()) {
      out.error = "not JSON-RPC 2.0: an empty batch";
      return out;
    }
    for (const json& member : *value) {
      JsonRpcMessage message;
      std::string error = read_one(member, message);
      if (!error.empty()) {
        out.messages.clear();
        out.error = error + " (in a batch)";
        return out;
      }
      out.messages.push_back(std::move(message));
    }
    return out;
  }
  JsonRpcMessage message;
  out.error = read_one(*value, message);
  if (out.error.empty()) out.messages.push_back(std::move(message));
  return out;
}

std::string json_rpc_request(std::int64_t id, std::string_view method,
                             std::string_view params_json) {
  json message = {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::string(method)}};
  if (!params_json.empty()) message["params"] = object_or_empty(params_json);
  return dump(message);
}

std::string json_rpc_notification(std::string_view method, std::string_view params_json) {
  json message = {{"jsonrpc", "2.0"}, {"method", std::string(method)}};
  if (!params_json.empty()) message["params"] = object_or_empty(params_json);
  return dump(message);
}

std::string json_rpc_result(std::string_view id_json, std::string_view result_json) {
  json id = json::parse(id_json, nullptr, false);
  if (id.is_discarded()) id = nullptr;
  return dump(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", object_or_empty(result_json)}});
}

std::string json_rpc_error(std::string_view id_json, std::int64_t code, std::string_view message) {
  json id = json::parse(id_json, nullptr, false);
  if (id.is_discarded()) id = nullptr;
  return dump(json{{"jsonrpc", "2.0"},
                   {"id", id},
                   {"error", {{"code", code}, {"message", std::string(message)}}}});
}

std::string initialize_params(std::string_view client_name, std::string_view client_version) {
  return dump(
      json{{"protocolVersion", std::string(kMcpProtocolVersion)},
           {"capabilities", json::object()},
           {"clientInfo",
            {{"name", std::string(client_name)}, {"version", std::string(client_version)}}}});
}

std::string cancelled_params(std::int64_t id, std::string_view reason) {
  return dump(json{{"requestId", id}, {"reason", std::string(reason)}});
}

std::string tools_list_params(std::string_view cursor) {
  if (cursor.empty()) return "{}";
  return dump(json{{"cursor", std::string(cursor)}});
}

std::string tools_call_params(std::string_view name, std::string_view arguments_json) {
  json arguments = object_or_empty(arguments_json);
  if (!arguments.is_object()) arguments = json::object();
  return dump(json{{"name", std::string(name)}, {"arguments", std::move(arguments)}});
}

InitializeResult read_initialize_result(std::string_view result_json) {
  InitializeResult out;
  const std::optional<json> value = parse_value(result_json);
  if (!value || !value->is_object()) {
    out.error = "the initialize result is not a JSON object";
    return out;
  }
  const auto version = value->find("protocolVersion");
  if (version == value->end() || !version->is_string()) {
    out.error = "the initialize result has no \"protocolVersion\" string";
    return out;
  }
  out.protocol_version = version->get<std::string>();
  const auto info = value->find("serverInfo");
  if (info != value->end() && info->is_object()) {
    out.server_name = string_member(*info, "name");
    out.server_version = string_member(*info, "version");
  }
  out.instructions = string_member(*value, "instructions");
  const auto capabilities = value->find("capabilities");
  if (capabilities != value->end() && capabilities->is_object()) {
    const auto tools = capabilities->find("tools");
    if (tools != capabilities->end() && tools->is_object()) {
      out.has_tools = true;
      const auto changed = tools->find("listChanged");
      out.tools_list_changed =
          changed != tools->end() && changed->is_boolean() && changed->get<bool>();
    }
  }
  return out;
}

ToolsListPage read_tools_list(std::string_view result_json) {
  ToolsListPage out;
  const std::optional<json> value = parse_value(result_json);
  if (!value || !value->is_object()) {
    out.error = "the tools/list result is not a JSON object";
    return out;
  }
  const auto tools = value->find("tools");
  if (tools == value->end() || !tools->is_array()) {
    out.error = "the tools/list result has no \"tools\" array";
    return out;
  }
  for (const json& tool : *tools) {
    if (!tool.is_object()) {
      out.error = "a tool in tools/list is not an object";
      out.tools.clear();
      return out;
    }
    ToolDescriptor descriptor;
    descriptor.name = string_member(tool, "name");
    if (descriptor.name.empty()) {
      out.error = "a tool in tools/list has no name";
      out.tools.clear();
      return out;
    }
    descriptor.title = string_member(tool, "title");
    descriptor.description = string_member(tool, "description");
    const auto input = tool.find("inputSchema");
    if (input != tool.end() && input->is_object()) descriptor.input_schema = dump(*input);
    const auto output = tool.find("outputSchema");
    if (output != tool.end() && output->is_object()) descriptor.output_schema = dump(*output);
    const auto annotations = tool.find("annotations");
    if (annotations != tool.end() && annotations->is_object()) {
      descriptor.annotations = dump(*annotations);
      if (descriptor.title.empty()) descriptor.title = string_member(*annotations, "title");
      const auto read_only = annotations->find("readOnlyHint");
      if (read_only != annotations->end() && read_only->is_boolean()) {
        descriptor.read_only_hint = read_only->get<bool>();
      }
      const auto destructive = annotations->find("destructiveHint");
      if (destructive != annotations->end() && destructive->is_boolean()) {
        descriptor.destructive_hint = destructive->get<bool>();
      }
    }
    out.tools.push_back(std::move(descriptor));
  }
  const auto cursor = value->find("nextCursor");
  if (cursor != value->end() && cursor->is_string()) out.next_cursor = cursor->get<std::string>();
  return out;
}

std::size_t cut_text(std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return 0;
  const std::size_t full = text.size();
  std::size_t keep = max_bytes;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80)
    --keep;
  text.resize(keep);
  const std::size_t cut = full - keep;
  text += "\n[... " + std::to_string(cut) + " more bytes cut: the result had " +
          std::to_string(full) + " bytes]";
  return cut;
}

ToolCallText read_tool_call_result(std::string_view result_json, std::size_t max_text_bytes) {
  ToolCallText out;
  const std::optional<json> value = parse_value(result_json);
  if (!value || !value->is_object()) {
    out.error = "the tools/call result is not a JSON object";
    return out;
  }
  const auto is_error = value->find("isError");
  out.is_error = is_error != value->end() && is_error->is_boolean() && is_error->get<bool>();
  const auto structured = value->find("structuredContent");
  if (structured != value->end() && !structured->is_null()) {
    out.structured_content = dump(*structured);
  }
  const auto content = value->find("content");
  if (content != value->end() && !content->is_null()) {
    if (!content->is_array()) {
      out.error = "the tools/call result's \"content\" is not an array";
      return out;
    }
    for (const json& part : *content) {
      std::string error;
      std::string piece = describe_part(part, error);
      if (!error.empty()) {
        out.error = "the tools/call result: " + error;
        out.text.clear();
        return out;
      }
      if (out.parts > 0) out.text += "\n\n";
      out.text += piece;
      ++out.parts;
    }
  }
  if (out.parts == 0 && !out.structured_content.empty()) out.text = out.structured_content;
  out.full_bytes = out.text.size();
  out.cut_bytes = cut_text(out.text, max_text_bytes);
  return out;
}

std::vector<std::string> unique_function_names(
    const std::vector<std::pair<std::string, std::string>>& tools) {
  constexpr std::size_t kLimit = 64;
  std::map<std::string, int> tool_counts;
  for (const auto& [server, tool] : tools)
    ++tool_counts[cut_name(function_safe(tool), kLimit)];
  std::vector<std::string> names;
  names.reserve(tools.size());
  std::set<std::string> taken;
  for (const auto& [server, tool] : tools) {
    std::string base = cut_name(function_safe(tool), kLimit);
    if (tool_counts[base] > 1) base = cut_name(function_safe(server) + "__" + base, kLimit);
    std::string name = base;
    for (int n = 2; taken.count(name) != 0; ++n) {
      const std::string suffix = "_" + std::to_string(n);
      name = cut_name(base, kLimit - suffix.size()) + suffix;
    }
    taken.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace quire::tools
