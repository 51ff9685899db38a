// Errors name the construct and the line; raise_exception passes the
// template's words through; runaway templates stop.

#include <QTest>

#include "quire/engine/template/template.h"
#include "template_test_support.h"
#include "test_main.h"

using quire::engine::jinja::RenderOptions;
using quire::engine::jinja::Template;
using quire::engine::jinja::TemplateError;

namespace {

TemplateError error_of(const std::string& source, const RenderOptions& options = {}) {
  try {
    Template::parse(source).render({}, options);
  } catch (const TemplateError& error) {
    return error;
  }
  return TemplateError("no error", -1, "none");
}

}  // namespace

class TemplateErrorsTest : public QObject {
  Q_OBJECT

 private slots:
  void syntaxErrorsNameConstructAndLine_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("construct");
    QTest::addColumn<QString>("message");
    QTest::newRow("include") << "a\nb\n{% include 'x.j2' %}" << 3 << "statement 'include'"
                             << "line 3: 'include' is not supported";
    QTest::newRow("extends") << "{% extends 'base' %}" << 1 << "statement 'extends'"
                             << "line 1: 'extends' is not supported";
    QTest::newRow("unknown tag") << "\n{% frobnicate %}" << 2 << "statement 'frobnicate'"
                                 << "line 2: unknown statement 'frobnicate'";
    QTest::newRow("unclosed for")
        << "{% for x in y %}\n\nx" << 3 << "syntax"
        << "line 3: unexpected end of template: expected 'else' or 'endfor'";
    QTest::newRow("unclosed tag") << "{{ x " << 1 << "syntax"
                                  << "line 1: unexpected end of template: a tag is not closed";
    QTest::newRow("bad expression") << "\n\n{{ 1 + }}" << 3 << "syntax"
                                    << "line 3: unexpected '}}'";
    QTest::newRow("unknown filter") << "x\n{{ y|frob }}" << 2 << "filter 'frob'"
                                    << "line 2: no filter named 'frob'";
    QTest::newRow("unknown test") << "{{ y is frob }}" << 1 << "test 'frob'"
                                  << "line 1: no test named 'frob'";
    QTest::newRow("break outside loop") << "{% break %}" << 1 << "statement 'break'"
                                        << "line 1: 'break' outside a loop";
    QTest::newRow("unclosed comment") << "a {# b" << 1 << "syntax"
                                      << "line 1: missing end of comment tag";
    QTest::newRow("unclosed string") << "{{ 'abc }}" << 1 << "syntax"
                                     << "line 1: unexpected end of string literal";
  }

  void syntaxErrorsNameConstructAndLine() {
    QFETCH(QString, source);
    QFETCH(int, line);
    QFETCH(QString, construct);
    QFETCH(QString, message);
    try {
      Template::parse(source.toStdString());
      QFAIL("parsed");
    } catch (const TemplateError& error) {
      QCOMPARE(error.line(), line);
      QCOMPARE(QString::fromStdString(error.construct()), construct);
      QCOMPARE(QString::fromUtf8(error.what()), message);
      QVERIFY(!error.raised());
    }
  }

  void evaluationErrorsNameConstructAndLine_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("construct");
    QTest::addColumn<QString>("message");
    QTest::newRow("undefined attribute") << "\n{{ u.x }}" << 2 << "expression"
                                         << "line 2: 'u' is undefined";
    QTest::newRow("type error") << "{% if true %}\n{{ 'a' + 1 }}{% endif %}" << 2 << "expression"
                                << "line 2: can only concatenate str (not \"int\") to str";
    QTest::newRow("unsupported filter") << "{{ 'x'|wordwrap(3) }}" << 1 << "filter 'wordwrap'"
                                        << "line 1: filter 'wordwrap' is not supported";
    QTest::newRow("filter argument") << "{{ 'x'|indent(bad=1) }}" << 1 << "filter 'indent'"
                                     << "line 1: indent got an unexpected keyword argument 'bad'";
    QTest::newRow("unknown filter in if")
        << "{% if x %}{{ 1|frob }}{% else %}ok{% endif %}" << 0 << "none"
        << "no error";
    QTest::newRow("list append")
        << "{{ [1].append(2) }}" << 1 << "expression"
        << "line 1: access to attribute 'append' of 'list' object is unsafe.";
    QTest::newRow("big integer") << "{{ 10 ** 20 }}" << 1 << "expression"
                                 << "line 1: integer overflow (the result does not fit 64 bits)";
  }

  void evaluationErrorsNameConstructAndLine() {
    QFETCH(QString, source);
    QFETCH(int, line);
    QFETCH(QString, construct);
    QFETCH(QString, message);
    const TemplateError error = error_of(source.toStdString());
    QCOMPARE(QString::fromUtf8(error.what()), message);
    if (line > 0) QCOMPARE(error.line(), line);
    QCOMPARE(QString::fromStdString(error.construct()), construct);
  }

  void raiseExceptionPassesTheMessageVerbatim() {
    const TemplateError error = error_of(
        "{% if true %}\n{{ raise_exception('Conversation roles must alternate "
        "user/assistant/user/assistant/...') }}{% endif %}");
    QVERIFY(error.raised());
    QCOMPARE(std::string(error.what()),
             std::string("Conversation roles must alternate user/assistant/user/assistant/..."));
    QCOMPARE(error.line(), 2);
    QCOMPARE(error.construct(), std::string("raise_exception"));
  }

  void endlessLoopStops() {
    RenderOptions options;
    options.max_steps = 100000;
    const TemplateError error =
        error_of("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
                 options);
    QCOMPARE(error.construct(), std::string("limit"));
  }

  void endlessRecursionStops() {
    const TemplateError error = error_of("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}");
    QCOMPARE(error.construct(), std::string("limit"));
    QVERIFY(std::string(error.what()).find("nest deeper") != std::string::npos);
  }

  void outputIsCapped() {
    RenderOptions options;
    options.max_output_bytes = 1000;
    const TemplateError error =
        error_of("{% for i in range(100000) %}0123456789{% endfor %}", options);
    QCOMPARE(error.construct(), std::string("limit"));
    QVERIFY(std::string(error.what()).find("exceeds 1000 bytes") != std::string::npos);
  }

  void hugeStringsAreRefused() {
    QCOMPARE(error_of("{{ 'x' * 10000000000 }}").construct(), std::string("limit"));
    QCOMPARE(error_of("{{ range(1000000)|length }}").construct(), std::string("limit"));
    // A width past any int: refused, not overflowed (found by fuzzing).
    QVERIFY(error_of("{{ '%4444444444d'|format(1) }}").problem().find("too large") !=
            std::string::npos);
  }
};

QUIRE_TEST(TemplateErrorsTest)
#include "test_template_errors.moc"
