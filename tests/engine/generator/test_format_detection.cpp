#include <QMap>
#include <QTemporaryDir>
#include <QTest>

#include "detection_samples.h"
#include "generator_test_support.h"
#include "quire/engine/generator/prompt_format.h"
#include "quire/engine/model_error.h"
#include "test_main.h"

using quire::engine::PromptFormatId;

Q_DECLARE_METATYPE(std::optional<PromptFormatId>)

namespace {

using Files = quire::test::DetectionFiles;

}  // namespace

class FormatDetectionTest : public QObject {
  Q_OBJECT

 private slots:
  void detectsFromTheModelFiles_data() {
    QTest::addColumn<Files>("files");
    QTest::addColumn<std::optional<PromptFormatId>>("expected");
    for (const quire::test::DetectionSample& sample : quire::test::detection_samples())
      QTest::newRow(sample.name) << sample.files << sample.expected;
  }

  void detectsFromTheModelFiles() {
    QFETCH(Files, files);
    QFETCH(std::optional<PromptFormatId>, expected);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (auto it = files.begin(); it != files.end(); ++it)
      quire::test::write_file(dir.filePath(it.key()), it.value());
    QCOMPARE(quire::engine::detect_prompt_format(dir.path().toStdString()), expected);
  }

  void malformedJsonIsAnError() {
    QTemporaryDir dir;
    quire::test::write_file(dir.filePath(QStringLiteral("tokenizer_config.json")), "{\"chat");
    try {
      quire::engine::detect_prompt_format(dir.path().toStdString());
      QFAIL("accepted");
    } catch (const quire::engine::ModelError& error) {
      QVERIFY(QString::fromUtf8(error.what()).contains(QStringLiteral("tokenizer_config.json")));
    }
  }

  void namesRoundTrip() {
    for (const PromptFormatId id : quire::engine::all_prompt_formats()) {
      QCOMPARE(quire::engine::parse_prompt_format(quire::engine::to_string(id)), std::optional(id));
    }
    QCOMPARE(quire::engine::parse_prompt_format("ChatML"), std::optional(PromptFormatId::ChatML));
    QCOMPARE(quire::engine::parse_prompt_format("LLAMA3"), std::optional(PromptFormatId::Llama3));
    QCOMPARE(quire::engine::parse_prompt_format("vicuna"), std::optional<PromptFormatId>());
    QCOMPARE(quire::engine::parse_prompt_format(""), std::optional<PromptFormatId>());
    QCOMPARE(quire::engine::all_prompt_formats().size(), std::size_t{6});
  }
};

QUIRE_TEST(FormatDetectionTest)
#include "test_format_detection.moc"
