#include <atomic>
#include <memory>
#include <random>

#include "quire/engine/tools/tool_call.h"

namespace quire::engine::tools {

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

std::string random_letters(std::size_t count) {
  // One generator per thread, seeded once: ids need to be unique, not secret.
  thread_local std::mt19937_64 engine{std::random_device{}()};
  std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1);
  std::string out;
  for (std::size_t i = 0; i < count; ++i)
    out += kAlphabet[pick(engine)];
  return out;
}

}  // namespace

std::string new_call_id(ToolCallFormat format) {
  if (format == ToolCallFormat::Mistral) return random_letters(9);
  return "call_" + random_letters(24);
}

CallIdSource counting_call_ids(ToolCallFormat format) {
  auto counter = std::make_shared<std::atomic<int>>(0);
  return [counter, format] {
    const int n = ++*counter;
    if (format == ToolCallFormat::Mistral) {
      std::string digits = std::to_string(n);
      return "call" + std::string(digits.size() < 5 ? 5 - digits.size() : 0, '0') + digits;
    }
    return "call_" + std::to_string(n);
  };
}

}  // namespace quire::engine::tools
