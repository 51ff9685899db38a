#pragma once

// Tools and tool loops in OpenAI's message shape, for the template tests
// (kept out of the Qt Test sources: moc cannot read these raw strings).

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace quire::test {

using Ordered = nlohmann::ordered_json;

// Two functions, as a client lists them in "tools".
Ordered tools_json();

// Conversations with calls and results, by name.
std::vector<std::pair<std::string, Ordered>> tool_conversations();

}  // namespace quire::test
