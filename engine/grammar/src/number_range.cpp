#include "number_range.h"

#include <string>

#include "quire/engine/grammar/grammar.h"

namespace quire::engine::grammar {
namespace {

class DigitRanges {
 public:
  explicit DigitRanges(Automaton& automaton) : a_(automaton) {}

  // Magnitudes in [low, high] (high absent: no bound), no leading zeros.
  void magnitudes(NodeId from, NodeId to, std::uint64_t low, std::optional<std::uint64_t> high) {
    if (high && low > *high) return;
    if (low == 0) {
      a_.add_edge(from, '0', '0', to);
      if (high && *high == 0) return;
      low = 1;
    }
    const std::string low_text = std::to_string(low);
    const std::size_t low_digits = low_text.size();
    const std::size_t high_digits = high ? std::to_string(*high).size() : low_digits;
    for (std::size_t length = low_digits; length <= high_digits; ++length) {
      const std::string first =
          length == low_digits ? low_text : "1" + std::string(length - 1, '0');
      const std::string last =
          high && length == high_digits ? std::to_string(*high) : std::string(length, '9');
      same_length(from, to, first, last);
    }
    if (!high) {
      // Every magnitude with more digits than `low`.
      NodeId at = a_.add_node();
      a_.add_edge(from, '1', '9', at);
      for (std::size_t i = 0; i < low_digits; ++i) {
        const NodeId next = a_.add_node();
        a_.add_edge(at, '0', '9', next);
        at = next;
      }
      a_.add_edge(at, '0', '9', at);
      a_.add_epsilon(at, to);
    }
  }

 private:
  // Digit strings of one length between `low` and `high`.
  void same_length(NodeId from, NodeId to, std::string_view low, std::string_view high) {
    if (low.find_first_not_of('0') == std::string_view::npos &&
        high.find_first_not_of('9') == std::string_view::npos) {
      any_digits(from, to, low.size());
      return;
    }
    const auto low_digit = static_cast<std::uint8_t>(low[0]);
    const auto high_digit = static_cast<std::uint8_t>(high[0]);
    if (low.size() == 1) {
      a_.add_edge(from, low_digit, high_digit, to);
      return;
    }
    const std::size_t rest = low.size() - 1;
    if (low_digit == high_digit) {
      const NodeId next = a_.add_node();
      a_.add_edge(from, low_digit, low_digit, next);
      same_length(next, to, low.substr(1), high.substr(1));
      return;
    }
    const std::string nines(rest, '9');
    const std::string zeros(rest, '0');
    const NodeId after_low = a_.add_node();
    a_.add_edge(from, low_digit, low_digit, after_low);
    same_length(after_low, to, low.substr(1), nines);
    if (low_digit + 1 < high_digit) {
      const NodeId middle = a_.add_node();
      a_.add_edge(from, static_cast<std::uint8_t>(low_digit + 1),
                  static_cast<std::uint8_t>(high_digit - 1), middle);
      any_digits(middle, to, rest);
    }
    const NodeId after_high = a_.add_node();
    a_.add_edge(from, high_digit, high_digit, after_high);
    same_length(after_high, to, zeros, high.substr(1));
  }

  void any_digits(NodeId from, NodeId to, std::size_t count) {
    if (count == 0) {
      a_.add_epsilon(from, to);
      return;
    }
    NodeId at = from;
    for (std::size_t i = 0; i + 1 < count; ++i) {
      const NodeId next = a_.add_node();
      a_.add_edge(at, '0', '9', next);
      at = next;
    }
    a_.add_edge(at, '0', '9', to);
  }

