#include "quire/engine/template/template.h"

#include "interpreter.h"
#include "parser.h"

namespace quire::engine::jinja {

Template Template::parse(std::string_view source) {
  return Template(parse_template(source));
}

Rendered Template::render(const std::map<std::string, Value>& globals,
                          const RenderOptions& options) const {
  Interpreter interpreter(globals, options);
  Text text = interpreter.run(*body_);
  return Rendered{text.bytes(), text.literal()};
}

}  // namespace quire::engine::jinja
