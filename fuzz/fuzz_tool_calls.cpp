// Feeds arbitrary text to the tool-call parsers of every format family, whole
// and streamed in pieces the input chooses. The first byte picks the family,
// the second seeds the piece sizes, the rest is the model's text. Whole and
// streamed must give the same reply; a reply that did not break must be
// rebuilt exactly from the stream's deltas, and its calls must carry a name
// and arguments that are one JSON object. A crash, a hang, a sanitizer report
// or a disagreement is a bug.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/tools/tool_call_parser.h"

namespace {

using namespace quire::engine::tools;

void check(bool condition) {
  if (!condition) std::abort();
}

ParsedReply assemble(const std::vector<StreamDelta>& deltas) {
  ParsedReply reply;
  for (const StreamDelta& delta : deltas) {
    reply.content += delta.content;
    reply.reasoning += delta.reasoning;
    for (const ToolCallDelta& piece : delta.tool_calls) {
      if (piece.index == reply.tool_calls.size()) {
        check(!piece.id.empty() && !piece.name.empty());
        reply.tool_calls.push_back({piece.id, piece.name, {}});
      } else {
        check(piece.index + 1 == reply.tool_calls.size() && piece.id.empty());
      }
      reply.tool_calls.back().arguments += piece.arguments;
    }
  }
  return reply;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  constexpr ToolCallFormat kFormats[] = {ToolCallFormat::None,    ToolCallFormat::Hermes,
                                         ToolCallFormat::Llama3,  ToolCallFormat::Mistral,
                                         ToolCallFormat::Harmony, ToolCallFormat::DeepSeekV3};
  const ToolCallFormat format = kFormats[data[0] % 6];
  unsigned seed = data[1];
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

  const ParsedReply whole = parse_tool_calls(format, text, counting_call_ids(format));

  // The second byte's low bit also picks whether calls stream in fragments.
  StreamOptions options;
  options.whole_calls = (data[1] & 1) != 0;
  ToolCallStream stream(format, counting_call_ids(format), options);
  std::vector<StreamDelta> deltas;
  for (std::size_t at = 0; at < text.size();) {
    seed = seed * 1103515245u + 12345u;
    const std::size_t piece = 1 + (seed >> 16) % 7;
    deltas.push_back(stream.feed(text.substr(at, piece)));
    at += piece;
  }
  deltas.push_back(stream.finish());
  check(stream.reply() == whole);

  if (whole.broken) {
    check(whole.content == text && whole.tool_calls.empty());
    return 0;
  }
  check(assemble(deltas) == whole);
  for (const ToolCall& call : whole.tool_calls) {
    check(!call.name.empty());
    const nlohmann::json arguments = nlohmann::json::parse(call.arguments, nullptr, false);
    check(arguments.is_object());
  }
  return 0;
}
