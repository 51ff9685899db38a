// Hard-coded expectations (checked against Python's jinja2 when written), the
// value API, and what only transformers' environment has.

#include <QTest>

#include "quire/engine/template/json_value.h"
#include "quire/engine/template/template.h"
#include "template_test_support.h"
#include "test_main.h"

using quire::engine::jinja::Template;
using quire::engine::jinja::Value;

namespace {

std::string render(const std::string& source, const std::map<std::string, Value>& globals = {}) {
  return Template::parse(source)
      .render(globals, quire::test::options_at("2026-11-25T12:00:00"))
      .text;
}

}  // namespace

class TemplateBasicsTest : public QObject {
  Q_OBJECT

 private slots:
  void chatMl() {
    const std::string source =
        "{% for message in messages %}"
        "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] | trim + '<|im_end|>\\n' "
        "}}"
        "{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
    const auto messages = quire::engine::jinja::value_from_json_text(
        R"([{"role": "user", "content": " Hi "}, {"role": "assistant", "content": "Yo"}])", true);
    QCOMPARE(render(source, {{"messages", messages}, {"add_generation_prompt", Value(true)}}),
             std::string("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n"
                         "<|im_start|>assistant\n"));
  }

  void whitespaceControl() {
    QCOMPARE(render("a\n  {% if true %}\n  x\n  {% endif %}\nb"), std::string("a\n  x\nb"));
    QCOMPARE(render("a {%- if true -%} b {%- endif -%} c"), std::string("abc"));
    QCOMPARE(render("  {{ 'v' }}\n  {% if true %}z{% endif %}"), std::string("  v\nz"));
    QCOMPARE(render("a\n  {# c #}\nb"), std::string("a\nb"));
    QCOMPARE(render("x\n\n"), std::string("x\n"));
  }

  void pythonPrinting() {
    QCOMPARE(render("{{ 1.0 }} {{ 1e-5 }} {{ 1e16 }} {{ 0.1 + 0.2 }} {{ 7 / 2 }} {{ 7 // 2 }}"),
             std::string("1.0 1e-05 1e+16 0.30000000000000004 3.5 3"));
    QCOMPARE(render("{{ [1, 'a', none, true, (1,), {'k': \"it's\"}] }}"),
             std::string("[1, 'a', None, True, (1,), {'k': \"it's\"}]"));
    QCOMPARE(quire::engine::jinja::python_float_repr(123456789012345678.0),
             std::string("1.2345678901234568e+17"));
  }

  void generationBlockRendersItsBody() {
    QCOMPARE(render("a{% generation %}b {{ 1 }}{% endgeneration %}c"), std::string("ab 1c"));
  }

  void namespaceAcrossLoopIterations() {
    QCOMPARE(render("{% set ns = namespace(n=0) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}"
                    "{% endfor %}{{ ns.n }}"),
             std::string("6"));
  }

  void setInsideLoopDoesNotLeak() {
    QCOMPARE(render("{% set x = 1 %}{% for i in [5, 6] %}{{ x }}{% set x = i %}{{ x }},{% endfor %}"
                    "{{ x }}"),
             std::string("15,16,1"));
  }

  void strftimeReadsTheGivenClock() {
    QCOMPARE(render("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%A %B %-d %H:%M') }}"),
             std::string("25 Nov 2026|Wednesday November 25 12:00"));
  }

  void tojsonAsTransformers() {
    const auto tools = quire::engine::jinja::value_from_json_text(
        R"({"name": "f", "b": [1, 2.5, null, true], "a": "é<>&"})", false);
    QCOMPARE(render("{{ t|tojson }}", {{"t", tools}}),
             std::string(R"({"name": "f", "b": [1, 2.5, null, true], "a": "é<>&"})"));
    QCOMPARE(render("{{ t|tojson(indent=2, sort_keys=true) }}", {{"t", tools}}),
             std::string("{\n  \"a\": \"é<>&\",\n  \"b\": [\n    1,\n    2.5,\n    null,\n"
                         "    true\n  ],\n  \"name\": \"f\"\n}"));
  }

  void globalsReplaceBuiltins() {
    QCOMPARE(render("{{ range }}", {{"range", Value("mine")}}), std::string("mine"));
  }

  void valuesFromJson() {
    const Value value = quire::engine::jinja::value_from_json(
        nlohmann::json::parse(R"({"b": 1, "a": [1.5, "x", false, null]})"), true);
    QVERIFY(value.is_dict());
    QCOMPARE(value.as_dict().size(), std::size_t{2});
    const Value* list = value.as_dict().find("a");
    QVERIFY(list != nullptr);
    QVERIFY(list->as_list()[1].as_text().any_literal());
    QCOMPARE(list->as_list()[0].as_double(), 1.5);
    QVERIFY(list->as_list()[3].is_none());
  }
};

QUIRE_TEST(TemplateBasicsTest)
#include "test_template_basics.moc"
