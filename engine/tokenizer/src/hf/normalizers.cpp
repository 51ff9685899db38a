#include "normalizers.h"

#include <vector>

#include "pattern.h"
#include "unicode_text.h"
#include "utf8.h"

namespace quire::engine::detail {
namespace {

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts)
      : parts_(std::move(parts)) {}
  std::string normalize(std::string text) const override {
    for (const auto& part : parts_)
      text = part->normalize(std::move(text));
    return text;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(NormalForm form) : form_(form) {}
  std::string normalize(std::string text) const override { return normalize_unicode(text, form_); }

 private:
  NormalForm form_;
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string normalize(std::string text) const override {
    // Hugging Face leaves empty text empty.
    return text.empty() ? text : prefix_ + text;
  }

 private:
  std::string prefix_;
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(Regex pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::string normalize(std::string text) const override {
    return pattern_.replace_all(text, content_);
  }

 private:
  Regex pattern_;
  std::string content_;
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  std::string normalize(std::string text) const override {
    std::string_view view = text;
    if (left_) view = trim_start(view);
    if (right_) view = trim_end(view);
    return std::string(view);
  }

 private:
  bool left_;
  bool right_;
};

class LowercaseNormalizer final : public Normalizer {
 public:
  std::string normalize(std::string text) const override { return lowercase(text); }
};

class StripAccentsNormalizer final : public Normalizer {
 public:
  StripAccentsNormalizer() : marks_(Regex::compile("\\p{M}")) {}
  std::string normalize(std::string text) const override { return marks_.replace_all(text, ""); }

 private:
  Regex marks_;
};

}  // namespace

std::unique_ptr<Normalizer> read_normalizer(const JsonField& config) {
  if (config.is_null()) return nullptr;
  const std::string type = config.type();
  if (type == "Sequence") {
    const JsonField list = config.at("normalizers");
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (auto part = read_normalizer(list.at(i))) parts.push_back(std::move(part));
    }
    return std::make_unique<SequenceNormalizer>(std::move(parts));
  }
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(NormalForm::NFC);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(NormalForm::NFD);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(NormalForm::NFKC);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(NormalForm::NFKD);
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(config.at("prepend").string());
  if (type == "Replace") {
    return std::make_unique<ReplaceNormalizer>(read_pattern(config.at("pattern")),
                                               config.at("content").string());
  }
  if (type == "Strip") {
    return std::make_unique<StripNormalizer>(config.boolean_or("strip_left", false),
                                             config.boolean_or("strip_right", false));
  }
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "StripAccents") return std::make_unique<StripAccentsNormalizer>();
  config.fail_unsupported(
      "is a normalizer of type \"" + type +
      "\", which Quire does not read (it reads Sequence, NFC, NFD, NFKC, NFKD, Prepend, "
      "Replace, Strip, StripAccents and Lowercase)");
}

}  // namespace quire::engine::detail
