#include "quire/engine/tools/tool_call_grammar.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "quire/engine/grammar/grammar.h"

namespace quire::engine::tools {
namespace {

using OrderedJson = nlohmann::ordered_json;

// A function's parameters as the request gave them, keys in their order
// (the order the arguments are then written in).
OrderedJson parameters_of(const nlohmann::json& function) {
  const auto found = function.find("parameters");
  if (found == function.end() || found->is_null()) return OrderedJson{{"type", "object"}};
  if (!found->is_object())
    throw ToolGrammarError("the parameters of tool \"" + function.value("name", std::string()) +
                           "\" are not a JSON schema object");
  return OrderedJson::parse(found->dump());
}

// The request's functions, each name with its parameters' schema text; only
// `only` when it is not empty.
std::vector<std::pair<std::string, OrderedJson>> functions_of(const nlohmann::json& tools,
                                                              std::string_view only) {
  if (!tools.is_array() || tools.empty())
    throw ToolGrammarError("a tool call is required, but the request lists no tools");
  std::vector<std::pair<std::string, OrderedJson>> functions;
  for (const nlohmann::json& tool : tools) {
    const nlohmann::json* function = nullptr;
    if (tool.is_object()) {
      if (const auto found = tool.find("function"); found != tool.end() && found->is_object())
        function = &*found;
    }
    const nlohmann::json* name = nullptr;
    if (function != nullptr) {
      if (const auto found = function->find("name"); found != function->end() && found->is_string())
        name = &*found;
    }
    if (name == nullptr)
      throw ToolGrammarError(
          "a tool is not {\"type\": \"function\", \"function\": {\"name\": ...}}");
    const std::string& function_name = name->get_ref<const std::string&>();
    if (!only.empty() && function_name != only) continue;
    functions.emplace_back(function_name, parameters_of(*function));
  }
  if (functions.empty())
    throw ToolGrammarError("tool_choice names the function \"" + std::string(only) +
                           "\", which is not among the request's tools");
  return functions;
}

// Formats that write the name outside the arguments' JSON: one framed
// alternative per function.
std::shared_ptr<const grammar::Grammar> named_frames_grammar(ToolCallFormat format,
                                                             const nlohmann::json& tools,
                                                             std::string_view only) {
  std::vector<grammar::FramedSchema> alternatives;
  for (auto& [name, parameters] : functions_of(tools, only)) {
    grammar::FramedSchema alternative;
    alternative.schema_text = parameters.dump();
    if (format == ToolCallFormat::Harmony) {
      // A message to the function on the commentary channel, as gpt-oss
      // writes one; <|call|> (an end token) follows once the JSON is whole.
      alternative.before =
          "<|channel|>commentary to=functions." + name + " <|constrain|>json<|message|>";
    } else {
      alternative.before = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>" +
                           name + "\n```json\n";
      alternative.after = "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    }
    alternatives.push_back(std::move(alternative));
  }
  return grammar::compile_framed_alternatives(alternatives);
}

}  // namespace

std::string call_object_schema(const nlohmann::json& tools, std::string_view only,
                               std::string_view arguments_key) {
  OrderedJson choices = OrderedJson::array();
  for (auto& [name, parameters] : functions_of(tools, only)) {
    choices.push_back(
        {{"type", "object"},
         {"properties", {{"name", {{"const", name}}}, {std::string(arguments_key), parameters}}},
         {"required", {"name", std::string(arguments_key)}}});
  }
  if (choices.size() == 1) return choices.front().dump();
  return OrderedJson{{"anyOf", std::move(choices)}}.dump();
}

std::shared_ptr<const grammar::Grammar> required_call_grammar(ToolCallFormat format,
                                                              const nlohmann::json& tools,
                                                              std::string_view only) {
  std::string before;
  std::string after;
  std::string key = "arguments";
  switch (format) {
    case ToolCallFormat::Hermes:
      before = "<tool_call>\n";
      after = "\n</tool_call>";
      break;
    case ToolCallFormat::Llama3:
      key = "parameters";
      break;
    case ToolCallFormat::Mistral:
      before = "[TOOL_CALLS][";
      after = "]";
      break;
    case ToolCallFormat::Harmony:
    case ToolCallFormat::DeepSeekV3:
      try {
        return named_frames_grammar(format, tools, only);
      } catch (const grammar::GrammarError& error) {
        throw ToolGrammarError(std::string("a tool's parameters cannot be enforced: ") +
                               error.what());
      }
    case ToolCallFormat::None:
      throw ToolGrammarError("the model's chat template writes no tool calls");
  }
  try {
    return grammar::compile_framed_json_schema_text(call_object_schema(tools, only, key), before,
                                                    after);
  } catch (const grammar::GrammarError& error) {
    throw ToolGrammarError(std::string("a tool's parameters cannot be enforced: ") + error.what());
  }
}

std::vector<grammar::GrammarTrigger> call_triggers(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::Hermes:
      return {{"<tool_call>"}};
    case ToolCallFormat::Llama3:
      return {{"{", true}};
    case ToolCallFormat::Mistral:
      return {{"[TOOL_CALLS]"}};
    case ToolCallFormat::Harmony:
      return {{"<|channel|>commentary to=functions."}};
    case ToolCallFormat::DeepSeekV3:
      return {{"<｜tool▁calls▁begin｜>"}};
    case ToolCallFormat::None:
      break;
  }
  return {};
}

}  // namespace quire::engine::tools
