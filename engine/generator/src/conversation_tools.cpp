// Conversations with tools: the tools a chat offers, replies that call them,
// the results, the reply that follows the results, and restoring a stored
// chat that holds them. Only a model's own chat template knows how its model
// reads tools and results, so the built-in formats refuse them.

#include <algorithm>
#include <set>

#include "quire/engine/generator/conversation.h"

namespace quire::engine {
namespace {

std::string in_quotes(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

std::string ids_of(const std::vector<tools::ToolCall>& calls) {
  std::string out;
  for (const tools::ToolCall& call : calls) {
    if (!out.empty()) out += ", ";
    out += in_quotes(call.id);
  }
  return out;
}

const char* const kToolsNeedTemplate =
    "tools need the model's own chat template; a built-in prompt format has no way to show "
    "tools, calls or results to the model. Use the model's chat template for this chat";

// Checks the order of a stored conversation's roles; throws
// std::invalid_argument naming the first message out of place.
void check_stored_order(const std::vector<Message>& messages, bool is_template) {
  if (messages.empty() || messages.front().role != Role::System) {
    throw std::invalid_argument("a stored conversation must start with its system message");
  }
  // The calls of the nearest reply that made some, and which were answered.
  std::vector<tools::ToolCall> calls;
  std::set<std::string> answered;
  for (std::size_t i = 1; i < messages.size(); ++i) {
    const Message& message = messages[i];
    const Message& previous = messages[i - 1];
    const std::string where = "message " + std::to_string(i) + " of a stored conversation";
    if (!is_template && (message.role == Role::Tool || !message.tool_calls.empty())) {
      throw std::invalid_argument(where + " holds tool calls or results, which " +
                                  kToolsNeedTemplate);
    }
    std::vector<Role> expected;
    switch (previous.role) {
      case Role::System:
        expected = {Role::User};
        break;
      case Role::User:
        expected = {Role::Assistant};
        break;
      case Role::Assistant:
        expected = {previous.tool_calls.empty() ? Role::User : Role::Tool};
        break;
      case Role::Tool:
        expected = {Role::Tool, Role::Assistant, Role::User};
        break;
    }
    if (std::find(expected.begin(), expected.end(), message.role) == expected.end()) {
      std::string names;
      for (const Role role : expected) {
        if (!names.empty()) names += " or ";
        names += to_string(role);
      }
      throw std::invalid_argument(where + " is " + std::string(to_string(message.role)) +
                                  "; expected " + names);
    }
    if (message.role == Role::Assistant && !message.tool_calls.empty()) {
      calls = message.tool_calls;
      answered.clear();
    }
    if (message.role == Role::Tool) {
      const bool known = std::any_of(calls.begin(), calls.end(), [&](const tools::ToolCall& c) {
        return c.id == message.tool_call_id;
      });
      if (!known || !answered.insert(message.tool_call_id).second) {
        throw std::invalid_argument(where + " answers call " + in_quotes(message.tool_call_id) +
                                    (known ? " a second time" : ", which its reply did not make") +
                                    "; the reply's calls are " + ids_of(calls));
      }
    }
    if (message.role != Role::Tool && previous.role == Role::Tool &&
        answered.size() < calls.size()) {
      throw std::invalid_argument(where + " replies before every tool call of " + ids_of(calls) +
                                  " has its result");
    }
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const Message& message = messages[i];
    if (message.role == Role::Tool && message.tool_call_id.empty()) {
      throw std::invalid_argument("message " + std::to_string(i) +
                                  " of a stored conversation is a tool result without the id "
                                  "of its call");
    }
  }
}

}  // namespace

Conversation Conversation::restore(ChatFormat format, const Tokenizer& tokenizer,
                                   std::vector<Message> messages, nlohmann::ordered_json tools) {
  check_stored_order(messages, format.is_template());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    for (const std::int32_t id : messages[i].tokens) {
      // A user message's images render to the same ids again.
      if (!messages[i].images.empty() && is_image_position(id)) continue;
      if (id < 0 || id >= tokenizer.vocab_size()) {
        throw std::invalid_argument("message " + std::to_string(i) +
                                    " of a stored conversation "
                                    "holds token " +
                                    std::to_string(id) + ", outside this model's vocabulary of " +
                                    std::to_string(tokenizer.vocab_size()) +
                                    "; the chat was kept with another model");
      }
    }
  }
  if (!format.is_template()) {
    Conversation conversation(std::move(format), tokenizer, std::move(messages));
    if (!tools.is_null()) conversation.set_tools(std::move(tools));
    return conversation;
  }

