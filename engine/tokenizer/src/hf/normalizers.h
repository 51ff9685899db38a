#pragma once

#include <memory>
#include <string>

#include "json_field.h"

namespace quire::engine::detail {

// tokenizer.json's "normalizer": text to text, applied to the text between
// added tokens before pre-tokenization. Texts are valid UTF-8.
class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual std::string normalize(std::string text) const = 0;
};

// nullptr for a null normalizer. Throws ModelError for an unknown type.
std::unique_ptr<Normalizer> read_normalizer(const JsonField& config);

}  // namespace quire::engine::detail
