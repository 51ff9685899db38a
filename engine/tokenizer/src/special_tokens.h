#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quire::engine::detail {

// What the configuration files need to know about the vocabulary.
struct VocabularyView {
  std::string source = "tokenizer.model";  // the file that holds the vocabulary, for messages
  int size = 0;
  std::function<std::optional<std::int32_t>(std::string_view)> find;
  // The ids tokenizer.model itself declares, the last resort.
  std::optional<std::int32_t> model_bos;
  std::optional<std::int32_t> model_eos;
};

struct SpecialTokens {
  std::optional<std::int32_t> bos;
  std::vector<std::int32_t> eos;  // deduplicated, in configuration order
  bool add_bos = false;
  // tokenizer_config.json's "add_bos_token", when it sets one.
  std::optional<bool> add_bos_setting;
  // The contents of tokenizer_config.json's "added_tokens_decoder" entries
  // marked special, in file order.
  std::vector<std::string> configured_special;
  // tokenizer_config.json's "clean_up_tokenization_spaces" (transformers'
  // default is false).
  bool clean_up_spaces = false;
};

// Resolves BOS, EOS and add_bos from <model_dir>'s generation_config.json,
// config.json and tokenizer_config.json (each optional). Throws ModelError for
// malformed JSON, ill-typed values and ids outside the vocabulary.
SpecialTokens resolve_special_tokens(const std::filesystem::path& model_dir,
                                     const VocabularyView& vocabulary);

}  // namespace quire::engine::detail
