#pragma once

#include <memory>
#include <string_view>

#include "ast.h"

namespace quire::engine::jinja {

// Parses a template into statements. Throws TemplateError (construct "syntax"
// or "statement 'name'") with the line of the problem.
std::shared_ptr<const ast::Body> parse_template(std::string_view source);

}  // namespace quire::engine::jinja
