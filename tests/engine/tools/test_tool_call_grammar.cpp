// The grammar of a required tool call, family by family: the replies it
// allows are calls its format's parser reads back (name and arguments), the
// replies it refuses are not one call of one of the request's tools, and what
// cannot be enforced is refused by name.

#include <QTest>
#include <nlohmann/json.hpp>

#include "quire/engine/grammar/grammar.h"
#include "quire/engine/tools/tool_call_grammar.h"
#include "quire/engine/tools/tool_call_parser.h"
#include "test_main.h"

using quire::engine::grammar::grammar_matches;
using quire::engine::tools::ToolCallFormat;
using quire::engine::tools::ToolGrammarError;

namespace {

const nlohmann::json kTools = nlohmann::json::parse(R"([
  {"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                   "unit": {"enum": ["c", "f"]}}, "required": ["city", "unit"]}}},
  {"type": "function", "function": {"name": "now"}}
])");

}  // namespace

class ToolCallGrammarTest : public QObject {
  Q_OBJECT

 private slots:
  void theCallsAllowedAreTheCallsParsed_data() {
    QTest::addColumn<int>("format");
    QTest::addColumn<QByteArray>("weather");  // a call of get_weather
    QTest::addColumn<QByteArray>("now");      // a call of now
    QTest::newRow("Hermes")
        << int(ToolCallFormat::Hermes)
        << QByteArray(
               "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\","
               "\"unit\":\"c\"}}\n</tool_call>")
        << QByteArray("<tool_call>\n{\"name\":\"now\",\"arguments\":{}}\n</tool_call>");
    QTest::newRow("Llama 3")
        << int(ToolCallFormat::Llama3)
        << QByteArray(
               "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\", "
               "\"unit\": \"c\"}}")
        << QByteArray("{\"name\":\"now\",\"parameters\":{}}");
    QTest::newRow("Mistral")
        << int(ToolCallFormat::Mistral)
        << QByteArray(
               "[TOOL_CALLS][{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\","
               "\"unit\":\"c\"}}]")
        << QByteArray("[TOOL_CALLS][{\"name\":\"now\",\"arguments\":{}}]");
    QTest::newRow("Harmony")
        << int(ToolCallFormat::Harmony)
        << QByteArray(
               "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
               "{\"city\":\"Oslo\",\"unit\":\"c\"}")
        << QByteArray("<|channel|>commentary to=functions.now <|constrain|>json<|message|>{}");
    QTest::newRow("DeepSeek V3")
        << int(ToolCallFormat::DeepSeekV3)
        << QByteArray(
               "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
               "```json\n{\"city\":\"Oslo\",\"unit\":\"c\"}\n```<｜tool▁call▁end｜>"
               "<｜tool▁calls▁end｜>")
        << QByteArray(
               "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>now\n```json\n{}"
               "\n```"
               "<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
  }

  void theCallsAllowedAreTheCallsParsed() {
    QFETCH(int, format);
    QFETCH(QByteArray, weather);
    QFETCH(QByteArray, now);
    const auto family = static_cast<ToolCallFormat>(format);
    const auto any = quire::engine::tools::required_call_grammar(family, kTools);
    QVERIFY(grammar_matches(*any, weather.toStdString()));
    QVERIFY(grammar_matches(*any, now.toStdString()));
    const auto parsed = quire::engine::tools::parse_tool_calls(family, weather.toStdString());
    QVERIFY(!parsed.broken);
    QCOMPARE(parsed.tool_calls.size(), std::size_t(1));
    QCOMPARE(parsed.tool_calls[0].name, std::string("get_weather"));
    QVERIFY(nlohmann::json::parse(parsed.tool_calls[0].arguments) ==
            nlohmann::json::parse(R"({"city": "Oslo", "unit": "c"})"));

    // Named: only that tool; its required arguments and enum are enforced.
    const auto named = quire::engine::tools::required_call_grammar(family, kTools, "get_weather");
    QVERIFY(grammar_matches(*named, weather.toStdString()));
    QVERIFY(!grammar_matches(*named, now.toStdString()));
    QByteArray wrong_unit = weather;
    wrong_unit.replace("\"c\"", "\"k\"");
    QVERIFY(!grammar_matches(*named, wrong_unit.toStdString()));
    QByteArray no_unit = weather;
    no_unit.replace(", \"unit\": \"c\"", "").replace(",\"unit\":\"c\"", "");
    QVERIFY(!grammar_matches(*named, no_unit.toStdString()));
    // Text around the call is not a reply a required call allows.
    QVERIFY(!grammar_matches(*any, "Sure! " + weather.toStdString()));
  }

  // With the name outside the JSON, each function's schema is compiled in a
  // document of its own: its references still point into it.
  void referencesStayWithTheirFunction() {
    using Json = nlohmann::json;
    const auto function = [](const char* name, Json small) {
      return Json{{"type", "function"},
                  {"function",
                   {{"name", name},
                    {"parameters",
                     {{"type", "object"},
                      {"properties", {{"x", {{"$ref", "#/$defs/small"}}}}},
                      {"required", {"x"}},
                      {"$defs", {{"small", std::move(small)}}}}}}}};
    };
    const Json tools =
        Json::array({function("a", {{"type", "integer"}, {"minimum", 0}, {"maximum", 9}}),
                     function("b", {{"enum", {"s"}}})});
    const auto grammar =
        quire::engine::tools::required_call_grammar(ToolCallFormat::Harmony, tools);
    const std::string a = "<|channel|>commentary to=functions.a <|constrain|>json<|message|>";
    const std::string b = "<|channel|>commentary to=functions.b <|constrain|>json<|message|>";
    QVERIFY(grammar_matches(*grammar, a + "{\"x\":7}"));
    QVERIFY(!grammar_matches(*grammar, a + "{\"x\":\"s\"}"));
    QVERIFY(grammar_matches(*grammar, b + "{\"x\":\"s\"}"));
    QVERIFY(!grammar_matches(*grammar, b + "{\"x\":7}"));
  }

  void whatCannotBeEnforcedIsRefusedByName() {
    QVERIFY_THROWS_EXCEPTION(ToolGrammarError, quire::engine::tools::required_call_grammar(
                                                   ToolCallFormat::None, kTools));
    QVERIFY_THROWS_EXCEPTION(ToolGrammarError, quire::engine::tools::required_call_grammar(
                                                   ToolCallFormat::Hermes, kTools, "missing"));
    QVERIFY_THROWS_EXCEPTION(ToolGrammarError,
                             quire::engine::tools::required_call_grammar(ToolCallFormat::Hermes,
                                                                         nlohmann::json::array()));
    const nlohmann::json odd = nlohmann::json::parse(
        R"([{"type": "function", "function": {"name": "f",
             "parameters": {"type": "object", "properties": {"n": {"multipleOf": 3}}}}}])");
    try {
      quire::engine::tools::required_call_grammar(ToolCallFormat::Hermes, odd);
      QFAIL("a keyword the grammar cannot enforce was accepted");
    } catch (const ToolGrammarError& error) {
      QVERIFY2(std::string(error.what()).find("multipleOf") != std::string::npos, error.what());
    }
  }
};

QUIRE_TEST(ToolCallGrammarTest)
#include "test_tool_call_grammar.moc"
