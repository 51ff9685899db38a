#pragma once

// Reading the optional text and JSON files of a model directory, for the
// prompt format's detection and the chat template's loading.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace quire::engine::detail {

// The file's bytes; nullopt when there is no such file. Throws ModelError
// when it exists but cannot be read.
std::optional<std::string> read_optional_text(const std::filesystem::path& path);

// The file as a JSON object; nullopt when there is no such file. Throws
// ModelError naming the file when it is not a valid JSON object.
std::optional<nlohmann::json> read_optional_json_object(const std::filesystem::path& path);

}  // namespace quire::engine::detail
