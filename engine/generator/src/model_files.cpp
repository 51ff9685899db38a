#include "model_files.h"

#include <fstream>
#include <sstream>

#include "quire/engine/model_error.h"

namespace quire::engine::detail {

std::optional<std::string> read_optional_text(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelError("cannot read " + path.string() + "; check its permissions");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::optional<nlohmann::json> read_optional_json_object(const std::filesystem::path& path) {
  const std::optional<std::string> text = read_optional_text(path);
  if (!text) return std::nullopt;
  nlohmann::json root = nlohmann::json::parse(*text, nullptr, false);
  if (root.is_discarded() || !root.is_object()) {
    throw ModelError(path.string() +
                     " is not a valid JSON object; repair the file or download it again");
  }
  return root;
}

}  // namespace quire::engine::detail
