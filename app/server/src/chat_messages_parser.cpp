#include "chat_messages_parser.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "image_part_parser.h"

namespace quire::server {
namespace {

using request::fail;
using request::Fields;
using request::json;
using request::kind_of;

// Most tools one request may offer.
constexpr std::size_t kMaxTools = 128;

// A message's content: a string, or a list of parts whose text parts are
// joined by newlines. A user message may also hold image_url parts; then
// `parts` keeps every part in order. Other roles take text only, as in
// OpenAI's API.
void read_content(const json& content, const std::string& where, ChatMessage& message) {
  if (content.is_string()) {
    message.content = content.get<std::string>();
    return;
  }
  if (!content.is_array()) {
    fail(where + " must be a string or an array of content parts, not " +
             std::string(kind_of(content)) + ".",
         "messages");
  }
  std::vector<ContentPart> parts;
  bool images = false;
  bool text = false;
  for (std::size_t i = 0; i < content.size(); ++i) {
    const std::string part_name = where + "[" + std::to_string(i) + "]";
    const json& part = content[i];
    const json* type = part.is_object() ? Fields(part).find("type") : nullptr;
    if (!type || !type->is_string()) {
      fail(part_name + " must be an object with a string \"type\".", "messages");
    }
    const std::string type_name = type->get<std::string>();
    if (type_name == "image_url") {
      if (message.role != "user") {
        fail(part_name + " is an image in a" + (message.role == "assistant" ? "n " : " ") +
                 message.role + " message; images go in user messages only.",
             "messages");
      }
      parts.push_back({{}, parse_image_part(part, part_name)});
      images = true;
      continue;
    }
    if (type_name != "text") {
      fail(part_name + " is of type \"" + type_name +
               "\": this server takes \"text\" and \"image_url\" parts only.",
           "messages");
    }
    const json* part_text = Fields(part).find("text");
    if (!part_text || !part_text->is_string()) {
      fail(part_name + ".text must be a string.", "messages");
    }
    if (text) message.content += '\n';
    text = true;
    message.content += part_text->get<std::string>();
    parts.push_back({part_text->get<std::string>(), std::nullopt});
  }
  if (images) message.parts = std::move(parts);
}

// OpenAI's rule for function names: letters, digits, '_' and '-', 64 at most.
bool valid_function_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::string required_string(const json& object, const char* key, const std::string& where) {
  const json* value = Fields(object).find(key);
  if (!value || !value->is_string()) {
    fail(where + "." + key + " must be a string.", "messages");
  }
  return value->get<std::string>();
}

// An assistant message's tool_calls[].
std::vector<FunctionCall> parse_calls(const json& calls, const std::string& where) {
  if (!calls.is_array()) {
    fail(where + " must be an array of tool calls, not " + std::string(kind_of(calls)) + ".",
         "messages");
  }
  std::vector<FunctionCall> parsed;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const std::string name = where + "[" + std::to_string(i) + "]";
    const json& call = calls[i];
    if (!call.is_object()) fail(name + " must be an object.", "messages");
    const json* type = Fields(call).find("type");
    if (type && (!type->is_string() || type->get<std::string>() != "function")) {
      fail(name + ".type must be \"function\".", "messages");
    }
    const json* function = Fields(call).find("function");
    if (!function || !function->is_object()) {
      fail(name + ".function must be an object with a name and arguments.", "messages");
    }
    FunctionCall parsed_call;
    parsed_call.id = required_string(call, "id", name);
    parsed_call.name = required_string(*function, "name", name + ".function");
    parsed_call.arguments = required_string(*function, "arguments", name + ".function");
    // Templates that print arguments as an object parse them (tojson); text
    // that is not a JSON object would reach the model as something else.
    const json arguments = json::parse(parsed_call.arguments, nullptr, false);
    if (!arguments.is_object()) {
      fail(name + ".function.arguments must be the JSON text of an object; it is not.", "messages");
    }
    parsed.push_back(std::move(parsed_call));
  }
  return parsed;
}

ChatMessage parse_message(const json& message, const std::string& name) {
  if (!message.is_object()) {
    fail(name + " must be an object, not " + std::string(kind_of(message)) + ".", "messages");
  }
  const Fields fields(message);
  const json* role_value = fields.find("role");
  if (!role_value || !role_value->is_string()) {
    fail(name + ".role must be a string: system, developer, user, assistant or tool.", "messages");
  }
  ChatMessage parsed;
  parsed.role = role_value->get<std::string>();
  if (parsed.role == "function") {
    fail(name +
             " has the legacy role \"function\"; send the result as a \"tool\" message "
             "with the tool_call_id of the call it answers.",
         "messages");
  }
  if (parsed.role != "system" && parsed.role != "developer" && parsed.role != "user" &&
      parsed.role != "assistant" && parsed.role != "tool") {
    fail(name + ".role \"" + parsed.role + "\" is not system, developer, user, assistant or tool.",
         "messages");
  }
  const json* content = fields.find("content");
  if (parsed.role == "assistant") {
    if (const json* calls = fields.find("tool_calls")) {
      parsed.tool_calls = parse_calls(*calls, name + ".tool_calls");
    }
    if (fields.find("function_call")) {
      fail(name + " has the legacy function_call; use tool_calls.", "messages");
    }
  }
  if (!content && parsed.role != "assistant") fail(name + ".content is missing.", "messages");
  parsed.null_content = content == nullptr;
  if (content) read_content(*content, name + ".content", parsed);
  if (parsed.role == "tool") {
    parsed.tool_call_id = required_string(message, "tool_call_id", name);
    if (const json* function = fields.find("name"); function && function->is_string()) {
      parsed.name = function->get<std::string>();
    }
  }
  return parsed;
}

std::string message_name(const std::vector<std::size_t>& positions, std::size_t i) {
  return "messages[" + std::to_string(positions[i]) + "]";
}

}  // namespace

