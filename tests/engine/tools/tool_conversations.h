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

// A template written here in the style of Llama 3.1's tool use (its real one
// is not among the test files): tools as tojson(indent=4) in the first user
// turn, calls as {"name", "parameters"} with the arguments through tojson,
// results in the ipython role. It checks the object form of arguments.
const char* llama_style_template();

}  // namespace quire::test
