#include <string_view>

#include "quire/engine/tools/tool_call.h"

namespace quire::engine::tools {

std::string_view to_string(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::None:
      return "none";
    case ToolCallFormat::Hermes:
      return "hermes";
    case ToolCallFormat::Llama3:
      return "llama3";
    case ToolCallFormat::Mistral:
      return "mistral";
    case ToolCallFormat::Harmony:
      return "harmony";
    case ToolCallFormat::DeepSeekV3:
      return "deepseek-v3";
  }
  return "none";
}

ToolCallFormat detect_tool_call_format(std::string_view source) {
  const auto has = [source](std::string_view marker) {
    return source.find(marker) != std::string_view::npos;
  };
  // The most specific markers first: Harmony's templates also mention JSON
  // and tools, DeepSeek's also use "function".
  if (has("<|channel|>") && (has("to=functions.") || has("<|call|>")))
    return ToolCallFormat::Harmony;
  if (has("tool▁call▁begin") || has("tool▁calls▁begin")) return ToolCallFormat::DeepSeekV3;
  if (has("[TOOL_CALLS]")) return ToolCallFormat::Mistral;
  if (has("<tool_call>")) return ToolCallFormat::Hermes;
  // Llama 3.1-3.3 write calls as {"name": ..., "parameters": ...} after the
  // assistant header, and built-in tools after <|python_tag|>.
  if (has("<|start_header_id|>") &&
      (has("<|python_tag|>") || has("\"parameters\"") || has("ipython")))
    return ToolCallFormat::Llama3;
  return ToolCallFormat::None;
}

ArgumentsForm template_arguments_form(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::Llama3:
    case ToolCallFormat::Mistral:
    case ToolCallFormat::Harmony:
      return ArgumentsForm::Object;
    case ToolCallFormat::None:
    case ToolCallFormat::Hermes:
    case ToolCallFormat::DeepSeekV3:
      return ArgumentsForm::Text;
  }
  return ArgumentsForm::Text;
}

bool template_keeps_null_content(ToolCallFormat format) {
  return format == ToolCallFormat::DeepSeekV3;
}

}  // namespace quire::engine::tools
