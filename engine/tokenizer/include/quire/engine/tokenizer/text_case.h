#pragma once

#include <string>
#include <string_view>

namespace quire::engine {

// Unicode's full lowercase mapping of valid UTF-8 (ICU's u_strToLower with
// the root locale), as Python's str.lower() and the tokenizers' Lowercase
// normalizer do it: the result may be longer or shorter in bytes.
std::string lowercase_text(std::string_view text);

}  // namespace quire::engine
