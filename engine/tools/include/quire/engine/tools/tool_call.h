#pragma once

// Tool calls as OpenAI's API names them, and the families of formats in which
// chat templates teach models to write them. The family is recognised from
// the template's own text, never from a model's name: fine-tunes keep their
// base model's template, and renamed models keep their format.

#include <functional>
#include <string>
#include <string_view>

namespace quire::engine::tools {

// One call a model asked for. `arguments` is JSON text (an object), exactly
// as the model wrote it, as OpenAI's "function.arguments" carries it.
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;

  friend bool operator==(const ToolCall&, const ToolCall&) = default;
};

enum class ToolCallFormat {
  None,     // the template teaches no tool calls
  Hermes,   // Qwen2.5, Qwen3, Hermes: <tool_call>{"name", "arguments"}</tool_call>
  Llama3,   // Llama 3.1-3.3: a reply that is {"name", "parameters"}, or <|python_tag|>
  Mistral,  // [TOOL_CALLS][{"name", "arguments"}] or [TOOL_CALLS]name[ARGS]{...}
  Harmony,  // gpt-oss: <|channel|>commentary to=functions.NAME ...<|message|>{...}<|call|>
  DeepSeekV3,  // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME ...
};

// "none", "hermes", "llama3", "mistral", "harmony", "deepseek-v3".
std::string_view to_string(ToolCallFormat format);

// The family a chat template's source writes tool calls in, from the markers
// it spells out; None for a template that knows no tools.
ToolCallFormat detect_tool_call_format(std::string_view template_source);

// How an assistant message's tool_calls[].function.arguments must reach the
// template: as the JSON text the model wrote (DeepSeek V3 concatenates it into
// the prompt; Qwen writes text as it is), or as a parsed object (Llama 3.1,
// Mistral and gpt-oss apply `tojson`, which would quote text a second time).
enum class ArgumentsForm { Text, Object };
ArgumentsForm template_arguments_form(ToolCallFormat format);

// Whether an assistant message's null content (OpenAI sends null beside
// tool_calls) must reach the template as None: DeepSeek V3's template writes
// the calls only then, while Qwen's fails on None ('</think>' in content) and
// the others read an empty string the same way.
bool template_keeps_null_content(ToolCallFormat format);

// Makes the id of a new call.
using CallIdSource = std::function<std::string()>;

// Fresh ids: "call_" and 24 random letters and digits; Mistral's templates
// refuse any id but 9 letters and digits, so its calls get those.
std::string new_call_id(ToolCallFormat format);

// Ids from a counter ("call_1", "call_2", ...; Mistral: "call00001", ...), for tests.
CallIdSource counting_call_ids(ToolCallFormat format);

}  // namespace quire::engine::tools
