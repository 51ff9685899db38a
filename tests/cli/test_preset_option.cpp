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
#include "shared_model.h"
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
    model_ = cli_test::make_exl2_model(root_.path());
    QVERIFY(!model_.isEmpty());
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

  // DRY, XTC, top-nσ and mirostat v2 from a preset sample exactly as the same
  // options given on the command line do, under one seed; an option given
  // beside the preset overrides the preset's value and keeps the others.
  void aPresetGivesItsTunedSamplers_data() {
    QTest::addColumn<QByteArray>("tuned");        // the preset's tuned_sampling
    QTest::addColumn<QStringList>("same");        // the options that say the same
    QTest::addColumn<QStringList>("given");       // an option given beside the preset
    QTest::addColumn<QStringList>("overridden");  // what the preset then says
    const QStringList dry{"--dry-multiplier",       "0.8", "--dry-base",  "1.5",
                          "--dry-allowed-length",   "1",   "--dry-range", "64",
                          "--dry-sequence-breaker", "|"};
    const QStringList mirostat{"--mirostat", "2", "--mirostat-tau", "3", "--mirostat-eta", "0.2"};
    QTest::newRow("DRY and mirostat")
        << QByteArray(R"({"dry_multiplier": 0.8, "dry_base": 1.5, "dry_allowed_length": 1,
            "dry_range": 64, "dry_sequence_breakers": ["|"], "mirostat": 2,
            "mirostat_tau": 3, "mirostat_eta": 0.2})")
        << dry + mirostat << QStringList{"--mirostat", "0"} << dry;
    const QStringList xtc{"--xtc-threshold", "0.01", "--xtc-probability", "1"};
    const QStringList sigma{"--top-n-sigma", "2"};
    QTest::newRow("XTC and top-nσ")
        << QByteArray(R"({"xtc_threshold": 0.01, "xtc_probability": 1, "top_n_sigma": 2})")
        << xtc + sigma << QStringList{"--xtc-probability", "0"} << sigma;
  }

  void aPresetGivesItsTunedSamplers() {
    QFETCH(QByteArray, tuned);
    QFETCH(QStringList, same);
    QFETCH(QStringList, given);
    QFETCH(QStringList, overridden);
    const QString preset = root_.filePath(QStringLiteral("tuned.json"));
    write_preset(preset, R"({"tuned_sampling": )" + tuned + "}");
    const QStringList seeded{QStringLiteral("--seed"), QStringLiteral("7"),
                             QStringLiteral("--max-new"), QStringLiteral("24")};
    const QStringList with_preset = seeded + QStringList{QStringLiteral("--preset"), preset};
    const Run from_preset = run_cli(generate(with_preset));
    const Run from_options = run_cli(generate(seeded + same));
    const Run plain = run_cli(generate(seeded));
    QCOMPARE(from_preset.exit_code, 0);
    QCOMPARE(from_options.exit_code, 0);
    QCOMPARE(generated_tokens(from_preset), generated_tokens(from_options));
    QVERIFY(generated_tokens(from_preset) != generated_tokens(plain));

    const Run beside = run_cli(generate(with_preset + given));
    const Run rest = run_cli(generate(seeded + overridden));
    QCOMPARE(beside.exit_code, 0);
    QCOMPARE(generated_tokens(beside), generated_tokens(rest));
    QVERIFY(generated_tokens(beside) != generated_tokens(from_preset));
  }

  // A preset's context policy applies where --context-overflow is not given.
  void aPresetGivesItsContextPolicy() {
    const QString preset = root_.filePath(QStringLiteral("stop.json"));
    write_preset(preset, R"({"context_overflow": "stop"})");
    QString text;
    for (int i = 0; i < 300; ++i)
      text += QStringLiteral("word ");
    const QStringList base{QStringLiteral("generate"),
                           model_,
                           QStringLiteral("--prompt"),
                           text,
                           QStringLiteral("--max-new"),
                           QStringLiteral("8"),
                           QStringLiteral("--greedy"),
                           QStringLiteral("--context"),
                           QStringLiteral("256"),
                           QStringLiteral("--preset"),
                           preset};
    const Run stopped = run_cli(base);
    QCOMPARE(stopped.exit_code, 1);
    QVERIFY2(stopped.err.contains(QStringLiteral("tokens over the context of 256")),
             qPrintable(stopped.err));
    const Run dropped = run_cli(
        base + QStringList{QStringLiteral("--context-overflow"), QStringLiteral("drop-oldest")});
    QCOMPARE(dropped.exit_code, 0);
    QVERIFY2(dropped.err.contains(QStringLiteral("tokens 2\u2013")), qPrintable(dropped.err));
  }

  // A preset's banned strings and text biases apply as --ban-string and
  // --logit-bias-text do, also beside --greedy.
  void aPresetGivesItsBannedStringsAndTextBiases() {
    const QStringList greedy{QStringLiteral("--greedy"), QStringLiteral("--max-new"),
                             QStringLiteral("24")};
    const Run plain = run_cli(generate(greedy));
    QCOMPARE(plain.exit_code, 0);
    const QJsonObject plain_json = QJsonDocument::fromJson(plain.out).object();
    const QString text = plain_json.value(QStringLiteral("text")).toString();
    QVERIFY2(text.size() > 10, qPrintable(text));
    const QString banned = text.mid(3, 5);
    const QString preset = root_.filePath(QStringLiteral("banned.json"));
    write_preset(preset, R"({"banned_strings": [")" + banned.toUtf8() + R"("]})");
    const Run guarded = run_cli(generate(greedy + QStringList{QStringLiteral("--preset"), preset}));
    QCOMPARE(guarded.exit_code, 0);
    const QJsonObject guarded_json = QJsonDocument::fromJson(guarded.out).object();
    const QString kept = guarded_json.value(QStringLiteral("text")).toString();
    QVERIFY2(!kept.contains(banned, Qt::CaseInsensitive), qPrintable(kept));
    QVERIFY(guarded_json.value(QStringLiteral("banned_rewinds")).toInt() >= 1);

    // "zebra" pushed far up: greedy takes only its tokens, as with the option.
    const QString biased = root_.filePath(QStringLiteral("zebra.json"));
    write_preset(biased, R"({"logit_bias": {"zebra": 100}})");
    const Run from_preset =
        run_cli(generate(greedy + QStringList{QStringLiteral("--preset"), biased}));
    const Run from_option = run_cli(generate(
        greedy + QStringList{QStringLiteral("--logit-bias-text"), QStringLiteral("zebra=100")}));
    QCOMPARE(from_preset.exit_code, 0);
    QCOMPARE(from_option.exit_code, 0);
    QCOMPARE(generated_tokens(from_preset), generated_tokens(from_option));
    QVERIFY(generated_tokens(from_preset) != generated_tokens(plain));
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
