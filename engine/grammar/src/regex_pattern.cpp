#include "regex_pattern.h"

#include <bitset>
#include <cctype>
#include <charconv>
#include <vector>

#include "quire/engine/grammar/grammar.h"

namespace quire::engine::grammar {
namespace {

struct CharClass {
  std::bitset<128> ascii;
  bool any_multibyte = false;          // every character beyond ASCII
  std::vector<std::string> multibyte;  // single characters beyond ASCII, as UTF-8
};

struct RegexNode {
  enum class Kind { Class, Sequence, Choice, Repeat };
  Kind kind = Kind::Sequence;
  CharClass chars;
  std::vector<RegexNode> parts;
  int min = 0;
  int max = -1;  // -1: no bound
};

constexpr int kMaxRepeat = 1000;

class PatternParser {
 public:
  PatternParser(std::string_view pattern, const std::string& where)
      : pattern_(pattern), where_(where) {}

  RegexNode parse() {
    if (peek('^')) {
      anchored_start = true;
      ++at_;
    }
    RegexNode node = choice();
    if (at_ < pattern_.size()) fail("has an unmatched ')'");
    return node;
  }

  bool anchored_start = false;
  bool anchored_end = false;

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw GrammarError("the pattern \"" + std::string(pattern_) + "\" at " + where_ + " " + what);
  }
  [[noreturn]] void refuse(const std::string& what) const {
    fail("uses " + what +
         ", which a grammar cannot enforce; the supported subset is literals, classes, groups, "
         "alternation, quantifiers and a leading ^ and trailing $");
  }
  bool peek(char c) const { return at_ < pattern_.size() && pattern_[at_] == c; }

  RegexNode choice() {
    RegexNode first = sequence();
    if (!peek('|')) return first;
    RegexNode node;
    node.kind = RegexNode::Kind::Choice;
    node.parts.push_back(std::move(first));
    while (peek('|')) {
      ++at_;
      node.parts.push_back(sequence());
    }
    return node;
  }

  RegexNode sequence() {
    RegexNode node;
    node.kind = RegexNode::Kind::Sequence;
    while (at_ < pattern_.size() && !peek('|') && !peek(')')) {
      if (peek('$')) {
        if (at_ + 1 != pattern_.size()) refuse("$ before the end of the pattern");
        anchored_end = true;
        ++at_;
        continue;
      }
      if (peek('^')) refuse("^ after the start of the pattern");
      node.parts.push_back(quantified(atom()));
    }
    return node;
  }

  int number() {
    int value = 0;
    const auto [end, error] =
        std::from_chars(pattern_.data() + at_, pattern_.data() + pattern_.size(), value);
    if (error != std::errc() || value > kMaxRepeat) {
      fail("has a repetition count that is missing or above " + std::to_string(kMaxRepeat));
    }
    at_ = static_cast<std::size_t>(end - pattern_.data());
    return value;
  }

  RegexNode quantified(RegexNode atom) {
    int min = 1;
    int max = 1;
    if (peek('*')) {
      min = 0, max = -1;
    } else if (peek('+')) {
      min = 1, max = -1;
    } else if (peek('?')) {
      min = 0, max = 1;
    } else if (peek('{') && at_ + 1 < pattern_.size() &&
               std::isdigit(static_cast<unsigned char>(pattern_[at_ + 1]))) {
      ++at_;
      min = max = number();
      if (peek(',')) {
        ++at_;
        max = peek('}') ? -1 : number();
      }
      if (!peek('}')) fail("has an unclosed {n,m} repetition");
      if (max != -1 && max < min) fail("has a repetition {n,m} with m < n");
    } else {
      return atom;
    }
    ++at_;
    if (peek('?')) ++at_;  // lazy: the same strings
    if (peek('+')) refuse("a possessive quantifier");
    RegexNode node;
    node.kind = RegexNode::Kind::Repeat;
    node.min = min;
    node.max = max;
    node.parts.push_back(std::move(atom));
    return node;
  }

