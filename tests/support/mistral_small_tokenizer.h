#pragma once

// A tokenizer laid out as Mistral Small 3.1 publishes it, for tests of its
// images: Mistral NeMo's Tekken tokenizer (tests/reference/node_modules,
// the same 131,072 tokens) with the control tokens 10 to 19 named as in
// Mistral Small 3.1's tokenizer ([IMG] 10, [IMG_BREAK] 12, [IMG_END] 13,
// [SYSTEM_PROMPT] 17, ...) and tests/data/mistral-small-3-chat-template.jinja,
// which writes an image part as [IMG]. Pass the directory to
// RandomModelSpec::tokenizer_from (or make-model's --tokenizer-from).

#include <filesystem>

namespace quire::test {

// Writes tokenizer.json, tokenizer_config.json and chat_template.jinja into
// `out_dir` (created if missing). Throws std::runtime_error naming the file
// it cannot read or write.
void write_mistral_small_tokenizer(const std::filesystem::path& nemo_dir,
                                   const std::filesystem::path& chat_template,
                                   const std::filesystem::path& out_dir);

}  // namespace quire::test
