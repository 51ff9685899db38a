#pragma once

#include <cstdint>
#include <string>

#include "quire/engine/runtime/model_description.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

// Where a model's weights and its tokenizer are joined. A tokenizer whose ids
// reach beyond the embedding's rows belongs to other weights: every such id
// would fail at prefill, so it is refused at load with both sizes. An
// embedding with more rows than the tokenizer has tokens is normal (padded
// for speed, as Qwen2.5's are); those rows are never sampled
// (ForwardPass::mask_logits_from, which the Generator sets up).
//
// Throws ModelError naming the model directory, the tokenizer's size and the
// embedding's rows.
void check_tokenizer_fits_model(const Tokenizer& tokenizer, const ModelDescription& model);

// The same check on plain numbers, for callers that hold no description.
void check_tokenizer_fits_model(std::int64_t tokenizer_tokens, std::int64_t embedding_rows,
                                const std::string& model_directory);

}  // namespace quire::engine
