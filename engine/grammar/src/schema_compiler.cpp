#include "schema_compiler.h"

#include <set>

namespace quire::engine::grammar {
namespace {

// Keywords that describe a schema without constraining its values.
const std::set<std::string, std::less<>> kAnnotations = {
    "title", "description", "default", "examples", "$comment", "$schema", "$id", "$defs",
    "definitions", "deprecated", "readOnly", "writeOnly", "$anchor", "contentMediaType",
    "contentEncoding",
    // OpenAPI's hint beside oneOf (pydantic writes it for tagged unions); the
    // alternatives' consts already say which is which.
    "discriminator"};

const std::set<std::string, std::less<>> kEnforced = {
    "type", "properties", "required", "additionalProperties", "items", "prefixItems", "minItems",
    "maxItems", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "enum", "const", "anyOf", "oneOf", "allOf", "$ref",
    // OpenAPI 3.0's, which OpenAI's
    // zod helper writes for .nullable()
    "nullable"};

// Why the keywords a grammar cannot enforce are refused.
std::string why_refused(const std::string& keyword) {
  if (keyword == "uniqueItems")
    return "cannot be enforced: a grammar does not remember earlier items";
  if (keyword == "multipleOf") return "cannot be enforced by a grammar over digits";
  if (keyword == "not") return "cannot be enforced: a grammar cannot exclude a schema's values";
  if (keyword == "if" || keyword == "then" || keyword == "else" || keyword == "dependentRequired" ||
      keyword == "dependentSchemas" || keyword == "dependencies") {
    return "is not supported: conditional schemas cannot be enforced while generating";
  }
  return "is not supported by the grammar compiler, so it could not be enforced; remove it or "
         "express it with the supported keywords";
}

const std::set<std::string, std::less<>> kObjectKeywords = {"properties", "required",
                                                            "additionalProperties"};
const std::set<std::string, std::less<>> kArrayKeywords = {"items", "prefixItems", "minItems",
                                                           "maxItems"};
const std::set<std::string, std::less<>> kStringKeywords = {"minLength", "maxLength", "pattern",
                                                            "format"};
const std::set<std::string, std::less<>> kNumberKeywords = {"minimum", "maximum",
                                                            "exclusiveMinimum", "exclusiveMaximum"};

void only_annotations_beside(const SchemaJson& schema, const std::string& keyword,
                             const std::string& path,
                             const std::set<std::string, std::less<>>& also_allowed = {}) {
  for (const auto& [key, ignored] : schema.items()) {
    if (key == keyword || kAnnotations.contains(key) || also_allowed.contains(key) ||
        key == "nullable") {
      continue;
    }
    refuse_keyword(
        key, path,
        "beside \"" + keyword + "\" is not supported; move it into the " + keyword + " or drop it");
  }
}

bool has_type(const SchemaJson& value, const std::string& type) {
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  if (type == "string") return value.is_string();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    if (value.is_number_integer()) return true;
    if (!value.is_number_float()) return false;
    const double number = value.get<double>();
    return number == static_cast<double>(static_cast<std::int64_t>(number));
  }
  return false;
}

}  // namespace

void refuse_keyword(const std::string& keyword, const std::string& path, const std::string& why) {
  throw GrammarError("JSON schema keyword \"" + keyword + "\" at " + path + " " + why);
}

std::string child_path(const std::string& path, const std::string& key) {
  std::string escaped;
  for (const char c : key) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return path + "/" + escaped;
}

std::optional<std::uint64_t> count_keyword(const SchemaJson& schema, const char* keyword,
                                           const std::string& path) {
  const auto it = schema.find(keyword);
  if (it == schema.end()) return std::nullopt;
  if (it->is_number_unsigned()) return it->get<std::uint64_t>();
  if (it->is_number_float() && it->get<double>() >= 0 && it->get<double>() < 1e15 &&
      it->get<double>() == static_cast<double>(static_cast<std::uint64_t>(it->get<double>()))) {
    return static_cast<std::uint64_t>(it->get<double>());
  }
  refuse_keyword(keyword, path, "must be a non-negative integer, not " + it->dump());
}

SchemaCompiler::SchemaCompiler(const SchemaJson& root, const CompileOptions& options)
    : root_(root), text_(automaton_, options.max_whitespace) {
  if (options.max_whitespace < 0 || options.max_whitespace > 64) {
    throw GrammarError("max_whitespace must be between 0 and 64, not " +
                       std::to_string(options.max_whitespace));
  }
}

Automaton SchemaCompiler::compile() {
  automaton_.set_root(rule_for(root_, "#"));
  automaton_.finish();
  return std::move(automaton_);
}

Automaton SchemaCompiler::compile_framed(std::string_view before, std::string_view after) {
  const RuleId value_rule = rule_for(root_, "#");
  const RuleId root = automaton_.add_rule("a framed value");
  const NodeId start = automaton_.rule(root).start;
  const NodeId end = automaton_.rule(root).end;
  const NodeId opened = automaton_.add_literal(start, before);
  const NodeId value_end = automaton_.add_call(opened, value_rule);
  automaton_.add_epsilon(automaton_.add_literal(value_end, after), end);
  automaton_.set_root(root);
  automaton_.finish();
  return std::move(automaton_);
}

