#pragma once

// response_format of /v1/chat/completions: text, any JSON object, or JSON
// that satisfies a schema. Parsed at the edge with the rest of the request
// (openai_request.cpp); the schema stays JSON text here, and the server
// compiles it into the grammar that constrains sampling when it prepares
// the job (completion_job.cpp), refusing there what it cannot enforce.

#include <string>

namespace quire::server {

struct ResponseFormat {
  enum class Type { Text, JsonObject, JsonSchema };
  Type type = Type::Text;
  std::string name;     // json_schema.name
  std::string schema;   // json_schema.schema, as compact JSON text
  bool strict = false;  // json_schema.strict; enforced or refused either way

  friend bool operator==(const ResponseFormat&, const ResponseFormat&) = default;
};

}  // namespace quire::server
