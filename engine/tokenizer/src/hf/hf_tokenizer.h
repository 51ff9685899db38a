#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "../tokenizer_impl.h"

namespace quire::engine::detail {

// A Hugging Face tokenizer.json. `json_text` is the file's content, `path`
// its name for messages; when `model_dir` is given, its configuration files
// name the special tokens. Throws ModelError.
std::unique_ptr<TokenizerImpl> load_hf_tokenizer(const std::string& json_text,
                                                 const std::filesystem::path& path,
                                                 const std::filesystem::path* model_dir);

}  // namespace quire::engine::detail
