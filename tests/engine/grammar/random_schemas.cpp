#include "random_schemas.h"

#include <algorithm>
#include <string>
#include <vector>

namespace quire::test {
namespace {

using Schema = nlohmann::ordered_json;

int uniform(std::mt19937& random, int low, int high) {
  return std::uniform_int_distribution<int>(low, high)(random);
}

template <typename T>
const T& one_of(std::mt19937& random, const std::vector<T>& items) {
  return items[static_cast<std::size_t>(uniform(random, 0, static_cast<int>(items.size()) - 1))];
}

Schema random_string(std::mt19937& random) {
  switch (uniform(random, 0, 3)) {
    case 0: {
      const int max_length = uniform(random, 0, 12);
      return {{"type", "string"},
              {"minLength", uniform(random, 0, max_length)},
              {"maxLength", max_length}};
    }
    case 1:
      return {{"type", "string"},
              {"pattern", one_of<std::string>(random, {"^[a-z]{1,6}$", "^[A-Z][a-z]{0,5}-[0-9]{2}$",
                                                       "^(red|green|blue)+$", "^\\d{3}-\\d{4}$",
                                                       "^[^\"\\\\]{2,4}$", "^a\"b\\\\c\\.?$"})}};
    case 2:
      return {{"type", "string"},
              {"format", one_of<std::string>(random, {"date", "time", "date-time", "uuid", "email",
                                                      "uri", "ipv4"})}};
    default:
      return {{"enum", Schema::array({"ä", "x\"y", "back\\slash", "tab\there", "", "😀"})}};
  }
}

Schema random_number(std::mt19937& random) {
  const int low = uniform(random, -300, 300);
  const int high = low + uniform(random, 0, 5000);
  if (uniform(random, 0, 1) == 0) {
    return {{"type", "integer"}, {"minimum", low}, {"maximum", high}};
  }
  if (uniform(random, 0, 1) == 0) {
    return {{"type", "integer"}, {"exclusiveMinimum", low}, {"exclusiveMaximum", high + 2}};
  }
  if (uniform(random, 0, 1) == 0) {
    return {{"type", "number"}, {"exclusiveMinimum", low}, {"exclusiveMaximum", high + 1}};
  }
  return {{"type", "number"}, {"minimum", low}, {"maximum", high}};
}

Schema random_scalar(std::mt19937& random) {
  switch (uniform(random, 0, 6)) {
    case 0:
      return random_string(random);
    case 1:
      return random_number(random);
    case 2:
      return {{"type", "boolean"}};
    case 3:
      return {{"type", "null"}};
    case 4:
      return {{"const",
               one_of<Schema>(random, {Schema(42), Schema("fixed"), Schema::array({1, "a"})})}};
    case 5:
      return {{"type", Schema::array({"string", "null"})}, {"maxLength", uniform(random, 1, 6)}};
    default:
      return {{"enum", Schema::array({1, 2.5, "two", nullptr, true})}};
  }
}

}  // namespace

Schema random_schema(std::mt19937& random, int depth) {
  const int kind = depth >= 3 ? 0 : uniform(random, 0, 4);
  if (kind <= 1) return random_scalar(random);
  if (kind == 2) {
    static const std::vector<std::string> kNames = {"id",  "name", "naïve", "quote\"d",
                                                    "a b", "日本", "x",     "long_property_name"};
    Schema properties = Schema::object();
    Schema required = Schema::array();
    for (int i = uniform(random, 1, 4); i > 0; --i) {
      const std::string& name = one_of(random, kNames);
      if (properties.contains(name)) continue;
      properties[name] = random_schema(random, depth + 1);
      if (uniform(random, 0, 1) == 0) required.push_back(name);
    }
    Schema object = {{"type", "object"}, {"properties", properties}, {"required", required}};
    object["additionalProperties"] =
        uniform(random, 0, 3) == 0 ? Schema{{"type", "boolean"}} : Schema(false);
    return object;
  }
  if (kind == 3 && uniform(random, 0, 2) == 0) {
    Schema prefix = Schema::array();
    for (int i = uniform(random, 1, 3); i > 0; --i)
      prefix.push_back(random_schema(random, depth + 1));
    const int size = static_cast<int>(prefix.size());
    Schema tuple = {
        {"type", "array"}, {"prefixItems", prefix}, {"minItems", uniform(random, 0, size)}};
    tuple["items"] = uniform(random, 0, 1) == 0 ? Schema(false) : random_scalar(random);
    if (!tuple["items"].is_boolean()) tuple["maxItems"] = size + uniform(random, 0, 2);
    return tuple;
  }
  if (kind == 3) {
    const int min_items = uniform(random, 0, 2);
    return {{"type", "array"},
            {"items", random_schema(random, depth + 1)},
            {"minItems", min_items},
            {"maxItems", min_items + uniform(random, 0, 3)}};
  }
  Schema options = Schema::array();
  for (int i = uniform(random, 2, 3); i > 0; --i)
    options.push_back(random_schema(random, depth + 1));
  // anyOf only: oneOf is generated as anyOf, and random alternatives overlap.
  return {{"anyOf", options}};
}

}  // namespace quire::test
