#include "json_text.h"

namespace quire::engine::grammar {

JsonText::JsonText(Automaton& automaton, int max_whitespace)
    : automaton_(automaton), max_whitespace_(max_whitespace) {}

NodeId JsonText::whitespace(NodeId from) {
  if (max_whitespace_ <= 0) return from;
  const NodeId end = automaton_.add_node();
  NodeId at = from;
  for (int i = 0; i < max_whitespace_; ++i) {
    automaton_.add_epsilon(at, end);
    const NodeId next = i + 1 == max_whitespace_ ? end : automaton_.add_node();
    for (const char c : {' ', '\t', '\n', '\r'}) {
      const auto byte = static_cast<std::uint8_t>(c);
      automaton_.add_edge(at, byte, byte, next);
    }
    at = next;
  }
  return end;
}

void JsonText::byte_set(NodeId from, NodeId to, const ByteSet& set) {
  for (int low = 0; low < 256;) {
    if (!set[static_cast<std::size_t>(low)]) {
      ++low;
      continue;
    }
    int high = low;
    while (high + 1 < 256 && set[static_cast<std::size_t>(high + 1)])
      ++high;
    automaton_.add_edge(from, static_cast<std::uint8_t>(low), static_cast<std::uint8_t>(high), to);
    low = high + 1;
  }
}

void JsonText::multibyte_character(NodeId from, NodeId to, const ByteSet& excluded_first) {
  Automaton& a = automaton_;
  const NodeId one_more = a.add_node();    // one continuation byte left
  const NodeId two_more = a.add_node();    // two left
  const NodeId three_more = a.add_node();  // three left
  a.add_edge(one_more, 0x80, 0xBF, to);
  a.add_edge(two_more, 0x80, 0xBF, one_more);
  a.add_edge(three_more, 0x80, 0xBF, two_more);
  // Leads whose second byte is restricted (no overlong forms, no surrogates,
  // nothing past U+10FFFF) get a node of their own.
  const NodeId after_e0 = a.add_node();
  const NodeId after_ed = a.add_node();
  const NodeId after_f0 = a.add_node();
  const NodeId after_f4 = a.add_node();
  a.add_edge(after_e0, 0xA0, 0xBF, one_more);
  a.add_edge(after_ed, 0x80, 0x9F, one_more);
  a.add_edge(after_f0, 0x90, 0xBF, two_more);
  a.add_edge(after_f4, 0x80, 0x8F, two_more);
  auto leads = [&](int low, int high, NodeId target) {
    ByteSet set;
    for (int b = low; b <= high; ++b)
      set[static_cast<std::size_t>(b)] = true;
    byte_set(from, target, set & ~excluded_first);
  };
  leads(0xC2, 0xDF, one_more);
  leads(0xE0, 0xE0, after_e0);
  leads(0xE1, 0xEC, two_more);
  leads(0xED, 0xED, after_ed);
  leads(0xEE, 0xEF, two_more);
  leads(0xF0, 0xF0, after_f0);
  leads(0xF1, 0xF3, three_more);
  leads(0xF4, 0xF4, after_f4);
}

void JsonText::character(NodeId from, NodeId to, const ByteSet& excluded_first) {
  ByteSet plain;
  for (int b = 0x20; b < 0x80; ++b)
    plain[static_cast<std::size_t>(b)] = b != '"' && b != '\\';
  byte_set(from, to, plain & ~excluded_first);
  multibyte_character(from, to, excluded_first);
  if (excluded_first['\\']) return;
  Automaton& a = automaton_;
  const NodeId escape = a.add_node();
  a.add_edge(from, '\\', '\\', escape);
  for (const char c : {'"', '\\', '/', 'b', 'f', 'n', 'r', 't'}) {
    const auto byte = static_cast<std::uint8_t>(c);
    a.add_edge(escape, byte, byte, to);
  }
  // \uXXXX outside D800-DFFF.
  const NodeId u = a.add_node();
  a.add_edge(escape, 'u', 'u', u);
  const NodeId hex3 = a.add_node();
  const NodeId hex2 = a.add_node();
  const NodeId hex1 = a.add_node();
  const NodeId after_d = a.add_node();
  auto hex_digit = [&](NodeId source, NodeId target) {
    a.add_edge(source, '0', '9', target);
    a.add_edge(source, 'a', 'f', target);
    a.add_edge(source, 'A', 'F', target);
  };
  a.add_edge(u, '0', '9', hex3);
  a.add_edge(u, 'a', 'c', hex3);
  a.add_edge(u, 'A', 'C', hex3);
  a.add_edge(u, 'e', 'f', hex3);
  a.add_edge(u, 'E', 'F', hex3);
  a.add_edge(u, 'd', 'd', after_d);
  a.add_edge(u, 'D', 'D', after_d);
  a.add_edge(after_d, '0', '7', hex2);
  hex_digit(hex3, hex2);
  hex_digit(hex2, hex1);
  hex_digit(hex1, to);
}

RuleId JsonText::character_rule() {
  if (character_rule_ == kNoRule) {
    character_rule_ = automaton_.add_rule("a string character");
    const Rule& rule = automaton_.rule(character_rule_);
    character(rule.start, rule.end);
  }
  return character_rule_;
}

NodeId JsonText::string(NodeId from, std::uint64_t min_length,
                        std::optional<std::uint64_t> max_length) {
  Automaton& a = automaton_;
  const NodeId end = a.add_node();
  NodeId at = a.add_node();
  a.add_edge(from, '"', '"', at);
  if (min_length == 0 && !max_length) {
    character(at, at);
    a.add_edge(at, '"', '"', end);
    return end;
  }
  const RuleId one = character_rule();
  for (std::uint64_t count = 0;; ++count) {
    const bool may_close = count >= min_length;
    if (may_close) a.add_edge(at, '"', '"', end);
    if (max_length && count == *max_length) break;
    if (!max_length && may_close) {
      character(at, at);
      break;
    }
    at = a.add_call(at, one);
  }
  return end;
}

NodeId JsonText::integer(NodeId from) {
  Automaton& a = automaton_;
  const NodeId unsigned_start = a.add_node();
  const NodeId end = a.add_node();
  a.add_edge(from, '-', '-', unsigned_start);
  a.add_epsilon(from, unsigned_start);
  a.add_edge(unsigned_start, '0', '0', end);
  const NodeId digits = a.add_node();
  a.add_edge(unsigned_start, '1', '9', digits);
  a.add_edge(digits, '0', '9', digits);
  a.add_epsilon(digits, end);
  return end;
}

NodeId JsonText::fraction(NodeId from) {
  Automaton& a = automaton_;
  const NodeId digits = a.add_node();
  a.add_edge(from, '0', '9', digits);
  a.add_edge(digits, '0', '9', digits);
  return digits;
}

NodeId JsonText::number(NodeId from) {
  Automaton& a = automaton_;
  const NodeId whole = integer(from);
  const NodeId point = a.add_node();
  a.add_edge(whole, '.', '.', point);
  const NodeId before_exponent = a.add_node();
  a.add_epsilon(whole, before_exponent);
  a.add_epsilon(fraction(point), before_exponent);
  const NodeId end = a.add_node();
  a.add_epsilon(before_exponent, end);
  const NodeId e = a.add_node();
  a.add_edge(before_exponent, 'e', 'e', e);
  a.add_edge(before_exponent, 'E', 'E', e);
  const NodeId sign = a.add_node();
  a.add_epsilon(e, sign);
  a.add_edge(e, '+', '+', sign);
  a.add_edge(e, '-', '-', sign);
  a.add_epsilon(fraction(sign), end);
  return end;
}

RuleId JsonText::any_value_rule() {
  if (any_value_rule_ != kNoRule) return any_value_rule_;
  any_value_rule_ = automaton_.add_rule("any JSON value");
  const NodeId start = automaton_.rule(any_value_rule_).start;
  const NodeId end = automaton_.rule(any_value_rule_).end;
  automaton_.add_epsilon(string(start, 0, std::nullopt), end);
  automaton_.add_epsilon(number(start), end);
  for (const char* word : {"true", "false", "null"})
    automaton_.add_epsilon(automaton_.add_literal(start, word), end);
  automaton_.add_epsilon(any_object(start), end);
  automaton_.add_epsilon(any_array(start), end);
  return any_value_rule_;
}

// "{" ws ( "}" | member ( ws "," ws member )* ws "}" ), member = string ws ":" ws value.
NodeId JsonText::any_object(NodeId from) {
  Automaton& a = automaton_;
  const RuleId value = any_value_rule();
  const NodeId end = a.add_node();
  const NodeId open = a.add_node();
  a.add_edge(from, '{', '{', open);
  const NodeId inside = whitespace(open);
  a.add_edge(inside, '}', '}', end);
  const NodeId key = a.add_node();
  a.add_epsilon(inside, key);
  const NodeId colon = a.add_node();
  a.add_edge(whitespace(string(key, 0, std::nullopt)), ':', ':', colon);
  const NodeId after_member = whitespace(a.add_call(whitespace(colon), value));
  a.add_edge(after_member, '}', '}', end);
  const NodeId comma = a.add_node();
  a.add_edge(after_member, ',', ',', comma);
  a.add_epsilon(whitespace(comma), key);
  return end;
}

NodeId JsonText::any_array(NodeId from) {
  Automaton& a = automaton_;
  const RuleId value = any_value_rule();
  const NodeId end = a.add_node();
  const NodeId open = a.add_node();
  a.add_edge(from, '[', '[', open);
  const NodeId inside = whitespace(open);
  a.add_edge(inside, ']', ']', end);
  const NodeId item = a.add_node();
  a.add_epsilon(inside, item);
  const NodeId after_item = whitespace(a.add_call(item, value));
  a.add_edge(after_item, ']', ']', end);
  const NodeId comma = a.add_node();
  a.add_edge(after_item, ',', ',', comma);
  a.add_epsilon(whitespace(comma), item);
  return end;
}

}  // namespace quire::engine::grammar
