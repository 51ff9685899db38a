#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "automaton.h"
#include "json_text.h"
#include "quire/engine/grammar/grammar.h"

namespace quire::engine::grammar {

using SchemaJson = nlohmann::ordered_json;

// Turns a JSON schema into an automaton, one schema node at a time: each
// function adds the texts a (sub)schema allows from a node and returns the
// node after them. $ref targets and array items become rules, so recursion
// works and repeated parts are not copied. Everything that is not enforced
// or an annotation is refused with GrammarError naming the keyword and its
// place ("#/properties/tags").
class SchemaCompiler {
 public:
  SchemaCompiler(const SchemaJson& root, const CompileOptions& options);

  Automaton compile();
  Automaton compile_any_object();
  // The schema's texts between two literal texts.
  Automaton compile_framed(std::string_view before, std::string_view after);
  // The root is {"anyOf": [...]}: the texts of any one of its schemas
  // between that alternative's two literal texts.
  struct Frame {
    std::string_view before;
    std::string_view after;
  };
  Automaton compile_framed_alternatives(std::span<const Frame> frames);

 private:
  NodeId value(const SchemaJson& schema, NodeId from, const std::string& path);
  // value() but for OpenAPI's "nullable", which value() reads first.
  NodeId non_null_value(const SchemaJson& schema, NodeId from, const std::string& path);
  NodeId typed(const SchemaJson& schema, const std::string& type, NodeId from,
               const std::string& path);
  NodeId enumeration(const SchemaJson& schema, NodeId from, const std::string& path);
  NodeId object(const SchemaJson& schema, NodeId from, const std::string& path);
  NodeId array(const SchemaJson& schema, NodeId from, const std::string& path);
  NodeId string(const SchemaJson& schema, NodeId from, const std::string& path);
  NodeId number(const SchemaJson& schema, bool integer, NodeId from, const std::string& path);
  // A string key that is none of `known`; see schema_objects.cpp.
  NodeId other_key(NodeId from, const std::vector<std::string>& known);

  // The rule for a subschema used as a unit ($ref targets, array items).
  RuleId rule_for(const SchemaJson& schema, const std::string& path);
  RuleId rule_for_reference(const std::string& reference, const std::string& path);

  std::vector<std::string> types_of(const SchemaJson& schema, const std::string& path) const;

  const SchemaJson& root_;
  Automaton automaton_;
  JsonText text_;
  std::map<const SchemaJson*, RuleId> rules_;
  int depth_ = 0;  // subschemas being compiled, one inside the other
};

// Helpers shared by the compiler's files.
[[noreturn]] void refuse_keyword(const std::string& keyword, const std::string& path,
                                 const std::string& why);
std::string child_path(const std::string& path, const std::string& key);
std::optional<std::uint64_t> count_keyword(const SchemaJson& schema, const char* keyword,
                                           const std::string& path);

}  // namespace quire::engine::grammar