  Automaton& a_;
};

void check_order(std::optional<std::int64_t> low, std::optional<std::int64_t> high) {
  if (low && high && *low > *high) {
    throw GrammarError("the lower bound " + std::to_string(*low) + " is above the upper bound " +
                       std::to_string(*high) + ", so no number satisfies the schema");
  }
}

std::uint64_t magnitude(std::int64_t value) {
  return value < 0 ? static_cast<std::uint64_t>(-(value + 1)) + 1
                   : static_cast<std::uint64_t>(value);
}

}  // namespace

NodeId integer_in_range(JsonText& text, NodeId from, std::optional<std::int64_t> low,
                        std::optional<std::int64_t> high) {
  check_order(low, high);
  Automaton& a = text.automaton();
  DigitRanges digits(a);
  const NodeId end = a.add_node();
  if (!high || *high >= 0) {
    digits.magnitudes(from, end, low ? magnitude(std::max<std::int64_t>(*low, 0)) : 0,
                      high ? std::optional(magnitude(*high)) : std::nullopt);
  }
  if (!low || *low < 0) {
    const NodeId minus = a.add_node();
    a.add_edge(from, '-', '-', minus);
    digits.magnitudes(minus, end, high && *high < 0 ? magnitude(*high) : 1,
                      low ? std::optional(magnitude(*low)) : std::nullopt);
  }
  return end;
}

NodeId number_in_range(JsonText& text, NodeId from, std::optional<NumberBound> low,
                       std::optional<NumberBound> high) {
  if (low && high &&
      (low->value > high->value ||
       (low->value == high->value && (low->exclusive || high->exclusive)))) {
    throw GrammarError("the bounds leave no number between them");
  }
  Automaton& a = text.automaton();
  DigitRanges digits(a);
  const NodeId end = a.add_node();
  // Magnitudes m between `least` and `most` (each inclusive or not): an
  // integer part strictly inside takes any fraction; `least` itself, when
  // excluded, only a fraction with a nonzero digit; `most`, when included,
  // only zeros.
  auto magnitudes = [&](NodeId start, NumberBound least, std::optional<NumberBound> most) {
    const auto lowest = static_cast<std::uint64_t>(least.value) + (least.exclusive ? 1 : 0);
    const NodeId free_fraction = a.add_node();
    if (!most) {
      digits.magnitudes(start, free_fraction, lowest, std::nullopt);
    } else if (most->value >= 1 && static_cast<std::uint64_t>(most->value) - 1 >= lowest) {
      digits.magnitudes(start, free_fraction, lowest, static_cast<std::uint64_t>(most->value) - 1);
    }
    a.add_epsilon(free_fraction, end);
    const NodeId point = a.add_node();
    a.add_edge(free_fraction, '.', '.', point);
    a.add_epsilon(text.fraction(point), end);
    const auto least_value = static_cast<std::uint64_t>(least.value);
    if (least.exclusive && (!most || most->value > least.value)) {
      const NodeId at_least = a.add_node();
      digits.magnitudes(start, at_least, least_value, least_value);
      const NodeId fraction_point = a.add_node();
      a.add_edge(at_least, '.', '.', fraction_point);
      const NodeId nonzero = a.add_node();
      a.add_edge(fraction_point, '0', '0', fraction_point);
      a.add_edge(fraction_point, '1', '9', nonzero);
      a.add_edge(nonzero, '0', '9', nonzero);
      a.add_epsilon(nonzero, end);
    }
    if (most && !most->exclusive && (most->value > least.value || !least.exclusive)) {
      const auto most_value = static_cast<std::uint64_t>(most->value);
      const NodeId at_most = a.add_node();
      digits.magnitudes(start, at_most, most_value, most_value);
      a.add_epsilon(at_most, end);
      const NodeId zero_point = a.add_node();
      a.add_edge(at_most, '.', '.', zero_point);
      const NodeId zeros = a.add_node();
      a.add_edge(zero_point, '0', '0', zeros);
      a.add_edge(zeros, '0', '0', zeros);
      a.add_epsilon(zeros, end);
    }
  };
  // x >= 0, then x < 0 as "-" and a magnitude.
  const bool nonnegative = !high || high->value > 0 || (high->value == 0 && !high->exclusive);
  if (nonnegative) {
    const NumberBound least = low && low->value >= 0 ? *low : NumberBound{0, false};
    magnitudes(from, least, high);
  }
  if (!low || low->value < 0) {
    const NodeId minus = a.add_node();
    a.add_edge(from, '-', '-', minus);
    const bool below_zero = high && (high->value < 0 || (high->value == 0 && high->exclusive));
    const NumberBound least =
        below_zero ? NumberBound{-high->value, high->exclusive} : NumberBound{0, false};
    std::optional<NumberBound> most;
    if (low) most = NumberBound{-low->value, low->exclusive};
    magnitudes(minus, least, most);
  }
  return end;
}

}  // namespace quire::engine::grammar
