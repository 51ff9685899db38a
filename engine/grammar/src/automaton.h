#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace quire::engine::grammar {

using NodeId = std::uint32_t;
using RuleId = std::uint32_t;
inline constexpr RuleId kNoRule = std::numeric_limits<RuleId>::max();

// Consumes one byte in [low, high].
struct ByteEdge {
  std::uint8_t low = 0;
  std::uint8_t high = 0;
  NodeId target = 0;
};

// One node of a rule's automaton. A node moves on bytes (edges), without input
// (epsilon), or calls a rule: the matcher enters the callee's start and, once
// the callee reaches its end, goes on at call_return.
struct Node {
  std::vector<ByteEdge> edges;
  std::vector<NodeId> epsilon;
  RuleId callee = kNoRule;
  NodeId call_return = 0;
  bool rule_end = false;
};

struct Rule {
  NodeId start = 0;
  NodeId end = 0;
  std::string name;  // for messages: the schema path the rule stands for
};

// Rules whose automata call each other: a recursive state machine over bytes,
// which is what a pushdown automaton for JSON needs ($ref recursion, nested
// values of any depth). Rules are used for recursion and to share a part that
// repeats (an array's items, a string's characters under a length bound), so
// the graph stays linear in the size of the schema.
class Automaton {
 public:
  // Graphs beyond this many nodes are refused: a schema that large is a
  // mistake (maxLength: 1e9) rather than something to generate from.
  static constexpr std::size_t kMaxNodes = 4'000'000;

  NodeId add_node();
  void add_edge(NodeId from, std::uint8_t low, std::uint8_t high, NodeId to);
  void add_epsilon(NodeId from, NodeId to);
  // A new rule with fresh start and end nodes.
  RuleId add_rule(std::string name);
  // Calls `rule` from `from`; returns the node where matching continues.
  NodeId add_call(NodeId from, RuleId rule);
  // Appends the bytes of `text` from `from`; returns the node after them.
  NodeId add_literal(NodeId from, std::string_view text);

  const Node& node(NodeId id) const { return nodes_[id]; }
  const Rule& rule(RuleId id) const { return rules_[id]; }
  std::size_t node_count() const { return nodes_.size(); }
  std::size_t rule_count() const { return rules_.size(); }
  RuleId root() const { return root_; }
  void set_root(RuleId rule) { root_ = rule; }

  // Finishes the graph: drops every edge, epsilon and call that leads where
  // the rule can no longer reach its end, so that any state a matcher is in
  // can still complete. Throws GrammarError when the root can never complete
  // or a rule can call itself without consuming a byte (left recursion).
  void finish();

 private:
  std::vector<bool> productive_nodes() const;
  void check_left_recursion() const;

  std::vector<Node> nodes_;
  std::vector<Rule> rules_;
  RuleId root_ = kNoRule;
};

}  // namespace quire::engine::grammar
