#pragma once

// Splits a template into text and the tokens inside {{ }} and {% %}, applying
// jinja2's whitespace rules as transformers configures them: trim_blocks
// (the first newline after a block or comment tag goes), lstrip_blocks
// (spaces and tabs before a block or comment tag at the start of a line go),
// and the explicit - and + markers. Comments vanish; raw blocks become text.

#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/template/value.h"

namespace quire::engine::jinja {

struct Token {
  enum class Kind {
    Text,
    VariableBegin,
    VariableEnd,
    BlockBegin,
    BlockEnd,
    Name,
    String,
    Integer,
    Float,
    Operator,
    End
  };
  Kind kind;
  std::string text;  // text, name, operator, or the decoded string literal
  Value number;      // integer and float literals
  int line = 1;
};

// Throws TemplateError on unterminated tags, comments and strings, and on
// characters no token starts with.
std::vector<Token> tokenize(std::string_view source);

}  // namespace quire::engine::jinja
