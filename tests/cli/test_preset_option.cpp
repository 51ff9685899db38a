// --preset NAME|FILE and --presets DIR on quire-cli: a preset's longest reply
// and sampling apply where the command line is silent, the command line wins,
// and unknown names and broken files stop the command before any model is
// loaded, naming what is wrong.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

void write_preset(const QString& path, const QByteArray& settings) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(R"({"format": "quire-preset", "version": 1, "settings": )" + settings + "}");
}

QJsonArray generated_tokens(const Run& run) {
  return QJsonDocument::fromJson(run.out).object().value(QStringLiteral("tokens")).toArray();
}

}  // namespace

class PresetOptionTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;

  QStringList generate(const QStringList& more) const {
    return QStringList{QStringLiteral("generate"),     model_,
                       QStringLiteral("--prompt"),     QStringLiteral("Once upon a time"),
                       QStringLiteral("--ignore-eos"), QStringLiteral("--json")} +
           more;
  }

 private slots:
  void initTestCase() {
    model_ = root_.filePath(QStringLiteral("model"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), model_, QStringLiteral("--format"),
                      QStringLiteral("exl2:4.0"), QStringLiteral("--seed"), QStringLiteral("5")})
                 .exit_code,
             0);
  }

  void aPresetFileGivesTheLongestReply() {
    const QString preset = root_.filePath(QStringLiteral("short.json"));
    write_preset(preset, R"({"max_new_tokens": 3})");
    const Run run = run_cli(generate({QStringLiteral("--preset"), preset}));
    QCOMPARE(run.exit_code, 0);
    QCOMPARE(generated_tokens(run).size(), 3);
    // The command line wins over the preset.
    const Run longer = run_cli(generate(
        {QStringLiteral("--preset"), preset, QStringLiteral("--max-new"), QStringLiteral("5")}));
    QCOMPARE(longer.exit_code, 0);
    QCOMPARE(generated_tokens(longer).size(), 5);
  }

  void aPresetByNameFromTheLibraryGivesItsSampling() {
    const QString library = root_.filePath(QStringLiteral("library"));
    QVERIFY(QDir().mkpath(library));
    // Temperature 0 samples greedily: the reply is --greedy's.
    write_preset(library + QStringLiteral("/Exact.json"),
                 R"({"temperature": 0, "max_new_tokens": 12})");
    const Run greedy = run_cli(
        generate({QStringLiteral("--greedy"), QStringLiteral("--max-new"), QStringLiteral("12")}));
    QCOMPARE(greedy.exit_code, 0);
    const Run preset = run_cli(generate({QStringLiteral("--presets"), library,
                                         QStringLiteral("--preset"), QStringLiteral("Exact")}));
    QCOMPARE(preset.exit_code, 0);
    QCOMPARE(generated_tokens(preset), generated_tokens(greedy));
  }

  void anUnknownNameListsThePresets() {
    const QString library = root_.filePath(QStringLiteral("empty-library"));
    for (const QString& command : {QStringLiteral("generate"), QStringLiteral("serve")}) {
      QStringList arguments{command,
                            model_,
                            QStringLiteral("--presets"),
                            library,
                            QStringLiteral("--preset"),
                            QStringLiteral("Nope")};
      if (command == QStringLiteral("generate"))
        arguments << QStringLiteral("--prompt") << QStringLiteral("Hi");
      const Run run = run_cli(arguments);
      QCOMPARE(run.exit_code, 2);
      QCOMPARE(run.err.trimmed(),
               QStringLiteral("quire-cli: --preset: There is no preset \"Nope\". Available "
                              "presets: Precise, Balanced, Creative, Code."));
    }
  }

  void aBrokenFileIsNamedWithItsField() {
    const QString preset = root_.filePath(QStringLiteral("broken.json"));
    write_preset(preset, R"({"top_p": "most"})");
    const Run run = run_cli(generate({QStringLiteral("--preset"), preset}));
    QCOMPARE(run.exit_code, 2);
    QCOMPARE(run.err.trimmed(), QStringLiteral("quire-cli: --preset: ") + preset +
                                    QStringLiteral(": settings.top_p: expected a number"));
  }
};

QUIRE_TEST(PresetOptionTest)
#include "test_preset_option.moc"
