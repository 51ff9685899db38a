#pragma once

#include <bitset>
#include <cstdint>
#include <optional>

#include "automaton.h"

namespace quire::engine::grammar {

using ByteSet = std::bitset<256>;

// The lexical parts of JSON as automaton fragments: whitespace, string
// characters, strings, numbers, and the rule for any JSON value. Each
// function adds nodes from `from` and returns the node after the part, or
// links `from` to a given `to`.
class JsonText {
 public:
  JsonText(Automaton& automaton, int max_whitespace);

  // Up to max_whitespace bytes of JSON whitespace.
  NodeId whitespace(NodeId from);
  // Bytes in `set` from `from` to `to`, as few edges as ranges.
  void byte_set(NodeId from, NodeId to, const ByteSet& set);
  // One character of a JSON string's content, as JSON spells it: a raw UTF-8
  // character other than '"', '\' and controls, or an escape (\uD800-\uDFFF
  // surrogates excluded, so every text decodes). `excluded_first` bars
  // characters by their first byte.
  void character(NodeId from, NodeId to, const ByteSet& excluded_first = {});
  // A well-formed UTF-8 character of two to four bytes.
  void multibyte_character(NodeId from, NodeId to, const ByteSet& excluded_first = {});
  // A rule matching one string character, for strings under a length bound.
  RuleId character_rule();
  // A string with min_length..max_length characters (nullopt: no bound).
  NodeId string(NodeId from, std::uint64_t min_length, std::optional<std::uint64_t> max_length);
  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  NodeId number(NodeId from);
  // -?(0|[1-9][0-9]*)
  NodeId integer(NodeId from);
  // [0-9]+ after a '.', for bounded numbers.
  NodeId fraction(NodeId from);
  // Any JSON value; the rule for schemas that leave a value free.
  RuleId any_value_rule();
  NodeId any_object(NodeId from);

  Automaton& automaton() { return automaton_; }

 private:
  NodeId any_array(NodeId from);

  Automaton& automaton_;
  int max_whitespace_;
  RuleId character_rule_ = kNoRule;
  RuleId any_value_rule_ = kNoRule;
};

}  // namespace quire::engine::grammar
