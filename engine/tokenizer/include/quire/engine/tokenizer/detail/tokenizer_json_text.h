#pragma once

#include <string_view>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine::detail {

// Loads a tokenizer from the text of a tokenizer.json alone, without a model
// directory or configuration files (no BOS or EOS beyond what the
// post-processor names). For the fuzz target and tests that feed the loader
// arbitrary text; throws ModelError as Tokenizer::load does.
Tokenizer load_tokenizer_json_text(std::string_view json_text);

}  // namespace quire::engine::detail
