#include "quire/engine/tokenizer/text_case.h"

#include "hf/unicode_text.h"

namespace quire::engine {

std::string lowercase_text(std::string_view text) {
  return detail::lowercase(text);
}

}  // namespace quire::engine
