#pragma once

#include <string>
#include <string_view>

#include "json_text.h"

namespace quire::engine::grammar {

// A JSON string whose content matches an ECMAScript regular expression, as
// JSON Schema's "pattern" means it: anywhere in the string unless anchored
// with ^ and $. The regular subset is supported: literal characters and
// escapes (\n, \t, \xHH, \uHHHH, escaped punctuation), ".", classes with
// ranges and negation, \d \w \s and their negations, groups ((...), (?:...),
// (?<name>...)), alternation, and the quantifiers * + ? {n} {n,} {n,m} (lazy
// ones match the same strings). Refused by name, with GrammarError naming
// `where`: backreferences, lookaround, word boundaries, Unicode property
// classes, anchors other than a leading ^ and a trailing $, and non-ASCII
// ranges in classes. Characters the regex allows are spelled as JSON spells
// them ('"' as \", controls as escapes). \s and \S keep to ASCII whitespace,
// so what is generated always matches.
NodeId string_matching_pattern(JsonText& text, NodeId from, std::string_view pattern,
                               const std::string& where);

}  // namespace quire::engine::grammar
