#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/generator/chat_template.h"
#include "quire/engine/generator/prompt_format.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

// How a chat becomes a prompt: one of Quire's built-in formats, or the model's
// own chat template. Cheap to copy; a template is shared.
class ChatFormat {
 public:
  // Implicit, so that a built-in format id is a ChatFormat wherever one is asked.
  ChatFormat(PromptFormatId builtin);  // NOLINT(google-explicit-constructor)
  // `system_in_first_user`: the template refuses system messages (Gemma 2
  // raises "System role not supported"), so the system prompt opens the first
  // user message instead, as Quire's built-in formats without a system turn do.
  ChatFormat(std::shared_ptr<const ChatTemplate> chat_template, bool system_in_first_user);

  bool is_template() const { return chat_template_ != nullptr; }
  // For a built-in format; PromptFormatId::Plain for a template.
  PromptFormatId builtin() const { return builtin_; }
  const ChatTemplate* chat_template() const { return chat_template_.get(); }
  bool system_in_first_user() const { return system_in_first_user_; }

  // "llama3", "chatml", ... or "template".
  std::string name() const;
  // For people: "Llama 3" or "the model's chat template (tokenizer_config.json)".
  std::string title() const;
  // Changes whenever the same chat would render to other ids: the built-in
  // name, or "template:" and the template's digest.
  std::string key() const;

 private:
  PromptFormatId builtin_ = PromptFormatId::Plain;
  std::shared_ptr<const ChatTemplate> chat_template_;
  bool system_in_first_user_ = false;
};

struct FormatChoice {
  ChatFormat format;
  // Why the model's template is not used, naming the problem (construct and
  // line) and the built-in format used instead; empty when nothing went wrong.
  std::string notice;
};

// The format for a model directory. `requested`:
//   "auto" or empty: the model's chat template when it has one that renders a
//     plain conversation; otherwise the built-in format its files point to
//     (detect_prompt_format), else plain, with a notice saying why;
//   "template": the model's template; ModelError when it has none or it fails;
//   a built-in name (parse_prompt_format): that format.
// Throws ModelError for a name that is none of these.
FormatChoice choose_chat_format(const std::filesystem::path& model_dir, std::string_view requested);

// The same for a template already loaded (tests, and callers that pin the clock).
FormatChoice check_chat_template(std::shared_ptr<const ChatTemplate> chat_template,
                                 PromptFormatId fallback);

// A rendered chat template's text from byte `from` on as token ids: special
// tokens spelled by the template are recognised, those inside the messages'
// texts (the rendering's literal ranges) stay text.
std::vector<std::int32_t> encode_rendered(const Tokenizer& tokenizer,
                                          const jinja::Rendered& rendered, std::size_t from = 0);

// What ends a reply in this format with this tokenizer. For a template: the
// tokenizer's EOS ids and the special token the template writes right after
// an assistant message's text (Llama 3's <|eot_id|>, ChatML's <|im_end|>,
// Gemma's <end_of_turn>).
StopSet resolve_stops(const ChatFormat& format, const Tokenizer& tokenizer);

}  // namespace quire::engine
