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

// A whole-number bound of a number, inclusive (minimum, maximum) or not
// (exclusiveMinimum, exclusiveMaximum). |value| stays within 10^18.
struct NumberBound {
  std::int64_t value = 0;
  bool exclusive = false;
};

// Numbers between whole-number bounds, without an exponent: the integer part
// decides the range and the fraction is free, except at the bounds, where an
// included upper bound takes only zeros after the point and an excluded
// lower bound only a fraction with a nonzero digit. Throws GrammarError when
// no number lies between the bounds.
NodeId number_in_range(JsonText& text, NodeId from, std::optional<NumberBound> low,
                       std::optional<NumberBound> high);

}  // namespace quire::engine::grammar
