// Feeds arbitrary bytes to the JSON schema compiler as a schema's text and,
// when it compiles, drives a token matcher over a small vocabulary of single
// bytes and JSON fragments, always taking an allowed token. GrammarError (a
// schema the compiler refuses) is the expected answer to bad input; a crash,
// a hang, a sanitizer report, or a matcher that allows nothing before its
// text is complete is a bug.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/grammar/grammar.h"
#include "quire/engine/grammar/token_matcher.h"
#include "quire/engine/grammar/token_vocabulary.h"

namespace {

std::shared_ptr<const quire::engine::grammar::TokenVocabulary> fuzz_vocabulary() {
  std::vector<std::string> tokens;
  for (int byte = 0; byte < 256; ++byte)
    tokens.emplace_back(1, static_cast<char>(byte));
  for (const char* fragment :
       {"{\"", "\":", "\",\"", "\"}", "},{", "[]", "{}", "null", "true", "false", "12", "-0.5e3",
        "\xC3\xA9", "\xF0\x9F\x98\x80", "\\n", "\\u00e9", "  ", "abc", "\"a\""})
    tokens.emplace_back(fragment);
  tokens.emplace_back();  // the end of text, an id without bytes
  const auto eos = static_cast<std::int32_t>(tokens.size() - 1);
  return std::make_shared<const quire::engine::grammar::TokenVocabulary>(
      std::move(tokens), std::vector<std::int32_t>{eos});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quire::engine::grammar;
  static const auto vocabulary = fuzz_vocabulary();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const Grammar> grammar;
  try {
    grammar = compile_json_schema_text(text);
  } catch (const GrammarError&) {
    return 0;
  }
  (void)grammar_matches(*grammar, "{}");
  (void)grammar_matches(*grammar, text);
  TokenMatcher matcher(grammar, vocabulary);
  std::vector<std::uint32_t> mask(matcher.mask_words());
  // Take the allowed token picked by the input's bytes, for a bounded walk.
  for (std::size_t step = 0; step < 64 && !matcher.is_finished(); ++step) {
    matcher.allowed_tokens(mask);
    std::vector<std::int32_t> allowed;
    for (std::int32_t id = 0; id < vocabulary->size(); ++id) {
      if ((mask[static_cast<std::size_t>(id) / 32] >> (id % 32)) & 1u) allowed.push_back(id);
    }
    if (allowed.empty()) std::abort();  // every reachable state must be completable
    const std::size_t choice = size == 0 ? 0 : data[step % size];
    if (!matcher.accept(allowed[choice % allowed.size()])) std::abort();
  }
  return 0;
}
