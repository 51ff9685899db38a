#include "pattern.h"

namespace quire::engine::detail {

Regex read_pattern(const JsonField& pattern) {
  pattern.require_object();
  if (const auto literal = pattern.find("String")) {
    try {
      return Regex::literal(literal->string());
    } catch (const RegexError& error) {
      literal->fail(std::string("cannot be searched for (") + error.what() + ")");
    }
  }
  if (const auto regex = pattern.find("Regex")) {
    const std::string text = regex->string();
    try {
      return Regex::compile(text);
    } catch (const RegexError& error) {
      regex->fail("is a regular expression that PCRE2 cannot compile: " + text + " (" +
                  error.what() + ")");
    }
  }
  pattern.fail("must hold \"String\" or \"Regex\"");
}

}  // namespace quire::engine::detail
