#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "quire/server/response_format.h"

namespace quire::server {

// The request's response_format field (null: absent). Throws ApiException
// 400, param "response_format", for a type other than text, json_object
// and json_schema, or a json_schema without a name or an object schema.
// `body` is the whole request's text: the schema is read from it again with
// its keys in their order (nlohmann::json sorts them), since the grammar
// generates properties in the schema's order, as OpenAI does.
ResponseFormat parse_response_format(const nlohmann::json* format, std::string_view body);

}  // namespace quire::server
