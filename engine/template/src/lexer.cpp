#include "lexer.h"

#include <cerrno>
#include <cstdlib>

#include "quire/engine/template/error.h"
#include "utf8.h"

namespace quire::engine::jinja {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}

// Python's line endings become "\n", and one trailing newline goes
// (jinja2's keep_trailing_newline is off).
std::string normalize(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

int count_newlines(std::string_view text, std::size_t begin, std::size_t end) {
  int n = 0;
  for (std::size_t i = begin; i < end; ++i)
    n += text[i] == '\n' ? 1 : 0;
  return n;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const std::size_t tag = find_tag(pos_);
      if (tag == std::string::npos) {
        tokens_.push_back({Token::Kind::Text, src_.substr(pos_), {}, line_});
        line_ += count_newlines(src_, pos_, src_.size());
        pos_ = src_.size();
        break;
      }
      const char type = src_[tag + 1];
      char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      if (sign != '-' && sign != '+') sign = '\0';
      std::string text = src_.substr(pos_, tag - pos_);
      strip_before(text, sign, type != '{');
      const int text_line = line_;
      line_ += count_newlines(src_, pos_, tag);
      if (!text.empty()) tokens_.push_back({Token::Kind::Text, std::move(text), {}, text_line});
      pos_ = tag + 2 + (sign != '\0' ? 1 : 0);
      if (type == '#')
        comment();
      else if (type == '%' && raw_begins())
        raw();
      else
        tag_contents(type == '{');
    }
    tokens_.push_back({Token::Kind::End, {}, {}, line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw TemplateError(problem, line_, "syntax");
  }

  std::size_t find_tag(std::size_t from) const {
    for (std::size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#'))
        return i;
    }
    return std::string::npos;
  }

  void strip_before(std::string& text, char sign, bool block_or_comment) const {
    if (sign == '-') {
      std::size_t end = text.size();
      while (end > 0 && is_space(text[end - 1]))
        --end;
      text.resize(end);
      return;
    }
    if (sign == '+' || !block_or_comment) return;
    const std::size_t line_begin = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
    if (line_begin == 0 && !line_starting_) return;
    if (line_begin == text.size()) return;
    for (std::size_t i = line_begin; i < text.size(); ++i) {
      if (!is_space(text[i])) return;
    }
    text.resize(line_begin);
  }

  // After a closing delimiter: "-" strips all whitespace, "+" nothing, and a
  // plain block or comment end drops one newline (trim_blocks).
  void after_close(char sign, bool trim) {
    if (sign == '-') {
      while (pos_ < src_.size() && is_space(src_[pos_])) {
        line_ += src_[pos_] == '\n' ? 1 : 0;
        ++pos_;
      }
    } else if (sign == '\0' && trim && pos_ < src_.size() && src_[pos_] == '\n') {
      ++line_;
      ++pos_;
    }
    line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
  }

  void comment() {
    const std::size_t close = src_.find("#}", pos_);
    if (close == std::string::npos) fail("missing end of comment tag");
    char sign = '\0';
    if (close > pos_ && (src_[close - 1] == '-' || src_[close - 1] == '+')) sign = src_[close - 1];
    line_ += count_newlines(src_, pos_, close);
    pos_ = close + 2;
    after_close(sign, true);
  }

  // {% raw %} (optionally {%- raw -%}): pos_ is just after "{%" and its sign.
  bool raw_begins() const {
    std::size_t i = pos_;
    while (i < src_.size() && is_space(src_[i]))
      ++i;
    if (src_.compare(i, 3, "raw") != 0) return false;
    i += 3;
    if (i < src_.size() && is_name_char(src_[i])) return false;
    while (i < src_.size() && is_space(src_[i]))
      ++i;
    return src_.compare(i, 2, "%}") == 0 || src_.compare(i, 3, "-%}") == 0;
  }

  void raw() {
    std::size_t i = src_.find("raw", pos_) + 3;
    while (is_space(src_[i]))
      ++i;
    line_ += count_newlines(src_, pos_, i);
    pos_ = i;
    const bool strip_after = src_[pos_] == '-';
    pos_ += strip_after ? 3 : 2;
    // The opening raw tag has no trim_blocks newline in jinja2.
    after_close(strip_after ? '-' : '+', false);
    for (std::size_t tag = find_tag(pos_); tag != std::string::npos; tag = find_tag(tag + 1)) {
      if (src_[tag + 1] != '%') continue;
      std::size_t j = tag + 2;
      char sign = '\0';
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) sign = src_[j++];
      while (j < src_.size() && is_space(src_[j]))
        ++j;
      if (src_.compare(j, 6, "endraw") != 0) continue;
      j += 6;
      while (j < src_.size() && is_space(src_[j]))
        ++j;
      char close_sign = '\0';
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) close_sign = src_[j++];
      if (src_.compare(j, 2, "%}") != 0) continue;
      std::string text = src_.substr(pos_, tag - pos_);
      strip_before(text, sign, true);
      const int text_line = line_;
      line_ += count_newlines(src_, pos_, j + 2);
      if (!text.empty()) tokens_.push_back({Token::Kind::Text, std::move(text), {}, text_line});
      pos_ = j + 2;
      after_close(close_sign, true);
      return;
    }
    fail("missing end of raw directive");
  }

  void tag_contents(bool variable) {
    tokens_.push_back(
        {variable ? Token::Kind::VariableBegin : Token::Kind::BlockBegin, {}, {}, line_});
    const char closer = variable ? '}' : '%';
    int depth = 0;
    while (true) {
      while (pos_ < src_.size() && is_space(src_[pos_])) {
        line_ += src_[pos_] == '\n' ? 1 : 0;
        ++pos_;
      }
      if (pos_ >= src_.size()) fail("unexpected end of template: a tag is not closed");
      if (depth == 0) {
        char sign = '\0';
        std::size_t at = pos_;
        if ((src_[at] == '-' || src_[at] == '+') && at + 1 < src_.size()) sign = src_[at++];
        if (src_[at] == closer && at + 1 < src_.size() && src_[at + 1] == '}' &&
            (sign != '+' || !variable)) {
          tokens_.push_back(
              {variable ? Token::Kind::VariableEnd : Token::Kind::BlockEnd, {}, {}, line_});
          pos_ = at + 2;
          after_close(sign, !variable);
          return;
        }
      }
      const char c = src_[pos_];
      if (is_digit(c)) {
        number();
      } else if (is_name_start(c)) {
        const std::size_t begin = pos_;
        while (pos_ < src_.size() && is_name_char(src_[pos_]))
          ++pos_;
        tokens_.push_back({Token::Kind::Name, src_.substr(begin, pos_ - begin), {}, line_});
      } else if (c == '\'' || c == '"') {
        string_literal(c);
      } else {
        operator_token(depth);
      }
    }
  }

  void number() {
    const std::size_t begin = pos_;
    auto digits = [&] {
      while (pos_ < src_.size() && (is_digit(src_[pos_]) || src_[pos_] == '_'))
        ++pos_;
    };
    digits();
    bool is_float = false;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
      ++pos_;
      digits();
      is_float = true;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      std::size_t at = pos_ + 1;
      if (at < src_.size() && (src_[at] == '+' || src_[at] == '-')) ++at;
      if (at < src_.size() && is_digit(src_[at])) {
        pos_ = at;
        digits();
        is_float = true;
      }
    }
    std::string text;
    for (std::size_t i = begin; i < pos_; ++i) {
      if (src_[i] != '_') text.push_back(src_[i]);
    }
    Token token{is_float ? Token::Kind::Float : Token::Kind::Integer, text, {}, line_};
    if (is_float) {
      token.number = Value(std::strtod(text.c_str(), nullptr));
    } else {
      errno = 0;
      const long long value = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) fail("integer literal " + text + " is too large");
      token.number = Value(static_cast<std::int64_t>(value));
    }
    tokens_.push_back(std::move(token));
  }

  void string_literal(char quote) {
    const int start_line = line_;
    std::string out;
    ++pos_;
    while (true) {
      if (pos_ >= src_.size()) fail("unexpected end of string literal");
      const char c = src_[pos_];
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c == '\n') ++line_;
      if (c != '\\') {
        out.push_back(c);
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= src_.size()) fail("unexpected end of string literal");
      escape(out);
    }
    tokens_.push_back({Token::Kind::String, std::move(out), {}, start_line});
  }

  // Python's escapes, as jinja2 decodes string literals.
  void escape(std::string& out) {
    const char c = src_[pos_ + 1];
    pos_ += 2;
    auto hex = [&](int length) {
      if (pos_ + static_cast<std::size_t>(length) > src_.size()) fail("truncated \\x escape");
      char32_t value = 0;
      for (int i = 0; i < length; ++i) {
        const char h = src_[pos_++];
        int digit = -1;
        if (is_digit(h)) digit = h - '0';
        if (h >= 'a' && h <= 'f') digit = h - 'a' + 10;
        if (h >= 'A' && h <= 'F') digit = h - 'A' + 10;
        if (digit < 0) fail("malformed escape in string literal");
        value = value * 16 + static_cast<char32_t>(digit);
      }
      if (value > 0x10FFFF) fail("illegal Unicode character in string literal");
      utf8::encode(value, out);
    };
    switch (c) {
      case '\n':
        ++line_;
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '\'':
        out.push_back('\'');
        break;
      case '"':
        out.push_back('"');
        break;
      case 'a':
        out.push_back('\a');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'v':
        out.push_back('\v');
        break;
      case 'x':
        hex(2);
        break;
      case 'u':
        hex(4);
        break;
      case 'U':
        hex(8);
        break;
      default:
        if (c >= '0' && c <= '7') {
          char32_t value = static_cast<char32_t>(c - '0');
          for (int i = 0; i < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7';
               ++i)
            value = value * 8 + static_cast<char32_t>(src_[pos_++] - '0');
          utf8::encode(value, out);
        } else {
          out.push_back('\\');
          out.push_back(c);
        }
    }
  }

  void operator_token(int& depth) {
    static const char* const two[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : two) {
      if (src_.compare(pos_, 2, op) == 0) {
        tokens_.push_back({Token::Kind::Operator, op, {}, line_});
        pos_ += 2;
        return;
      }
    }
    const char c = src_[pos_];
    static const std::string singles = "+-/*%~[](){}><=.:|,;";
    if (singles.find(c) == std::string::npos)
      fail(std::string("unexpected character '") + c + "' in a tag");
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) fail(std::string("unexpected '") + c + "'");
      --depth;
    }
    tokens_.push_back({Token::Kind::Operator, std::string(1, c), {}, line_});
    ++pos_;
  }

  std::string src_;
  std::size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) {
  return Lexer(normalize(source)).run();
}

}  // namespace quire::engine::jinja
