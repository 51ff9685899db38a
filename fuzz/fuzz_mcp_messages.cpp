// Feeds arbitrary bytes to the readers of what an MCP server sends: the
// JSON-RPC message parser (each line of the input, as stdio frames them, and
// the whole), the event-stream decoder of Streamable HTTP answers with each
// event's data parsed as a message (in two pieces split where the first
// byte says), the readers of the initialize, tools/list and tools/call
// results (cut to a limit the second byte picks), and the function names
// made from the input's lines taken as server and tool names. A refusal
// with its reason is the expected answer to bad input; a crash, a hang, an
// exception, a broken invariant (__builtin_trap) or a sanitizer report is a
// bug.

#include <cstddef>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quire/remote/sse_decoder.h"
#include "quire/tools/mcp_protocol.h"

namespace {

using namespace quire::tools;

void check_results(std::string_view json, std::size_t limit) {
  const InitializeResult init = read_initialize_result(json);
  if (init.error.empty() == false && !init.protocol_version.empty()) __builtin_trap();
  const ToolsListPage page = read_tools_list(json);
  if (!page.error.empty() && !page.tools.empty()) __builtin_trap();
  for (const ToolDescriptor& tool : page.tools) {
    if (tool.name.empty() || tool.input_schema.empty()) __builtin_trap();
  }
  const ToolCallText call = read_tool_call_result(json, limit);
  if (call.error.empty()) {
    if (call.cut_bytes > call.full_bytes) __builtin_trap();
    if (call.cut_bytes == 0 && call.text.size() != call.full_bytes) __builtin_trap();
    if (call.cut_bytes != 0 && call.text.size() > limit + 100) __builtin_trap();
  }
}

void check_message(std::string_view text, std::size_t limit) {
  const JsonRpcParse parse = parse_json_rpc(text);
  if (parse.ok() == parse.messages.empty()) __builtin_trap();
  if (!parse.ok() && parse.error.size() > 300) __builtin_trap();
  for (const JsonRpcMessage& message : parse.messages) {
    switch (message.kind) {
      case JsonRpcKind::Request:
        if (message.id.empty() || message.method.empty()) __builtin_trap();
        // The client's answer to it parses back as a response.
        if (parse_json_rpc(json_rpc_result(message.id, "{}")).messages.at(0).kind !=
            JsonRpcKind::Response)
          __builtin_trap();
        if (parse_json_rpc(json_rpc_error(message.id, -32601, message.method))
                .messages.at(0)
                .kind != JsonRpcKind::ErrorResponse)
          __builtin_trap();
        break;
      case JsonRpcKind::Notification:
        if (!message.id.empty() || message.method.empty()) __builtin_trap();
        break;
      case JsonRpcKind::Response:
        if (message.id.empty() || message.result.empty()) __builtin_trap();
        check_results(message.result, limit);
        break;
      case JsonRpcKind::ErrorResponse:
        if (message.id.empty()) __builtin_trap();
        break;
    }
  }
}

void check_names(std::string_view bytes) {
  std::vector<std::pair<std::string, std::string>> tools;
  std::size_t start = 0;
  std::string server;
  bool have_server = false;
  while (start <= bytes.size() && tools.size() < 64) {
    std::size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    const std::string line(bytes.substr(start, end - start));
    if (have_server) {
      tools.emplace_back(server, line);
    } else {
      server = line;
    }
    have_server = !have_server;
    start = end + 1;
  }
  const std::vector<std::string> names = unique_function_names(tools);
  if (names.size() != tools.size()) __builtin_trap();
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (name.empty() || name.size() > 64 || !seen.insert(name).second) __builtin_trap();
    for (char c : name) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-';
      if (!ok) __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::size_t split = size == 0 ? 0 : data[0] % (size + 1);
  const std::size_t limit = size < 2 ? 64 : 1 + data[1] * 8;

  check_message(bytes, limit);
  check_results(bytes, limit);
  // stdio: one message a line.
  std::size_t start = 0;
  while (start < bytes.size()) {
    std::size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    check_message(bytes.substr(start, end - start), limit);
    start = end + 1;
  }
  // Streamable HTTP: messages in events.
  quire::remote::SseDecoder decoder;
  try {
    for (std::string_view piece : {bytes.substr(0, split), bytes.substr(split)}) {
      for (const quire::remote::SseEvent& event : decoder.feed(piece))
        check_message(event.data, limit);
    }
  } catch (const std::length_error&) {
  }
  decoder.finish();
  check_names(bytes);
  return 0;
}
