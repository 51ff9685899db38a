#pragma once

// Logit bias by text: a bias for every token of a text as the model's
// tokenizer spells it (without special tokens). The CLI's --logit-bias-text,
// the server's text-keyed logit_bias and a chat's text biases in the app
// resolve texts here, so the three agree on which tokens a text names.

#include <string_view>

#include "quire/engine/generator/sampler.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

// Sets `bias` on every token id of `text` in sampling.token_bias, replacing
// a bias the token had. Returns false, changing nothing, when the text has no
// tokens (it is empty): the caller names the text in its own words.
bool add_text_bias(SamplingSettings& sampling, const Tokenizer& tokenizer, std::string_view text,
                   float bias);

}  // namespace quire::engine
