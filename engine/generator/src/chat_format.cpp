#include "quire/engine/generator/chat_format.h"

#include <algorithm>
#include <array>
#include <vector>

namespace quire::engine {
namespace {

// A plain exchange every chat template must render: a template that fails on
// it cannot chat at all.
const std::vector<TemplateMessage>& probe_conversation() {
  static const std::vector<TemplateMessage> messages{
      {"user", "Hello."}, {"assistant", "Hi there."}, {"user", "How are you?"}};
  return messages;
}

// The same with a system message first.
const std::vector<TemplateMessage>& probe_conversation_with_system() {
  static const std::vector<TemplateMessage> messages{{"system", "Be brief."},
                                                     {"user", "Hello."},
                                                     {"assistant", "Hi there."},
                                                     {"user", "How are you?"}};
  return messages;
}

std::string describe_fallback(PromptFormatId fallback) {
  return "the built-in " + std::string(PromptFormat::get(fallback).title()) + " format";
}

}  // namespace

ChatFormat::ChatFormat(PromptFormatId builtin) : builtin_(builtin) {}

ChatFormat::ChatFormat(std::shared_ptr<const ChatTemplate> chat_template, bool system_in_first_user)
    : chat_template_(std::move(chat_template)), system_in_first_user_(system_in_first_user) {}

std::string ChatFormat::name() const {
  return is_template() ? "template" : std::string(to_string(builtin_));
}

std::string ChatFormat::title() const {
  if (!is_template()) return std::string(PromptFormat::get(builtin_).title());
  return "the model's chat template (" + chat_template_->origin() + ")";
}

std::string ChatFormat::key() const {
  if (!is_template()) return name();
  return "template:" + chat_template_->digest() + (system_in_first_user_ ? "+s" : "");
}

FormatChoice check_chat_template(std::shared_ptr<const ChatTemplate> chat_template,
                                 PromptFormatId fallback) {
  try {
    chat_template->render(probe_conversation(), true);
  } catch (const ChatTemplateError& error) {
    return FormatChoice{ChatFormat(fallback), std::string(error.what()) + "; Quire uses " +
                                                  describe_fallback(fallback) + " instead"};
  }
  bool system_refused = false;
  try {
    chat_template->render(probe_conversation_with_system(), true);
  } catch (const ChatTemplateError&) {
    system_refused = true;
  }
  return FormatChoice{ChatFormat(std::move(chat_template), system_refused), {}};
}

FormatChoice choose_chat_format(const std::filesystem::path& model_dir,
                                std::string_view requested) {
  const bool automatic = requested.empty() || requested == "auto";
  if (!automatic && requested != "template") {
    const std::optional<PromptFormatId> builtin = parse_prompt_format(requested);
    if (!builtin) {
      throw ModelError("prompt format \"" + std::string(requested) +
                       "\" is not auto, template, llama2, llama3, chatml, mistral, gemma or plain");
    }
    return FormatChoice{ChatFormat(*builtin), {}};
  }

  const PromptFormatId fallback = detect_prompt_format(model_dir).value_or(PromptFormatId::Plain);
  std::optional<ChatTemplate> loaded;
  try {
    loaded = ChatTemplate::load(model_dir);
  } catch (const ChatTemplateError& error) {
    if (!automatic) throw;
    return FormatChoice{ChatFormat(fallback), std::string(error.what()) + "; Quire uses " +
                                                  describe_fallback(fallback) + " instead"};
  }
  if (!loaded) {
    if (!automatic) {
      throw ModelError(model_dir.string() +
                       " has no chat template (chat_template.jinja, or \"chat_template\" in "
                       "tokenizer_config.json); choose one of the built-in prompt formats");
    }
    return FormatChoice{ChatFormat(fallback), {}};
  }
  FormatChoice choice =
      check_chat_template(std::make_shared<const ChatTemplate>(std::move(*loaded)), fallback);
  if (!automatic && !choice.format.is_template()) throw ModelError(choice.notice);
  return choice;
}

std::vector<std::int32_t> encode_rendered(const Tokenizer& tokenizer,
                                          const jinja::Rendered& rendered, std::size_t from) {
  std::vector<TextRange> literal;
  for (const jinja::TextRange& range : rendered.literal) {
    if (range.end <= from) continue;
    literal.push_back({std::max(range.begin, from) - from, range.end - from});
  }
  EncodeOptions options;
  options.parse_special = true;
  options.literal = literal;
  return tokenizer.encode(std::string_view(rendered.text).substr(from), options);
}

StopSet resolve_stops(const ChatFormat& format, const Tokenizer& tokenizer) {
  if (!format.is_template()) return resolve_stops(PromptFormat::get(format.builtin()), tokenizer);
  StopSet stops;
  auto add = [&](std::int32_t id) {
    if (std::find(stops.tokens.begin(), stops.tokens.end(), id) == stops.tokens.end()) {
      stops.tokens.push_back(id);
    }
  };
  for (const std::int32_t id : tokenizer.eos())
    add(id);

  // The marker the template writes right after a reply is the one the model
  // learned to end its turns with.
  static constexpr std::string_view kReply = "Quire-stop-probe";
  const std::vector<TemplateMessage> messages{{"user", "Hello."},
                                              {"assistant", std::string(kReply)}};
  try {
    const jinja::Rendered rendered =
        format.chat_template()->render(messages, /*add_generation_prompt=*/false);
    const std::size_t at = rendered.text.rfind(kReply);
    if (at != std::string::npos) {
      std::string_view after = std::string_view(rendered.text).substr(at + kReply.size());
      // Llama 2's template writes " </s>": the marker counts, not the space.
      after.remove_prefix(std::min(after.size(), after.find_first_not_of(" \n")));
      EncodeOptions options;
      options.parse_special = true;
      const std::vector<std::int32_t> ids = tokenizer.encode(after, options);
      if (!ids.empty() && tokenizer.kind(ids.front()) == PieceKind::Control) add(ids.front());
    }
  } catch (const ChatTemplateError&) {
    // A template that cannot render a reply has nothing to add.
  }
  // A reply that calls a tool ends with another marker, after which the
  // model waits for the result: gpt-oss's <|call|>, Llama 3.1's <|eom_id|>.
  const std::string& source = format.chat_template()->source().text;
  for (const std::string_view marker : {"<|call|>", "<|eom_id|>"}) {
    if (source.find(marker) == std::string::npos) continue;
    const std::optional<std::int32_t> id = tokenizer.find_piece(marker);
    if (id && tokenizer.kind(*id) == PieceKind::Control) add(*id);
  }
  return stops;
}

}  // namespace quire::engine
