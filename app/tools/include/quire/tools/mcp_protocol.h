#pragma once

// The Model Context Protocol's messages as the client reads and writes them
// (specification revision 2025-06-18), with no Qt: JSON-RPC 2.0 framing
// (requests, notifications, responses and error responses), the answers to
// initialize, tools/list and tools/call, and the function names the chat
// gives tools. The fuzz build links this too (fuzz/fuzz_mcp_messages.cpp).
//
// JSON values cross this interface as compact JSON text, so that callers on
// either side (nlohmann-json here, QJson in the Qt layer) need nothing of the
// other's.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace quire::tools {

// The revision this client asks for first, and every revision it accepts
// when a server answers with another.
inline constexpr std::string_view kMcpProtocolVersion = "2025-06-18";
bool is_known_protocol_version(std::string_view version);
// "2025-06-18, 2025-03-26, 2024-11-05", for messages.
std::string known_protocol_versions();

enum class JsonRpcKind {
  Request,       // method and id: the server asks the client something
  Notification,  // method, no id
  Response,      // id and result
  ErrorResponse  // id (possibly null) and error
};

struct JsonRpcMessage {
  JsonRpcKind kind = JsonRpcKind::Notification;
  // The id as compact JSON text ("7", "\"abc\""), "null" for an error
  // response that names no request, "" for notifications.
  std::string id;
  std::string method;           // requests and notifications
  std::string params;           // JSON text of params, "" when absent
  std::string result;           // JSON text of result (responses)
  std::int64_t error_code = 0;  // error responses
  std::string error_message;
  std::string error_data;  // JSON text of error.data, "" when absent
};

// One incoming message, or why it is not one. `error` is a sentence about
// the message ("not JSON: ...", "not JSON-RPC 2.0: the \"jsonrpc\" member is
// missing", ...), empty when `messages` holds what arrived. A JSON array
// (a batch, which revision 2025-03-26 allowed) yields each member; an empty
// array or a bad member rejects the whole.
struct JsonRpcParse {
  std::vector<JsonRpcMessage> messages;
  std::string error;
  bool ok() const { return error.empty(); }
};
JsonRpcParse parse_json_rpc(std::string_view text);

// Compact JSON text of outgoing messages. `params_json` is "" for none or a
// JSON object's text; `id` is an integer id (the client's ids are integers).
std::string json_rpc_request(std::int64_t id, std::string_view method,
                             std::string_view params_json);
std::string json_rpc_notification(std::string_view method, std::string_view params_json);
// A response to a server's request: `result_json` for success, or an error
// with code and message when `result_json` is empty. `id_json` as in
// JsonRpcMessage::id.
std::string json_rpc_result(std::string_view id_json, std::string_view result_json);
std::string json_rpc_error(std::string_view id_json, std::int64_t code, std::string_view message);

// The params of initialize: this client's revision, name and version, and no
// client capabilities (no roots, sampling or elicitation).
std::string initialize_params(std::string_view client_name, std::string_view client_version);
// The params of notifications/cancelled for request `id` with `reason`.
std::string cancelled_params(std::int64_t id, std::string_view reason);
// The params of tools/list (with a cursor when not empty) and tools/call
// (`arguments_json` is a JSON object's text).
std::string tools_list_params(std::string_view cursor);
std::string tools_call_params(std::string_view name, std::string_view arguments_json);

// A tools/list-free reading of the initialize result.
struct InitializeResult {
  std::string protocol_version;
  std::string server_name;
  std::string server_version;
  std::string instructions;
  bool has_tools = false;           // capabilities.tools present
  bool tools_list_changed = false;  // capabilities.tools.listChanged
  std::string error;                // empty when the result was readable
};
InitializeResult read_initialize_result(std::string_view result_json);

struct ToolDescriptor {
  std::string name;
  std::string title;        // "" when absent (annotations.title is used then)
  std::string description;  // "" when absent
  std::string input_schema = "{\"type\":\"object\"}";  // JSON text of inputSchema
  std::string output_schema;                           // JSON text, "" when absent
  std::string annotations;                             // JSON text, "" when absent
  bool read_only_hint = false;                         // annotations.readOnlyHint
  bool destructive_hint = true;  // annotations.destructiveHint (the spec's default)
};

// One page of tools/list: the tools, and the cursor of the next page ("" at
// the end). A tool without a name, or that is not an object, is an error.
struct ToolsListPage {
  std::vector<ToolDescriptor> tools;
  std::string next_cursor;
  std::string error;
};
ToolsListPage read_tools_list(std::string_view result_json);

// A tools/call result made into what the chat keeps: the text parts joined
// by blank lines and each other part described as text ("[image: image/png,
// 1234 bytes]", "[resource link: report.txt <file:///...>]", an embedded text
// resource's text, "[resource: file:///x.bin, application/octet-stream, 3
// bytes]"); structuredContent as JSON text (and as the text when there is no
// content part, as the specification asks servers to avoid); isError.
struct ToolCallText {
  std::string text;                // for the model, cut to the limit
  std::string structured_content;  // JSON text, "" when absent
  bool is_error = false;
  std::size_t full_bytes = 0;  // the text's size before it was cut
  std::size_t cut_bytes = 0;   // how much was cut (0 when nothing)
  int parts = 0;               // content parts read
  std::string error;           // empty when the result was readable
};
// `max_text_bytes` limits the text; a longer text is cut at a UTF-8 boundary
// and ends with a note saying how many bytes were cut.
ToolCallText read_tool_call_result(std::string_view result_json, std::size_t max_text_bytes);
// Cuts `text` to at most `max_bytes` (never inside a UTF-8 sequence) and
// appends "\n[... N more bytes cut: the result had M bytes]"; returns the
// number of bytes cut.
std::size_t cut_text(std::string& text, std::size_t max_bytes);

// A function name for each (server name, tool name), unique across all and
// valid for OpenAI-style function calling (^[A-Za-z0-9_-]{1,64}$): the tool's
// own name when no other server offers the same, else "server__tool";
// characters outside the allowed set become "_", names are cut to 64
// characters, and a name still taken gets "_2", "_3"... The result is in the
// order of `tools`, and the same input always gives the same names.
std::vector<std::string> unique_function_names(
    const std::vector<std::pair<std::string, std::string>>& tools);

}  // namespace quire::tools
