#pragma once

#include <memory>
#include <string>
#include <vector>

#include "json_field.h"

namespace quire::engine::detail {

// A piece of text on its way to the model. `at_start`: the piece begins where
// the whole input text begins (Metaspace's prepend_scheme "first" needs it).
struct PreToken {
  std::string text;
  bool at_start = false;
};
using PreTokens = std::vector<PreToken>;

// tokenizer.json's "pre_tokenizer": splits (and may rewrite) the normalized
// text into the words the model tokenizes one by one.
class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void pre_tokenize(PreTokens& pieces) const = 0;
  // Whether the pieces come out in GPT-2's byte-level alphabet.
  virtual bool byte_level() const { return false; }
};

// nullptr for a null pre-tokenizer. Throws ModelError for an unknown type.
std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonField& config);

}  // namespace quire::engine::detail
