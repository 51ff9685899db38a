// Open WebUI's chat export: a list of chats, each with `chat.history`, a map
// of messages by id with parentId and childrenIds and the shown leaf in
// currentId. Older exports (and some tools) give only `chat.messages`, one
// branch in order.

#include <string>
#include <vector>

#include "foreign_tree.h"

namespace quire::importers::detail {
namespace {

std::string checked_role(const Json& message, const std::string& place) {
  const std::optional<std::string> role = optional_string(message, "role", place);
  if (!role) throw ImportError(place + ": it has no \"role\"");
  if (*role != "system" && *role != "user" && *role != "assistant" && *role != "tool") {
    throw ImportError(place + ": the role '" + *role +
                      "' is not one of system, user, assistant, tool");
  }
  return *role;
}

// Open WebUI stores a message's time in seconds.
ForeignMessage read_message(const Json& message, const std::string& place) {
  if (!message.is_object()) {
    throw ImportError(place + ": should be an object, not " + type_words(message));
  }
  ForeignMessage out;
  out.role = checked_role(message, place);
  out.text = optional_string(message, "content", place).value_or(std::string());
  out.created = optional_number(message, "timestamp", place);
  return out;
}

void read_history(const Json& history, const std::string& place, ForeignChat* chat) {
  const auto messages = history.find("messages");
  if (messages == history.end() || !messages->is_object()) {
    throw ImportError(place + ", chat.history: it has no \"messages\" object");
  }
  std::vector<TreeNode> nodes;
  const std::string where = place + ", history message";
  for (auto entry = messages->begin(); entry != messages->end(); ++entry) {
    const std::string node_place = where + " '" + entry.key() + "'";
    TreeNode node;
    node.id = entry.key();
    node.message = read_message(entry.value(), node_place);
    node.parent = optional_string(entry.value(), "parentId", node_place);
    const auto children = entry.value().find("childrenIds");
    if (children != entry.value().end() && !children->is_null()) {
      if (!children->is_array()) {
        throw ImportError(node_place + ": \"childrenIds\" should be an array, not " +
                          type_words(*children));
      }
      for (const Json& child : *children) {
        if (!child.is_string()) {
          throw ImportError(node_place + ": \"childrenIds\" should hold message ids, not " +
                            type_words(child));
        }
        node.children.push_back(child.get<std::string>());
      }
    }
    nodes.push_back(std::move(node));
  }
  build_tree(nodes, optional_string(history, "currentId", place + ", chat.history"), where,
             place + ", chat.history.currentId", chat);
}

void read_flat_messages(const Json& messages, const std::string& place, ForeignChat* chat) {
  if (!messages.is_array()) {
    throw ImportError(place + ", chat.messages: should be an array, not " + type_words(messages));
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    ForeignMessage message =
        read_message(messages[i], place + ", chat.messages[" + std::to_string(i) + "]");
    if (i > 0) message.parent = i - 1;
    chat->messages.push_back(std::move(message));
  }
}

ForeignChat read_chat(const Json& item, const std::string& place) {
  if (!item.is_object()) {
    throw ImportError(place + ": should be an object, not " + type_words(item));
  }
  const auto body = item.find("chat");
  if (body == item.end() || !body->is_object()) {
    throw ImportError(place + ": it has no \"chat\" object");
  }
  ForeignChat chat;
  chat.title = optional_string(item, "title", place).value_or(std::string());
  if (chat.title.empty())
    chat.title = optional_string(*body, "title", place + ", chat").value_or(std::string());
  chat.created = optional_number(item, "created_at", place);
  chat.updated = optional_number(item, "updated_at", place);
  const auto models = body->find("models");
  if (models != body->end() && models->is_array() && !models->empty() && (*models)[0].is_string()) {
    chat.model = (*models)[0].get<std::string>();
  }
  const auto history = body->find("history");
  if (history != body->end() && !history->is_null()) {
    if (!history->is_object()) {
      throw ImportError(place + ", chat.history: should be an object, not " + type_words(*history));
    }
    read_history(*history, place, &chat);
    return chat;
  }
  const auto messages = body->find("messages");
  if (messages == body->end()) {
    throw ImportError(place + ": its chat has neither \"history\" nor \"messages\"");
  }
  read_flat_messages(*messages, place, &chat);
  return chat;
}

}  // namespace

std::vector<ForeignChat> read_open_webui_export(const Json& root) {
  std::vector<ForeignChat> chats;
  if (root.is_object()) {
    chats.push_back(read_chat(root, conversation_place(0)));
    return chats;
  }
  for (std::size_t i = 0; i < root.size(); ++i)
    chats.push_back(read_chat(root[i], conversation_place(i)));
  return chats;
}

}  // namespace quire::importers::detail
