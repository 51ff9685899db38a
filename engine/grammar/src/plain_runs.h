#pragma once

#include <unordered_map>

#include "state_space.h"

namespace quire::engine::grammar {

// How many characters of plain string content (whole UTF-8 characters other
// than '"', '\' and controls) a state takes, when it takes them all alike:
// the question that lets a matcher allow the vocabulary's plain tokens from a
// precomputed mask by length instead of walking them.
//
// run(state) is r >= 0 when every plain text of up to r characters is viable
// from `state` and no longer one is (a string with r characters left under
// maxLength), `cap` when every plain text of up to `cap` characters is
// viable (a free string), and -1 when plain characters do not all act alike
// (a pattern, a property name), where only a full walk will do. Results are
// memoized per state; one per matcher, like its StateSpace.
class PlainRuns {
 public:
  PlainRuns(StateSpace& space, int cap) : space_(&space), cap_(cap) {}

  int run(StateId state);
  void clear() { steps_.clear(); }

 private:
  static constexpr StateId kNotAlike = -3;
  // The state every plain character leads to from `state`, kDeadState when
  // none is viable, kNotAlike when they differ.
  StateId step(StateId state);
  StateId compute_step(StateId state);
  // The state all bytes in [low, high] lead to, or kNotAlike.
  StateId alike(StateId state, int low, int high);

  StateSpace* space_;
  int cap_;
  std::unordered_map<StateId, StateId> steps_;
};

}  // namespace quire::engine::grammar
