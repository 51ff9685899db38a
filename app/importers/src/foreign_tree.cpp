#include "foreign_tree.h"

#include <string_view>
#include <unordered_map>
#include <utility>

namespace quire::importers::detail {

void build_tree(const std::vector<TreeNode>& nodes, const std::optional<std::string>& current,
                const std::string& where, const std::string& current_where, ForeignChat* chat) {
  const auto fail = [&where](const std::string& id, const std::string& problem) {
    throw ImportError(where + " '" + id + "': " + problem);
  };
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!index.emplace(nodes[i].id, i).second) fail(nodes[i].id, "the id appears twice");
  }
  // Children by parent: first in the order the parent lists them, then any
  // the parent does not list, in file order.
  std::vector<std::vector<std::size_t>> children(nodes.size());
  std::vector<bool> placed(nodes.size(), false);
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& child_id : nodes[i].children) {
      const auto child = index.find(child_id);
      if (child == index.end() || placed[child->second]) continue;
      if (nodes[child->second].parent != nodes[i].id) continue;
      children[i].push_back(child->second);
      placed[child->second] = true;
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].parent) {
      roots.push_back(i);
      continue;
    }
    const auto parent = index.find(*nodes[i].parent);
    if (parent == index.end()) fail(nodes[i].id, "parent '" + *nodes[i].parent + "' is missing");
    if (parent->second == i) fail(nodes[i].id, "it is its own parent");
    if (!placed[i]) {
      children[parent->second].push_back(i);
      placed[i] = true;
    }
  }

  // Depth first, without recursion (a file may nest thousands deep): each
  // entry is a node and the message index of its nearest kept ancestor.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> shown_as(nodes.size(), kNone);
  std::vector<bool> visited(nodes.size(), false);
  std::vector<std::pair<std::size_t, std::size_t>> stack;
  for (auto root = roots.rbegin(); root != roots.rend(); ++root)
    stack.emplace_back(*root, kNone);
  while (!stack.empty()) {
    const auto [node, ancestor] = stack.back();
    stack.pop_back();
    visited[node] = true;
    std::size_t here = ancestor;
    if (nodes[node].keep) {
      ForeignMessage message = nodes[node].message;
      message.parent = ancestor == kNone ? std::nullopt : std::optional<std::size_t>(ancestor);
      here = chat->messages.size();
      chat->messages.push_back(std::move(message));
    }
    shown_as[node] = here;
    const std::vector<std::size_t>& kids = children[node];
    for (auto child = kids.rbegin(); child != kids.rend(); ++child)
      stack.emplace_back(*child, here);
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!visited[i]) fail(nodes[i].id, "its parents form a cycle and never reach a first message");
  }

  if (current) {
    const auto node = index.find(*current);
    if (node == index.end()) {
      throw ImportError(current_where + ": '" + *current + "' is not a message of the chat");
    }
    const std::size_t shown = shown_as[node->second];
    if (shown != kNone) chat->current = shown;
  }
}

std::string conversation_place(std::size_t index) {
  return "conversation " + std::to_string(index + 1);
}

std::string type_words(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "true or false";
    case Json::value_t::discarded:
      return "nothing";
    default:
      return "a number";
  }
}

std::optional<std::string> optional_string(const Json& object, const char* key,
                                           const std::string& where) {
  const auto member = object.find(key);
  if (member == object.end() || member->is_null()) return std::nullopt;
  if (!member->is_string()) {
    throw ImportError(where + ": \"" + key + "\" should be a string, not " + type_words(*member));
  }
  return member->get<std::string>();
}

std::optional<double> optional_number(const Json& object, const char* key,
                                      const std::string& where) {
  const auto member = object.find(key);
  if (member == object.end() || member->is_null()) return std::nullopt;
  if (!member->is_number()) {
    throw ImportError(where + ": \"" + key + "\" should be a number, not " + type_words(*member));
  }
  return member->get<double>();
}

Json parse_json(std::string_view json) {
  try {
    return Json::parse(json.begin(), json.end());
  } catch (const Json::exception& error) {
    // A syntax error, or a number too large for any type ("1e999999").
    throw ImportError(std::string("not valid JSON (") + error.what() + ")");
  }
}

}  // namespace quire::importers::detail
