#pragma once

// The messages of a chat completion request as OpenAI's API gives them, and
// the tools it offers: what a request with tools hands to the model's chat
// template. Parsed at the edge (chat_messages_parser.cpp); plain C++.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace quire::server {

// One tool call: what an assistant message made (tool_calls[]) or a reply makes.
struct FunctionCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text of an object, as the model wrote it

  friend bool operator==(const FunctionCall&, const FunctionCall&) = default;
};

// An image a user message sent inline (an image_url part holding a data:
// URL), its base64 decoded; image_part_parser.cpp reads it. The bytes are the
// file as sent: the image is decoded later, by the model's preprocessing.
struct MessageImage {
  // image/png, image/jpeg, image/webp or image/gif: what the bytes' signature
  // says, which wins over the data: URL's media type when they differ.
  std::string mime_type;
  std::vector<std::uint8_t> bytes;
  std::string detail = "auto";  // image_url.detail: "auto", "low" or "high"
  // Where the request held it ("messages[2].content[1]"), for the errors
  // that come later (the model cannot see it, the file does not decode).
  std::string where;

  friend bool operator==(const MessageImage&, const MessageImage&) = default;
};

// Largest image one part may hold, decoded: room for any photo a camera
// writes, and a bound on what one part makes the server hold. The request
// body's own limit (--max-body-mib, 8 MiB by default) usually comes first.
inline constexpr std::size_t kMaxImageBytes = std::size_t{20} << 20;

// One part of a message's content, text or an image, in the request's order.
struct ContentPart {
  std::string text;                   // a text part
  std::optional<MessageImage> image;  // an image part (text empty)

  friend bool operator==(const ContentPart&, const ContentPart&) = default;
};

// One message, in order.
struct ChatMessage {
  std::string role;  // "system" (also for "developer"), "user", "assistant" or "tool"
  std::string content;
  // An assistant message's content was null or absent (beside its tool calls).
  bool null_content = false;
  std::vector<FunctionCall> tool_calls;  // an assistant message's calls
  std::string tool_call_id;              // a tool message: the call it answers
  // A tool message: the function's name, from the message or else from the
  // call it answers (gpt-oss's and Llama's templates print it).
  std::string name;
  // A user message whose content holds an image: every part in order, so
  // that the prompt can place each image's tokens where it was sent
  // (`content` still holds the text parts, joined). Empty for a message of
  // text alone.
  std::vector<ContentPart> parts;

  bool has_images() const { return !parts.empty(); }
  friend bool operator==(const ChatMessage&, const ChatMessage&) = default;
};

// One function of `tools`.
struct FunctionTool {
  std::string name;
  std::string parameters;  // the JSON schema as compact JSON text, keys in their order
  bool strict = false;     // function.strict: the arguments must fit the schema

  friend bool operator==(const FunctionTool&, const FunctionTool&) = default;
};

// tools, tool_choice and parallel_tool_calls.
struct ToolsRequest {
  enum class Choice { Auto, None, Required, Named };

  // The tools array as given, as compact JSON text with its keys in their
  // order (the template's `tools` variable); empty when the request has none.
  std::string json;
  std::vector<FunctionTool> functions;
  Choice choice = Choice::Auto;
  std::string named;     // Choice::Named: the function the reply must call
  bool parallel = true;  // parallel_tool_calls: more than one call per reply

  bool offered() const { return !functions.empty() && choice != Choice::None; }
  friend bool operator==(const ToolsRequest&, const ToolsRequest&) = default;
};

}  // namespace quire::server
