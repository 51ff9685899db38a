#include "pre_tokenizers.h"

#include <algorithm>
#include <optional>

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

// Cuts a piece at the spans it is given (which cover it, in order) as
// `behavior` says, and emits the words as soon as they are settled; holds
// at most one span back.
class SpanSplitter {
 public:
  SpanSplitter(const PreToken& piece, Behavior behavior, const PreTokenSink& emit)
      : piece_(piece), behavior_(behavior), emit_(emit) {}

  void add(const Span& span) {
    switch (behavior_) {
      case Behavior::Isolated:
        emit(span);
        break;
      case Behavior::Removed:
        if (!span.is_match) emit(span);
        break;
      case Behavior::Contiguous:
        extend_or_hold(span, pending_ && span.is_match == previous_match_);
        break;
      case Behavior::MergedWithPrevious:
        extend_or_hold(span, pending_ && span.is_match && !previous_match_);
        break;
      case Behavior::MergedWithNext:
        // A match joins the span after it when that one is not a match.
        if (pending_ && !span.is_match) {
          emit({pending_->begin, span.end, false});
          pending_.reset();
        } else if (span.is_match) {
          if (pending_) emit(*pending_);
          pending_ = span;
        } else {
          emit(span);
        }
        break;
    }
    previous_match_ = span.is_match;
  }

  void finish() {
    if (pending_) emit(*pending_);
    pending_.reset();
  }

 private:
  void extend_or_hold(const Span& span, bool extend) {
    if (extend) {
      pending_->end = span.end;
      return;
    }
    if (pending_) emit(*pending_);
    pending_ = span;
  }
  void emit(const Span& span) const {
    if (span.end <= span.begin) return;
    emit_({piece_.text.substr(span.begin, span.end - span.begin),
           piece_.at_start && span.begin == 0});
  }

  const PreToken& piece_;
  Behavior behavior_;
  const PreTokenSink& emit_;
  std::optional<Span> pending_;
  bool previous_match_ = false;
};

// The spans of a text where a predicate on code points holds or not.
template <typename Predicate, typename OnSpan>
void spans_where(const std::string& text, Predicate&& predicate, OnSpan&& on_span) {
  std::size_t position = 0;
  std::size_t previous = 0;
  while (position < text.size()) {
    const CodePoint c = code_point_at(text, position);
    if (predicate(c.value)) {
      if (previous < position) on_span(Span{previous, position, false});
      on_span(Span{position, position + c.length, true});
      previous = position + c.length;
    }
    position += c.length;
  }
  if (previous < text.size()) on_span(Span{previous, text.size(), false});
}

template <typename OnSpan>
void spans_of(const Regex& regex, const std::string& text, bool invert, OnSpan&& on_span) {
  std::size_t previous = 0;
  regex.for_each_match(text, [&](std::size_t begin, std::size_t end) {
    if (previous < begin) on_span(Span{previous, begin, invert});
    on_span(Span{begin, end, !invert});
    previous = end;
  });
  if (previous < text.size()) on_span(Span{previous, text.size(), invert});
}

void split_by_regex(const PreToken& piece, const Regex& regex, bool invert, Behavior behavior,
                    const PreTokenSink& emit) {
  SpanSplitter splitter(piece, behavior, emit);
  spans_of(regex, piece.text, invert, [&](const Span& span) { splitter.add(span); });
  splitter.finish();
}

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> parts)
      : parts_(std::move(parts)) {}
  void pre_tokenize(PreToken piece, const PreTokenSink& emit) const override {
    run(0, std::move(piece), emit);
  }
  bool byte_level() const override {
    return std::any_of(parts_.begin(), parts_.end(),
                       [](const auto& part) { return part->byte_level(); });
  }

 private:
  // Each word of one part goes through the next parts before the part's
  // next word: the same words, in the same order, as part by part.
  void run(std::size_t index, PreToken piece, const PreTokenSink& emit) const {
    if (index == parts_.size()) {
      emit(std::move(piece));
      return;
    }
    auto next = [&](PreToken&& word) { run(index + 1, std::move(word), emit); };
    parts_[index]->pre_tokenize(std::move(piece), PreTokenSink(next));
  }

  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(Regex pattern, Behavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(PreToken piece, const PreTokenSink& emit) const override {
    split_by_regex(piece, pattern_, invert_, behavior_, emit);
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
  void pre_tokenize(PreToken piece, const PreTokenSink& emit) const override {
    const ByteAlphabet& alphabet = ByteAlphabet::get();
    if (add_prefix_space_ && !piece.text.starts_with(' ')) piece.text.insert(0, 1, ' ');
    auto show = [&](PreToken&& word) {
      std::string shown;
      shown.reserve(word.text.size() * 2);
      alphabet.encode(word.text, shown);
      emit({std::move(shown), word.at_start});
    };
    if (use_regex_) {
      split_by_regex(piece, pattern_, false, Behavior::Isolated, PreTokenSink(show));
    } else {
      show(std::move(piece));
    }
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
  void pre_tokenize(PreToken piece, const PreTokenSink& emit) const override {
    PreToken replaced{{}, piece.at_start};
    replaced.text.reserve(piece.text.size() + replacement_.size());
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
      emit(std::move(replaced));
      return;
    }
    // Each word keeps the replacement in front of it.
    SpanSplitter splitter(replaced, Behavior::MergedWithNext, emit);
    std::size_t previous = 0;
    std::size_t position = 0;
    while ((position = replaced.text.find(replacement_, position)) != std::string::npos) {
      if (previous < position) splitter.add({previous, position, false});
      splitter.add({position, position + replacement_.size(), true});
      position += replacement_.size();
      previous = position;
    }
    if (previous < replaced.text.size()) splitter.add({previous, replaced.text.size(), false});
    splitter.finish();
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class DigitsPreTokenizer final : public PreTokenizer {
 public:
  explicit DigitsPreTokenizer(bool individual) : individual_(individual) {}
  void pre_tokenize(PreToken piece, const PreTokenSink& emit) const override {
    SpanSplitter splitter(piece, individual_ ? Behavior::Isolated : Behavior::Contiguous, emit);
    spans_where(
        piece.text, [](char32_t c) { return c >= '0' && c <= '9'; },
        [&](const Span& span) { splitter.add(span); });
    splitter.finish();
  }

 private:
  bool individual_;
};

// WhitespaceSplit (split on whitespace, dropping it) and Whitespace (words and
// runs of other non-space characters).
class RegexWordsPreTokenizer final : public PreTokenizer {
 public:
  explicit RegexWordsPreTokenizer(std::string_view pattern) : pattern_(Regex::compile(pattern)) {}
  void pre_tokenize(PreToken piece, const PreTokenSink& emit) const override {
    split_by_regex(piece, pattern_, true, Behavior::Removed, emit);
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