std::vector<ChatMessage> parse_chat_messages(const Fields& fields,
                                             std::vector<std::size_t>& positions) {
  const json* messages = fields.find("messages");
  if (!messages) fail("Missing required parameter: 'messages'.", "messages");
  if (!messages->is_array()) {
    fail("messages must be an array of message objects, not " + std::string(kind_of(*messages)) +
             ".",
         "messages");
  }
  if (messages->empty()) fail("messages must hold at least one message.", "messages");
  std::vector<ChatMessage> parsed;
  positions.clear();
  std::optional<ChatMessage> system;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const std::string name = "messages[" + std::to_string(i) + "]";
    ChatMessage message = parse_message((*messages)[i], name);
    if (message.role == "system" || message.role == "developer") {
      if (!parsed.empty()) {
        fail(name + " is a " + message.role +
                 " message after the conversation began; this server takes system messages "
                 "only before the first user message.",
             "messages");
      }
      if (!system) {
        system.emplace();
        system->role = "system";
      } else {
        system->content += "\n\n";
      }
      system->content += message.content;
      continue;
    }
    parsed.push_back(std::move(message));
    positions.push_back(i);
  }
  if (system) {
    parsed.insert(parsed.begin(), std::move(*system));
    positions.insert(positions.begin(), 0);
  }
  return parsed;
}

ChatTurns plain_turns(const std::vector<ChatMessage>& messages,
                      const std::vector<std::size_t>& positions) {
  ChatTurns turns;
  std::optional<std::string> pending_user;
  std::vector<MessageImage> pending_images;
  const std::size_t first = !messages.empty() && messages.front().role == "system" ? 1 : 0;
  if (first == 1) turns.system = messages.front().content;
  for (std::size_t i = first; i < messages.size(); ++i) {
    const std::string name = message_name(positions, i);
    const ChatMessage& message = messages[i];
    if (message.role == "user") {
      if (pending_user) {
        fail(name +
                 " is a user message after a user message: user and assistant messages must "
                 "take turns.",
             "messages");
      }
      pending_user = message.content;
      pending_images.clear();
      for (const ContentPart& part : message.parts) {
        if (part.image) pending_images.push_back(*part.image);
      }
    } else {
      if (!pending_user) {
        fail(name +
                 " is an assistant message without a user message before it: user and "
                 "assistant messages must take turns, starting with the user.",
             "messages");
      }
      turns.history.push_back(
          {std::move(*pending_user), message.content, std::move(pending_images)});
      pending_user.reset();
      pending_images.clear();
    }
  }
  if (!pending_user) {
    fail("The last message must be a user message: the reply answers it.", "messages");
  }
  turns.user = std::move(*pending_user);
  turns.user_images = std::move(pending_images);
  return turns;
}

void check_tool_messages(std::vector<ChatMessage>& messages,
                         const std::vector<std::size_t>& positions) {
  // The calls of the latest assistant message that made some, by id, with
  // whether a tool message answered them yet.
  std::map<std::string, std::pair<std::string, bool>> open_calls;
  const auto unanswered = [&] {
    std::string ids;
    for (const auto& [id, call] : open_calls) {
      if (call.second) continue;
      ids += (ids.empty() ? "" : ", ") + id;
    }
    return ids;
  };
  for (std::size_t i = 0; i < messages.size(); ++i) {
    ChatMessage& message = messages[i];
    const std::string name = message_name(positions, i);
    if (message.role == "tool") {
      const auto call = open_calls.find(message.tool_call_id);
      if (call == open_calls.end()) {
        fail(name + " answers the call \"" + message.tool_call_id +
                 "\", which the assistant message before it did not make.",
             "messages");
      }
      if (call->second.second) {
        fail("The call \"" + message.tool_call_id + "\" is answered twice (" + name + ").",
             "messages");
      }
      call->second.second = true;
      if (message.name.empty()) message.name = call->second.first;
      continue;
    }
    if (const std::string waiting = unanswered(); !waiting.empty()) {
      fail(name + " comes before every tool call of the assistant message was answered: " +
               "send a tool message for each of " + waiting + " first.",
           "messages");
    }
    open_calls.clear();
    if (message.role == "assistant") {
      std::set<std::string> ids;
      for (const FunctionCall& call : message.tool_calls) {
        if (!ids.insert(call.id).second) {
          fail(name + " makes two tool calls with the id \"" + call.id + "\".", "messages");
        }
        open_calls[call.id] = {call.name, false};
      }
    }
  }
  if (!messages.empty() && messages.back().role == "assistant") {
    fail(messages.back().tool_calls.empty()
             ? "The last message must be a user or tool message: the reply answers it."
             : "The last message makes tool calls: send their results as tool messages "
               "first.",
         "messages");
  }
  if (const std::string waiting = unanswered(); !waiting.empty()) {
    fail("Some tool calls have no result yet: send a tool message for each of " + waiting + ".",
         "messages");
  }
}

