// Feeds arbitrary bytes to the OpenAI-compatible server's request parsers as
// the body of /v1/chat/completions and of /v1/completions. ApiException (a
// 400 naming the problem) is the expected answer to bad input; a crash, a
// hang, another exception or a sanitizer report is a bug. An answer must
// also be consistent: a status of 400 and a message that is valid UTF-8; and
// a user message's image parts hold what the parser promises.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "quire/server/api_error.h"
#include "quire/server/openai_request.h"

namespace {

void check(const quire::server::ApiException& error) {
  if (error.error().status != 400 || error.error().message.empty()) __builtin_trap();
}

// Image parts only in user messages, each a non-empty file of a taken type
// within the size limit, whose bytes begin as its type says; the message's
// text is its text parts joined by newlines.
void check_images(const quire::server::ChatMessage& message) {
  using namespace quire::server;
  if (message.parts.empty()) return;
  if (message.role != "user") __builtin_trap();
  std::string text;
  bool first = true;
  for (const ContentPart& part : message.parts) {
    if (!part.image) {
      text += (first ? "" : "\n") + part.text;
      first = false;
      continue;
    }
    const MessageImage& image = *part.image;
    if (image.bytes.empty() || image.bytes.size() > kMaxImageBytes) __builtin_trap();
    const std::string_view types[] = {"image/png", "image/jpeg", "image/webp", "image/gif"};
    if (std::ranges::find(types, image.mime_type) == std::end(types)) __builtin_trap();
    if (image.mime_type == "image/png" && image.bytes[0] != 0x89) __builtin_trap();
    if (image.mime_type == "image/jpeg" && image.bytes[0] != 0xFF) __builtin_trap();
    if (image.mime_type == "image/webp" && image.bytes[0] != 'R') __builtin_trap();
    if (image.mime_type == "image/gif" && image.bytes[0] != 'G') __builtin_trap();
    if (image.detail != "auto" && image.detail != "low" && image.detail != "high") {
      __builtin_trap();
    }
    if (!image.where.starts_with("messages[")) __builtin_trap();
  }
  if (text != message.content) __builtin_trap();
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
    for (const ChatMessage& message : request.messages)
      check_images(message);
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
