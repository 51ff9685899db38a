// Schemas with texts they must accept or reject, for test_schema_matching.cpp
// (kept apart from the test class: moc does not read raw strings like these).
#include "schema_cases.h"

namespace quire::test {

std::vector<SchemaCase> schema_matching_cases() {
  std::vector<SchemaCase> cases;
  auto row = [&](const char* name, const char* schema, const char* text, bool matches) {
    cases.push_back({name, schema, text, matches});
  };
  // Scalars.
  row("null", R"({"type":"null"})", "null", true);
  row("null not false", R"({"type":"null"})", "false", false);
  row("boolean true", R"({"type":"boolean"})", "true", true);
  row("boolean false", R"({"type":"boolean"})", "false", true);
  row("boolean prefix", R"({"type":"boolean"})", "tru", false);
  row("integer", R"({"type":"integer"})", "-120", true);
  row("integer zero", R"({"type":"integer"})", "0", true);
  row("integer leading zero", R"({"type":"integer"})", "012", false);
  row("integer no fraction", R"({"type":"integer"})", "1.5", false);
  row("number fraction exponent", R"({"type":"number"})", "-0.5e+10", true);
  row("number capital exponent", R"({"type":"number"})", "3E7", true);
  row("number bare point", R"({"type":"number"})", "1.", false);
  row("number leading point", R"({"type":"number"})", ".5", false);
  row("type list null", R"({"type":["string","null"]})", "null", true);
  row("type list string", R"({"type":["string","null"]})", R"("x")", true);
  row("type list not number", R"({"type":["string","null"]})", "1", false);
  // OpenAPI's nullable, as OpenAI's zod helper writes .nullable().
  row("nullable null", R"({"type":"string","maxLength":2,"nullable":true})", "null", true);
  row("nullable value", R"({"type":"string","maxLength":2,"nullable":true})", R"("ab")", true);
  row("nullable keeps bounds", R"({"type":"string","maxLength":2,"nullable":true})", R"("abc")",
      false);
  row("nullable false", R"({"type":"string","nullable":false})", "null", false);
  row("nullable beside anyOf", R"({"anyOf":[{"type":"integer"}],"nullable":true})", "null", true);
  row("nullable beside enum", R"({"enum":["a"],"nullable":true})", R"("a")", true);
  row("nullable in items", R"({"type":"array","items":{"type":"integer","nullable":true}})",
      "[1,null]", true);
  // Strings.
  row("string escapes", R"({"type":"string"})", R"("a\"b\\c\n\u00e9")", true);
  row("string utf8", R"({"type":"string"})", "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"", true);
  row("string raw newline", R"({"type":"string"})", "\"a\nb\"", false);
  row("string surrogate escape", R"({"type":"string"})", R"("\ud800")", false);
  row("string overlong utf8", R"({"type":"string"})", "\"\xC0\xAF\"", false);
  row("string bad escape", R"({"type":"string"})", R"("\x41")", false);
  row("minLength met", R"({"type":"string","minLength":2})", R"("ab")", true);
  row("minLength short", R"({"type":"string","minLength":2})", R"("a")", false);
  row("maxLength met", R"({"type":"string","maxLength":2})", R"("\nb")", true);
  row("maxLength counts characters", R"({"type":"string","maxLength":2})", "\"\xC3\xA9\xC3\xA9\"",
      true);
  row("maxLength long", R"({"type":"string","maxLength":2})", R"("abc")", false);
  row("length range", R"({"type":"string","minLength":1,"maxLength":3})", R"("")", false);
  // Patterns: unanchored means "contains".
  row("pattern anchored", R"({"type":"string","pattern":"^[a-z]+-[0-9]{2}$"})", R"("ab-12")", true);
  row("pattern anchored extra", R"({"type":"string","pattern":"^[a-z]+-[0-9]{2}$"})", R"("ab-123")",
      false);
  row("pattern contains", R"({"type":"string","pattern":"[0-9]{3}"})", R"("x123y")", true);
  row("pattern contains not", R"({"type":"string","pattern":"[0-9]{3}"})", R"("x12y")", false);
  row("pattern alternation", R"({"type":"string","pattern":"^(cat|dog)s?$"})", R"("dogs")", true);
  row("pattern alternation other", R"({"type":"string","pattern":"^(cat|dog)s?$"})", R"("cow")",
      false);
  row("pattern quote escaped", R"({"type":"string","pattern":"^a\"b$"})", R"("a\"b")", true);
  row("pattern negated class", R"({"type":"string","pattern":"^[^0-9]+$"})", "\"a\xC3\xA9\"", true);
  row("pattern negated class digit", R"({"type":"string","pattern":"^[^0-9]+$"})", R"("a1")",
      false);
  row("pattern escapes", R"({"type":"string","pattern":"^\\d+\\.\\w$"})", R"("12.x")", true);
  row("format date", R"({"type":"string","format":"date"})", R"("2026-11-28")", true);
  // Days stop at 28 so that every generated date exists in every month.
  row("format date day 29", R"({"type":"string","format":"date"})", R"("2026-01-29")", false);
  row("format date month 13", R"({"type":"string","format":"date"})", R"("2026-13-01")", false);
  row("format uuid", R"({"type":"string","format":"uuid"})",
      R"("123e4567-e89b-12d3-a456-426614174000")", true);
  row("format date-time", R"({"type":"string","format":"date-time"})",
      R"("2026-11-28T10:20:30.5Z")", true);
  row("format email", R"({"type":"string","format":"email"})", R"("ann.lee@mail.example.org")",
      true);
  row("format email no at", R"({"type":"string","format":"email"})", R"("ann.mail.org")", false);
  row("format uri", R"({"type":"string","format":"uri"})", R"("https://quire.example.org/a/b")",
      true);
  row("format ipv4", R"({"type":"string","format":"ipv4"})", R"("192.168.0.255")", true);
  row("format ipv4 256", R"({"type":"string","format":"ipv4"})", R"("192.168.0.256")", false);
  row("discriminator annotation",
      R"({"oneOf":[{"const":"a"},{"const":"b"}],"discriminator":{"propertyName":"kind"}})",
      R"("b")", true);
  // Integer ranges.
  row("range inside", R"({"type":"integer","minimum":-15,"maximum":230})", "229", true);
  row("range upper", R"({"type":"integer","minimum":-15,"maximum":230})", "230", true);
  row("range above", R"({"type":"integer","minimum":-15,"maximum":230})", "231", false);
  row("range lower", R"({"type":"integer","minimum":-15,"maximum":230})", "-15", true);
  row("range below", R"({"type":"integer","minimum":-15,"maximum":230})", "-16", false);
  row("range zero", R"({"type":"integer","minimum":-15,"maximum":230})", "0", true);
  row("range no negative zero", R"({"type":"integer","minimum":-15,"maximum":230})", "-0", false);
  row("minimum only long", R"({"type":"integer","minimum":7})", "1000000", true);
  row("minimum only below", R"({"type":"integer","minimum":7})", "6", false);
  row("exclusive bounds", R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10})", "10",
      false);
  row("exclusive bounds in", R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10})",
      "1", true);
  row("negative range", R"({"type":"integer","minimum":-100,"maximum":-20})", "-99", true);
  row("negative range above", R"({"type":"integer","minimum":-100,"maximum":-20})", "-19", false);
  row("number range fraction", R"({"type":"number","minimum":0,"maximum":5})", "4.75", true);
  row("number range top", R"({"type":"number","minimum":0,"maximum":5})", "5.00", true);
  row("number range over top", R"({"type":"number","minimum":0,"maximum":5})", "5.01", false);
  row("number range negative", R"({"type":"number","minimum":0,"maximum":5})", "-0.1", false);
  row("number range below zero", R"({"type":"number","minimum":-2,"maximum":5})", "-1.5", true);
  row("number range below min", R"({"type":"number","minimum":-2,"maximum":5})", "-2.5", false);
  const char* positive = R"({"type":"number","exclusiveMinimum":0})";
  row("positive fraction", positive, "0.001", true);
  row("positive integer", positive, "12", true);
  row("positive not zero", positive, "0", false);
  row("positive not zero point zero", positive, "0.00", false);
  row("positive not negative", positive, "-0.5", false);
  const char* below = R"({"type":"number","minimum":-5,"exclusiveMaximum":-2})";
  row("below inside", below, "-2.01", true);
  row("below upper excluded", below, "-2", false);
  row("below upper excluded point zero", below, "-2.0", false);
  row("below lower included", below, "-5.0", true);
  row("below under lower", below, "-5.01", false);
  const char* negative = R"({"type":"number","exclusiveMaximum":0})";
  row("negative", negative, "-0.5", true);
  row("negative not minus zero", negative, "-0", false);
  row("negative not zero", negative, "0", false);
  const char* window = R"({"type":"number","exclusiveMinimum":-1,"exclusiveMaximum":1})";
  row("window zero", window, "0", true);
  row("window inside", window, "-0.999", true);
  row("window edge", window, "-1", false);
  row("window edge fraction", window, "1.0", false);
  // enum and const: the values' compact spelling.
  row("enum string", R"({"enum":["red","green",3,null]})", R"("green")", true);
  row("enum number", R"({"enum":["red","green",3,null]})", "3", true);
  row("enum other", R"({"enum":["red","green",3,null]})", R"("blue")", false);
  row("enum typed", R"({"type":"string","enum":["red",3]})", "3", false);
  row("const object", R"({"const":{"a":[1,2]}})", R"({"a":[1,2]})", true);
  row("const object spaced", R"({"const":{"a":[1,2]}})", R"({"a": [1,2]})", false);
  // Objects.
  const char* person =
      R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},)"
      R"("tags":{"type":"array","items":{"type":"string"}}},"required":["name"],)"
      R"("additionalProperties":false})";
  row("object all", person, R"({"name":"Ann","age":30,"tags":["a"]})", true);
  row("object required only", person, R"({"name":"Ann"})", true);
  row("object skip middle", person, R"({"name":"Ann","tags":[]})", true);
  row("object spaces", person, R"({ "name": "Ann", "age": 30 })", true);
  row("object two spaces", person, R"({"name":  "Ann"})", false);
  row("object missing required", person, R"({"age":30})", false);
  row("object out of order", person, R"({"age":30,"name":"Ann"})", false);
  row("object extra key", person, R"({"name":"Ann","x":1})", false);
  row("object trailing comma", person, R"({"name":"Ann",})", false);
  row("object wrong type", person, R"({"name":3})", false);
  row("object newline", person, "{\n\"name\":\"Ann\"\n}", true);
  const char* open = R"({"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],)"
                     R"("additionalProperties":{"type":"boolean"}})";
  row("additional schema", open, R"({"id":1,"ok":true,"idx":false})", true);
  row("additional wrong type", open, R"({"id":1,"ok":3})", false);
  row("additional repeats known key", open, R"({"id":1,"id":true})", false);
  row("additional prefix of known key", open, R"({"id":1,"i":true})", true);
  row("additional true", R"({"type":"object","additionalProperties":true})",
      R"({"a":{"b":[1,{"c":null}]}})", true);
  row("required outside properties",
      R"({"type":"object","required":["k"],"additionalProperties":{"type":"integer"}})",
      R"({"k":1})", true);
  row("empty object default", R"({"type":"object","properties":{"a":{}}})", "{}", true);
  row("properties close the object", R"({"type":"object","properties":{"a":{}}})", R"({"b":1})",
      false);
  row("object without properties is any object", R"({"type":"object"})", R"({"k":[1,{"j":2}]})",
      true);
  // Arrays.
  row("items bounds in", R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})",
      "[1, 2,3]", true);
  row("items bounds empty",
      R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})", "[]", false);
  row("items bounds many",
      R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})", "[1,2,3,4]",
      false);
  row("items unbounded", R"({"type":"array","items":{"type":"boolean"},"minItems":2})",
      "[true,false,true,true]", true);
  row("items any", R"({"type":"array"})", R"([1,"a",[],{}])", true);
  const char* pair = R"({"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],)"
                     R"("items":false,"minItems":2})";
  row("tuple", pair, R"([1,"a"])", true);
  row("tuple short", pair, "[1]", false);
  row("tuple long", pair, R"([1,"a",2])", false);
  row("tuple wrong type", pair, R"(["a",1])", false);
  const char* head = R"({"type":"array","prefixItems":[{"const":"head"}],"items":{"type":"null"}})";
  row("prefix then items", head, R"(["head",null,null])", true);
  row("prefix then items empty", head, "[]", true);
  row("prefix then items wrong", head, R"(["head",1])", false);
  row("prefix wrong", head, R"([null])", false);
  // Combinators and references.
  row("anyOf", R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})", R"("a")", true);
  row("anyOf neither", R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})",
      R"("ab")", false);
  row("oneOf", R"({"oneOf":[{"const":1},{"const":2}]})", "2", true);
  row("allOf single", R"({"allOf":[{"type":"null"}]})", "null", true);
  const char* tree =
      R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},)"
      R"("kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v","kids"],)"
      R"("additionalProperties":false}},"$ref":"#/$defs/node"})";
  row("recursive ref", tree, R"({"v":1,"kids":[{"v":2,"kids":[{"v":3,"kids":[]}]}]})", true);
  row("recursive ref broken", tree, R"({"v":1,"kids":[{"v":2}]})", false);
  row("definitions ref",
      R"({"definitions":{"d":{"type":"integer"}},"type":"array","items":{"$ref":"#/definitions/d"}})",
      "[1,2]", true);
  row("root ref", R"({"type":"array","items":{"anyOf":[{"type":"integer"},{"$ref":"#"}]}})",
      "[1,[2,[]]]", true);
  row("any value", "{}", R"([{"a":"b"},-1.5e3,true,null])", true);
  row("true schema", "true", R"("x")", true);
  row("no leading space", R"({"type":"integer"})", " 1", false);
  row("no trailing space", R"({"type":"integer"})", "1 ", false);
  return cases;
}

}  // namespace quire::test
