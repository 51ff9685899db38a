#pragma once

#include <nlohmann/json.hpp>
#include <random>

namespace quire::test {

// A random schema from the subset the grammar compiler enforces: objects
// with required and optional properties (names with quotes and accents),
// arrays with item bounds, strings with lengths, patterns or formats,
// enums, consts, integer and number ranges, type lists and anyOf, nested a
// few levels. Every string, array and number is bounded or closes easily,
// so random walks end.
nlohmann::ordered_json random_schema(std::mt19937& random, int depth = 0);

}  // namespace quire::test
