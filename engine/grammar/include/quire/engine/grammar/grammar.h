#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace quire::engine::grammar {

// A JSON schema that cannot be turned into a grammar: a keyword the compiler
// cannot enforce (named in the message, with where it stands in the schema),
// a schema no value can satisfy, a broken $ref. Nothing is ever silently
// ignored: a keyword is either enforced, an annotation (title, description,
// default, examples, ...) or refused with this error.
class GrammarError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct CompileOptions {
  // Whitespace bytes (space, tab, newline, carriage return) allowed at each
  // place JSON allows whitespace inside a value: after "{", "[", ":" and ",",
  // and before ":", ",", "}" and "]". None before or after the whole value.
  // Bounded, so that constrained generation cannot spin on whitespace.
  int max_whitespace = 1;
};

// A compiled grammar: an automaton over bytes with calls (a recursive state
// machine), immutable once built and safe to share between threads and
// requests. Matchers (TokenMatcher) keep their own state.
class Grammar;

// JSON Schema (draft 2020-12 and draft 7 spellings) to a grammar of the JSON
// texts that satisfy it. Enforced: type (also as a list), properties,
// required, additionalProperties (false, true or a schema), enum, const,
// anyOf, oneOf (generated as anyOf), allOf with one member, items, prefixItems, minItems,
// maxItems, minLength, maxLength, pattern (the regular subset: literals,
// classes, groups, alternation, quantifiers, ^ and $), format (date, time,
// date-time, uuid, email, uri, ipv4), minimum, maximum, exclusiveMinimum and exclusiveMaximum
// (for integers any value; for numbers whole values, numbers then written
// without an exponent), $ref to "#", "#/$defs/..." and "#/definitions/...", and
// OpenAPI's nullable (true: null besides the schema's values).
// Generation produces a subset of the valid texts, always valid: properties
// come in the schema's order, then (only with additionalProperties true or a
// schema) other keys; numbers and strings are as JSON spells them, enum and
// const values in their compact spelling. An absent additionalProperties
// allows no keys beyond "properties", as OpenAI's strict mode reads it (an
// object schema without "properties" allows any keys). oneOf is generated as
// anyOf: an output may fit more than one alternative. Throws GrammarError.
std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::json& schema,
                                                   const CompileOptions& options = {});
// The same from the schema's JSON text; text that is not JSON is a GrammarError.
std::shared_ptr<const Grammar> compile_json_schema_text(std::string_view schema_text,
                                                        const CompileOptions& options = {});
// `before`, a JSON text of the schema, then `after`: a reply that must be a
// tool call in its chat template's own markers (Hermes' "<tool_call>\n" and
// "\n</tool_call>", Mistral's "[TOOL_CALLS][" and "]"), for a request that
// names the tool it wants or requires one. The schema's key order is kept.
std::shared_ptr<const Grammar> compile_framed_json_schema_text(std::string_view schema_text,
                                                               std::string_view before,
                                                               std::string_view after,
                                                               const CompileOptions& options = {});
// One alternative of compile_framed_alternatives.
struct FramedSchema {
  std::string before;
  std::string schema_text;
  std::string after;
};
// Any one of `alternatives`: its `before`, a JSON text of its schema, its
// `after`. A required call in a format that writes the function's name
// outside the JSON (gpt-oss's "to=functions.NAME ...<|message|>{...}",
// DeepSeek V3's "<｜tool▁sep｜>NAME\n```json\n{...}\n```") has one
// alternative per function. References inside each schema ("#",
// "#/$defs/...") keep pointing into that schema. Throws GrammarError.
std::shared_ptr<const Grammar> compile_framed_alternatives(
    std::span<const FramedSchema> alternatives, const CompileOptions& options = {});
// Any JSON object: response_format {"type": "json_object"}.
std::shared_ptr<const Grammar> any_json_object_grammar(const CompileOptions& options = {});

// Where a lazy grammar takes over a reply (JobRequest::grammar_triggers).
struct GrammarTrigger {
  std::string text;
  // Only at the reply's start (after leading whitespace): Llama 3's calls
  // are a reply that is a JSON object.
  bool at_start = false;
};

// Whether `text` is, as a whole, a text of the grammar. For tests and tools;
// generation uses TokenMatcher.
bool grammar_matches(const Grammar& grammar, std::string_view text);

}  // namespace quire::engine::grammar
