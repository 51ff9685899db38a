// Schemas for the random walks of test_token_masks.cpp (kept apart from the
// test class: moc does not read raw strings like these). Each bounds its
// strings, numbers and arrays enough that a walk ends.
#include "walk_schemas.h"

namespace quire::test {

std::vector<WalkSchema> walk_schemas() {
  return {
      {"person", R"({
        "type": "object",
        "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 12},
          "age": {"type": "integer", "minimum": 0, "maximum": 150},
          "email": {"type": "string", "pattern": "^[a-z]{1,8}@[a-z]{1,8}\\.(com|org)$"},
          "tags": {"type": "array", "items": {"enum": ["admin", "dev", "ops"]}, "maxItems": 3},
          "address": {
            "type": "object",
            "properties": {
              "street": {"type": "string", "maxLength": 16},
              "zip": {"type": "string", "pattern": "^[0-9]{5}$"}
            },
            "required": ["zip"],
            "additionalProperties": false
          }
        },
        "required": ["name", "age", "address"],
        "additionalProperties": false
      })"},
      {"tool call", R"({
        "type": "object",
        "properties": {
          "name": {"const": "get_weather"},
          "arguments": {
            "type": "object",
            "properties": {
              "city": {"type": "string", "maxLength": 10},
              "unit": {"enum": ["celsius", "fahrenheit"]},
              "days": {"type": "integer", "minimum": 1, "maximum": 14},
              "when": {"type": "string", "format": "date"}
            },
            "required": ["city", "unit"],
            "additionalProperties": false
          }
        },
        "required": ["name", "arguments"],
        "additionalProperties": false
      })"},
      {"tree", R"({
        "$defs": {
          "node": {
            "type": "object",
            "properties": {
              "v": {"type": "integer", "minimum": -5, "maximum": 5},
              "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}
            },
            "required": ["v"],
            "additionalProperties": false
          }
        },
        "$ref": "#/$defs/node"
      })"},
      {"choices", R"({
        "type": "array",
        "minItems": 1,
        "maxItems": 4,
        "items": {
          "anyOf": [
            {"type": "null"},
            {"type": "number", "minimum": -10, "maximum": 10},
            {"type": "string", "format": "uuid"},
            {"type": "boolean"}
          ]
        }
      })"},
      {"open object", R"({
        "type": "object",
        "properties": {"id": {"type": "integer", "minimum": 0, "maximum": 999}},
        "required": ["id"],
        "additionalProperties": {"type": "boolean"}
      })"},
      {"any object", R"({"type": "object", "additionalProperties": true})"},
  };
}

}  // namespace quire::test
