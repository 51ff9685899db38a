#include "json_header.h"

#include <set>
#include <vector>

#include "io_errors.h"

namespace quire::engine::io::detail {
namespace {

// Real headers nest three levels (root, tensor entry, shape array).
constexpr int kMaxDepth = 16;

using Event = nlohmann::json::parse_event_t;

}  // namespace

nlohmann::json parse_untrusted_json(const std::filesystem::path& file, std::string_view text,
                                    std::string_view what, std::string_view advice) {
  // One set of keys per open object, to find repeated keys.
  std::vector<std::set<std::string>> open_objects;
  const auto check = [&](int depth, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (depth >= kMaxDepth) {
          fail(file, std::string(what) + " nests JSON more than " + std::to_string(kMaxDepth) +
                         " levels deep, far more than safetensors uses; " + std::string(advice));
        }
        if (event == Event::object_start) open_objects.emplace_back();
        break;
      case Event::key:
        if (!open_objects.back().insert(parsed.get<std::string>()).second) {
          fail(file, std::string(what) + " has the key " + quote_text(parsed.get<std::string>()) +
                         " twice in one object; " + std::string(advice));
        }
        break;
      case Event::object_end:
        open_objects.pop_back();
        break;
      case Event::array_end:
      case Event::value:
        break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), check);
  } catch (const nlohmann::json::parse_error& error) {
    // Drop the library's "[json.exception.parse_error.101] " prefix; the rest
    // (line, column, what was read) helps whoever looks at the file.
    std::string_view reason = error.what();
    if (const std::size_t end = reason.find("] "); end != std::string_view::npos) {
      reason.remove_prefix(end + 2);
    }
    fail(file, std::string(what) + " is not valid JSON (" + std::string(reason) + "); " +
                   std::string(advice));
  }
}

std::string json_kind(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object:
      return "a JSON object";
    case nlohmann::json::value_t::array:
      return "a JSON array";
    case nlohmann::json::value_t::string:
      return "a JSON string";
    case nlohmann::json::value_t::boolean:
      return "a JSON boolean";
    case nlohmann::json::value_t::null:
      return "JSON null";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a JSON number";
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded:
      break;
  }
  return "a JSON value";
}

std::string json_brief(const nlohmann::json& value) {
  constexpr std::size_t kMaxShown = 80;
  // ASCII only, so cutting cannot split a UTF-8 sequence.
  std::string text = value.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxShown) {
    text.resize(kMaxShown);
    text += "…";
  }
  return text;
}

}  // namespace quire::engine::io::detail
