// Feeds arbitrary bytes to the tokenizer.json loader as the file's text and,
// when they load, encodes and decodes a few strings. ModelError (a file the
// loader refuses) and std::out_of_range (ids a lying file names) are expected
// answers; a crash, a hang or a sanitizer report is a bug.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "quire/engine/model_error.h"
#include "quire/engine/tokenizer/detail/tokenizer_json_text.h"
#include "quire/engine/tokenizer/streaming_detokenizer.h"
#include "quire/engine/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quire::engine;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const Tokenizer tokenizer = detail::load_tokenizer_json_text(text);
    static constexpr std::string_view kSamples[] = {
        "Hello, world! It's 2024.", "  two  spaces\n\ttab",     "caf\xC3\xA9 \xF0\x9F\x8D\x80",
        "<|eot_id|><s>[INST]",      "\xFF\xFE broken \xE2\x82", ""};
    for (const std::string_view sample : kSamples) {
      const auto ids =
          tokenizer.encode(sample, EncodeOptions{.add_special = true, .parse_special = true});
      (void)tokenizer.decode(ids);
      (void)tokenizer.decode(ids, false);
      StreamingDetokenizer stream(tokenizer);
      for (const std::int32_t id : ids)
        (void)stream.push(id);
      (void)stream.flush();
    }
    for (std::int32_t id = 0; id < tokenizer.vocab_size() && id < 64; ++id) {
      (void)tokenizer.piece(id);
      (void)tokenizer.kind(id);
      (void)tokenizer.byte_value(id);
    }
    (void)tokenizer.description();
  } catch (const ModelError&) {
  } catch (const std::out_of_range&) {
  }
  return 0;
}
