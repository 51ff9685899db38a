#include "pre_tokenizers.h"

#include <algorithm>

#include "byte_level.h"
#include "pattern.h"
#include "utf8.h"

namespace quire::engine::detail {
namespace {

// What happens to the text a pattern matches (Hugging Face's
// SplitDelimiterBehavior).
enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool is_match = false;
};

// Cuts `piece` at the spans (which cover it in order) as `behavior` says.
void split_piece(const PreToken& piece, const std::vector<Span>& spans, Behavior behavior,
                 PreTokens& out) {
  std::vector<Span> kept;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::Isolated:
      kept = spans;
      break;
    case Behavior::Removed:
      for (const Span& span : spans)
        if (!span.is_match) kept.push_back(span);
      break;
    case Behavior::Contiguous:
      for (const Span& span : spans) {
        if (!kept.empty() && span.is_match == previous_match) {
          kept.back().end = span.end;
        } else {
          kept.push_back(span);
        }
        previous_match = span.is_match;
      }
      break;
    case Behavior::MergedWithPrevious:
      for (const Span& span : spans) {
        if (!kept.empty() && span.is_match && !previous_match) {
          kept.back().end = span.end;
        } else {
          kept.push_back(span);
        }
        previous_match = span.is_match;
      }
      break;
    case Behavior::MergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (!kept.empty() && it->is_match && !previous_match) {
          kept.back().begin = it->begin;
        } else {
          kept.push_back(*it);
        }
        previous_match = it->is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  for (const Span& span : kept) {
    if (span.end <= span.begin) continue;
    out.push_back(
        {piece.text.substr(span.begin, span.end - span.begin), piece.at_start && span.begin == 0});
  }
}

// The spans of a piece where a predicate on code points holds or not.
template <typename Predicate>
std::vector<Span> spans_where(const std::string& text, Predicate&& predicate) {
  std::vector<Span> spans;
  std::size_t position = 0;
  std::size_t previous = 0;
  while (position < text.size()) {
    const CodePoint c = code_point_at(text, position);
    if (predicate(c.value)) {
      if (previous < position) spans.push_back({previous, position, false});
      spans.push_back({position, position + c.length, true});
      previous = position + c.length;
    }
    position += c.length;
  }
  if (previous < text.size()) spans.push_back({previous, text.size(), false});
  return spans;
}

std::vector<Span> spans_of(const Regex& regex, const std::string& text, bool invert) {
  std::vector<Span> spans;
  std::size_t previous = 0;
  regex.for_each_match(text, [&](std::size_t begin, std::size_t end) {
    if (previous < begin) spans.push_back({previous, begin, invert});
    spans.push_back({begin, end, !invert});
    previous = end;
  });
  if (previous < text.size()) spans.push_back({previous, text.size(), invert});
  return spans;
}

template <typename Splitter>
void split_each(PreTokens& pieces, Splitter&& splitter) {
  PreTokens out;
  out.reserve(pieces.size() * 2);
  for (const PreToken& piece : pieces)
    splitter(piece, out);
  pieces = std::move(out);
}

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> parts)
      : parts_(std::move(parts)) {}
  void pre_tokenize(PreTokens& pieces) const override {
    for (const auto& part : parts_)
      part->pre_tokenize(pieces);
  }
  bool byte_level() const override {
    return std::any_of(parts_.begin(), parts_.end(),
                       [](const auto& part) { return part->byte_level(); });
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(Regex pattern, Behavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(PreTokens& pieces) const override {
    split_each(pieces, [&](const PreToken& piece, PreTokens& out) {
      split_piece(piece, spans_of(pattern_, piece.text, invert_), behavior_, out);
    });
  }

 private:
  Regex pattern_;
  Behavior behavior_;
  bool invert_;
};

// GPT-2's pattern, as Hugging Face's ByteLevel pre-tokenizer uses it.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space), use_regex_(use_regex) {
    if (use_regex_) pattern_ = Regex::compile(kGpt2Pattern);
  }
  void pre_tokenize(PreTokens& pieces) const override {
    const ByteAlphabet& alphabet = ByteAlphabet::get();
    split_each(pieces, [&](const PreToken& piece, PreTokens& out) {
      PreToken source = piece;
      if (add_prefix_space_ && !source.text.starts_with(' ')) source.text.insert(0, 1, ' ');
      PreTokens words;
      if (use_regex_) {
        split_piece(source, spans_of(pattern_, source.text, false), Behavior::Isolated, words);
      } else {
        words.push_back(std::move(source));
      }
      for (PreToken& word : words) {
        std::string shown;
        shown.reserve(word.text.size() * 2);
        alphabet.encode(word.text, shown);
        out.push_back({std::move(shown), word.at_start});
      }
    });
  }
  bool byte_level() const override { return true; }

 private:
  bool add_prefix_space_;
  bool use_regex_;
  Regex pattern_;
};

enum class PrependScheme { Always, First, Never };

