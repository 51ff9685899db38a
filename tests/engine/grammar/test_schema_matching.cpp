#include <QTest>
#include <nlohmann/json.hpp>

#include "quire/engine/grammar/grammar.h"
#include "schema_cases.h"
#include "test_main.h"

using quire::engine::grammar::compile_json_schema_text;
using quire::engine::grammar::CompileOptions;
using quire::engine::grammar::grammar_matches;

// Exact acceptance and rejection of whole texts, schema by schema. Default
// options: at most one whitespace byte at each place JSON allows it.
class SchemaMatchingTest : public QObject {
  Q_OBJECT

 private slots:
  void matchesExactly_data() {
    QTest::addColumn<QByteArray>("schema");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("matches");
    for (const auto& c : quire::test::schema_matching_cases())
      QTest::newRow(c.name) << QByteArray(c.schema) << QByteArray(c.text) << c.matches;
  }
  void matchesExactly() {
    QFETCH(QByteArray, schema);
    QFETCH(QByteArray, text);
    QFETCH(bool, matches);
    const auto grammar = compile_json_schema_text(schema.toStdString());
    QCOMPARE(grammar_matches(*grammar, text.toStdString()), matches);
  }

  void aFramedValueIsAToolCallInItsMarkers() {
    // Hermes' markers around a call of one named tool with strict arguments.
    const char* schema = R"({"type":"object","properties":{
        "name":{"const":"get_weather"},
        "arguments":{"type":"object","properties":{"city":{"type":"string"}},
                     "required":["city"]}},
      "required":["name","arguments"]})";
    const auto call = quire::engine::grammar::compile_framed_json_schema_text(
        schema, "<tool_call>\n", "\n</tool_call>");
    QVERIFY(grammar_matches(
        *call,
        "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}}\n</tool_call>"));
    // Without its markers, with another tool, with arguments missing, or
    // with text after the closing marker: not a reply the request allows.
    QVERIFY(
        !grammar_matches(*call, "{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}}"));
    QVERIFY(!grammar_matches(
        *call,
        "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{\"city\":\"Oslo\"}}\n</tool_call>"));
    QVERIFY(!grammar_matches(
        *call, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{}}\n</tool_call>"));
    QVERIFY(!grammar_matches(*call,
                             "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":"
                             "\"Oslo\"}}\n</tool_call>!"));
    // Empty frames are the schema itself; a bad schema is refused by name.
    const auto bare =
        quire::engine::grammar::compile_framed_json_schema_text(R"({"type":"integer"})", "", "");
    QVERIFY(grammar_matches(*bare, "42"));
    QVERIFY_THROWS_EXCEPTION(
        quire::engine::grammar::GrammarError,
        quire::engine::grammar::compile_framed_json_schema_text(R"({"multipleOf":3})", "[", "]"));
  }

  void whitespaceIsBounded() {
    const char* schema = R"({"type":"array","items":{"type":"integer"}})";
    const auto none = compile_json_schema_text(schema, CompileOptions{.max_whitespace = 0});
    QVERIFY(grammar_matches(*none, "[1,2]"));
    QVERIFY(!grammar_matches(*none, "[1, 2]"));
    const auto three = compile_json_schema_text(schema, CompileOptions{.max_whitespace = 3});
    QVERIFY(grammar_matches(*three, "[\n  1,\n  2\n]"));
    QVERIFY(!grammar_matches(*three, "[\n    1]"));
  }

  // nlohmann::json has sorted the keys: properties follow in that order.
  void fromNlohmannJson() {
    const nlohmann::json schema = {
        {"type", "object"},
        {"properties",
         {{"zeta", {{"type", "integer"}, {"minimum", 3}}}, {"alpha", {{"type", "null"}}}}},
        {"required", {"zeta", "alpha"}},
        {"additionalProperties", false}};
    const auto grammar = quire::engine::grammar::compile_json_schema(schema);
    QVERIFY(grammar_matches(*grammar, R"({"alpha":null,"zeta":3})"));
    QVERIFY(!grammar_matches(*grammar, R"({"alpha":null,"zeta":2})"));
  }

  void anyJsonObject() {
    const auto grammar = quire::engine::grammar::any_json_object_grammar();
    QVERIFY(grammar_matches(*grammar, R"({"a": [1, {"b": null}], "c": "d"})"));
    QVERIFY(grammar_matches(*grammar, "{}"));
    QVERIFY(!grammar_matches(*grammar, "[]"));
    QVERIFY(!grammar_matches(*grammar, R"({"a":1,})"));
    QVERIFY(!grammar_matches(*grammar, R"({"a"})"));
  }
};

QUIRE_TEST(SchemaMatchingTest)
#include "test_schema_matching.moc"
