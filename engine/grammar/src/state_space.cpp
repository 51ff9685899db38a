#include "state_space.h"

#include <algorithm>

namespace quire::engine::grammar {
namespace {

constexpr std::uint64_t configuration(NodeId node, std::uint32_t stack) {
  return (static_cast<std::uint64_t>(node) << 32) | stack;
}
constexpr NodeId node_of(std::uint64_t configuration) {
  return static_cast<NodeId>(configuration >> 32);
}
constexpr std::uint32_t stack_of(std::uint64_t configuration) {
  return static_cast<std::uint32_t>(configuration);
}

}  // namespace

std::size_t StateSpace::SetHash::operator()(const std::vector<Configuration>& set) const {
  std::uint64_t hash = 0x9E3779B97F4A7C15ull ^ set.size();
  for (const Configuration c : set) {
    hash ^= c + 0x9E3779B97F4A7C15ull + (hash << 6) + (hash >> 2);
  }
  return static_cast<std::size_t>(hash);
}

StateSpace::StateSpace(const Automaton& automaton) : automaton_(&automaton) {
  clear();
}

void StateSpace::clear() {
  frames_.assign(1, Frame{0, 0});
  frame_ids_.clear();
  configurations_.clear();
  accepting_.clear();
  table_.clear();
  state_ids_.clear();
  seeds_.assign(1, configuration(automaton_->rule(automaton_->root()).start, 0));
  const bool accepting = close(seeds_);
  initial_ = intern(closure_, accepting);
}

std::uint32_t StateSpace::push(std::uint32_t stack, NodeId return_node) {
  const std::uint64_t key = configuration(return_node, stack);
  const auto [it, inserted] =
      frame_ids_.try_emplace(key, static_cast<std::uint32_t>(frames_.size()));
  if (inserted) frames_.push_back({return_node, stack});
  return it->second;
}

bool StateSpace::close(const std::vector<Configuration>& seeds) {
  closure_.clear();
  visited_.clear();
  work_.assign(seeds.begin(), seeds.end());
  bool accepting = false;
  while (!work_.empty()) {
    const Configuration c = work_.back();
    work_.pop_back();
    if (!visited_.insert(c).second) continue;
    const NodeId n = node_of(c);
    const std::uint32_t stack = stack_of(c);
    const Node& node = automaton_->node(n);
    if (!node.edges.empty()) closure_.push_back(c);
    for (const NodeId target : node.epsilon)
      work_.push_back(configuration(target, stack));
    if (node.callee != kNoRule) {
      work_.push_back(
          configuration(automaton_->rule(node.callee).start, push(stack, node.call_return)));
    }
    if (node.rule_end) {
      if (stack == 0) {
        accepting = true;
      } else {
        const Frame frame = frames_[stack];
        work_.push_back(configuration(frame.return_node, frame.parent));
      }
    }
  }
  std::sort(closure_.begin(), closure_.end());
  return accepting;
}

StateId StateSpace::intern(std::vector<Configuration>& set, bool accepting) {
  if (set.empty() && !accepting) return kDeadState;
  // The same places with and without the end of the text are two states.
  if (accepting) set.push_back(kAcceptMark);
  const auto it = state_ids_.find(set);
  if (it != state_ids_.end()) return it->second;
  const auto id = static_cast<StateId>(configurations_.size());
  state_ids_.emplace(set, id);
  configurations_.push_back(set);
  accepting_.push_back(accepting);
  table_.resize(table_.size() + 256, kUnknown);
  return id;
}

StateId StateSpace::compute_next(StateId state, std::uint8_t byte) {
  // Bytes that take the same edges lead to the same state: the result is
  // filled in for the whole range around `byte` where no edge starts or
  // ends (all the letters inside a string, all the continuation bytes).
  int low = 0;
  int high = 255;
  seeds_.clear();
  for (const Configuration c : configurations_[static_cast<std::size_t>(state)]) {
    if (c == kAcceptMark) continue;
    for (const ByteEdge& edge : automaton_->node(node_of(c)).edges) {
      if (edge.high < byte) {
        low = std::max(low, edge.high + 1);
      } else if (edge.low > byte) {
        high = std::min(high, edge.low - 1);
      } else {
        low = std::max<int>(low, edge.low);
        high = std::min<int>(high, edge.high);
        seeds_.push_back(configuration(edge.target, stack_of(c)));
      }
    }
  }
  StateId target = kDeadState;
  if (!seeds_.empty()) {
    const bool accepting = close(seeds_);
    target = intern(closure_, accepting);
  }
  const std::size_t row = static_cast<std::size_t>(state) * 256;
  std::fill(table_.begin() + static_cast<std::ptrdiff_t>(row) + low,
            table_.begin() + static_cast<std::ptrdiff_t>(row) + high + 1, target);
  return target;
}

}  // namespace quire::engine::grammar
