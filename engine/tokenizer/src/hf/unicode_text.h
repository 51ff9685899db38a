#pragma once

#include <string>
#include <string_view>

namespace quire::engine::detail {

enum class NormalForm { NFC, NFD, NFKC, NFKD };

// Unicode normalization and full lowercasing of valid UTF-8, through ICU.
std::string normalize_unicode(std::string_view text, NormalForm form);
std::string lowercase(std::string_view text);

}  // namespace quire::engine::detail
