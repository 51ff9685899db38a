#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace quire::test {

// A small JSON Schema validator for the keywords the grammar compiler
// enforces, written from the specification for the tests: it checks what
// generation produced without sharing any code with the compiler. Returns
// an empty string when `value` satisfies `schema`, else what fails and where.
// Formats: date, time, date-time and uuid, checked as the RFCs define them
// (a date must exist); email, uri and ipv4 by their shape.
std::string schema_violation(const nlohmann::ordered_json& value,
                             const nlohmann::ordered_json& schema);

}  // namespace quire::test
