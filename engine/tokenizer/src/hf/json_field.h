#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace quire::engine::detail {

using Json = nlohmann::json;

// `text` with control characters spelled as escapes ("\n", "\u001b"), so
// that a message quoting a token or pattern from the file stays on one line.
std::string one_line(std::string_view text);

// A value of tokenizer.json and where it sits ("pre_tokenizer.pretokenizers[1]"),
// so that every complaint about the file names the file and the place.
class JsonField {
 public:
  JsonField(const Json& value, std::string where, const std::string& file)
      : value_(&value), where_(std::move(where)), file_(&file) {}

  const Json& json() const { return *value_; }
  const std::string& where() const { return where_; }
  const std::string& file() const { return *file_; }
  bool is_null() const { return value_->is_null(); }

  // Throws ModelError: "<file>: <where> <what>; ..."
  [[noreturn]] void fail(const std::string& what) const;
  // For what the file may rightly say but Quire does not read.
  [[noreturn]] void fail_unsupported(const std::string& what) const;

  // A member that may be missing or null.
  std::optional<JsonField> find(std::string_view key) const;
  JsonField at(std::string_view key) const;  // must be there and not null
  JsonField at(std::size_t index) const;
  std::size_t size() const;  // of an array

  std::string string() const;
  // A string of exactly one character (Metaspace's replacement).
  std::string character() const;
  bool boolean() const;
  std::int64_t integer(std::int64_t min, std::int64_t max) const;
  double number() const;

  std::string string_or(std::string_view key, std::string fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  // The "type" member of a component.
  std::string type() const;

  void require_object() const;
  void require_array() const;

 private:
  std::string describe_type() const;
  const Json* value_;
  std::string where_;
  const std::string* file_;
};

}  // namespace quire::engine::detail
