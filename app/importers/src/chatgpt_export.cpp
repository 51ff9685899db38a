// ChatGPT's data export (conversations.json): each conversation's `mapping`
// is a tree of nodes; nodes without a visible message (the root, hidden
// system context, a reply's internal steps) are left out and their children
// hang from the nearest message shown.

#include <string>
#include <vector>

#include "foreign_tree.h"

namespace quire::importers::detail {
namespace {

// The text of content.parts (strings; an image or a file in a part becomes
// a marker, since the export keeps those as separate files) or, for code and
// tool output, content.text.
std::string content_text(const Json& content, const std::string& where) {
  if (!content.is_object()) {
    throw ImportError(where + ": \"content\" should be an object, not " + type_words(content));
  }
  const auto parts = content.find("parts");
  if (parts != content.end() && !parts->is_null()) {
    if (!parts->is_array()) {
      throw ImportError(where + ": \"content.parts\" should be an array, not " +
                        type_words(*parts));
    }
    std::string text;
    for (const Json& part : *parts) {
      std::string piece;
      if (part.is_string()) {
        piece = part.get<std::string>();
      } else if (part.is_object()) {
        const auto type = part.find("content_type");
        const bool image = type != part.end() && type->is_string() &&
                           type->get<std::string>().find("image") != std::string::npos;
        piece = image ? "[image]" : "[attachment]";
      }
      if (piece.empty()) continue;
      if (!text.empty()) text += "\n\n";
      text += piece;
    }
    return text;
  }
  return optional_string(content, "text", where + ", content").value_or(std::string());
}

TreeNode read_node(const std::string& key, const Json& node, const std::string& where) {
  const std::string place = where + " '" + key + "'";
  if (!node.is_object()) {
    throw ImportError(place + ": should be an object, not " + type_words(node));
  }
  TreeNode out;
  out.id = optional_string(node, "id", place).value_or(key);
  if (out.id != key) throw ImportError(place + ": its \"id\" is '" + out.id + "'");
  out.parent = optional_string(node, "parent", place);
  const auto children = node.find("children");
  if (children != node.end() && !children->is_null()) {
    if (!children->is_array()) {
      throw ImportError(place + ": \"children\" should be an array, not " + type_words(*children));
    }
    for (const Json& child : *children) {
      if (!child.is_string()) {
        throw ImportError(place + ": \"children\" should hold node ids, not " + type_words(child));
      }
      out.children.push_back(child.get<std::string>());
    }
  }
  const auto message = node.find("message");
  if (message == node.end() || message->is_null()) {
    out.keep = false;
    return out;
  }
  if (!message->is_object()) {
    throw ImportError(place + ": \"message\" should be an object, not " + type_words(*message));
  }
  const auto author = message->find("author");
  if (author == message->end() || !author->is_object()) {
    throw ImportError(place + ": the message has no \"author\" object");
  }
  const std::optional<std::string> role = optional_string(*author, "role", place + ", author");
  if (!role) throw ImportError(place + ": the message's author has no \"role\"");
  if (*role != "system" && *role != "user" && *role != "assistant" && *role != "tool") {
    throw ImportError(place + ": the role '" + *role +
                      "' is not one of system, user, assistant, tool");
  }
  out.message.role = *role;
  out.message.created = optional_number(*message, "create_time", place);
  const auto content = message->find("content");
  if (content != message->end() && !content->is_null()) {
    out.message.text = content_text(*content, place);
  }
  // Context the ChatGPT app does not show (custom instructions, memory) is
  // marked hidden in the message's metadata.
  const auto metadata = message->find("metadata");
  bool hidden = false;
  if (metadata != message->end() && metadata->is_object()) {
    const auto flag = metadata->find("is_visually_hidden_from_conversation");
    hidden = flag != metadata->end() && flag->is_boolean() && flag->get<bool>();
  }
  out.keep = !hidden && !out.message.text.empty();
  return out;
}

ForeignChat read_conversation(const Json& conversation, const std::string& place) {
  if (!conversation.is_object()) {
    throw ImportError(place + ": should be an object, not " + type_words(conversation));
  }
  ForeignChat chat;
  chat.title = optional_string(conversation, "title", place).value_or(std::string());
  chat.created = optional_number(conversation, "create_time", place);
  chat.updated = optional_number(conversation, "update_time", place);
  chat.model = optional_string(conversation, "default_model_slug", place).value_or(std::string());
  const auto mapping = conversation.find("mapping");
  if (mapping == conversation.end() || !mapping->is_object()) {
    throw ImportError(place + ": it has no \"mapping\" object of messages");
  }
  std::vector<TreeNode> nodes;
  const std::string where = place + ", mapping node";
  for (auto node = mapping->begin(); node != mapping->end(); ++node)
    nodes.push_back(read_node(node.key(), node.value(), where));
  build_tree(nodes, optional_string(conversation, "current_node", place), where,
             place + ", current_node", &chat);
  return chat;
}

}  // namespace

std::vector<ForeignChat> read_chatgpt_export(const Json& root) {
  std::vector<ForeignChat> chats;
  // The export is a list; a single conversation saved on its own reads too.
  if (root.is_object()) {
    chats.push_back(read_conversation(root, conversation_place(0)));
    return chats;
  }
  for (std::size_t i = 0; i < root.size(); ++i)
    chats.push_back(read_conversation(root[i], conversation_place(i)));
  return chats;
}

}  // namespace quire::importers::detail
