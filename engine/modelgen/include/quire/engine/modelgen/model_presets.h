#pragma once

#include <span>
#include <string_view>

#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::engine::modelgen {

// Random models shaped like published downloads, small enough for tests: two
// layers and a hidden size of a few hundred, but the published model's
// architecture, head ratios (grouped-query factor, head_dim against
// hidden / heads), MLP ratio, biases, tying, rotary settings (theta,
// rope_scaling with its real parameters, max_position_embeddings), window
// keys (Qwen2.5's unused window, Mistral's null one), torch_dtype bfloat16
// with BF16 weights, and the number of EOS ids. Token ids that the small
// trained tokenizer lacks (Llama 3's 128000 and up) are replaced by ids of
// its own: BOS 1, the first EOS 2, further EOS ids just below kMinVocab.
// Qwen2.5's embeddings are padded beyond the tokenizer, as the real ones are.
//
// llama-3.1-8b-instruct, llama-3.2-3b-instruct, qwen2.5-7b-instruct,
// qwen2.5-1.5b-instruct, mistral-7b-instruct-v0.3, mistral-nemo-instruct-2407,
// gemma-2-9b-it, gemma-3-4b-it (with its vision tower), phi-3.5-mini-instruct,
// phi-4-mini-instruct, mixtral-8x7b-instruct-v0.1 and qwen3-30b-a3b (fewer
// experts than published). For any other published model,
// spec_from_published_config() reads its config.json.
std::span<const std::string_view> preset_names();

// Throws std::invalid_argument naming "like" and the known names.
RandomModelSpec preset_spec(std::string_view name);

}  // namespace quire::engine::modelgen