Automaton SchemaCompiler::compile_framed_alternatives(std::span<const Frame> frames) {
  const RuleId root = automaton_.add_rule("one of several framed values");
  const NodeId start = automaton_.rule(root).start;
  const NodeId end = automaton_.rule(root).end;
  const SchemaJson& schemas = root_.at("anyOf");
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const std::string path = "#/anyOf/" + std::to_string(i);
    const RuleId value_rule = rule_for(schemas.at(i), path);
    const NodeId opened = automaton_.add_literal(start, frames[i].before);
    const NodeId value_end = automaton_.add_call(opened, value_rule);
    automaton_.add_epsilon(automaton_.add_literal(value_end, frames[i].after), end);
  }
  automaton_.set_root(root);
  automaton_.finish();
  return std::move(automaton_);
}

Automaton SchemaCompiler::compile_any_object() {
  const RuleId root = automaton_.add_rule("a JSON object");
  const NodeId start = automaton_.rule(root).start;
  const NodeId end = automaton_.rule(root).end;
  automaton_.add_epsilon(text_.any_object(start), end);
  automaton_.set_root(root);
  automaton_.finish();
  return std::move(automaton_);
}

RuleId SchemaCompiler::rule_for(const SchemaJson& schema, const std::string& path) {
  if (const auto it = rules_.find(&schema); it != rules_.end()) return it->second;
  const RuleId rule = automaton_.add_rule(path);
  rules_.emplace(&schema, rule);
  const NodeId start = automaton_.rule(rule).start;
  const NodeId end = automaton_.rule(rule).end;
  automaton_.add_epsilon(value(schema, start, path), end);
  return rule;
}

RuleId SchemaCompiler::rule_for_reference(const std::string& reference, const std::string& path) {
  if (reference == "#") return rule_for(root_, "#");
  if (!reference.starts_with("#/")) {
    refuse_keyword("$ref", path,
                   "is \"" + reference +
                       "\"; only references inside the schema (\"#\", \"#/$defs/...\") are "
                       "supported, nothing is fetched");
  }
  SchemaJson::json_pointer pointer;
  try {
    pointer = SchemaJson::json_pointer(reference.substr(1));
  } catch (const SchemaJson::exception&) {
    refuse_keyword("$ref", path, "\"" + reference + "\" is not a valid JSON pointer");
  }
  if (!root_.contains(pointer)) {
    refuse_keyword("$ref", path, "\"" + reference + "\" points to nothing in the schema");
  }
  return rule_for(root_.at(pointer), reference);
}

std::vector<std::string> SchemaCompiler::types_of(const SchemaJson& schema,
                                                  const std::string& path) const {
  static const std::set<std::string, std::less<>> kTypes = {
      "object", "array", "string", "number", "integer", "boolean", "null"};
  std::vector<std::string> types;
  if (const auto it = schema.find("type"); it != schema.end()) {
    const SchemaJson list = it->is_array() ? *it : SchemaJson::array({*it});
    for (const auto& type : list) {
      if (!type.is_string() || !kTypes.contains(type.get_ref<const std::string&>())) {
        refuse_keyword("type", path,
                       "holds " + type.dump() +
                           ", which is not one of object, array, string, number, "
                           "integer, boolean and null");
      }
      types.push_back(type.get_ref<const std::string&>());
    }
    if (types.empty()) refuse_keyword("type", path, "is an empty list, which no value satisfies");
    return types;
  }
  // Without "type", the keywords that only bear on one type say which.
  for (const auto& [key, ignored] : schema.items()) {
    const char* type = kObjectKeywords.contains(key)   ? "object"
                       : kArrayKeywords.contains(key)  ? "array"
                       : kStringKeywords.contains(key) ? "string"
                       : kNumberKeywords.contains(key) ? "number"
                                                       : nullptr;
    if (!type) continue;
    if (!types.empty() && types.front() != type) {
      refuse_keyword(key, path,
                     "appears with keywords of type " + types.front() +
                         " and no \"type\"; a value of another type would escape them, so give "
                         "\"type\"");
    }
    if (types.empty()) types.emplace_back(type);
  }
  return types;  // empty: any value
}

