#include "detection_samples.h"

namespace quire::test {
namespace {

// Shortened chat templates, each with the markers its family's template uses.
const char* const kLlama3Template =
    R"({"chat_template": "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{{ content }}{% endfor %}", "tokenizer_class": "PreTrainedTokenizerFast"})";
const char* const kChatmlTemplate =
    R"({"chat_template": "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}", "eos_token": "<|im_end|>"})";
const char* const kGemmaTemplate =
    R"({"chat_template": "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}"})";
const char* const kLlama2Template =
    R"({"chat_template": "{% for message in loop_messages %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% endif %}{% endfor %}"})";
const char* const kMistralTemplate =
    R"({"chat_template": "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% else %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}"})";

}  // namespace

std::vector<DetectionSample> detection_samples() {
  using engine::PromptFormatId;
  using Expected = std::optional<PromptFormatId>;
  const QString config = QStringLiteral("tokenizer_config.json");
  const QString model_config = QStringLiteral("config.json");
  return {
      {"llama3 template", {{config, kLlama3Template}}, PromptFormatId::Llama3},
      {"chatml template", {{config, kChatmlTemplate}}, PromptFormatId::ChatML},
      {"gemma template", {{config, kGemmaTemplate}}, PromptFormatId::Gemma},
      {"llama2 template, which also spells [INST]",
       {{config, kLlama2Template}},
       PromptFormatId::Llama2},
      {"mistral template", {{config, kMistralTemplate}}, PromptFormatId::Mistral},
      {"a list of templates: the default one",
       {{config, R"({"chat_template": [
            {"name": "tool_use", "template": "<|start_header_id|>"},
            {"name": "default", "template": "<|im_start|>{{ m }}<|im_end|>"}]})"}},
       PromptFormatId::ChatML},
      {"a list without a default: the first",
       {{config, R"({"chat_template": [{"name": "rag", "template": "<start_of_turn>"}]})"}},
       PromptFormatId::Gemma},
      {"chat_template.jinja",
       {{config, R"({"tokenizer_class": "LlamaTokenizer"})"},
        {QStringLiteral("chat_template.jinja"), "{{ '<|im_start|>' + role }}"}},
       PromptFormatId::ChatML},
      {"declared tokens without a template",
       {{config, R"({"added_tokens_decoder": {"32000": {"content": "<|im_start|>"},
            "32001": {"content": "<|im_end|>"}}})"}},
       PromptFormatId::ChatML},
      {"additional special tokens",
       {{config, R"({"additional_special_tokens": ["<start_of_turn>", "<end_of_turn>"]})"}},
       PromptFormatId::Gemma},
      {"tokenizer class Gemma",
       {{config, R"({"tokenizer_class": "GemmaTokenizer"})"}},
       PromptFormatId::Gemma},
      {"tokenizer class Qwen2",
       {{config, R"({"tokenizer_class": "Qwen2Tokenizer"})"}},
       PromptFormatId::ChatML},
      {"model type qwen2", {{model_config, R"({"model_type": "qwen2"})"}}, PromptFormatId::ChatML},
      {"model type mistral",
       {{config, R"({"tokenizer_class": "LlamaTokenizer"})"},
        {model_config, R"({"model_type": "mistral"})"}},
       PromptFormatId::Mistral},
      {"model type llama says nothing",
       {{config, R"({"tokenizer_class": "LlamaTokenizer", "chat_template": null})"},
        {model_config, R"({"model_type": "llama"})"}},
       Expected()},
      {"a template without known markers",
       {{config, R"({"chat_template": "{% for m in messages %}### {{ m.role }}{% endfor %}"})"}},
       Expected()},
      {"no files", {}, Expected()},
  };
}

}  // namespace quire::test
