#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "tokenizer_impl.h"

namespace quire::engine::detail {

// A SentencePiece tokenizer.model. `data` is the file's content, `path` its
// name for messages; the configuration files of `model_dir` name the special
// tokens. Throws ModelError.
std::unique_ptr<TokenizerImpl> load_sentencepiece(const std::string& data,
                                                  const std::filesystem::path& path,
                                                  const std::filesystem::path& model_dir);

}  // namespace quire::engine::detail
