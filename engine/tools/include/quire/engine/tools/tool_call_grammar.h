#pragma once

// The grammar a reply must follow when a request requires a tool call
// (tool_choice "required" or a named function): one call, in the markers of
// the chat template's own format, of one of the request's tools, with its
// arguments constrained by that function's parameters schema. Sampling under
// it gives a call the format's parser reads back, even from a model that
// would not call a tool on its own.

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/tools/tool_call.h"

namespace quire::engine::grammar {
class Grammar;
struct GrammarTrigger;
}

namespace quire::engine::tools {

// A request the grammar cannot be made for: a format without one yet, a
// tools list that is not OpenAI's shape, a named tool not in it, or a
// parameters schema the grammar compiler refuses (its keyword named).
class ToolGrammarError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The JSON schema of one call object ({"name": ..., key: arguments}) of any
// of `tools` (OpenAI's [{"type": "function", "function": {"name",
// "parameters"}}]) or, when `only` is not empty, of that tool alone.
// `arguments_key` is "arguments", or Llama 3's "parameters".
std::string call_object_schema(const nlohmann::json& tools, std::string_view only,
                               std::string_view arguments_key);

// The grammar of a reply that is one such call in `format`'s markers:
//   Hermes:  <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>
//   Llama 3: {"name": ..., "parameters": {...}}
//   Mistral: [TOOL_CALLS][{"name": ..., "arguments": {...}}]
//   Harmony: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}
//   DeepSeek V3: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//                ```json {...} ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
// Markers that are special tokens are spelled in ordinary tokens (a grammar
// allows only tokens with bytes); the parser reads them the same.
std::shared_ptr<const grammar::Grammar> required_call_grammar(ToolCallFormat format,
                                                              const nlohmann::json& tools,
                                                              std::string_view only = {});

// Where a call begins in each format (<tool_call>, [TOOL_CALLS], Harmony's
// "<|channel|>commentary to=functions.", DeepSeek's calls marker, or "{" at
// the start of a Llama 3 reply): with required_call_grammar's grammar made
// lazy by these triggers, a reply is free until the model begins a call,
// which is then held to its tool's schema. Empty for None.
std::vector<grammar::GrammarTrigger> call_triggers(ToolCallFormat format);

}  // namespace quire::engine::tools
