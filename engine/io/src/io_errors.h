#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

// Helpers shared by the readers: one shape for every error message
// ("<file>: <what is wrong, with numbers>; <what to do>") and arithmetic that
// cannot overflow on values taken from untrusted files.
namespace quire::engine::io::detail {

// What to do about a file whose structure is wrong.
inline constexpr std::string_view kTruncatedAdvice =
    "the file is truncated or not a safetensors file — download it again";
inline constexpr std::string_view kDamagedAdvice =
    "the file is damaged or was written by a broken tool — download or convert it again";

// Throws ModelError("<file>: <what>").
[[noreturn]] void fail(const std::filesystem::path& file, std::string_view what);

// `text` as a JSON string literal (quotes, escapes), cut to a readable length,
// so names from hostile files cannot garble a message.
std::string quote_text(std::string_view text);

inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  if (b > UINT64_MAX - a) return std::nullopt;
  return a + b;
}

inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return std::nullopt;
  return a * b;
}

}  // namespace quire::engine::io::detail
