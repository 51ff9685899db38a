#include "request_fields.h"

#include "quire/server/api_error.h"

namespace quire::server::request {

[[noreturn]] void fail(std::string message, std::string param) {
  throw ApiException(invalid_request(std::move(message), std::move(param)));
}

std::string_view kind_of(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_float:
      return "a number with a fraction";
    default:
      return "an integer";
  }
}

std::string format_number(double value) {
  std::string text = json(value).dump();
  if (text.ends_with(".0")) text.resize(text.size() - 2);
  return text;
}

}  // namespace quire::server::request
