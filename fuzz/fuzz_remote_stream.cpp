// Feeds arbitrary bytes to the readers of what a remote OpenAI-compatible
// engine sends: the event-stream decoder (in two pieces split where the first
// byte says, so that events and lines straddle reads), each event's chunk
// reader, and the readers of error bodies, whole replies and model lists.
// ProtocolError (a message naming the problem) and the decoder's
// std::length_error are the expected answers to bad input; a crash, a hang,
// another exception or a sanitizer report is a bug.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "quire/remote/openai_stream.h"
#include "quire/remote/sse_decoder.h"

namespace {

void read_events(quire::remote::SseDecoder& decoder, std::string_view bytes) {
  using namespace quire::remote;
  for (const SseEvent& event : decoder.feed(bytes)) {
    try {
      const ChatChunk chunk = parse_chat_chunk(event.data);
      if (chunk.done && (!chunk.content.empty() || chunk.usage)) __builtin_trap();
      if (chunk.usage && (chunk.usage->prompt_tokens < 0 || chunk.usage->completion_tokens < 0))
        __builtin_trap();
    } catch (const ProtocolError& error) {
      if (std::string_view(error.what()).empty()) __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quire::remote;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::size_t split = size == 0 ? 0 : data[0] % (size + 1);
  SseDecoder decoder;
  try {
    read_events(decoder, bytes.substr(0, split));
    read_events(decoder, bytes.substr(split));
  } catch (const std::length_error&) {
  }
  decoder.finish();
  error_message_of(bytes);
  try {
    parse_chat_completion(bytes);
  } catch (const ProtocolError&) {
  }
  try {
    for (const RemoteModel& model : parse_model_list(bytes)) {
      if (model.id.empty() || model.context_tokens < 0) __builtin_trap();
    }
  } catch (const ProtocolError&) {
  }
  return 0;
}