NodeId SchemaCompiler::value(const SchemaJson& schema, NodeId from, const std::string& path) {
  // Nesting is bounded so that a hostile schema cannot exhaust the stack.
  static constexpr int kMaxDepth = 200;
  struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(++d) {}
    ~DepthGuard() { --depth; }
  } guard(depth_);
  if (depth_ > kMaxDepth) {
    throw GrammarError("the schema at " + path + " is nested more than " +
                       std::to_string(kMaxDepth) + " levels deep");
  }
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) {
      throw GrammarError("the schema at " + path + " is false, which no value satisfies");
    }
    return automaton_.add_call(from, text_.any_value_rule());
  }
  if (!schema.is_object()) {
    throw GrammarError("the schema at " + path + " is " + schema.dump() +
                       ", not a schema (an object or a boolean)");
  }
  for (const auto& [key, ignored] : schema.items()) {
    if (!kAnnotations.contains(key) && !kEnforced.contains(key)) {
      refuse_keyword(key, path, why_refused(key));
    }
  }
  // The other keywords read past "nullable" (no copy of the schema without
  // it: nested copies would grow with the square of a hostile schema).
  if (const auto it = schema.find("nullable"); it != schema.end()) {
    if (!it->is_boolean()) refuse_keyword("nullable", path, "must be true or false");
    if (it->get<bool>()) {
      const NodeId end = automaton_.add_node();
      automaton_.add_epsilon(automaton_.add_literal(from, "null"), end);
      automaton_.add_epsilon(non_null_value(schema, from, path), end);
      return end;
    }
  }
  return non_null_value(schema, from, path);
}

NodeId SchemaCompiler::non_null_value(const SchemaJson& schema, NodeId from,
                                      const std::string& path) {
  if (const auto it = schema.find("$ref"); it != schema.end()) {
    only_annotations_beside(schema, "$ref", path);
    if (!it->is_string()) refuse_keyword("$ref", path, "must be a string");
    return automaton_.add_call(from, rule_for_reference(it->get_ref<const std::string&>(), path));
  }
  for (const char* keyword : {"anyOf", "oneOf", "allOf"}) {
    const auto it = schema.find(keyword);
    if (it == schema.end()) continue;
    only_annotations_beside(schema, keyword, path);
    if (!it->is_array() || it->empty()) {
      refuse_keyword(keyword, path, "must be a non-empty list of schemas");
    }
    const std::string list_path = child_path(path, keyword);
    if (std::string_view(keyword) == "allOf") {
      if (it->size() != 1) {
        refuse_keyword("allOf", path,
                       "has " + std::to_string(it->size()) +
                           " schemas; only a single one is supported (an intersection of "
                           "schemas cannot be compiled in general)");
      }
      return value(it->front(), from, child_path(list_path, "0"));
    }
    // oneOf is generated as anyOf: the alternatives of real schemas exclude
    // each other by type or by const, so the difference rarely matters.
    const NodeId end = automaton_.add_node();
    for (std::size_t i = 0; i < it->size(); ++i) {
      automaton_.add_epsilon(value((*it)[i], from, child_path(list_path, std::to_string(i))), end);
    }
    return end;
  }
  if (schema.contains("enum") || schema.contains("const")) return enumeration(schema, from, path);
  const std::vector<std::string> types = types_of(schema, path);
  if (types.empty()) return automaton_.add_call(from, text_.any_value_rule());
  if (types.size() == 1) return typed(schema, types.front(), from, path);
  const NodeId end = automaton_.add_node();
  for (const std::string& type : types)
    automaton_.add_epsilon(typed(schema, type, from, path), end);
  return end;
}

NodeId SchemaCompiler::typed(const SchemaJson& schema, const std::string& type, NodeId from,
                             const std::string& path) {
  if (type == "object") return object(schema, from, path);
  if (type == "array") return array(schema, from, path);
  if (type == "string") return string(schema, from, path);
  if (type == "integer" || type == "number") return number(schema, type == "integer", from, path);
  if (type == "null") return automaton_.add_literal(from, "null");
  const NodeId end = automaton_.add_node();
  automaton_.add_epsilon(automaton_.add_literal(from, "true"), end);
  automaton_.add_epsilon(automaton_.add_literal(from, "false"), end);
  return end;
}

NodeId SchemaCompiler::enumeration(const SchemaJson& schema, NodeId from, const std::string& path) {
  const bool is_enum = schema.contains("enum");
  const char* keyword = is_enum ? "enum" : "const";
  only_annotations_beside(schema, keyword, path, {"type"});
  const SchemaJson values = is_enum ? schema.at("enum") : SchemaJson::array({schema.at("const")});
  if (!values.is_array() || values.empty()) {
    refuse_keyword(keyword, path, "must be a non-empty list of values");
  }
  const std::vector<std::string> types =
      schema.contains("type") ? types_of(schema, path) : std::vector<std::string>{};
  const NodeId end = automaton_.add_node();
  bool any = false;
  for (const auto& item : values) {
    const bool fits = types.empty() || std::any_of(types.begin(), types.end(), [&](const auto& t) {
                        return has_type(item, t);
                      });
    if (!fits) continue;
    automaton_.add_epsilon(automaton_.add_literal(from, item.dump()), end);
    any = true;
  }
  if (!any) {
    refuse_keyword(keyword, path, "has no value of the schema's \"type\", so nothing satisfies it");
  }
  return end;
}

}  // namespace quire::engine::grammar
