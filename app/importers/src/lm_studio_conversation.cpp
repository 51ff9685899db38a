// LM Studio's conversation files: one chat whose messages are slots, each
// holding the versions the user made by regenerating or editing. The version
// selected in each slot continues the chat; the others are siblings that end
// there, as LM Studio shows them ("< 2/3 >").

#include <sstream>
#include <string>
#include <vector>

#include "foreign_tree.h"

namespace quire::importers::detail {
namespace {

// The text parts of a content array ({type: "text", text}); files and images
// are not carried over.
std::string parts_text(const Json& content, const std::string& place) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw ImportError(place + ": \"content\" should be an array, not " + type_words(content));
  }
  std::string text;
  for (const Json& part : content) {
    if (!part.is_object()) continue;
    const auto type = part.find("type");
    if (type == part.end() || !type->is_string() || type->get<std::string>() != "text") continue;
    const std::string piece =
        optional_string(part, "text", place + ", content part").value_or(std::string());
    if (piece.empty()) continue;
    if (!text.empty()) text += "\n\n";
    text += piece;
  }
  return text;
}

// A reply of several steps keeps its text in the steps' content blocks.
std::string steps_text(const Json& steps, const std::string& place) {
  if (!steps.is_array()) {
    throw ImportError(place + ": \"steps\" should be an array, not " + type_words(steps));
  }
  std::string text;
  for (const Json& step : steps) {
    if (!step.is_object()) continue;
    const auto type = step.find("type");
    if (type == step.end() || !type->is_string() || type->get<std::string>() != "contentBlock")
      continue;
    const auto content = step.find("content");
    if (content == step.end() || content->is_null()) continue;
    const std::string piece = parts_text(*content, place + ", step");
    if (piece.empty()) continue;
    if (!text.empty()) text += "\n\n";
    text += piece;
  }
  return text;
}

ForeignMessage read_version(const Json& version, const std::string& place) {
  if (!version.is_object()) {
    throw ImportError(place + ": should be an object, not " + type_words(version));
  }
  ForeignMessage out;
  const std::optional<std::string> role = optional_string(version, "role", place);
  if (!role) throw ImportError(place + ": it has no \"role\"");
  if (*role != "system" && *role != "user" && *role != "assistant" && *role != "tool") {
    throw ImportError(place + ": the role '" + *role +
                      "' is not one of system, user, assistant, tool");
  }
  out.role = *role;
  const auto steps = version.find("steps");
  const auto content = version.find("content");
  if (steps != version.end() && !steps->is_null()) {
    out.text = steps_text(*steps, place);
  } else if (content != version.end() && !content->is_null()) {
    out.text = parts_text(*content, place);
  }
  return out;
}

}  // namespace

std::vector<ForeignChat> read_lm_studio_conversation(const Json& root) {
  const std::string place = "the conversation";
  if (!root.is_object()) {
    throw ImportError(place + ": should be an object, not " + type_words(root));
  }
  ForeignChat chat;
  chat.title = optional_string(root, "name", place).value_or(std::string());
  // LM Studio counts milliseconds.
  if (const std::optional<double> created = optional_number(root, "createdAt", place))
    chat.created = *created / 1000.0;
  chat.system_prompt = optional_string(root, "systemPrompt", place).value_or(std::string());
  const auto model = root.find("lastUsedModel");
  if (model != root.end() && model->is_object()) {
    chat.model =
        optional_string(*model, "identifier", place + ", lastUsedModel").value_or(std::string());
  }
  const auto messages = root.find("messages");
  if (messages == root.end() || !messages->is_array()) {
    throw ImportError(place + ": it has no \"messages\" array");
  }
  std::optional<std::size_t> selected_before;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const Json& slot = (*messages)[i];
    const std::string slot_place = "message " + std::to_string(i + 1);
    if (!slot.is_object()) {
      throw ImportError(slot_place + ": should be an object, not " + type_words(slot));
    }
    const auto versions = slot.find("versions");
    if (versions == slot.end() || !versions->is_array() || versions->empty()) {
      throw ImportError(slot_place + ": it has no \"versions\" to read");
    }
    const std::optional<double> chosen = optional_number(slot, "currentlySelected", slot_place);
    const double selected = chosen.value_or(0);
    if (selected < 0 || selected >= static_cast<double>(versions->size()) ||
        selected != static_cast<double>(static_cast<std::size_t>(selected))) {
      std::ostringstream shown;
      shown << selected;
      throw ImportError(slot_place + ": \"currentlySelected\" is " + shown.str() +
                        ", but the message has " + std::to_string(versions->size()) +
                        " versions (counted from 0)");
    }
    std::optional<std::size_t> selected_index;
    for (std::size_t v = 0; v < versions->size(); ++v) {
      ForeignMessage message =
          read_version((*versions)[v], slot_place + ", version " + std::to_string(v + 1));
      message.parent = selected_before;
      if (v == static_cast<std::size_t>(selected)) selected_index = chat.messages.size();
      chat.messages.push_back(std::move(message));
    }
    selected_before = selected_index;
  }
  chat.current = selected_before;
  std::vector<ForeignChat> chats;
  chats.push_back(std::move(chat));
  return chats;
}

}  // namespace quire::importers::detail
