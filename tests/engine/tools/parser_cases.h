#pragma once

// Replies of each format family as models write them, with the reply each
// must parse to (ids from counting_call_ids). Shared by the parser tests and
// the fuzz target's seed corpus.

#include <string>
#include <vector>

#include "quire/engine/tools/tool_call_parser.h"

namespace quire::test {

struct ParserCase {
  const char* name;
  quire::engine::tools::ToolCallFormat format;
  std::string text;
  quire::engine::tools::ParsedReply expected;
};

const std::vector<ParserCase>& parser_cases();

}  // namespace quire::test
