#include "quire/engine/tools/tool_call_grammar.h"

#include <nlohmann/json.hpp>

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

}  // namespace

std::string call_object_schema(const nlohmann::json& tools, std::string_view only,
                               std::string_view arguments_key) {
  if (!tools.is_array() || tools.empty())
    throw ToolGrammarError("a tool call is required, but the request lists no tools");
  OrderedJson choices = OrderedJson::array();
  for (const nlohmann::json& tool : tools) {
    const auto function = tool.find("function");
    if (!tool.is_object() || function == tool.end() || !function->is_object() ||
        !function->contains("name") || !(*function)["name"].is_string())
      throw ToolGrammarError(
          "a tool is not {\"type\": \"function\", \"function\": {\"name\": ...}}");
    const std::string name = (*function)["name"].get<std::string>();
    if (!only.empty() && name != only) continue;
    OrderedJson call = {
        {"type", "object"},
        {"properties",
         {{"name", {{"const", name}}}, {std::string(arguments_key), parameters_of(*function)}}},
        {"required", {"name", std::string(arguments_key)}}};
    choices.push_back(std::move(call));
  }
  if (choices.empty())
    throw ToolGrammarError("tool_choice names the function \"" + std::string(only) +
                           "\", which is not among the request's tools");
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
    case ToolCallFormat::None:
    case ToolCallFormat::Harmony:
    case ToolCallFormat::DeepSeekV3:
      throw ToolGrammarError(std::string("a required tool call cannot be enforced yet for the ") +
                             std::string(to_string(format)) + " tool-call format");
  }
  try {
    return grammar::compile_framed_json_schema_text(call_object_schema(tools, only, key), before,
                                                    after);
  } catch (const grammar::GrammarError& error) {
    throw ToolGrammarError(std::string("a tool's parameters cannot be enforced: ") + error.what());
  }
}

}  // namespace quire::engine::tools
