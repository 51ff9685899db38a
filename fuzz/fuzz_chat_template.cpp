// Feeds arbitrary bytes to the chat template interpreter as a template and,
// when they parse, renders them with a small chat under tight limits.
// TemplateError (a template refused, an evaluation error, a limit reached) is
// the expected answer; a crash, a hang or a sanitizer report is a bug.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "quire/engine/template/json_value.h"
#include "quire/engine/template/template.h"

namespace {

const std::map<std::string, quire::engine::jinja::Value>& chat_context() {
  using quire::engine::jinja::Value;
  static const std::map<std::string, Value> context = {
      {"messages", quire::engine::jinja::value_from_json_text(
                       R"([{"role": "system", "content": "Be brief."},
                           {"role": "user", "content": "Hi <|im_start|> there"},
                           {"role": "assistant", "content": "<think>x</think>Hello",
                            "reasoning_content": "x"},
                           {"role": "user", "content": "caf\u00e9 \ud83c\udf40"}])",
                       true)},
      {"tools", quire::engine::jinja::value_from_json_text(
                    R"([{"type": "function", "function": {"name": "f",
                        "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}])",
                    false)},
      {"add_generation_prompt", Value(true)},
      {"bos_token", Value("<s>")},
      {"eos_token", Value("</s>")},
  };
  return context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quire::engine::jinja;
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  try {
    const Template parsed = Template::parse(source);
    RenderOptions options;
    options.now = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
    options.max_output_bytes = 1 << 20;
    options.max_steps = 200'000;
    options.max_call_depth = 50;
    options.max_range = 10'000;
    const Rendered rendered = parsed.render(chat_context(), options);
    // Ranges must lie inside the text, sorted and apart.
    std::size_t end = 0;
    for (const TextRange& range : rendered.literal) {
      if (range.begin < end || range.begin >= range.end || range.end > rendered.text.size())
        __builtin_trap();
      end = range.end + 1;
    }
  } catch (const TemplateError&) {
  }
  return 0;
}
