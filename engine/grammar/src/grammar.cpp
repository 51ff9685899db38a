#include "quire/engine/grammar/grammar.h"

#include <nlohmann/json.hpp>

#include "grammar_impl.h"
#include "schema_compiler.h"
#include "state_space.h"

namespace quire::engine::grammar {
namespace {

std::shared_ptr<const Grammar> compile(const SchemaJson& schema, const CompileOptions& options) {
  try {
    SchemaCompiler compiler(schema, options);
    return std::make_shared<const Grammar>(compiler.compile());
  } catch (const SchemaJson::exception& error) {
    // Text nlohmann cannot write back out, such as strings that are not UTF-8.
    throw GrammarError(std::string("the schema holds a value that cannot be used: ") +
                       error.what());
  }
}

}  // namespace

std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::json& schema,
                                                   const CompileOptions& options) {
  // Key order is the order properties are generated in; nlohmann::json has
  // already sorted it, so prefer compile_json_schema_text where order matters.
  return compile(SchemaJson::parse(schema.dump()), options);
}

std::shared_ptr<const Grammar> compile_json_schema_text(std::string_view schema_text,
                                                        const CompileOptions& options) {
  SchemaJson schema;
  try {
    schema = SchemaJson::parse(schema_text);
  } catch (const SchemaJson::exception& error) {
    // parse_error, and out_of_range for a number too large for a double.
    throw GrammarError(std::string("the schema is not valid JSON: ") + error.what());
  }
  return compile(schema, options);
}

std::shared_ptr<const Grammar> compile_framed_json_schema_text(std::string_view schema_text,
                                                               std::string_view before,
                                                               std::string_view after,
                                                               const CompileOptions& options) {
  SchemaJson schema;
  try {
    schema = SchemaJson::parse(schema_text);
  } catch (const SchemaJson::exception& error) {
    throw GrammarError(std::string("the schema is not valid JSON: ") + error.what());
  }
  try {
    SchemaCompiler compiler(schema, options);
    return std::make_shared<const Grammar>(compiler.compile_framed(before, after));
  } catch (const SchemaJson::exception& error) {
    throw GrammarError(std::string("the schema holds a value that cannot be used: ") +
                       error.what());
  }
}

namespace {

// A schema's references made to point into it where it stands in a larger
// document (at `base`, e.g. "#/anyOf/2").
void rebase_references(SchemaJson& schema, const std::string& base) {
  if (schema.is_object()) {
    for (auto& [key, value] : schema.items()) {
      if (key == "$ref" && value.is_string()) {
        const std::string reference = value.get<std::string>();
        if (reference == "#") {
          value = base;
        } else if (reference.starts_with("#/")) {
          value = base + reference.substr(1);
        }
      } else {
        rebase_references(value, base);
      }
    }
  } else if (schema.is_array()) {
    for (SchemaJson& item : schema)
      rebase_references(item, base);
  }
}

}  // namespace

std::shared_ptr<const Grammar> compile_framed_alternatives(
    std::span<const FramedSchema> alternatives, const CompileOptions& options) {
  if (alternatives.empty()) throw GrammarError("no alternatives to choose from");
  SchemaJson combined = {{"anyOf", SchemaJson::array()}};
  std::vector<SchemaCompiler::Frame> frames;
  for (std::size_t i = 0; i < alternatives.size(); ++i) {
    SchemaJson schema;
    try {
      schema = SchemaJson::parse(alternatives[i].schema_text);
    } catch (const SchemaJson::exception& error) {
      throw GrammarError(std::string("the schema is not valid JSON: ") + error.what());
    }
    rebase_references(schema, "#/anyOf/" + std::to_string(i));
    combined["anyOf"].push_back(std::move(schema));
    frames.push_back({alternatives[i].before, alternatives[i].after});
  }
  try {
    SchemaCompiler compiler(combined, options);
    return std::make_shared<const Grammar>(compiler.compile_framed_alternatives(frames));
  } catch (const SchemaJson::exception& error) {
    throw GrammarError(std::string("the schema holds a value that cannot be used: ") +
                       error.what());
  }
}

std::shared_ptr<const Grammar> any_json_object_grammar(const CompileOptions& options) {
  const SchemaJson unused = SchemaJson::object();
  SchemaCompiler compiler(unused, options);
  return std::make_shared<const Grammar>(compiler.compile_any_object());
}

bool grammar_matches(const Grammar& grammar, std::string_view text) {
  StateSpace space(grammar.automaton());
  StateId state = space.initial();
  for (const char c : text) {
    state = space.next(state, static_cast<std::uint8_t>(c));
    if (state == kDeadState) return false;
  }
  return space.accepting(state);
}

}  // namespace quire::engine::grammar
