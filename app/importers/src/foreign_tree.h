#pragma once

// What the three readers share: a tree given as nodes with string ids and
// parent ids put in order (parents first), and small typed reads of JSON
// that name the place of a problem.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "quire/importers/foreign_chats.h"

namespace quire::importers::detail {

// Object members in the file's order: siblings keep the order they were
// written in.
using Json = nlohmann::ordered_json;

struct TreeNode {
  std::string id;
  std::optional<std::string> parent;
  // The order of the node's children as the file lists them; a child whose
  // own `parent` names another node is left to that node.
  std::vector<std::string> children;
  // False for a node that holds no message to show (ChatGPT's root, hidden
  // system context): its children hang from its nearest kept ancestor.
  bool keep = true;
  ForeignMessage message;
};

// Puts `nodes` into chat->messages, parents before children, and maps
// `current` (a node id, possibly one not kept) to the nearest kept message.
// `where` names a node in errors: where + " 'id': problem", e.g.
// "conversation 2, mapping node 'abc': parent 'xyz' is missing". `current_where`
// names the member holding `current`.
void build_tree(const std::vector<TreeNode>& nodes, const std::optional<std::string>& current,
                const std::string& where, const std::string& current_where, ForeignChat* chat);

// "conversation 3" (1-based), as errors name it.
std::string conversation_place(std::size_t index);

// The JSON type of `value` in words ("a number", "an object"), for errors.
std::string type_words(const Json& value);

// A string member; nullopt when absent or null; ImportError when of another
// type.
std::optional<std::string> optional_string(const Json& object, const char* key,
                                           const std::string& where);
// A number member (seconds, or whatever the format counts); nullopt when
// absent or null.
std::optional<double> optional_number(const Json& object, const char* key,
                                      const std::string& where);
// The readers of each format, given the parsed file.
std::vector<ForeignChat> read_chatgpt_export(const Json& root);
std::vector<ForeignChat> read_open_webui_export(const Json& root);
std::vector<ForeignChat> read_lm_studio_conversation(const Json& root);

// Parses `json`; ImportError "not valid JSON (...)".
Json parse_json(std::string_view json);

}  // namespace quire::importers::detail
