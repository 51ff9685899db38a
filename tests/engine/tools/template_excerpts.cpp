#include "template_excerpts.h"

namespace quire::test {

const std::vector<TemplateExcerpt>& template_excerpts() {
  static const std::vector<TemplateExcerpt> excerpts{
      {"qwen", R"({{- '<tool_call>\n{"name": "' }}{{- tool_call.name }})", "hermes"},
      {"llama 3.1",
       R"({{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}{{- '{"name": "' + )"
       R"(tool_call.name + '", ' }}{{- '"parameters": ' }}{{- "<|python_tag|>" }})",
       "llama3"},
      {"llama 3.2",
       R"({{- '<|start_header_id|>ipython<|end_header_id|>\n\n' }}{{- '"parameters": ' }})",
       "llama3"},
      {"llama 3 without tools",
       R"({% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>' %})",
       "none"},
      {"mistral", R"({{- "[TOOL_CALLS] [" }}{%- for tool_call in tool_calls %})", "mistral"},
      {"gpt-oss",
       R"({{- "<|start|>assistant to=" + "functions." + tool_call.name + "<|channel|>" }})"
       R"({{- "<|message|>" + tool_call.arguments|tojson + "<|call|>" }})",
       "harmony"},
      {"deepseek v3",
       R"({{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type']}})",
       "deepseek-v3"},
      {"chatml", R"({{'<|im_start|>' + message['role'] + '\n'}})", "none"},
  };
  return excerpts;
}

}  // namespace quire::test
