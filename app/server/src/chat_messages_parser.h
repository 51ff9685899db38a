#pragma once

// The messages, tools and tool_choice of /v1/chat/completions. Every
// function throws ApiException 400 naming the field and what is wrong.

#include <string_view>
#include <vector>

#include "quire/server/chat_messages.h"
#include "quire/server/openai_request.h"
#include "request_fields.h"

namespace quire::server {

// messages[]: roles system, developer, user, assistant and tool; text
// content (a string or text parts); an assistant's tool_calls; a tool
// message's tool_call_id. System and developer messages come only before
// the conversation begins and are joined (by blank lines) into one.
// `positions` receives each message's index in the request's list, for
// error messages.
std::vector<ChatMessage> parse_chat_messages(const request::Fields& fields,
                                             std::vector<std::size_t>& positions);

// A conversation without tools: user and assistant in turn, ending with the
// user message the reply answers.
ChatTurns plain_turns(const std::vector<ChatMessage>& messages,
                      const std::vector<std::size_t>& positions);

// A conversation with tools: each tool message answers a call of the
// assistant message before it, every call is answered before the
// conversation goes on, and it ends with a user or tool message. Tool
// messages without a name take their call's.
void check_tool_messages(std::vector<ChatMessage>& messages,
                         const std::vector<std::size_t>& positions);

// tools (functions only), tool_choice and parallel_tool_calls. `body` is the
// request's text, read again for the tools' key order (as response_format's
// schema is). The legacy functions and function_call are refused, naming
// their replacements.
ToolsRequest parse_tools_request(const request::Fields& fields, std::string_view body);

}  // namespace quire::server
