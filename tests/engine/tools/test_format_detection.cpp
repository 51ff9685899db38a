#include <QTest>

#include "quire/engine/tools/tool_call.h"
#include "template_excerpts.h"
#include "test_main.h"

using quire::engine::tools::ArgumentsForm;
using quire::engine::tools::detect_tool_call_format;
using quire::engine::tools::template_arguments_form;
using quire::engine::tools::ToolCallFormat;

// Excerpts of the templates' tool-call parts; the whole real templates of
// Qwen3 and DeepSeek V3 are checked in test_tool_templates.
class FormatDetectionTest : public QObject {
  Q_OBJECT

 private slots:
  void detects_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("format");
    for (const auto& excerpt : quire::test::template_excerpts())
      QTest::newRow(excerpt.name) << QString::fromUtf8(excerpt.source) << excerpt.format;
  }
  void detects() {
    QFETCH(QString, source);
    QFETCH(QString, format);
    const ToolCallFormat found = detect_tool_call_format(source.toStdString());
    QCOMPARE(QString::fromUtf8(to_string(found).data()), format);
  }

  void argumentsForm() {
    QCOMPARE(template_arguments_form(ToolCallFormat::DeepSeekV3), ArgumentsForm::Text);
    QCOMPARE(template_arguments_form(ToolCallFormat::Hermes), ArgumentsForm::Text);
    QCOMPARE(template_arguments_form(ToolCallFormat::Llama3), ArgumentsForm::Object);
    QCOMPARE(template_arguments_form(ToolCallFormat::Harmony), ArgumentsForm::Object);
    // DeepSeek V3 writes calls only for None content; Qwen's fails on None.
    QVERIFY(quire::engine::tools::template_keeps_null_content(ToolCallFormat::DeepSeekV3));
    QVERIFY(!quire::engine::tools::template_keeps_null_content(ToolCallFormat::Hermes));
  }
};

QUIRE_TEST(FormatDetectionTest)
#include "test_format_detection.moc"
