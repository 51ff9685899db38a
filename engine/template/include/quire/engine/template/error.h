#pragma once

#include <stdexcept>
#include <string>

namespace quire::engine::jinja {

// A template that cannot be parsed or rendered. what() reads
// "line N: <problem>" (for example "line 3: 'include' is not supported"),
// except when the template itself called raise_exception(msg): then raised()
// is true and what() is exactly msg, so the caller can show the template
// author's words as they are.
class TemplateError : public std::runtime_error {
 public:
  // `line` 0 means not yet known; the renderer fills it in on the way out.
  TemplateError(std::string problem, int line = 0, std::string construct = "expression",
                bool raised = false);

  int line() const { return line_; }
  // What failed: "expression", "filter 'wordwrap'", "statement 'include'",
  // "test 'foo'", "raise_exception", "limit"...
  const std::string& construct() const { return construct_; }
  bool raised() const { return raised_; }
  // The problem without the "line N: " prefix.
  const std::string& problem() const { return problem_; }

  // The same error placed on `line` (when it had none yet).
  TemplateError at_line(int line) const;

 private:
  std::string problem_;
  int line_ = 0;
  std::string construct_;
  bool raised_ = false;
};

}  // namespace quire::engine::jinja
