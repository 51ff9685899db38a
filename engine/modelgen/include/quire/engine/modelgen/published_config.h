#pragma once

#include <filesystem>
#include <string>

#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::engine::modelgen {

// `make-model --config-from`: a small random model of a published
// config.json, so that a reader meets the keys exactly as the Hub writes them.
//
// The family comes from the class name (architectures[0]); every setting
// that the tensors or a reader depend on (rotary base and scaling, window,
// tying, soft-capping, experts per token, quantization) from the file's keys,
// or transformers' defaults where a key is absent. The shapes are scaled down
// in the file's proportions: heads of 64 for published heads of 128 or
// more, 32 below; no more than four key/value heads, the same grouped-query
// factor; hidden, intermediate and expert widths in the published ratios to
// the attention width (multiples of 32); two layers (a whole sliding pattern
// for Gemma 3); max(4, 2 x experts per token) experts at most; a vocabulary
// of 512. BOS and EOS ids beyond the smallest trained tokenizer are replaced
// by its own (BOS 1, EOS 2, further EOS just below kMinVocab).
//
// The spec keeps the file's text (published_config): config.json is that
// file with the shape keys replaced (Gemma 3's text_config gains those it
// left to defaults), ids beyond the vocabulary moved inside it, longrope's
// lists cut to rotary_dim / 2, and the keys of whatever the caller changes
// in the spec afterwards rewritten; every other key stays as written, in its
// order.
//
// Throws std::invalid_argument naming "config_from" when the file cannot be
// read, is not a JSON object, or names a class make-model does not write.
RandomModelSpec spec_from_published_config(const std::filesystem::path& file);

// The same from the file's text; `source` names it in messages.
RandomModelSpec spec_from_published_config_text(const std::string& text, const std::string& source);

}  // namespace quire::engine::modelgen
