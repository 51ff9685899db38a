#include "quire/engine/generator/prompt_format.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace quire::engine {
namespace {

using Kind = PromptSegment::Kind;

struct Marker {
  std::string_view spelling;
  Kind kind;
};

// One format as its published chat template writes it. {system} and {user}
// stand for the (trimmed, where the template trims) texts; every spelling in
// `markers` found in the template becomes a marker segment.
struct FormatSpec {
  PromptFormatId id;
  std::string_view name;
  std::string_view title;
  std::string_view bos;        // "" when the template has none
  bool bos_if_tokenizer_adds;  // no BOS in the template; follow the tokenizer
  std::string_view system;     // "": carried by the first user message
  std::string_view first_user;
  std::string_view user;
  std::string_view closing;
  std::array<std::string_view, 3> stops;
  std::array<Marker, 6> markers;
  bool trim;  // the template strips whitespace around message texts
};

// Checked against the chat templates in the models' tokenizer_config.json:
// Llama-2-chat, Meta-Llama-3-Instruct, Qwen2-Instruct (ChatML),
// Mistral-7B-Instruct-v0.1/v0.3 and gemma-it. The plain format is for models
// without one. Where they differ, on purpose:
// - A reply is followed directly by its closing marker: the model's own ids
//   are kept, where Llama 2's template writes " {reply} </s>".
// - Mistral's later templates put the system prompt in the last user message,
//   which would change every prompt's beginning; it goes into the first, as
//   Llama 2 does. Gemma's templates have no system turn; Gemma 3's puts it
//   before the first user message, as here.
constexpr std::array<FormatSpec, 6> kFormats{{
    {PromptFormatId::Llama2,
     "llama2",
     "Llama 2 chat ([INST] <<SYS>> ... [/INST])",
     "",
     false,
     "",
     "<s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]",
     "<s>[INST] {user} [/INST]",
     "</s>",
     {"</s>"},
     {{{"<s>", Kind::Bos}, {"</s>", Kind::Eos}}},
     true},
    {PromptFormatId::Llama3,
     "llama3",
     "Llama 3 instruct (<|start_header_id|>)",
     "<|begin_of_text|>",
     false,
     "<|start_header_id|>system<|end_header_id|>\n\n{system}<|eot_id|>",
     "",
     "<|start_header_id|>user<|end_header_id|>\n\n{user}<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\n",
     "<|eot_id|>",
     {"<|eot_id|>", "<|end_of_text|>"},
     {{{"<|begin_of_text|>", Kind::Bos},
       {"<|end_of_text|>", Kind::Eos},
       {"<|start_header_id|>", Kind::Special},
       {"<|end_header_id|>", Kind::Special},
       {"<|eot_id|>", Kind::Special}}},
     true},
    {PromptFormatId::ChatML,
     "chatml",
     "ChatML (Qwen, Yi, OpenHermes: <|im_start|>)",
     "",
     true,
     "<|im_start|>system\n{system}<|im_end|>\n",
     "",
     "<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n",
     "<|im_end|>\n",
     {"<|im_end|>", "<|endoftext|>"},
     {{{"<|im_start|>", Kind::Special},
       {"<|im_end|>", Kind::Special},
       {"<|endoftext|>", Kind::Special}}},
     false},
    {PromptFormatId::Mistral,
     "mistral",
     "Mistral instruct ([INST] ... [/INST])",
     "<s>",
     false,
     "",
     "[INST] {system}\n\n{user} [/INST]",
     "[INST] {user} [/INST]",
     "</s>",
     {"</s>"},
     {{{"<s>", Kind::Bos},
       {"</s>", Kind::Eos},
       {"[INST]", Kind::Special},
       {"[/INST]", Kind::Special}}},
     false},
    {PromptFormatId::Gemma,
     "gemma",
     "Gemma (<start_of_turn>)",
     "<bos>",
     false,
     "",
     "<start_of_turn>user\n{system}\n\n{user}<end_of_turn>\n<start_of_turn>model\n",
     "<start_of_turn>user\n{user}<end_of_turn>\n<start_of_turn>model\n",
     "<end_of_turn>\n",
     {"<end_of_turn>", "<eos>"},
     {{{"<bos>", Kind::Bos},
       {"<eos>", Kind::Eos},
       {"<start_of_turn>", Kind::Special},
       {"<end_of_turn>", Kind::Special}}},
     true},
    {PromptFormatId::Plain,
     "plain",
     "Plain text (System: / User: / Assistant:)",
     "",
     true,
     "System: {system}\n\n",
     "",
     "User: {user}\n\nAssistant:",
     "\n\n",
     // The earlier start wins, so a reply ends before its blank line.
     {"\n\nUser:", "\nUser:"},
     {},
     false},
}};

const FormatSpec& spec_of(PromptFormatId id) {
  for (const FormatSpec& spec : kFormats) {
    if (spec.id == id) return spec;
  }
  throw std::invalid_argument("unknown prompt format");
}

std::string_view trimmed(std::string_view text, bool trim) {
  if (!trim) return text;
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const std::size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

// A system prompt of white space alone is no system prompt, in every format.
bool is_blank(std::string_view text) {
  return trimmed(text, true).empty();
}

void append_text(PromptSegments& out, Kind kind, std::string_view text) {
  if (text.empty()) return;
  if (!out.empty() && out.back().kind == kind && kind == Kind::Text) {
    out.back().text += text;
  } else {
    out.push_back({kind, std::string(text)});
  }
}

// Splits a template into segments, putting the texts in for the placeholders.
PromptSegments expand(const FormatSpec& spec, std::string_view pattern, std::string_view system,
                      std::string_view user) {
  PromptSegments out;
  std::size_t literal = 0;  // start of the template text not yet copied
  std::size_t at = 0;
  auto flush_literal = [&] { append_text(out, Kind::Text, pattern.substr(literal, at - literal)); };
  while (at < pattern.size()) {
    const std::string_view rest = pattern.substr(at);
    std::size_t consumed = 0;
    if (rest.starts_with("{system}") || rest.starts_with("{user}")) {
      flush_literal();
      const bool is_system = rest.starts_with("{system}");
      append_text(out, Kind::Content, trimmed(is_system ? system : user, spec.trim));
      consumed = is_system ? 8 : 6;
    } else {
      for (const Marker& marker : spec.markers) {
        if (marker.spelling.empty() || !rest.starts_with(marker.spelling)) continue;
        flush_literal();
        out.push_back({marker.kind, std::string(marker.spelling)});
        consumed = marker.spelling.size();
        break;
      }
    }
    if (consumed == 0) {
      ++at;
      continue;
    }
    at += consumed;
    literal = at;
  }
  flush_literal();
  return out;
}

}  // namespace

std::string_view to_string(PromptFormatId id) {
  return spec_of(id).name;
}

std::optional<PromptFormatId> parse_prompt_format(std::string_view name) {
  for (const FormatSpec& spec : kFormats) {
    const bool same = std::equal(
        name.begin(), name.end(), spec.name.begin(), spec.name.end(), [](char a, char b) {
          const auto lower = [](char c) {
            return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
          };
          return lower(a) == lower(b);
        });
    if (same) return spec.id;
  }
  return std::nullopt;
}

std::span<const PromptFormatId> all_prompt_formats() {
  static constexpr std::array kIds{PromptFormatId::Llama2, PromptFormatId::Llama3,
                                   PromptFormatId::ChatML, PromptFormatId::Mistral,
                                   PromptFormatId::Gemma,  PromptFormatId::Plain};
  return kIds;
}

const PromptFormat& PromptFormat::get(PromptFormatId id) {
  static const std::array<PromptFormat, 6> kAll{
      PromptFormat(PromptFormatId::Llama2), PromptFormat(PromptFormatId::Llama3),
      PromptFormat(PromptFormatId::ChatML), PromptFormat(PromptFormatId::Mistral),
      PromptFormat(PromptFormatId::Gemma),  PromptFormat(PromptFormatId::Plain)};
  spec_of(id);  // rejects a value outside the enumeration
  return kAll[static_cast<std::size_t>(id)];
}

PromptFormatId PromptFormat::id() const {
  return id_;
}
std::string_view PromptFormat::name() const {
  return spec_of(id_).name;
}
std::string_view PromptFormat::title() const {
  return spec_of(id_).title;
}
bool PromptFormat::system_in_first_message() const {
  return spec_of(id_).system.empty();
}

PromptSegments PromptFormat::preamble(std::string_view system_prompt,
                                      bool tokenizer_adds_bos) const {
  const FormatSpec& spec = spec_of(id_);
  PromptSegments out;
  if (!spec.bos.empty()) out.push_back({Kind::Bos, std::string(spec.bos)});
  if (spec.bos_if_tokenizer_adds && tokenizer_adds_bos) out.push_back({Kind::Bos, "<s>"});
  if (!spec.system.empty() && !is_blank(system_prompt)) {
    PromptSegments block = expand(spec, spec.system, system_prompt, {});
    out.insert(out.end(), block.begin(), block.end());
  }
  return out;
}

PromptSegments PromptFormat::user_turn(std::string_view message, std::string_view system_prompt,
                                       bool first) const {
  const FormatSpec& spec = spec_of(id_);
  const bool carries_system = first && spec.system.empty() && !is_blank(system_prompt);
  return expand(spec, carries_system ? spec.first_user : spec.user, system_prompt, message);
}

PromptSegments PromptFormat::closing() const {
  const FormatSpec& spec = spec_of(id_);
  return expand(spec, spec.closing, {}, {});
}

PromptSegments PromptFormat::stop_markers() const {
  const FormatSpec& spec = spec_of(id_);
  PromptSegments out;
  for (const std::string_view stop : spec.stops) {
    if (stop.empty()) continue;
    PromptSegments expanded = expand(spec, stop, {}, {});
    out.insert(out.end(), expanded.begin(), expanded.end());
  }
  return out;
}

std::vector<std::int32_t> render(std::span<const PromptSegment> segments,
                                 const Tokenizer& tokenizer) {
  // First decide each marker's id, so the text runs around them are known.
  std::vector<std::optional<std::int32_t>> ids(segments.size());
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const PromptSegment& segment = segments[i];
    if (segment.kind == Kind::Text || segment.kind == Kind::Content) continue;
    ids[i] = tokenizer.find_piece(segment.text);
    if (ids[i]) continue;
    if (segment.kind == Kind::Bos) ids[i] = tokenizer.bos();
    if (segment.kind == Kind::Eos && !tokenizer.eos().empty()) ids[i] = tokenizer.eos().front();
  }
  auto is_special_id = [&](std::size_t i) {
    return i < segments.size() && segments[i].kind == Kind::Special && ids[i].has_value();
  };

