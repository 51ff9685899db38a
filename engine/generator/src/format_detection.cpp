#include <array>
#include <nlohmann/json.hpp>

#include "model_files.h"
#include "quire/engine/generator/prompt_format.h"
#include "quire/engine/model_error.h"

namespace quire::engine {
namespace {

using Json = nlohmann::json;

struct Hint {
  std::string_view marker;
  PromptFormatId format;
};

// Most specific first: Llama 2's template also spells [INST], and templates
// of other families may mention <s>.
constexpr std::array<Hint, 5> kTemplateMarkers{{
    {"<|start_header_id|>", PromptFormatId::Llama3},
    {"<|im_start|>", PromptFormatId::ChatML},
    {"<start_of_turn>", PromptFormatId::Gemma},
    {"<<SYS>>", PromptFormatId::Llama2},
    {"[INST]", PromptFormatId::Mistral},
}};

std::string string_at(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "chat_template" is a string, or a list of {"name", "template"} of which
// "default" is the one for chatting.
std::string chat_template_of(const Json& config) {
  const auto it = config.find("chat_template");
  if (it == config.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) return {};
  std::string first;
  for (const Json& entry : *it) {
    if (!entry.is_object()) continue;
    const std::string text = string_at(entry, "template");
    if (string_at(entry, "name") == "default") return text;
    if (first.empty()) first = text;
  }
  return first;
}

// The texts of the special tokens tokenizer_config.json declares.
std::string declared_tokens(const Json& config) {
  std::string tokens;
  if (const auto added = config.find("added_tokens_decoder");
      added != config.end() && added->is_object()) {
    for (const Json& entry : *added) {
      if (entry.is_object()) tokens += string_at(entry, "content") + '\n';
    }
  }
  if (const auto extra = config.find("additional_special_tokens");
      extra != config.end() && extra->is_array()) {
    for (const Json& entry : *extra) {
      if (entry.is_string()) tokens += entry.get<std::string>() + '\n';
    }
  }
  return tokens;
}

bool starts_with_any(std::string_view text, std::initializer_list<std::string_view> prefixes) {
  for (const std::string_view prefix : prefixes) {
    if (text.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

std::optional<PromptFormatId> detect_from_chat_template(std::string_view chat_template) {
  for (const Hint& hint : kTemplateMarkers) {
    if (chat_template.find(hint.marker) != std::string_view::npos) return hint.format;
  }
  return std::nullopt;
}

std::optional<PromptFormatId> detect_prompt_format(const std::filesystem::path& model_dir) {
  const auto tokenizer_config =
      detail::read_optional_json_object(model_dir / "tokenizer_config.json");
  if (tokenizer_config) {
    if (auto format = detect_from_chat_template(chat_template_of(*tokenizer_config))) return format;
  }
  // Recent transformers versions keep the template in a file of its own.
  if (const auto text = detail::read_optional_text(model_dir / "chat_template.jinja")) {
    if (auto format = detect_from_chat_template(*text)) return format;
  }
  if (tokenizer_config) {
    // Without a template, the turn markers among the declared tokens; [INST]
    // and <<SYS>> are not tokens in Llama 2's vocabulary, so only the
    // unambiguous families are taken from them.
    const std::string tokens = declared_tokens(*tokenizer_config);
    for (const Hint& hint : kTemplateMarkers) {
      if (hint.format == PromptFormatId::Llama2) continue;
      if (tokens.find(hint.marker) != std::string::npos) return hint.format;
    }
    const std::string tokenizer_class = string_at(*tokenizer_config, "tokenizer_class");
    if (tokenizer_class.starts_with("Gemma")) return PromptFormatId::Gemma;
    if (tokenizer_class.starts_with("Qwen2")) return PromptFormatId::ChatML;
  }
  if (const auto config = detail::read_optional_json_object(model_dir / "config.json")) {
    const std::string type = string_at(*config, "model_type");
    if (type.starts_with("gemma")) return PromptFormatId::Gemma;
    if (starts_with_any(type, {"qwen2", "qwen3"})) return PromptFormatId::ChatML;
    if (starts_with_any(type, {"mistral", "mixtral"})) return PromptFormatId::Mistral;
  }
  // "llama" alone says nothing: base models, Llama 2 chat and many fine-tunes
  // share it.
  return std::nullopt;
}

}  // namespace quire::engine
