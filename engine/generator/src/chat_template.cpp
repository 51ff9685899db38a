#include "quire/engine/generator/chat_template.h"

#include <blake2.h>

#include <array>
#include <ctime>
#include <nlohmann/json.hpp>

#include "model_files.h"
#include "quire/engine/template/json_value.h"

namespace quire::engine {
namespace {

using Json = nlohmann::json;

// "chat_template" as a string, or the "default" entry of a list of named
// templates (the first entry when none is named so).
std::optional<ChatTemplateSource> template_in(const Json& root, const std::filesystem::path& path) {
  const auto it = root.find("chat_template");
  if (it == root.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return ChatTemplateSource{it->get<std::string>(), path, {}};
  if (!it->is_array()) {
    throw ModelError(path.string() +
                     ": \"chat_template\" must be a string or a list of {\"name\", \"template\"}");
  }
  std::optional<ChatTemplateSource> first;
  for (const Json& entry : *it) {
    const auto name = entry.is_object() ? entry.find("name") : entry.end();
    const auto text = entry.is_object() ? entry.find("template") : entry.end();
    if (!entry.is_object() || name == entry.end() || !name->is_string() || text == entry.end() ||
        !text->is_string()) {
      throw ModelError(path.string() +
                       ": every entry of \"chat_template\" needs a \"name\" and a \"template\" "
                       "string");
    }
    ChatTemplateSource source{text->get<std::string>(), path, name->get<std::string>()};
    if (source.name == "default") return source;
    if (!first) first = std::move(source);
  }
  return first;
}

std::string hex_digest(std::string_view text) {
  std::array<std::uint8_t, 8> digest{};
  blake2b(digest.data(), text.data(), nullptr, digest.size(), text.size(), 0);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

// "25 Nov 2026", as Llama 3.1's template writes its "Today Date" (it falls
// back to a fixed date of its own when the caller gives none).
std::string date_string(std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  localtime_r(&seconds, &local);
  std::array<char, 32> text{};
  const std::size_t size = std::strftime(text.data(), text.size(), "%d %b %Y", &local);
  return std::string(text.data(), size);
}

// The messages as an OpenAI client sends them; ordered, so that a template
// walking a message's items sees role, then content, as Python does.
nlohmann::ordered_json template_message_list(std::span<const TemplateMessage> messages,
                                             const TemplateTools& conventions) {
  const tools::ArgumentsForm form = conventions.arguments;
  using Ordered = nlohmann::ordered_json;
  Ordered list = Ordered::array();
  for (const TemplateMessage& message : messages) {
    Ordered item = {{"role", message.role}};
    item["content"] = message.null_content && conventions.keep_null_content
                          ? Ordered(nullptr)
                          : Ordered(message.content);
    if (message.images > 0) {
      Ordered parts = Ordered::array();
      for (int i = 0; i < message.images; ++i)
        parts.push_back({{"type", "image"}});
      parts.push_back({{"type", "text"}, {"text", message.content}});
      item["content"] = std::move(parts);
    }
    if (!message.tool_calls.empty()) {
      Ordered calls = Ordered::array();
      for (const tools::ToolCall& call : message.tool_calls) {
        Ordered arguments = call.arguments;
        if (form == tools::ArgumentsForm::Object) {
          // Text that is not JSON stays text: the template shows what was said.
          Ordered parsed = Ordered::parse(call.arguments, nullptr, false);
          if (!parsed.is_discarded()) arguments = std::move(parsed);
        }
        calls.push_back({{"id", call.id},
                         {"type", "function"},
                         {"function", {{"name", call.name}, {"arguments", std::move(arguments)}}}});
      }
      item["tool_calls"] = std::move(calls);
    }
    if (!message.tool_call_id.empty()) item["tool_call_id"] = message.tool_call_id;
    if (!message.name.empty()) item["name"] = message.name;
    list.push_back(std::move(item));
  }
  return list;
}

ChatTemplateError template_error(const ChatTemplateSource& source, const jinja::TemplateError& e,
                                 std::string_view what) {
  std::string where = source.file.filename().string();
  if (!source.name.empty()) where += " (template \"" + source.name + "\")";
  if (e.raised()) {
    return ChatTemplateError(
        "the chat template in " + where + " refused the conversation: " + e.what(), e.line(),
        e.construct());
  }
  return ChatTemplateError("the chat template in " + where + " " + std::string(what) + ": line " +
                               std::to_string(e.line()) + ", " + e.construct() + ": " + e.problem(),
                           e.line(), e.construct());
}

}  // namespace

std::optional<ChatTemplateSource> find_chat_template(const std::filesystem::path& model_dir) {
  const std::filesystem::path jinja_file = model_dir / "chat_template.jinja";
  if (std::optional<std::string> text = detail::read_optional_text(jinja_file)) {
    return ChatTemplateSource{std::move(*text), jinja_file, {}};
  }
  const std::filesystem::path config_file = model_dir / "tokenizer_config.json";
  if (const std::optional<Json> config = detail::read_optional_json_object(config_file)) {
    if (auto source = template_in(*config, config_file)) return source;
  }
  const std::filesystem::path json_file = model_dir / "chat_template.json";
  if (const std::optional<Json> root = detail::read_optional_json_object(json_file)) {
    if (auto source = template_in(*root, json_file)) return source;
  }
  return std::nullopt;
}

std::map<std::string, std::string> read_special_token_spellings(
    const std::filesystem::path& model_dir) {
  std::map<std::string, std::string> spellings;
  const std::optional<Json> config =
      detail::read_optional_json_object(model_dir / "tokenizer_config.json");
  if (!config) return spellings;
  for (const auto& [key, value] : config->items()) {
    if (!key.ends_with("_token")) continue;
    if (value.is_string()) {
      spellings[key] = value.get<std::string>();
    } else if (value.is_object()) {
      // transformers' AddedToken as saved: {"content": "<s>", "lstrip": false, ...}
      const auto content = value.find("content");
      if (content != value.end() && content->is_string())
        spellings[key] = content->get<std::string>();
    }
  }
  return spellings;
}

ChatTemplate::ChatTemplate(ChatTemplateSource source,
                           std::map<std::string, std::string> special_tokens)
    : source_(std::move(source)), special_tokens_(std::move(special_tokens)) {
  try {
    parsed_ = std::make_shared<const jinja::Template>(jinja::Template::parse(source_.text));
  } catch (const jinja::TemplateError& error) {
    throw template_error(source_, error, "cannot be read");
  }
  std::string key = source_.text;
  for (const auto& [name, spelling] : special_tokens_)
    key += '\0' + name + '\0' + spelling;
  digest_ = hex_digest(key);
}

std::optional<ChatTemplate> ChatTemplate::load(const std::filesystem::path& model_dir) {
  std::optional<ChatTemplateSource> source = find_chat_template(model_dir);
  if (!source) return std::nullopt;
  return ChatTemplate(std::move(*source), read_special_token_spellings(model_dir));
}

std::string ChatTemplate::origin() const {
  std::string origin = source_.file.filename().string();
  if (!source_.name.empty()) origin += " (\"" + source_.name + "\")";
  return origin;
}

jinja::Rendered ChatTemplate::render(std::span<const TemplateMessage> messages,
                                     bool add_generation_prompt) const {
  return render(messages, add_generation_prompt, TemplateTools{});
}

jinja::Rendered ChatTemplate::render(std::span<const TemplateMessage> messages,
                                     bool add_generation_prompt, const TemplateTools& tools) const {
  std::map<std::string, jinja::Value> globals;
  // Everything in the messages and the tools is the user's (or the model's)
  // text: literal, never a source of control tokens.
  globals["messages"] = jinja::value_from_json(template_message_list(messages, tools), true);
  if (!tools.tools.is_null()) globals["tools"] = jinja::value_from_json(tools.tools, true);
  globals["add_generation_prompt"] = jinja::value_from_json(Json(add_generation_prompt), false);
  for (const auto& [name, spelling] : special_tokens_)
    globals[name] = jinja::value_from_json(Json(spelling), false);

  jinja::RenderOptions options;
  if (now_) options.now = *now_;
  globals["date_string"] = jinja::value_from_json(Json(date_string(options.now)), false);
  try {
    return parsed_->render(globals, options);
  } catch (const jinja::TemplateError& error) {
    throw template_error(source_, error, "failed");
  }
}

}  // namespace quire::engine
