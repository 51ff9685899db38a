#include "quire/engine/generator/vocabulary_check.h"

#include "quire/engine/model_error.h"

namespace quire::engine {

void check_tokenizer_fits_model(std::int64_t tokenizer_tokens, std::int64_t embedding_rows,
                                const std::string& model_directory) {
  if (tokenizer_tokens <= embedding_rows) return;
  throw ModelError(model_directory + ": the tokenizer has " + std::to_string(tokenizer_tokens) +
                   " tokens but the model's embedding has only " + std::to_string(embedding_rows) +
                   " rows; the tokenizer files do not belong to these weights (use the "
                   "tokenizer files that came with the model)");
}

void check_tokenizer_fits_model(const Tokenizer& tokenizer, const ModelDescription& model) {
  check_tokenizer_fits_model(tokenizer.vocab_size(), model.config.vocab_size,
                             model.directory.string());
}

}  // namespace quire::engine
