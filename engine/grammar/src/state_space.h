#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "automaton.h"

namespace quire::engine::grammar {

using StateId = std::int32_t;
inline constexpr StateId kDeadState = -1;

// The deterministic automaton of a grammar, built lazily as a matcher walks
// it. A state is the set of places the grammar may be in after the bytes so
// far: pairs of a node that reads bytes and a call stack, stacks shared as
// linked frames. States are interned, so the same set is always the same id,
// and each state's transitions are filled in on first use: a table of 256
// ids per state, which is what makes walking the vocabulary trie cheap once
// warm. Not thread-safe: each matcher owns one.
class StateSpace {
 public:
  explicit StateSpace(const Automaton& automaton);

  StateId initial() const { return initial_; }
  StateId next(StateId state, std::uint8_t byte) {
    const std::size_t slot = static_cast<std::size_t>(state) * 256 + byte;
    const StateId target = table_[slot];
    return target != kUnknown ? target : compute_next(state, byte);
  }
  // Whether the whole text may end in this state.
  bool accepting(StateId state) const { return accepting_[static_cast<std::size_t>(state)]; }
  std::size_t state_count() const { return configurations_.size(); }
  // Drops every state but the initial one; ids handed out before are invalid.
  void clear();

 private:
  static constexpr StateId kUnknown = -2;
  using Configuration = std::uint64_t;  // node << 32 | stack frame id
  static constexpr Configuration kAcceptMark = ~Configuration{0};
  struct Frame {
    NodeId return_node;
    std::uint32_t parent;
  };
  struct SetHash {
    std::size_t operator()(const std::vector<Configuration>& set) const;
  };

  StateId compute_next(StateId state, std::uint8_t byte);
  // Adds what `seeds` reach without reading a byte to `closure_`; returns
  // whether the text may end there.
  bool close(const std::vector<Configuration>& seeds);
  std::uint32_t push(std::uint32_t stack, NodeId return_node);
  // `set` is sorted; it may be changed.
  StateId intern(std::vector<Configuration>& set, bool accepting);

  const Automaton* automaton_;
  std::vector<Frame> frames_;  // frame 0 is the empty stack
  std::unordered_map<std::uint64_t, std::uint32_t> frame_ids_;
  std::vector<std::vector<Configuration>> configurations_;
  std::vector<bool> accepting_;
  std::vector<StateId> table_;
  std::unordered_map<std::vector<Configuration>, StateId, SetHash> state_ids_;
  StateId initial_ = kDeadState;
  // Scratch space of compute_next.
  std::vector<Configuration> seeds_, closure_, work_;
  std::unordered_set<Configuration> visited_;
};

}  // namespace quire::engine::grammar
