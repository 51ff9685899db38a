#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quire/engine/model_error.h"
#include "quire/engine/template/template.h"
#include "quire/engine/tools/tool_call.h"

namespace quire::engine {

// Where a model directory keeps its chat template, and its text.
struct ChatTemplateSource {
  std::string text;
  std::filesystem::path file;  // chat_template.jinja, tokenizer_config.json, ...
  std::string name;            // the entry of a list of named templates, else empty
};

// The model's own chat template, the way transformers finds it: a
// chat_template.jinja file (what transformers writes today, and what it
// prefers when a directory has both), else tokenizer_config.json's
// "chat_template" (a string, or a list of {"name", "template"} of which the
// one named "default" is for chatting), else chat_template.json. nullopt when
// the directory has none. Throws ModelError for a file that is not valid JSON
// or a template entry of the wrong type.
std::optional<ChatTemplateSource> find_chat_template(const std::filesystem::path& model_dir);

// A template Quire cannot run: it does not parse, or it fails for a plain
// conversation. The message names the file, the line and the construct.
class ChatTemplateError : public ModelError {
 public:
  ChatTemplateError(const std::string& message, int line, std::string construct)
      : ModelError(message), line_(line), construct_(std::move(construct)) {}
  int line() const { return line_; }
  const std::string& construct() const { return construct_; }

 private:
  int line_ = 0;
  std::string construct_;
};

// A message as a chat template sees it, in OpenAI's shape, which is what
// transformers hands templates: an assistant message may carry tool_calls
// (and then often null content), a "tool" message answers the call named by
// tool_call_id (and the function's name, which some templates print).
struct TemplateMessage {
  TemplateMessage() = default;
  // A plain message, the common case: {"user", "Hello"}.
  TemplateMessage(std::string role_name, std::string text)
      : role(std::move(role_name)), content(std::move(text)) {}

  std::string role;  // "system", "user", "assistant", "tool"
  std::string content;
  std::vector<tools::ToolCall> tool_calls;
  std::string tool_call_id;
  std::string name;
  // The content is null, as OpenAI sends it beside tool_calls (see
  // TemplateTools::keep_null_content).
  bool null_content = false;
  // Images before the text: the content becomes OpenAI's list of parts,
  // {"type": "image"} for each and then {"type": "text", "text": content},
  // as vision models' templates read it.
  int images = 0;
  friend bool operator==(const TemplateMessage&, const TemplateMessage&) = default;
};

// What a request with tools adds to the template's variables.
struct TemplateTools {
  // OpenAI's list of {"type": "function", "function": {"name", "description",
  // "parameters"}}, passed as the `tools` variable exactly as given; null
  // leaves `tools` undefined, as a request without tools does.
  nlohmann::ordered_json tools;
  // How tool_calls[].function.arguments reach the template
  // (tools::template_arguments_form of the template's family).
  tools::ArgumentsForm arguments = tools::ArgumentsForm::Text;
  // Whether null content stays None (tools::template_keeps_null_content);
  // otherwise it is an empty string.
  bool keep_null_content = false;
};

// A model's chat template, parsed once, with the special tokens' spellings it
// is rendered with (bos_token, eos_token and the other *_token entries of
// tokenizer_config.json, as transformers passes them). Rendering marks every
// byte that came from a message's content as literal, so that a special
// token's spelling typed by a user stays text when the prompt is tokenized.
// Immutable; safe to share between threads.
class ChatTemplate {
 public:
  // Parses `source`. `special_tokens` maps variable names (bos_token, ...) to
  // spellings. Throws ChatTemplateError naming the construct and line.
  ChatTemplate(ChatTemplateSource source, std::map<std::string, std::string> special_tokens);

  // The directory's template with the spellings its tokenizer_config.json
  // gives; nullopt when it has none. Throws ChatTemplateError or ModelError.
  static std::optional<ChatTemplate> load(const std::filesystem::path& model_dir);

  // Renders the conversation with the globals transformers passes
  // (messages, add_generation_prompt, the *_token spellings) and date_string,
  // today's date as Llama 3.1's template wants it ("25 Nov 2026"); `tools`
  // stays undefined. Throws ChatTemplateError when the template fails
  // (raise_exception's message is kept verbatim).
  jinja::Rendered render(std::span<const TemplateMessage> messages,
                         bool add_generation_prompt) const;
  // The same with tools: `tools` defined (unless null), and the messages'
  // tool_calls, tool_call_id and name passed through.
  jinja::Rendered render(std::span<const TemplateMessage> messages, bool add_generation_prompt,
                         const TemplateTools& tools) const;

  const ChatTemplateSource& source() const { return source_; }
  // "chat_template.jinja" or "tokenizer_config.json" (and the entry's name).
  std::string origin() const;
  // 16 hex digits that change whenever the template or the spellings change.
  const std::string& digest() const { return digest_; }
  const std::map<std::string, std::string>& special_tokens() const { return special_tokens_; }
  // Used for strftime_now; the clock by default. Tests pin it.
  void set_clock(std::chrono::system_clock::time_point now) { now_ = now; }

 private:
  ChatTemplateSource source_;
  std::map<std::string, std::string> special_tokens_;
  std::shared_ptr<const jinja::Template> parsed_;
  std::string digest_;
  std::optional<std::chrono::system_clock::time_point> now_;
};

// The spellings tokenizer_config.json gives its special tokens ("bos_token":
// "<s>" or {"content": "<s>", ...}), by key. Missing file: empty map.
std::map<std::string, std::string> read_special_token_spellings(
    const std::filesystem::path& model_dir);

}  // namespace quire::engine
