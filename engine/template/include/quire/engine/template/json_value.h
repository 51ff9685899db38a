#pragma once

// Values from JSON, for contexts built from chat messages and tool schemas.

#include <nlohmann/json.hpp>
#include <string_view>

#include "quire/engine/template/value.h"

namespace quire::engine::jinja {

// Every string inside (not object keys) is marked literal when `literal` is
// true. Objects keep their key order only if `json` does (nlohmann::json sorts
// keys; nlohmann::ordered_json keeps them), so prefer the text overload.
Value value_from_json(const nlohmann::json& json, bool literal);
Value value_from_json(const nlohmann::ordered_json& json, bool literal);
// Parses JSON text, keeping object keys in document order. Throws
// nlohmann::json::parse_error on malformed text.
Value value_from_json_text(std::string_view json, bool literal);

}  // namespace quire::engine::jinja
