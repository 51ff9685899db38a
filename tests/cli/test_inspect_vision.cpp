// quire-cli inspect on Gemma 3 directories: the vision tower a multimodal
// model holds, nothing for a text-only model, and why a damaged tower
// cannot be used, in the text and in --json.

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "bad_model_support.h"
#include "cli_run.h"
#include "test_main.h"

namespace {

// The random tower make-model writes: 64 wide, 1 layer with an MLP of 128,
// 56 x 56 images in patches of 14 (a 4 x 4 grid) pooled to 4 tokens for a
// text model 128 wide; F16, as the text model.
constexpr qint64 kTowerParameters =
    (64 * 3 * 14 * 14 + 64)                                    // patch embedding
    + 16 * 64                                                  // positions
    + (4 * 64 + 4 * (64 * 64 + 64) + 2 * 64 * 128 + 128 + 64)  // the layer
    + 2 * 64                                                   // post norm
    + 64 * 128 + 64;                                           // projection and its norm

static_assert(kTowerParameters == 80576, "the vision line below spells it out");

const char kTowerPrefix[] = "vision_tower.vision_model.";

QString vision_line(const QByteArray& out) {
  for (const QByteArray& line : out.split('\n'))
    if (line.startsWith("  vision ")) return QString::fromUtf8(line);
  return {};
}

QJsonObject inspect_json(const QString& dir) {
  const cli_test::Run run = cli_test::run_cli({QStringLiteral("inspect"), dir, "--json"});
  if (run.exit_code != 0) qWarning("%s", qPrintable(run.err));
  return QJsonDocument::fromJson(run.out).object();
}

}  // namespace

class InspectVisionTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

  QString make(const char* name, const QStringList& options) {
    const QString dir = root_.filePath(QLatin1String(name));
    const cli_test::Run run =
        cli_test::run_cli(QStringList{QStringLiteral("make-model"), dir} + options);
    if (run.exit_code != 0) qWarning("%s", qPrintable(run.err));
    return run.exit_code == 0 ? dir : QString();
  }

 private slots:
  void multimodalModelShowsItsTower() {
    const QString dir = make("vision", {"--arch", "gemma3", "--multimodal"});
    QVERIFY(!dir.isEmpty());
    const cli_test::Run run = cli_test::run_cli({QStringLiteral("inspect"), dir});
    QCOMPARE(run.exit_code, 0);
    QCOMPARE(vision_line(run.out),
             QStringLiteral("  vision        SigLIP tower, Gemma 3 projector: 56 x 56 images in "
                            "patches of 14, 4 tokens per image; 1 layer of width 64, F16, "
                            "80576 parameters, 157.4 KiB"));

    const QJsonObject vision = inspect_json(dir)[u"vision"].toObject();
    QCOMPARE(vision[u"tower"].toString(), QStringLiteral("SigLIP"));
    QCOMPARE(vision[u"projector"].toString(), QStringLiteral("Gemma 3"));
    QCOMPARE(vision[u"image_size"].toInt(), 56);
    QCOMPARE(vision[u"variable_size"].toBool(true), false);  // Gemma 3 resizes every image
    QCOMPARE(vision[u"patch_size"].toInt(), 14);
    QCOMPARE(vision[u"layers"].toInt(), 1);
    QCOMPARE(vision[u"hidden_size"].toInt(), 64);
    QCOMPARE(vision[u"tokens_per_image"].toInt(), 4);
    QCOMPARE(vision[u"dtype"].toString(), QStringLiteral("F16"));
    QCOMPARE(vision[u"parameters"].toInteger(), kTowerParameters);
    QCOMPARE(vision[u"bytes"].toInteger(), 2 * kTowerParameters);
    QCOMPARE(vision[u"tensor_prefix"].toString(), QLatin1String(kTowerPrefix));
    QCOMPARE(vision[u"images_given_to_model"].toBool(false), true);
    QVERIFY(!vision.contains(u"problem"));
  }

  void textOnlyModelShowsNone() {
    const QString dir = make("text", {"--arch", "gemma3"});
    QVERIFY(!dir.isEmpty());
    const cli_test::Run run = cli_test::run_cli({QStringLiteral("inspect"), dir});
    QCOMPARE(run.exit_code, 0);
    QVERIFY(run.out.contains("  tokenizer     "));
    QCOMPARE(vision_line(run.out), QString());
    QVERIFY(!run.out.contains("vision"));
    const QJsonObject out = inspect_json(dir);
    QVERIFY(out.contains(u"vision"));
    QVERIFY(out[u"vision"].isNull());
  }

  // The language model still runs without its tower; inspect says which
  // tensor is missing instead of failing.
  void damagedTowerNamesTheMissingTensor() {
    const QString dir = make("damaged", {"--arch", "gemma3", "--multimodal"});
    QVERIFY(!dir.isEmpty());
    const std::string missing = std::string(kTowerPrefix) + "encoder.layers.0.mlp.fc2.bias";
    quire::test::rewrite_tensors(dir, [&](const quire::engine::io::TensorInfo& info, auto&) {
      return info.name != missing;
    });

    const cli_test::Run run = cli_test::run_cli({QStringLiteral("inspect"), dir});
    QCOMPARE(run.exit_code, 0);
    const QString problem = dir + QStringLiteral(": the vision tower has no tensor ") +
                            QString::fromStdString(missing) +
                            QStringLiteral(
                                "; the download is incomplete or does not match "
                                "config.json's vision_config");
    QCOMPARE(vision_line(run.out), QStringLiteral("  vision        cannot be used: ") + problem);
    const QJsonObject vision = inspect_json(dir)[u"vision"].toObject();
    QCOMPARE(vision, (QJsonObject{{"problem", problem}}));
  }
};

QUIRE_TEST(InspectVisionTest)
#include "test_inspect_vision.moc"