  RegexNode atom() {
    const char c = pattern_[at_];
    if (c == '(') {
      if (++group_depth_ > kMaxGroupDepth) fail("nests groups more than 100 deep");
      ++at_;
      if (peek('?')) {
        const std::string_view rest = pattern_.substr(at_);
        if (rest.starts_with("?:")) {
          at_ += 2;
        } else if (rest.starts_with("?<") && !rest.starts_with("?<=") && !rest.starts_with("?<!")) {
          const auto close = pattern_.find('>', at_);
          if (close == std::string_view::npos) fail("has an unclosed group name");
          at_ = close + 1;
        } else {
          refuse("lookaround (?=, ?!, ?<=, ?<!)");
        }
      }
      RegexNode inner = choice();
      if (!peek(')')) fail("has an unclosed '('");
      ++at_;
      --group_depth_;
      return inner;
    }
    if (c == ')' || c == '*' || c == '+' || c == '?')
      fail("has a misplaced '" + std::string(1, c) + "'");
    RegexNode node;
    node.kind = RegexNode::Kind::Class;
    if (c == '[') {
      ++at_;
      node.chars = bracket_class();
    } else if (c == '.') {
      ++at_;
      node.chars.ascii.set();
      node.chars.ascii['\n'] = false;
      node.chars.ascii['\r'] = false;
      node.chars.any_multibyte = true;
    } else if (c == '\\') {
      ++at_;
      escape(node.chars, false);
    } else {
      add_literal(node.chars);
    }
    return node;
  }

  // One UTF-8 character of the pattern, as itself.
  std::string take_character() {
    const auto lead = static_cast<unsigned char>(pattern_[at_]);
    const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (at_ + length > pattern_.size()) fail("is not valid UTF-8");
    std::string text(pattern_.substr(at_, length));
    at_ += length;
    return text;
  }

  void add_literal(CharClass& chars) {
    const std::string text = take_character();
    if (text.size() == 1) {
      chars.ascii[static_cast<unsigned char>(text[0])] = true;
    } else {
      chars.multibyte.push_back(text);
    }
  }

  static void add_code_point(CharClass& chars, std::uint32_t code) {
    if (code < 0x80) {
      chars.ascii[code] = true;
      return;
    }
    std::string text;
    if (code < 0x800) {
      text += static_cast<char>(0xC0 | (code >> 6));
    } else {
      text += static_cast<char>(0xE0 | (code >> 12));
      text += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    }
    text += static_cast<char>(0x80 | (code & 0x3F));
    chars.multibyte.push_back(text);
  }

  std::uint32_t hex(std::size_t digits) {
    std::uint32_t value = 0;
    if (at_ + digits > pattern_.size()) fail("has a short \\x or \\u escape");
    const auto [end, error] =
        std::from_chars(pattern_.data() + at_, pattern_.data() + at_ + digits, value, 16);
    if (error != std::errc() || end != pattern_.data() + at_ + digits) {
      fail("has a malformed \\x or \\u escape");
    }
    at_ += digits;
    return value;
  }

