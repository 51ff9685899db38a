#include "quire/engine/generator/text_bias.h"

namespace quire::engine {

bool add_text_bias(SamplingSettings& sampling, const Tokenizer& tokenizer, std::string_view text,
                   float bias) {
  const std::vector<std::int32_t> ids = tokenizer.encode(text, false);
  if (ids.empty()) return false;
  for (const std::int32_t id : ids)
    sampling.token_bias[id] = bias;
  return true;
}

}  // namespace quire::engine
