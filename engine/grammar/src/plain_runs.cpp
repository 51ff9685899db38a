#include "plain_runs.h"

#include <array>

namespace quire::engine::grammar {
namespace {

// Well-formed UTF-8 beyond ASCII: each lead range with the ranges of the
// continuation bytes that follow it.
struct Utf8Form {
  int lead_low, lead_high;
  std::array<std::pair<int, int>, 3> continuation;
  int continuation_count;
};
constexpr Utf8Form kUtf8Forms[] = {
    {0xC2, 0xDF, {{{0x80, 0xBF}}}, 1},
    {0xE0, 0xE0, {{{0xA0, 0xBF}, {0x80, 0xBF}}}, 2},
    {0xE1, 0xEC, {{{0x80, 0xBF}, {0x80, 0xBF}}}, 2},
    {0xED, 0xED, {{{0x80, 0x9F}, {0x80, 0xBF}}}, 2},
    {0xEE, 0xEF, {{{0x80, 0xBF}, {0x80, 0xBF}}}, 2},
    {0xF0, 0xF0, {{{0x90, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}}}, 3},
    {0xF1, 0xF3, {{{0x80, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}}}, 3},
    {0xF4, 0xF4, {{{0x80, 0x8F}, {0x80, 0xBF}, {0x80, 0xBF}}}, 3},
};

}  // namespace

StateId PlainRuns::alike(StateId state, int low, int high) {
  const StateId first = space_->next(state, static_cast<std::uint8_t>(low));
  for (int byte = low + 1; byte <= high; ++byte) {
    if (space_->next(state, static_cast<std::uint8_t>(byte)) != first) return kNotAlike;
  }
  return first;
}

StateId PlainRuns::compute_step(StateId state) {
  StateId target = alike(state, 0x20, 0x21);
  for (const auto& [low, high] : {std::pair{0x23, 0x5B}, std::pair{0x5D, 0x7F}}) {
    if (target == kNotAlike || alike(state, low, high) != target) return kNotAlike;
  }
  if (target == kNotAlike) return kNotAlike;
  for (const Utf8Form& form : kUtf8Forms) {
    StateId at = alike(state, form.lead_low, form.lead_high);
    for (int k = 0; k < form.continuation_count && at != kNotAlike; ++k) {
      if (at == kDeadState) break;  // dead after the lead: dead at the end
      at = alike(at, form.continuation[static_cast<std::size_t>(k)].first,
                 form.continuation[static_cast<std::size_t>(k)].second);
    }
    if (at != target) return kNotAlike;
  }
  return target;
}

StateId PlainRuns::step(StateId state) {
  const auto it = steps_.find(state);
  if (it != steps_.end()) return it->second;
  const StateId target = compute_step(state);
  steps_.emplace(state, target);
  return target;
}

int PlainRuns::run(StateId state) {
  StateId at = state;
  for (int taken = 0; taken < cap_; ++taken) {
    const StateId next = step(at);
    if (next == kNotAlike) return -1;
    if (next == kDeadState) return taken;
    if (next == at) return cap_;  // a loop: any number of characters
    at = next;
  }
  return cap_;
}

}  // namespace quire::engine::grammar
