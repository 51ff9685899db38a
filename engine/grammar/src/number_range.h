#pragma once

#include <cstdint>
#include <optional>

#include "json_text.h"

namespace quire::engine::grammar {

// Integers in [low, high] as JSON spells them (no leading zeros, "-" only
// before a nonzero magnitude), built digit by digit the way range regexes
// are: each length of the range is a sequence of digit classes. Either bound
// may be absent. Throws GrammarError when low > high.
NodeId integer_in_range(JsonText& text, NodeId from, std::optional<std::int64_t> low,
                        std::optional<std::int64_t> high);

// Numbers in [low, high] for integer bounds, without an exponent: the
// integer part decides the range and the fraction is free, except at the
// magnitude's upper bound, where only zeros may follow the point.
NodeId number_in_range(JsonText& text, NodeId from, std::optional<std::int64_t> low,
                       std::optional<std::int64_t> high);

}  // namespace quire::engine::grammar
