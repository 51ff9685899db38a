#pragma once

// Chats exported by other applications, read from their own JSON formats:
//  - ChatGPT's data export, conversations.json: a list of conversations, each
//    a `mapping` of nodes {id, message, parent, children} and a
//    `current_node`; the message has author.role, content.parts (or
//    content.text for code and tool output) and create_time in seconds.
//  - Open WebUI's chat export: a list of {id, title, chat, created_at}, the
//    chat holding history.messages {id: {role, content, parentId,
//    childrenIds, timestamp}} and history.currentId, or only a flat
//    `messages` list in older exports.
//  - LM Studio's conversation files (*.conversation.json): one chat {name,
//    createdAt in ms, systemPrompt, messages}, each message a list of
//    `versions` ({role, content: [{type: "text", text}]} or, for a reply,
//    steps of content blocks) with `currentlySelected` naming the one shown.
// Trees stay trees: ChatGPT's and Open WebUI's branches, and LM Studio's
// versions as siblings. Plain C++ (no Qt) so the fuzz build links it.

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace quire::importers {

enum class ForeignFormat { ChatGpt, OpenWebUi, LmStudio };

// "ChatGPT export", "Open WebUI export", "LM Studio conversation".
const char* format_name(ForeignFormat format);

// A file that cannot be imported; what() names the place and the problem,
// e.g. "conversation 3, mapping node 'abc': parent 'xyz' is missing".
class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ForeignMessage {
  // "system", "user", "assistant" or "tool".
  std::string role;
  std::string text;  // UTF-8
  // The index of the message this one follows in ForeignChat::messages
  // (always an earlier one); nullopt for a first message.
  std::optional<std::size_t> parent;
  // Seconds since the Unix epoch; nullopt when the file does not say.
  std::optional<double> created;
};

struct ForeignChat {
  std::string title;
  std::optional<double> created;  // seconds since the Unix epoch
  std::optional<double> updated;
  // The model the chat used, as the application named it; may be empty.
  std::string model;
  // LM Studio keeps the system prompt beside the messages.
  std::string system_prompt;
  // The whole tree, each parent before its children, siblings in the order
  // the file lists them.
  std::vector<ForeignMessage> messages;
  // The leaf of the path the application showed; nullopt: the last message.
  std::optional<std::size_t> current;
};

// The format of `json`, or nullopt when it is none of these (or not JSON).
std::optional<ForeignFormat> detect_foreign_format(std::string_view json);

// Reads every conversation of `json` in `format`. Throws ImportError naming
// the first problem; nothing is returned from a file with one.
std::vector<ForeignChat> read_foreign_chats(std::string_view json, ForeignFormat format);

}  // namespace quire::importers
