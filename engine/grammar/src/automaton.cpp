#include "automaton.h"

#include <algorithm>

#include "quire/engine/grammar/grammar.h"

namespace quire::engine::grammar {

NodeId Automaton::add_node() {
  if (nodes_.size() >= kMaxNodes) {
    throw GrammarError("the schema needs more than " + std::to_string(kMaxNodes) +
                       " grammar states; lower its bounds (maxLength, maxItems, integer ranges, "
                       "pattern repetitions)");
  }
  nodes_.emplace_back();
  return static_cast<NodeId>(nodes_.size() - 1);
}

void Automaton::add_edge(NodeId from, std::uint8_t low, std::uint8_t high, NodeId to) {
  nodes_[from].edges.push_back({low, high, to});
}

void Automaton::add_epsilon(NodeId from, NodeId to) {
  if (from != to) nodes_[from].epsilon.push_back(to);
}

RuleId Automaton::add_rule(std::string name) {
  Rule rule;
  rule.start = add_node();
  rule.end = add_node();
  rule.name = std::move(name);
  nodes_[rule.end].rule_end = true;
  rules_.push_back(std::move(rule));
  return static_cast<RuleId>(rules_.size() - 1);
}

NodeId Automaton::add_call(NodeId from, RuleId rule) {
  const NodeId call = add_node();
  const NodeId after = add_node();
  nodes_[call].callee = rule;
  nodes_[call].call_return = after;
  add_epsilon(from, call);
  return after;
}

NodeId Automaton::add_literal(NodeId from, std::string_view text) {
  NodeId at = from;
  for (const char c : text) {
    const NodeId next = add_node();
    const auto byte = static_cast<std::uint8_t>(c);
    add_edge(at, byte, byte, next);
    at = next;
  }
  return at;
}

// A node is productive when its rule's end can be reached from it. Computed
// backwards from the rule ends; a call counts once its callee is productive
// (its start is) and its return node is.
std::vector<bool> Automaton::productive_nodes() const {
  const std::size_t count = nodes_.size();
  std::vector<std::vector<NodeId>> predecessors(count);
  std::vector<std::vector<NodeId>> calls_returning_to(count);
  std::vector<std::vector<NodeId>> callers(rules_.size());
  std::vector<RuleId> rule_starting_at(count, kNoRule);
  for (RuleId r = 0; r < rules_.size(); ++r)
    rule_starting_at[rules_[r].start] = r;
  for (NodeId n = 0; n < count; ++n) {
    const Node& node = nodes_[n];
    for (const ByteEdge& edge : node.edges)
      predecessors[edge.target].push_back(n);
    for (const NodeId target : node.epsilon)
      predecessors[target].push_back(n);
    if (node.callee != kNoRule) {
      calls_returning_to[node.call_return].push_back(n);
      callers[node.callee].push_back(n);
    }
  }
  std::vector<bool> productive(count, false);
  std::vector<NodeId> work;
  auto mark = [&](NodeId n) {
    if (!productive[n]) {
      productive[n] = true;
      work.push_back(n);
    }
  };
  for (NodeId n = 0; n < count; ++n) {
    if (nodes_[n].rule_end) mark(n);
  }
  while (!work.empty()) {
    const NodeId n = work.back();
    work.pop_back();
    for (const NodeId p : predecessors[n])
      mark(p);
    for (const NodeId call : calls_returning_to[n]) {
      if (productive[rules_[nodes_[call].callee].start]) mark(call);
    }
    if (const RuleId r = rule_starting_at[n]; r != kNoRule) {
      for (const NodeId call : callers[r]) {
        if (productive[nodes_[call].call_return]) mark(call);
      }
    }
  }
  return productive;
}

void Automaton::check_left_recursion() const {
  std::vector<std::uint32_t> seen(nodes_.size(), kNoRule);
  std::vector<NodeId> work;
  for (RuleId r = 0; r < rules_.size(); ++r) {
    work.assign(1, rules_[r].start);
    seen[rules_[r].start] = r;
    while (!work.empty()) {
      const Node& node = nodes_[work.back()];
      work.pop_back();
      std::vector<NodeId> next = node.epsilon;
      if (node.callee != kNoRule) {
        if (node.callee == r) {
          throw GrammarError("the schema at " + rules_[r].name +
                             " refers to itself before any text of its value (a $ref cycle "
                             "through anyOf or $ref alone), which no JSON text can end");
        }
        next.push_back(rules_[node.callee].start);
      }
      for (const NodeId n : next) {
        if (seen[n] != r) {
          seen[n] = r;
          work.push_back(n);
        }
      }
    }
  }
}

void Automaton::finish() {
  check_left_recursion();
  const std::vector<bool> productive = productive_nodes();
  if (root_ == kNoRule || !productive[rules_[root_].start]) {
    throw GrammarError("no JSON text satisfies the schema (its constraints contradict each other)");
  }
  for (Node& node : nodes_) {
    std::erase_if(node.edges, [&](const ByteEdge& edge) { return !productive[edge.target]; });
    std::erase_if(node.epsilon, [&](NodeId target) { return !productive[target]; });
    if (node.callee != kNoRule &&
        !(productive[rules_[node.callee].start] && productive[node.call_return])) {
      node.callee = kNoRule;
    }
  }
}

}  // namespace quire::engine::grammar