  // After a backslash. Returns the single ASCII character it stands for, or
  // -1 when it added a class or a character beyond ASCII.
  int escape(CharClass& chars, bool in_class) {
    if (at_ >= pattern_.size()) fail("ends with a lone backslash");
    const char c = pattern_[at_++];
    auto negated = [&](auto add) {
      CharClass positive;
      add(positive);
      chars.ascii |= ~positive.ascii;
      return -1;
    };
    auto digits = [](CharClass& out) {
      for (int b = '0'; b <= '9'; ++b)
        out.ascii[static_cast<std::size_t>(b)] = true;
    };
    auto word = [&](CharClass& out) {
      digits(out);
      for (int b = 'a'; b <= 'z'; ++b)
        out.ascii[static_cast<std::size_t>(b)] = out.ascii[static_cast<std::size_t>(b - 32)] = true;
      out.ascii['_'] = true;
    };
    auto space = [](CharClass& out) {
      for (const char s : {' ', '\t', '\n', '\r', '\f', '\v'})
        out.ascii[static_cast<unsigned char>(s)] = true;
    };
    switch (c) {
      case 'd':
        digits(chars);
        return -1;
      case 'w':
        word(chars);
        return -1;
      case 's':
        space(chars);
        return -1;
      case 'D':
        chars.any_multibyte = true;
        return negated(digits);
      case 'W':
        chars.any_multibyte = true;
        return negated(word);
      case 'S':
        return negated(space);
      case 'n':
        chars.ascii['\n'] = true;
        return '\n';
      case 'r':
        chars.ascii['\r'] = true;
        return '\r';
      case 't':
        chars.ascii['\t'] = true;
        return '\t';
      case 'f':
        chars.ascii['\f'] = true;
        return '\f';
      case 'v':
        chars.ascii['\v'] = true;
        return '\v';
      case '0':
        chars.ascii[0] = true;
        return 0;
      case 'x':
      case 'u': {
        const std::uint32_t code = hex(c == 'x' ? 2 : 4);
        if (code >= 0xD800 && code <= 0xDFFF) refuse("a surrogate \\u escape");
        add_code_point(chars, code);
        return code < 0x80 ? static_cast<int>(code) : -1;
      }
      case 'b':
        if (in_class) {
          chars.ascii['\b'] = true;
          return '\b';
        }
        refuse("a word boundary (\\b)");
      case 'B':
        refuse("a word boundary (\\B)");
      case 'p':
      case 'P':
        refuse("a Unicode property class (\\p, \\P)");
      case 'k':
        refuse("a named backreference (\\k)");
      case 'c':
        refuse("a control escape (\\c)");
      default:
        break;
    }
    if (c >= '1' && c <= '9') refuse("a backreference (\\" + std::string(1, c) + ")");
    if (std::isalnum(static_cast<unsigned char>(c)))
      fail("has the unknown escape \\" + std::string(1, c));
    --at_;
    const std::string text = take_character();
    if (text.size() > 1) {
      chars.multibyte.push_back(text);
      return -1;
    }
    chars.ascii[static_cast<unsigned char>(text[0])] = true;
    return static_cast<unsigned char>(text[0]);
  }

  CharClass bracket_class() {
    CharClass chars;
    const bool negate = peek('^');
    if (negate) ++at_;
    bool first = true;
    while (at_ < pattern_.size() && (first || !peek(']'))) {
      first = false;
      int low = -1;
      if (peek('\\')) {
        ++at_;
        low = escape(chars, true);
      } else if (static_cast<unsigned char>(pattern_[at_]) >= 0x80) {
        add_literal(chars);
      } else {
        low = static_cast<unsigned char>(pattern_[at_++]);
        chars.ascii[static_cast<std::size_t>(low)] = true;
      }
      if (peek('-') && at_ + 1 < pattern_.size() && pattern_[at_ + 1] != ']') {
        ++at_;
        int high = -1;
        CharClass ignored;
        if (peek('\\')) {
          ++at_;
          high = escape(ignored, true);
        } else if (static_cast<unsigned char>(pattern_[at_]) < 0x80) {
          high = static_cast<unsigned char>(pattern_[at_++]);
        }
        if (low < 0 || high < 0) refuse("a class range with a character beyond ASCII or a class");
        if (high < low) fail("has a class range in the wrong order");
        for (int b = low; b <= high; ++b)
          chars.ascii[static_cast<std::size_t>(b)] = true;
      }
    }
    if (!peek(']')) fail("has an unclosed '['");
    ++at_;
    if (negate) {
      if (!chars.multibyte.empty()) {
        refuse("a negated class holding characters beyond ASCII");
      }
      chars.ascii = ~chars.ascii;
      chars.any_multibyte = !chars.any_multibyte;
    }
    return chars;
  }

  static constexpr int kMaxGroupDepth = 100;
  std::string_view pattern_;
  const std::string& where_;
  std::size_t at_ = 0;
  int group_depth_ = 0;
};

class PatternEmitter {
 public:
  PatternEmitter(JsonText& text, const std::string& pattern, const std::string& where)
      : text_(text), a_(text.automaton()), pattern_(pattern), where_(where) {}

