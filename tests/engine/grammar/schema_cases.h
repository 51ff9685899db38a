#pragma once

#include <vector>

namespace quire::test {

struct SchemaCase {
  const char* name;
  const char* schema;
  const char* text;
  bool matches;
};

// Whole texts each schema must accept or reject, with the default options
// (at most one whitespace byte at each place JSON allows it).
std::vector<SchemaCase> schema_matching_cases();

}  // namespace quire::test

namespace quire::test {

struct RefusalCase {
  const char* name;
  const char* schema;
  const char* message_part;  // must appear in the GrammarError's message
};

std::vector<RefusalCase> schema_refusal_cases();

}  // namespace quire::test
