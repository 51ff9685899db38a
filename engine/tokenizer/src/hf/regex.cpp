#include "regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace quire::engine::detail {

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

namespace {

// Oniguruma's \s is Unicode's White_Space, which has U+0085; PCRE2's \s in
// UCP mode is the separators plus tab to carriage return, without it. Spelling
// the property out makes both engines agree, inside classes too.
std::string rewrite_for_pcre2(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 16);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char next = pattern[i + 1];
    if (next == 's') {
      out += "\\p{White_Space}";
    } else if (next == 'S') {
      out += "\\P{White_Space}";
    } else {
      out += '\\';
      out += next;
    }
    ++i;
  }
  return out;
}

// Each thread keeps its own match data and JIT stack; the compiled code is
// shared read-only.
struct ThreadMatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
  ThreadMatchState() {
    if (stack) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~ThreadMatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  ThreadMatchState(const ThreadMatchState&) = delete;
  ThreadMatchState& operator=(const ThreadMatchState&) = delete;
};

ThreadMatchState& thread_state() {
  thread_local ThreadMatchState state;
  return state;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0)
    return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

Regex Regex::compile(std::string_view pattern) {
  const std::string rewritten = rewrite_for_pcre2(pattern);
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_compile_context* context = pcre2_compile_context_create(nullptr);
  pcre2_set_newline(context, PCRE2_NEWLINE_LF);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &offset, context);
  pcre2_compile_context_free(context);
  if (!code) {
    throw RegexError(pcre2_message(error) + " at offset " + std::to_string(offset));
  }
  // Without JIT (an unsupported processor) the interpreter runs the same pattern.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  Regex regex;
  auto owner = std::make_shared<Code>();
  owner->code = code;
  regex.code_ = std::move(owner);
  return regex;
}

Regex Regex::literal(std::string_view literal) {
  std::string pattern = "\\Q";
  // \E inside the literal would end the quoting early.
  for (std::size_t i = 0; i < literal.size(); ++i) {
    if (literal.substr(i, 2) == "\\E") {
      pattern += "\\E\\\\E\\Q";
      ++i;
    } else {
      pattern += literal[i];
    }
  }
  pattern += "\\E";
  return compile(pattern);
}

bool Regex::find(std::string_view text, std::size_t start, std::size_t& begin,
                 std::size_t& end) const {
  ThreadMatchState& state = thread_state();
  const int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(),
                             start, PCRE2_NO_UTF_CHECK, state.data, state.context);
  if (rc < 0) {
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    throw std::runtime_error("pattern matching failed: " + pcre2_message(rc));
  }
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
  begin = ovector[0];
  end = ovector[1];
  // \K in a lookbehind can report a match that ends before it starts.
  if (end < begin) end = begin;
  return true;
}

std::string Regex::replace_all(std::string_view text, std::string_view replacement) const {
  std::string out;
  std::size_t copied = 0;
  for_each_match(text, [&](std::size_t begin, std::size_t end) {
    out.append(text.substr(copied, begin - copied));
    out.append(replacement);
    copied = end;
  });
  out.append(text.substr(copied));
  return out;
}

}  // namespace quire::engine::detail
