#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

enum class PromptFormatId { Llama2, Llama3, ChatML, Mistral, Gemma, Plain };

// "llama2", "llama3", "chatml", "mistral", "gemma", "plain".
std::string_view to_string(PromptFormatId id);
// The names above, any case; nullopt for anything else.
std::optional<PromptFormatId> parse_prompt_format(std::string_view name);
std::span<const PromptFormatId> all_prompt_formats();

// Which format a model directory's files point to: the markers of
// tokenizer_config.json's "chat_template" (or chat_template.jinja), else the
// special tokens it declares, else "tokenizer_class" and config.json's
// "model_type". nullopt when nothing is recognised; callers then use
// PromptFormatId::Plain. Throws ModelError for a file that is not valid JSON.
std::optional<PromptFormatId> detect_prompt_format(const std::filesystem::path& model_dir);
// The same decision for the text of a chat template alone.
std::optional<PromptFormatId> detect_from_chat_template(std::string_view chat_template);

// A piece of a rendered message. Content (what people typed) is only ever
// encoded as text, so a message that spells "<|im_start|>" cannot forge a
// turn (unless the vocabulary declares the marker a user-defined piece,
// which SentencePiece matches inside any text). Text is the format's own
// wording; markers become single ids.
struct PromptSegment {
  enum class Kind {
    Text,
    Content,
    Special,  // the vocabulary's id for the spelling, else its text
    Bos,      // the spelling's id, else the tokenizer's BOS, else nothing
    Eos,      // the spelling's id, else the tokenizer's first EOS, else nothing
  };
  Kind kind = Kind::Text;
  std::string text;

  friend bool operator==(const PromptSegment&, const PromptSegment&) = default;
};
using PromptSegments = std::vector<PromptSegment>;

// A chat prompt format, checked against the published chat templates (see
// prompt_format.cpp for the exact strings). Formats whose template has no
// system turn (Llama 2, Mistral, Gemma) carry the system prompt in the first
// user message, as Llama 2's own template does; the others give it its own
// block before the first turn. Both keep every later message's rendering
// independent of what came before, which is what lets each turn's prompt
// extend the previous one.
class PromptFormat {
 public:
  static const PromptFormat& get(PromptFormatId id);

  PromptFormatId id() const;
  std::string_view name() const;   // as to_string()
  std::string_view title() const;  // for people: "ChatML (Qwen, Yi, OpenHermes)"
  bool system_in_first_message() const;

  // What precedes the first user message: BOS (for ChatML and plain only when
  // the tokenizer adds one) and the system block where the format has one.
  PromptSegments preamble(std::string_view system_prompt, bool tokenizer_adds_bos) const;
  // A user message followed by the header that opens the assistant's reply.
  // `first`: the conversation's first message, which may carry the system prompt.
  PromptSegments user_turn(std::string_view message, std::string_view system_prompt,
                           bool first) const;
  // What closes an assistant reply before the next user message.
  PromptSegments closing() const;
  // Where a reply ends: markers (Special/Eos segments) and, for the plain
  // format, Text stop strings.
  PromptSegments stop_markers() const;

 private:
  explicit PromptFormat(PromptFormatId id) : id_(id) {}
  PromptFormatId id_;
};

// Segments to token ids, without a BOS of the tokenizer's own. Runs of text
// (and markers the vocabulary lacks, spelled out) are encoded together, one
// call per run, so SentencePiece's word-start "▁" appears after a marker id
// as in Hugging Face's (legacy) tokenization and in Meta's and Mistral's
// reference code. A space between a Special marker that became an id and
// the format's own text is dropped: the id and that "▁" stand for it
// (Mistral's "[INST] hi [/INST]" becomes [INST] ▁hi [/INST]).
std::vector<std::int32_t> render(std::span<const PromptSegment> segments,
                                 const Tokenizer& tokenizer);

// The format's stop markers resolved for one tokenizer, with its EOS ids.
struct StopSet {
  std::vector<std::int32_t> tokens;
  std::vector<std::string> strings;  // markers the vocabulary spells with several tokens
};
StopSet resolve_stops(const PromptFormat& format, const Tokenizer& tokenizer);

}  // namespace quire::engine
