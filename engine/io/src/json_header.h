#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace quire::engine::io::detail {

// Parses JSON read from an untrusted file. Throws ModelError naming `file` when
// the text is not valid JSON, nests deeper than any model file needs (a cheap
// guard against inputs built to exhaust memory), or repeats a key within one
// object (the reference implementation rejects that; silently keeping one of
// the two would hide a broken file). `what` names the text in messages ("the
// header"), `advice` says what to do.
nlohmann::json parse_untrusted_json(const std::filesystem::path& file, std::string_view text,
                                    std::string_view what, std::string_view advice);

// The JSON type of `value` for messages: "a JSON array", "a JSON number", ...
std::string json_kind(const nlohmann::json& value);

// `value` serialized and cut to a readable length, for messages.
std::string json_brief(const nlohmann::json& value);

}  // namespace quire::engine::io::detail