  NodeId emit(const RegexNode& node, NodeId from) {
    switch (node.kind) {
      case RegexNode::Kind::Class: {
        if (++emitted_ > kMaxClasses) {
          throw GrammarError("the pattern \"" + pattern_ + "\" at " + where_ +
                             " repeats too much to compile (over " + std::to_string(kMaxClasses) +
                             " characters); lower its counts");
        }
        const NodeId end = a_.add_node();
        emit_class(node.chars, from, end);
        return end;
      }
      case RegexNode::Kind::Sequence: {
        NodeId at = from;
        for (const RegexNode& part : node.parts)
          at = emit(part, at);
        return at;
      }
      case RegexNode::Kind::Choice: {
        const NodeId end = a_.add_node();
        for (const RegexNode& part : node.parts)
          a_.add_epsilon(emit(part, from), end);
        return end;
      }
      case RegexNode::Kind::Repeat: {
        const RegexNode& part = node.parts.front();
        NodeId at = from;
        for (int i = 0; i < node.min; ++i)
          at = emit(part, at);
        if (node.max == -1) {
          const NodeId loop = a_.add_node();
          a_.add_epsilon(at, loop);
          a_.add_epsilon(emit(part, loop), loop);
          return loop;
        }
        const NodeId end = a_.add_node();
        for (int i = node.min; i < node.max; ++i) {
          a_.add_epsilon(at, end);
          at = emit(part, at);
        }
        a_.add_epsilon(at, end);
        return end;
      }
    }
    return from;
  }

 private:
  static constexpr int kMaxClasses = 100'000;

  // Each character the class allows, spelled as JSON spells it.
  void emit_class(const CharClass& chars, NodeId from, NodeId to) {
    ByteSet plain;
    for (std::size_t c = 0; c < 128; ++c) {
      if (!chars.ascii[c]) continue;
      if (c >= 0x20 && c != '"' && c != '\\') {
        plain[c] = true;
        continue;
      }
      std::string escaped = "\\";
      switch (c) {
        case '"':
          escaped += '"';
          break;
        case '\\':
          escaped += '\\';
          break;
        case '\b':
          escaped += 'b';
          break;
        case '\f':
          escaped += 'f';
          break;
        case '\n':
          escaped += 'n';
          break;
        case '\r':
          escaped += 'r';
          break;
        case '\t':
          escaped += 't';
          break;
        default: {
          static constexpr char kHex[] = "0123456789abcdef";
          escaped += "u00";
          escaped += kHex[c >> 4];
          escaped += kHex[c & 15];
        }
      }
      a_.add_epsilon(a_.add_literal(from, escaped), to);
    }
    text_.byte_set(from, to, plain);
    if (chars.any_multibyte) {
      text_.multibyte_character(from, to);
    } else {
      for (const std::string& character : chars.multibyte)
        a_.add_epsilon(a_.add_literal(from, character), to);
    }
  }

  JsonText& text_;
  Automaton& a_;
  const std::string& pattern_;
  const std::string& where_;
  int emitted_ = 0;
};

}  // namespace

NodeId string_matching_pattern(JsonText& text, NodeId from, std::string_view pattern,
                               const std::string& where) {
  PatternParser parser(pattern, where);
  const RegexNode tree = parser.parse();
  Automaton& a = text.automaton();
  NodeId at = a.add_node();
  a.add_edge(from, '"', '"', at);
  if (!parser.anchored_start) {
    const NodeId free = a.add_node();
    a.add_epsilon(at, free);
    text.character(free, free);
    at = free;
  }
  const std::string pattern_text(pattern);
  PatternEmitter emitter(text, pattern_text, where);
  at = emitter.emit(tree, at);
  if (!parser.anchored_end) {
    const NodeId free = a.add_node();
    a.add_epsilon(at, free);
    text.character(free, free);
    at = free;
  }
  const NodeId end = a.add_node();
  a.add_edge(at, '"', '"', end);
  return end;
}

}  // namespace quire::engine::grammar
