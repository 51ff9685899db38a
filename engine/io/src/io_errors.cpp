#include "io_errors.h"

#include <nlohmann/json.hpp>

#include "quire/engine/model_error.h"

namespace quire::engine::io::detail {

void fail(const std::filesystem::path& file, std::string_view what) {
  std::string message = file.string();
  message += ": ";
  message += what;
  throw ModelError(message);
}

std::string quote_text(std::string_view text) {
  constexpr std::size_t kMaxShown = 120;
  std::string shown(text.substr(0, kMaxShown));
  // Cutting may split a UTF-8 sequence; `replace` turns the remnant into U+FFFD
  // instead of failing, and invalid input from anywhere else is shown the same way.
  std::string out =
      nlohmann::json(shown).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxShown) out += "…";
  return out;
}

}  // namespace quire::engine::io::detail
