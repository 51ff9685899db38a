#include "quire/engine/template/error.h"

namespace quire::engine::jinja {
namespace {

std::string message(const std::string& problem, int line, bool raised) {
  if (raised || line <= 0) return problem;
  return "line " + std::to_string(line) + ": " + problem;
}

}  // namespace

TemplateError::TemplateError(std::string problem, int line, std::string construct, bool raised)
    : std::runtime_error(message(problem, line, raised)),
      problem_(std::move(problem)),
      line_(line),
      construct_(std::move(construct)),
      raised_(raised) {}

TemplateError TemplateError::at_line(int line) const {
  return TemplateError(problem_, line_ > 0 ? line_ : line, construct_, raised_);
}

}  // namespace quire::engine::jinja
