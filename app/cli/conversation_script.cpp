#include "conversation_script.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace quire::cli {
namespace {

// `what` names one entry: "message", "reply".
std::vector<std::string> string_list(const nlohmann::json& root, const char* key, const char* what,
                                     const std::string& path) {
  std::vector<std::string> out;
  const auto it = root.find(key);
  if (it == root.end()) return out;
  if (!it->is_array()) throw UsageError(path + ": \"" + key + "\" must be a list of strings");
  for (const nlohmann::json& entry : *it) {
    if (!entry.is_string()) {
      throw UsageError(path + ": every " + what + " must be a string (\"" + key + "\")");
    }
    out.push_back(entry.get<std::string>());
  }
  return out;
}

}  // namespace

ConversationScript read_conversation_script(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UsageError("cannot read " + path);
  nlohmann::json root;
  try {
    file >> root;
  } catch (const nlohmann::json::exception& error) {
    throw UsageError(path + " is not valid JSON (" + error.what() + ")");
  }
  if (root.is_array()) root = nlohmann::json{{"messages", root}};
  if (!root.is_object() || !root.contains("messages") || !root["messages"].is_array() ||
      root["messages"].empty()) {
    throw UsageError(
        path + " needs a list of user messages: {\"system\": \"...\", \"messages\": [\"...\"]}");
  }
  ConversationScript script;
  script.messages = string_list(root, "messages", "message", path);
  script.replies = string_list(root, "replies", "reply", path);
  if (script.replies.size() > script.messages.size()) {
    throw UsageError(path + " has " + std::to_string(script.replies.size()) + " replies for " +
                     std::to_string(script.messages.size()) +
                     " messages; each reply answers the message before it");
  }
  if (root.contains("system")) {
    if (!root["system"].is_string()) throw UsageError(path + ": \"system\" must be a string");
    script.system = root["system"].get<std::string>();
  }
  return script;
}

}  // namespace quire::cli