class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void pre_tokenize(PreTokens& pieces) const override {
    split_each(pieces, [&](const PreToken& piece, PreTokens& out) {
      PreToken replaced{{}, piece.at_start};
      for (const char c : piece.text) {
        if (c == ' ') {
          replaced.text += replacement_;
        } else {
          replaced.text += c;
        }
      }
      const bool prepend =
          scheme_ == PrependScheme::Always || (scheme_ == PrependScheme::First && piece.at_start);
      if (prepend && !replaced.text.starts_with(replacement_)) {
        replaced.text.insert(0, replacement_);
      }
      if (!split_) {
        out.push_back(std::move(replaced));
        return;
      }
      // Each word keeps the replacement in front of it.
      std::vector<Span> spans;
      std::size_t previous = 0;
      std::size_t position = 0;
      while ((position = replaced.text.find(replacement_, position)) != std::string::npos) {
        if (previous < position) spans.push_back({previous, position, false});
        spans.push_back({position, position + replacement_.size(), true});
        position += replacement_.size();
        previous = position;
      }
      if (previous < replaced.text.size()) spans.push_back({previous, replaced.text.size(), false});
      split_piece(replaced, spans, Behavior::MergedWithNext, out);
    });
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class DigitsPreTokenizer final : public PreTokenizer {
 public:
  explicit DigitsPreTokenizer(bool individual) : individual_(individual) {}
  void pre_tokenize(PreTokens& pieces) const override {
    split_each(pieces, [&](const PreToken& piece, PreTokens& out) {
      const auto spans = spans_where(piece.text, [](char32_t c) { return c >= '0' && c <= '9'; });
      split_piece(piece, spans, individual_ ? Behavior::Isolated : Behavior::Contiguous, out);
    });
  }

 private:
  bool individual_;
};

// WhitespaceSplit (split on whitespace, dropping it) and Whitespace (words and
// runs of other non-space characters).
class RegexWordsPreTokenizer final : public PreTokenizer {
 public:
  explicit RegexWordsPreTokenizer(std::string_view pattern) : pattern_(Regex::compile(pattern)) {}
  void pre_tokenize(PreTokens& pieces) const override {
    split_each(pieces, [&](const PreToken& piece, PreTokens& out) {
      split_piece(piece, spans_of(pattern_, piece.text, true), Behavior::Removed, out);
    });
  }

 private:
  Regex pattern_;
};

Behavior read_behavior(const JsonField& field) {
  const std::string name = field.string();
  if (name == "Removed") return Behavior::Removed;
  if (name == "Isolated") return Behavior::Isolated;
  if (name == "MergedWithPrevious") return Behavior::MergedWithPrevious;
  if (name == "MergedWithNext") return Behavior::MergedWithNext;
  if (name == "Contiguous") return Behavior::Contiguous;
  field.fail("is \"" + name +
             "\", not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

PrependScheme read_prepend_scheme(const JsonField& config) {
  if (const auto scheme = config.find("prepend_scheme")) {
    const std::string name = scheme->string();
    if (name == "always") return PrependScheme::Always;
    if (name == "first") return PrependScheme::First;
    if (name == "never") return PrependScheme::Never;
    scheme->fail("is \"" + name + "\", not always, first or never");
  }
  // Files from before prepend_scheme say add_prefix_space.
  return config.boolean_or("add_prefix_space", true) ? PrependScheme::Always : PrependScheme::Never;
}

}  // namespace

std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonField& config) {
  if (config.is_null()) return nullptr;
  const std::string type = config.type();
  if (type == "Sequence") {
    const JsonField list = config.at("pretokenizers");
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (auto part = read_pre_tokenizer(list.at(i))) parts.push_back(std::move(part));
    }
    return std::make_unique<SequencePreTokenizer>(std::move(parts));
  }
  if (type == "Split") {
    return std::make_unique<SplitPreTokenizer>(read_pattern(config.at("pattern")),
                                               read_behavior(config.at("behavior")),
                                               config.boolean_or("invert", false));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPreTokenizer>(config.boolean_or("add_prefix_space", true),
                                                   config.boolean_or("use_regex", true));
  }
  if (type == "Metaspace") {
    const auto replacement = config.find("replacement");
    return std::make_unique<MetaspacePreTokenizer>(
        replacement ? replacement->character() : "\xE2\x96\x81", read_prepend_scheme(config),
        config.boolean_or("split", true));
  }
  if (type == "Digits") {
    return std::make_unique<DigitsPreTokenizer>(config.boolean_or("individual_digits", false));
  }
  if (type == "WhitespaceSplit") return std::make_unique<RegexWordsPreTokenizer>("\\S+");
  if (type == "Whitespace") return std::make_unique<RegexWordsPreTokenizer>("\\w+|[^\\w\\s]+");
  config.fail_unsupported("is a pre-tokenizer of type \"" + type +
                          "\", which Quire does not read (it reads Sequence, Split, ByteLevel, "
                          "Metaspace, Digits, Whitespace and WhitespaceSplit)");
}

}  // namespace quire::engine::detail
