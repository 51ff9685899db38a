#pragma once

// A Jinja2 interpreter for the chat templates of instruct models. It renders
// byte for byte what Python's jinja2 renders when configured as Hugging Face
// transformers configures it (ImmutableSandboxedEnvironment, trim_blocks,
// lstrip_blocks, loop controls, transformers' tojson, raise_exception and
// strftime_now). It knows nothing of models or chats: the caller supplies the
// context as globals.
//
//   Template t = Template::parse(source);            // throws TemplateError
//   Rendered r = t.render({{"messages", messages}, {"bos_token", "<s>"}});
//
// Strings keep provenance (text.h): r.literal lists the bytes of r.text that
// were copied from literal caller data, so a chat renderer can tokenize them
// as plain text even when they spell a control token.
//
// Templates cannot reach anything but their globals; runaway templates stop
// with a TemplateError (construct "limit") when they exceed a step budget, a
// call depth or an output size.

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/template/error.h"
#include "quire/engine/template/text.h"
#include "quire/engine/template/value.h"

namespace quire::engine::jinja {

struct RenderOptions {
  // What strftime_now() reads, in local time; fixed in tests.
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
  std::size_t max_output_bytes = 64 << 20;
  // Evaluation steps (expressions and statements) before the render stops.
  std::size_t max_steps = 50'000'000;
  // Nested macro calls before the render stops.
  std::size_t max_call_depth = 200;
  // Items one range() may produce (Python's sandbox allows 100000).
  std::size_t max_range = 100'000;
};

struct Rendered {
  std::string text;
  // Merged, sorted byte ranges of `text` that came from literal strings.
  std::vector<TextRange> literal;
};

namespace ast {
struct Body;
}

class Template {
 public:
  // Parses with trim_blocks and lstrip_blocks on, as transformers does.
  // Throws TemplateError naming the construct and its line for anything it
  // cannot parse, including jinja2 features it does not support.
  static Template parse(std::string_view source);

  // Renders with `globals` (besides the built-ins range, namespace, dict,
  // raise_exception and strftime_now, which a global of the same name
  // replaces). Throws TemplateError.
  Rendered render(const std::map<std::string, Value>& globals,
                  const RenderOptions& options = {}) const;

 private:
  explicit Template(std::shared_ptr<const ast::Body> body) : body_(std::move(body)) {}
  std::shared_ptr<const ast::Body> body_;
};

}  // namespace quire::engine::jinja
