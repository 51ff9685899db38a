#pragma once

#include <string>
#include <vector>

namespace quire::cli {

// A conversation file, as replay and render read it:
//   {"system": "...", "messages": ["first user message", ...],
//    "replies": ["first reply", ...]}
// or just the list of messages. "replies" is optional (render uses it for
// the assistant turns between the messages; replay generates them).
struct ConversationScript {
  std::string system;
  std::vector<std::string> messages;
  std::vector<std::string> replies;
};

// Throws UsageError naming the file and what is wrong with it.
ConversationScript read_conversation_script(const std::string& path);

inline constexpr const char* kConversationFileHelp =
    "JSON file: {\"system\": \"...\", \"messages\": [\"...\", ...], \"replies\": [\"...\", ...]}";

}  // namespace quire::cli
