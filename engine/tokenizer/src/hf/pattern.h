#pragma once

#include "json_field.h"
#include "regex.h"

namespace quire::engine::detail {

// A "pattern" of tokenizer.json: {"String": "..."} or {"Regex": "..."}.
// Throws ModelError naming the place for a pattern PCRE2 cannot compile.
Regex read_pattern(const JsonField& pattern);

}  // namespace quire::engine::detail