  // Rendering is deterministic, so the user messages and the results come
  // out as they did; the replies keep the ids the model generated.
  Conversation conversation(std::move(format), tokenizer, messages.front().text);
  conversation.set_tools(std::move(tools));
  for (std::size_t i = 1; i < messages.size(); ++i) {
    Message& message = messages[i];
    switch (message.role) {
      case Role::User:
        conversation.begin_turn(message.text, message.images);
        break;
      case Role::Assistant:
        if (messages[i - 1].role == Role::Tool) conversation.continue_turn();
        conversation.end_turn(message.tokens, false, message.text, std::move(message.tool_calls));
        break;
      case Role::Tool:
        conversation.add_tool_result(message.tool_call_id, message.tool_name, message.text);
        break;
      case Role::System:
        break;  // check_stored_order allows none here
    }
  }
  if (conversation.messages().back().role == Role::Tool &&
      conversation.pending_tool_calls().empty()) {
    conversation.continue_turn();
  }
  return conversation;
}

void Conversation::set_tools(nlohmann::ordered_json tools) {
  if (!format_.is_template()) {
    if (tools.is_null() || (tools.is_array() && tools.empty())) return;
    throw std::logic_error(kToolsNeedTemplate);
  }
  if (!tools.is_null() && !tools.is_array()) {
    throw std::invalid_argument(
        "tools must be a JSON array of OpenAI function tools ({\"type\": \"function\", "
        "\"function\": {...}}), or null for none");
  }
  if (tools.is_array() && tools.empty()) tools = nullptr;
  if (tools == tools_) return;
  std::swap(tools_, tools);
  if (!open_) return;  // the next prompt renders them
  try {
    open_template_prompt();
  } catch (...) {
    std::swap(tools_, tools);
    throw;
  }
}

void Conversation::check_tool_calls(const std::vector<tools::ToolCall>& calls) const {
  if (calls.empty()) return;
  if (!format_.is_template()) throw std::logic_error(kToolsNeedTemplate);
  std::set<std::string> ids;
  for (const tools::ToolCall& call : calls) {
    if (call.id.empty() || call.name.empty()) {
      throw std::invalid_argument("every tool call needs an id and a name (call " +
                                  in_quotes(call.id) + " of " + in_quotes(call.name) +
                                  "); tools::new_call_id() makes ids");
    }
    if (!ids.insert(call.id).second) {
      throw std::invalid_argument("two tool calls of one reply have the id " + in_quotes(call.id));
    }
  }
}

std::optional<std::size_t> Conversation::last_calling_reply() const {
  std::size_t i = messages_.size() - 1;
  while (i > 0 && messages_[i].role == Role::Tool)
    --i;
  const Message& reply = messages_[i];
  if (reply.role != Role::Assistant || reply.tool_calls.empty()) return std::nullopt;
  return i;
}

std::vector<tools::ToolCall> Conversation::pending_tool_calls() const {
  const std::optional<std::size_t> reply = last_calling_reply();
  if (!reply) return {};
  std::vector<tools::ToolCall> pending;
  for (const tools::ToolCall& call : messages_[*reply].tool_calls) {
    const bool answered =
        std::any_of(messages_.begin() + static_cast<std::ptrdiff_t>(*reply) + 1, messages_.end(),
                    [&](const Message& message) { return message.tool_call_id == call.id; });
    if (!answered) pending.push_back(call);
  }
  return pending;
}

void Conversation::add_tool_result(std::string_view call_id, std::string_view name,
                                   std::string_view result) {
  if (open_) {
    throw std::logic_error(
        "a prompt awaits its reply; tool results follow the reply whose "
        "calls they answer");
  }
  const std::optional<std::size_t> reply = last_calling_reply();
  if (!reply) throw std::logic_error("the last reply made no tool calls for a result to answer");
  const std::vector<tools::ToolCall>& calls = messages_[*reply].tool_calls;
  const auto call = std::find_if(calls.begin(), calls.end(),
                                 [&](const tools::ToolCall& c) { return c.id == call_id; });
  if (call == calls.end()) {
    throw std::invalid_argument("the last reply made no tool call with the id " +
                                in_quotes(call_id) + "; its calls are " + ids_of(calls));
  }
  const std::vector<tools::ToolCall> pending = pending_tool_calls();
  if (std::none_of(pending.begin(), pending.end(),
                   [&](const tools::ToolCall& c) { return c.id == call_id; })) {
    throw std::invalid_argument("tool call " + in_quotes(call_id) + " already has its result");
  }
  Message message{Role::Tool, std::string(result)};
  message.tool_call_id = std::string(call_id);
  message.tool_name = name.empty() ? call->name : std::string(name);
  messages_.push_back(std::move(message));
}

std::vector<std::int32_t> Conversation::continue_turn() {
  if (open_) throw std::logic_error("a prompt already awaits its reply; end_turn() takes it first");
  if (messages_.back().role != Role::Tool) {
    throw std::logic_error(
        "continue_turn() follows tool results; add_tool_result() for each "
        "call of the last reply first");
  }
  if (const std::vector<tools::ToolCall> pending = pending_tool_calls(); !pending.empty()) {
    throw std::logic_error("tool call " + in_quotes(pending.front().id) + " (" +
                           pending.front().name +
                           ") of the last reply has no result yet; add_tool_result() for it "
                           "first (a refused or failed call gets one too)");
  }
  open_template_prompt();
  open_ = true;
  return ids_;
}

}  // namespace quire::engine