ToolsRequest parse_tools_request(const Fields& fields, std::string_view body) {
  if (fields.find("functions") || fields.find("function_call")) {
    fail("functions and function_call are OpenAI's legacy fields; send tools and tool_choice.",
         fields.find("functions") ? "functions" : "function_call");
  }
  ToolsRequest parsed;
  const json* list = fields.find("tools");
  if (list) {
    if (!list->is_array()) {
      fail("tools must be an array of tools, not " + std::string(kind_of(*list)) + ".", "tools");
    }
    if (list->size() > kMaxTools) {
      fail("tools may hold at most " + std::to_string(kMaxTools) + " tools; it holds " +
               std::to_string(list->size()) + ".",
           "tools");
    }
    // The key order matters to templates and to the grammar; nlohmann::json
    // sorts keys, so the text is read again in order.
    const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(body).at("tools");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string where = "tools[" + std::to_string(i) + "]";
      const json& tool = (*list)[i];
      const json* type = tool.is_object() ? Fields(tool).find("type") : nullptr;
      if (!type || !type->is_string() || type->get<std::string>() != "function") {
        fail(where +
                 " must be an object with type \"function\"; other tool types are not "
                 "supported.",
             "tools");
      }
      const json* function = Fields(tool).find("function");
      if (!function || !function->is_object()) {
        fail(where + ".function must be an object.", "tools");
      }
      const Fields function_fields(*function);
      FunctionTool parsed_tool;
      parsed_tool.name = function_fields.string("name");
      if (!valid_function_name(parsed_tool.name)) {
        fail(where + ".function.name must be 1 to 64 letters, digits, '_' and '-'.", "tools");
      }
      if (std::ranges::any_of(parsed.functions, [&](const FunctionTool& other) {
            return other.name == parsed_tool.name;
          })) {
        fail("Two tools are named \"" + parsed_tool.name + "\".", "tools");
      }
      function_fields.string("description");  // checks its type
      if (const json* parameters = function_fields.find("parameters")) {
        if (!parameters->is_object()) {
          fail(where + ".function.parameters must be a JSON Schema object.", "tools");
        }
        parsed_tool.parameters = ordered[i]["function"]["parameters"].dump();
      } else {
        // OpenAI: omitting parameters defines a function with none.
        parsed_tool.parameters = R"({"type":"object","properties":{}})";
      }
      parsed_tool.strict = function_fields.boolean("strict");
      parsed.functions.push_back(std::move(parsed_tool));
    }
    if (!list->empty()) parsed.json = ordered.dump();
  }
  parsed.parallel = !fields.find("parallel_tool_calls") || fields.boolean("parallel_tool_calls");
  const json* choice = fields.find("tool_choice");
  if (!choice) return parsed;
  if (choice->is_string()) {
    const std::string mode = choice->get<std::string>();
    if (mode == "auto") {
      parsed.choice = ToolsRequest::Choice::Auto;
    } else if (mode == "none") {
      parsed.choice = ToolsRequest::Choice::None;
    } else if (mode == "required") {
      parsed.choice = ToolsRequest::Choice::Required;
    } else {
      fail("tool_choice must be \"auto\", \"none\", \"required\" or a named function; it is \"" +
               mode + "\".",
           "tool_choice");
    }
  } else {
    const json* function = choice->is_object() ? Fields(*choice).find("function") : nullptr;
    const json* name = function && function->is_object() ? Fields(*function).find("name") : nullptr;
    if (!name || !name->is_string()) {
      fail(
          "tool_choice must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", "
          "\"function\": {\"name\": ...}}.",
          "tool_choice");
    }
    parsed.choice = ToolsRequest::Choice::Named;
    parsed.named = name->get<std::string>();
    if (std::ranges::none_of(parsed.functions,
                             [&](const FunctionTool& tool) { return tool.name == parsed.named; })) {
      fail("tool_choice names the function \"" + parsed.named + "\", which tools does not hold.",
           "tool_choice");
    }
  }
  if (parsed.functions.empty() && parsed.choice != ToolsRequest::Choice::None &&
      parsed.choice != ToolsRequest::Choice::Auto) {
    fail("tool_choice requires a tool call, but the request offers no tools.", "tool_choice");
  }
  return parsed;
}

}  // namespace quire::server
