// JSON in both directions: contexts from nlohmann::json, and the tojson
// filter, which writes what Python's json.dumps(ensure_ascii=False) writes
// (transformers replaces jinja2's HTML-escaping tojson with it).

#include <algorithm>
#include <cstdio>
#include <limits>

#include "quire/engine/template/json_value.h"
#include "runtime.h"

namespace quire::engine::jinja {
namespace {

template <typename Json>
Value from_json(const Json& json, bool literal) {
  switch (json.type()) {
    case nlohmann::json::value_t::null:
      return Value::none();
    case nlohmann::json::value_t::boolean:
      return Value(json.template get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Value(json.template get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto value = json.template get<std::uint64_t>();
      if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return Value(static_cast<double>(value));
      return Value(static_cast<std::int64_t>(value));
    }
    case nlohmann::json::value_t::number_float:
      return Value(json.template get<double>());
    case nlohmann::json::value_t::string:
      return Value(json.template get_ref<const std::string&>(), literal);
    case nlohmann::json::value_t::array: {
      ValueList items;
      items.reserve(json.size());
      for (const auto& item : json)
        items.push_back(from_json(item, literal));
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Dict dict;
      for (auto it = json.begin(); it != json.end(); ++it)
        dict.set(Value(std::string_view(it.key())), from_json(it.value(), literal));
      return Value::dict(std::move(dict));
    }
    default:
      return Value::none();
  }
}

void escape_string(const Text& text, Text& out) {
  const std::string& bytes = text.bytes();
  out.append("\"");
  std::size_t run_begin = 0;
  auto flush = [&](std::size_t end) {
    if (end > run_begin) out.append(text.slice(run_begin, end));
  };
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    const char* escaped = nullptr;
    char buffer[8];
    switch (c) {
      case '"':
        escaped = "\\\"";
        break;
      case '\\':
        escaped = "\\\\";
        break;
      case '\n':
        escaped = "\\n";
        break;
      case '\r':
        escaped = "\\r";
        break;
      case '\t':
        escaped = "\\t";
        break;
      case '\b':
        escaped = "\\b";
        break;
      case '\f':
        escaped = "\\f";
        break;
      default:
        if (c < 0x20) {
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          escaped = buffer;
        }
    }
    if (!escaped) continue;
    flush(i);
    out.append(escaped, text.is_literal(i));
    run_begin = i + 1;
  }
  flush(bytes.size());
  out.append("\"");
}

std::string float_json(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-Infinity" : "Infinity";
  return python_float_repr(value);
}

class JsonWriter {
 public:
  JsonWriter(int indent, std::string_view item_separator, std::string_view key_separator,
             bool sort_keys, std::string indent_text)
      : indent_(indent),
        item_separator_(item_separator),
        key_separator_(key_separator),
        sort_keys_(sort_keys),
        indent_text_(std::move(indent_text)) {}

  void write(const Value& value, Text& out, int depth) {
    if (depth > 512) throw TemplateError("tojson: nesting is too deep");
    switch (value.kind()) {
      case Value::Kind::None:
        out.append("null");
        return;
      case Value::Kind::Bool:
        out.append(value.as_bool() ? "true" : "false");
        return;
      case Value::Kind::Int:
        out.append(std::to_string(value.as_int()));
        return;
      case Value::Kind::Float:
        out.append(float_json(value.as_double()));
        return;
      case Value::Kind::String:
        escape_string(value.as_text(), out);
        return;
      case Value::Kind::List: {
        const ValueList& items = value.as_list();
        if (items.empty()) {
          out.append("[]");
          return;
        }
        out.append("[");
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (i > 0) out.append(item_separator_);
          newline(out, depth + 1);
          write(items[i], out, depth + 1);
        }
        newline(out, depth);
        out.append("]");
        return;
      }
      case Value::Kind::Dict: {
        std::vector<const Dict::Entry*> entries;
        for (const Dict::Entry& entry : value.as_dict().entries())
          entries.push_back(&entry);
        if (entries.empty()) {
          out.append("{}");
          return;
        }
        if (sort_keys_)
          std::stable_sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
            return python_less(a->first, b->first);
          });
        out.append("{");
        for (std::size_t i = 0; i < entries.size(); ++i) {
          if (i > 0) out.append(item_separator_);
          newline(out, depth + 1);
          key(entries[i]->first, out);
          out.append(key_separator_);
          write(entries[i]->second, out, depth + 1);
        }
        newline(out, depth);
        out.append("}");
        return;
      }
      default:
        throw TemplateError("Object of type " + value.type_name() + " is not JSON serializable");
    }
  }

 private:
  void newline(Text& out, int depth) {
    if (indent_ < 0) return;
    out.append("\n");
    for (int i = 0; i < depth; ++i)
      out.append(indent_text_);
  }

  void key(const Value& key, Text& out) {
    switch (key.kind()) {
      case Value::Kind::String:
        escape_string(key.as_text(), out);
        return;
      case Value::Kind::None:
        out.append("\"null\"");
        return;
      case Value::Kind::Bool:
        out.append(key.as_bool() ? "\"true\"" : "\"false\"");
        return;
      case Value::Kind::Int:
        out.append("\"" + std::to_string(key.as_int()) + "\"");
        return;
      case Value::Kind::Float:
        out.append("\"" + float_json(key.as_double()) + "\"");
        return;
      default:
        throw TemplateError("keys must be str, int, float, bool or None, not " + key.type_name());
    }
  }

  int indent_;
  std::string item_separator_;
  std::string key_separator_;
  bool sort_keys_;
  std::string indent_text_;
};

}  // namespace

Value value_from_json(const nlohmann::json& json, bool literal) {
  return from_json(json, literal);
}

Value value_from_json(const nlohmann::ordered_json& json, bool literal) {
  return from_json(json, literal);
}

Value value_from_json_text(std::string_view json, bool literal) {
  return from_json(nlohmann::ordered_json::parse(json), literal);
}

Text to_json(const Value& value, int indent, std::string_view item_separator,
             std::string_view key_separator, bool sort_keys, const std::string& indent_text) {
  Text out;
  JsonWriter(indent, item_separator, key_separator, sort_keys, indent_text).write(value, out, 0);
  return out;
}

}  // namespace quire::engine::jinja
