// Feeds arbitrary bytes to the OpenAI-compatible server's request parsers as
// the body of /v1/chat/completions and of /v1/completions. ApiException (a
// 400 naming the problem) is the expected answer to bad input; a crash, a
// hang, another exception or a sanitizer report is a bug. An answer must
// also be consistent: a status of 400 and a message that is valid UTF-8.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "quire/server/api_error.h"
#include "quire/server/openai_request.h"

namespace {

void check(const quire::server::ApiException& error) {
  if (error.error().status != 400 || error.error().message.empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quire::server;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const ChatCompletionRequest request = parse_chat_completion_request(body);
    // The user message awaiting the reply and every earlier exchange come
    // from the body, which is valid UTF-8.
    if (first_invalid_utf8(request.turns.user)) __builtin_trap();
    if (request.sampling.stop.size() > kMaxStopStrings) __builtin_trap();
    if (request.n < 1 || request.n > kMaxChoices) __builtin_trap();
  } catch (const ApiException& error) {
    check(error);
  }
  try {
    const CompletionRequest request = parse_completion_request(body);
    if (request.prompt_ids) {
      for (std::int64_t id : *request.prompt_ids) {
        if (id < 0) __builtin_trap();
      }
    }
    if (request.n < 1 || request.n > kMaxChoices) __builtin_trap();
  } catch (const ApiException& error) {
    check(error);
  }
  return 0;
}
