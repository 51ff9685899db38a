// Objects and arrays of a schema: properties in the schema's order, each
// optional one skippable, commas placed by whether a member came before.
#include <algorithm>
#include <map>

#include "schema_compiler.h"

namespace quire::engine::grammar {

NodeId SchemaCompiler::object(const SchemaJson& schema, NodeId from, const std::string& path) {
  Automaton& a = automaton_;
  const SchemaJson no_properties = SchemaJson::object();
  const auto properties_it = schema.find("properties");
  if (properties_it != schema.end() && !properties_it->is_object()) {
    refuse_keyword("properties", path, "must be an object of schemas");
  }
  const SchemaJson& properties = properties_it != schema.end() ? *properties_it : no_properties;

  std::vector<std::string> required;
  if (const auto it = schema.find("required"); it != schema.end()) {
    if (!it->is_array()) refuse_keyword("required", path, "must be a list of property names");
    for (const auto& name : *it) {
      if (!name.is_string())
        refuse_keyword("required", path, "holds " + name.dump() + ", not a name");
      required.push_back(name.get_ref<const std::string&>());
    }
  }
  // additionalProperties: false allows no other keys; true or a schema
  // allows other keys after the listed ones. Absent, it allows none beside
  // "properties" (as OpenAI's strict mode reads it), and any without them:
  // {"type": "object"} is any object.
  const SchemaJson* additional = nullptr;
  const SchemaJson any_value = true;
  if (const auto it = schema.find("additionalProperties"); it != schema.end()) {
    if (it->is_object() || (it->is_boolean() && it->get<bool>())) {
      additional = &*it;
    } else if (!it->is_boolean()) {
      refuse_keyword("additionalProperties", path, "must be a boolean or a schema");
    }
  } else if (properties_it == schema.end()) {
    additional = &any_value;
  }

  struct Member {
    std::string name;
    const SchemaJson* schema;
    std::string path;
    bool required;
  };
  std::vector<Member> members;
  for (const auto& [name, member_schema] : properties.items()) {
    const bool is_required = std::find(required.begin(), required.end(), name) != required.end();
    members.push_back(
        {name, &member_schema, child_path(child_path(path, "properties"), name), is_required});
  }
  for (const std::string& name : required) {
    if (properties.contains(name)) continue;
    if (!additional) {
      refuse_keyword("required", path,
                     "names \"" + name +
                         "\", which \"properties\" does not list while other properties are not "
                         "allowed, so no object satisfies the schema");
    }
    const bool was_listed = std::any_of(members.begin(), members.end(),
                                        [&](const Member& m) { return m.name == name; });
    if (!was_listed) {
      members.push_back({name, additional->is_object() ? additional : &any_value,
                         child_path(path, "additionalProperties"), true});
    }
  }

  const NodeId end = a.add_node();
  const NodeId open = a.add_node();
  a.add_edge(from, '{', '{', open);
  // before[e]: at the next member, e = whether a member was written already.
  NodeId before[2] = {text_.whitespace(open), a.add_node()};
  for (const Member& member : members) {
    const NodeId key = a.add_node();
    a.add_epsilon(before[0], key);
    const NodeId comma = a.add_node();
    a.add_edge(before[1], ',', ',', comma);
    a.add_epsilon(text_.whitespace(comma), key);
    const NodeId colon = a.add_node();
    a.add_edge(text_.whitespace(a.add_literal(key, SchemaJson(member.name).dump())), ':', ':',
               colon);
    const NodeId written =
        text_.whitespace(value(*member.schema, text_.whitespace(colon), member.path));
    const NodeId next[2] = {member.required ? a.add_node() : before[0], a.add_node()};
    a.add_epsilon(written, next[1]);
    if (!member.required) a.add_epsilon(before[1], next[1]);
    before[0] = next[0];
    before[1] = next[1];
  }
  if (additional) {
    std::vector<std::string> known;
    for (const Member& member : members)
      known.push_back(member.name);
    const NodeId key = a.add_node();
    a.add_epsilon(before[0], key);
    const NodeId comma = a.add_node();
    a.add_edge(before[1], ',', ',', comma);
    a.add_epsilon(text_.whitespace(comma), key);
    const NodeId colon = a.add_node();
    a.add_edge(text_.whitespace(other_key(key, known)), ':', ':', colon);
    const NodeId written = text_.whitespace(
        value(*additional, text_.whitespace(colon), child_path(path, "additionalProperties")));
    a.add_epsilon(written, before[1]);
  }
  a.add_edge(before[0], '}', '}', end);
  a.add_edge(before[1], '}', '}', end);
  return end;
}

// A key that differs from every known one: the content follows a trie of the
// known keys (as JSON spells them) until it leaves it, then is free. Inside
// the trie a character may leave it only when its first byte does not go on
// along the trie, and the closing quote is allowed wherever no known key
// ends. A key that spells a known one differently (escapes) is not
// generated: a subset of the valid keys, always valid.
NodeId SchemaCompiler::other_key(NodeId from, const std::vector<std::string>& known) {
  Automaton& a = automaton_;
  struct TrieNode {
    std::map<std::uint8_t, std::size_t> children;
    bool key_end = false;
    bool character_start = true;  // not inside a character or an escape
  };
  std::vector<TrieNode> trie(1);
  for (const std::string& name : known) {
    const std::string spelled = SchemaJson(name).dump();
    const std::string_view content = std::string_view(spelled).substr(1, spelled.size() - 2);
    std::size_t at = 0;
    std::size_t next_character = 0;
    for (std::size_t i = 0; i < content.size(); ++i) {
      const auto byte = static_cast<std::uint8_t>(content[i]);
      if (i == next_character) {
        // Where the next character starts: escapes are \X or \uXXXX.
        std::size_t length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4;
        if (byte == '\\') length = i + 1 < content.size() && content[i + 1] == 'u' ? 6 : 2;
        next_character = i + length;
      }
      auto [it, inserted] = trie[at].children.try_emplace(byte, trie.size());
      if (inserted) trie.emplace_back();
      at = it->second;
      trie[at].character_start = i + 1 == next_character;
    }
    trie[at].key_end = true;
  }
  const NodeId end = a.add_node();
  const NodeId free = a.add_node();
  text_.character(free, free);
  a.add_edge(free, '"', '"', end);
  std::vector<NodeId> nodes(trie.size());
  for (NodeId& node : nodes)
    node = a.add_node();
  a.add_edge(from, '"', '"', nodes[0]);
  for (std::size_t t = 0; t < trie.size(); ++t) {
    ByteSet children;
    for (const auto& [byte, child] : trie[t].children) {
      a.add_edge(nodes[t], byte, byte, nodes[child]);
      children[byte] = true;
    }
    if (!trie[t].character_start) continue;
    text_.character(nodes[t], free, children);
    if (!trie[t].key_end) a.add_edge(nodes[t], '"', '"', end);
  }
  return end;
}

// Arrays: the prefixItems schemas for the first items, then `items` for
// the rest (absent: any value; false: none beyond the prefix), counted
// against minItems and maxItems.
NodeId SchemaCompiler::array(const SchemaJson& schema, NodeId from, const std::string& path) {
  Automaton& a = automaton_;
  const std::uint64_t min_items = count_keyword(schema, "minItems", path).value_or(0);
  std::optional<std::uint64_t> max_items = count_keyword(schema, "maxItems", path);
  const SchemaJson no_prefix = SchemaJson::array();
  const auto prefix_it = schema.find("prefixItems");
  if (prefix_it != schema.end() && !prefix_it->is_array()) {
    refuse_keyword("prefixItems", path, "must be a list of schemas");
  }
  const SchemaJson& prefix = prefix_it != schema.end() ? *prefix_it : no_prefix;
  const auto items_it = schema.find("items");
  if (items_it != schema.end() && items_it->is_array()) {
    refuse_keyword("items", path,
                   "is a list (draft 7 tuples); write the list as prefixItems (draft 2020-12)");
  }
  if (items_it != schema.end() && items_it->is_boolean() && !items_it->get<bool>()) {
    max_items = std::min<std::uint64_t>(max_items.value_or(prefix.size()), prefix.size());
  }
  if (max_items && min_items > *max_items) {
    refuse_keyword("minItems", path,
                   "is above the most items the schema allows (maxItems, or prefixItems with "
                   "items false), so no array satisfies it");
  }
  std::vector<RuleId> prefix_rules;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    prefix_rules.push_back(
        rule_for(prefix[i], child_path(child_path(path, "prefixItems"), std::to_string(i))));
  }
  RuleId rest = kNoRule;
  auto rule_at = [&](std::uint64_t index) {
    if (index < prefix_rules.size()) return prefix_rules[index];
    if (rest == kNoRule) {
      rest = items_it == schema.end() ? text_.any_value_rule()
                                      : rule_for(*items_it, child_path(path, "items"));
    }
    return rest;
  };

  const NodeId end = a.add_node();
  const NodeId open = a.add_node();
  a.add_edge(from, '[', '[', open);
  const NodeId inside = text_.whitespace(open);
  if (min_items == 0) a.add_edge(inside, ']', ']', end);
  if (max_items && *max_items == 0) return end;
  NodeId after = text_.whitespace(a.add_call(inside, rule_at(0)));
  for (std::uint64_t count = 1;; ++count) {
    if (count >= min_items) a.add_edge(after, ']', ']', end);
    if (max_items && count == *max_items) break;
    const NodeId comma = a.add_node();
    a.add_edge(after, ',', ',', comma);
    const NodeId item_end = text_.whitespace(a.add_call(text_.whitespace(comma), rule_at(count)));
    if (!max_items && count >= min_items && count >= prefix_rules.size()) {
      a.add_epsilon(item_end, after);  // from here on, any number more of `items`
      break;
    }
    after = item_end;
  }
  return end;
}

}  // namespace quire::engine::grammar
