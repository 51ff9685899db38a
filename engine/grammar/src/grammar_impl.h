#pragma once

#include "automaton.h"
#include "quire/engine/grammar/grammar.h"

namespace quire::engine::grammar {

class Grammar {
 public:
  explicit Grammar(Automaton automaton) : automaton_(std::move(automaton)) {}
  const Automaton& automaton() const { return automaton_; }

 private:
  Automaton automaton_;
};

}  // namespace quire::engine::grammar
