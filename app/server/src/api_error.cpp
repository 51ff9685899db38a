#include "quire/server/api_error.h"

#include <nlohmann/json.hpp>

namespace quire::server {

ApiError invalid_request(std::string message, std::string param, std::string code) {
  return ApiError{400, std::move(message), "invalid_request_error", std::move(param),
                  std::move(code)};
}

std::string error_body(const ApiError& error) {
  const auto or_null = [](const std::string& text) {
    return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
  };
  const nlohmann::ordered_json body{{"error",
                                     {{"message", error.message},
                                      {"type", error.type},
                                      {"param", or_null(error.param)},
                                      {"code", or_null(error.code)}}}};
  // Messages may quote what the client sent; replace rather than throw on
  // bytes that are not UTF-8.
  return body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace quire::server