  std::vector<std::int32_t> out;
  std::string run;
  auto flush = [&] {
    if (run.empty()) return;
    const std::vector<std::int32_t> encoded = tokenizer.encode(run, false);
    out.insert(out.end(), encoded.begin(), encoded.end());
    run.clear();
  };
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const PromptSegment& segment = segments[i];
    if (ids[i]) {
      flush();
      out.push_back(*ids[i]);
      continue;
    }
    if (segment.kind == Kind::Bos || segment.kind == Kind::Eos) continue;  // none to be had
    std::string_view text = segment.text;
    if (segment.kind == Kind::Text) {
      if (i > 0 && is_special_id(i - 1) && text.starts_with(' ')) text.remove_prefix(1);
      if (is_special_id(i + 1) && text.ends_with(' ')) text.remove_suffix(1);
    }
    run += text;
  }
  flush();
  return out;
}

StopSet resolve_stops(const PromptFormat& format, const Tokenizer& tokenizer) {
  StopSet stops;
  auto add_token = [&](std::int32_t id) {
    if (std::find(stops.tokens.begin(), stops.tokens.end(), id) == stops.tokens.end()) {
      stops.tokens.push_back(id);
    }
  };
  for (const PromptSegment& marker : format.stop_markers()) {
    if (marker.kind != Kind::Text) {
      if (const auto id = tokenizer.find_piece(marker.text)) {
        add_token(*id);
        continue;
      }
      // The tokenizer's own EOS stands for an EOS it spells differently.
      if (marker.kind == Kind::Eos && !tokenizer.eos().empty()) continue;
    }
    if (std::find(stops.strings.begin(), stops.strings.end(), marker.text) == stops.strings.end()) {
      stops.strings.push_back(marker.text);
    }
  }
  for (const std::int32_t id : tokenizer.eos())
    add_token(id);
  return stops;
}

}  // namespace quire::engine
