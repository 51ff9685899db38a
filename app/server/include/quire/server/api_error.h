#pragma once

#include <stdexcept>
#include <string>

namespace quire::server {

// An answer that is not a success, in the shape OpenAI's clients expect:
// {"error": {"message", "type", "param", "code"}}. `param` and `code` are
// null in the body when empty.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;
  std::string code;

  friend bool operator==(const ApiError&, const ApiError&) = default;
};

// 400 invalid_request_error about one field of the request.
ApiError invalid_request(std::string message, std::string param = {}, std::string code = {});

// The JSON body of an error answer.
std::string error_body(const ApiError& error);

// Thrown by the request parsers and the server's checks; caught where the
// answer is written.
class ApiException : public std::runtime_error {
 public:
  explicit ApiException(ApiError error)
      : std::runtime_error(error.message), error_(std::move(error)) {}
  const ApiError& error() const { return error_; }

 private:
  ApiError error_;
};

}  // namespace quire::server
