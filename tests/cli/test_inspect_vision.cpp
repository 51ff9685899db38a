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

// Host memory once loaded: the linears' weights stay F16 (the patch
// convolution, q, k, v, out, fc1, fc2 and the projection: 78,592), the rest
// is widened to F32 (1,984).
constexpr qint64 kTowerMemoryBytes =
    2 * (64 * 3 * 14 * 14 + 4 * 64 * 64 + 2 * 64 * 128 + 64 * 128) + 4 * (kTowerParameters - 78592);
static_assert(kTowerMemoryBytes == 165120);
// Reading one image, at the tower's end (2 heads of 32, 16 patches): 9,408
// pixel values + 8 x 16 x 64 + 16 x 128 + 4 x 16 x 32 + 16 x 16 floats.
constexpr qint64 kTowerScratchBytes = 4 * (9408 + 8 * 16 * 64 + 16 * 128 + 4 * 16 * 32 + 16 * 16);
static_assert(kTowerScratchBytes == 87808);

const char kTowerPrefix[] = "vision_tower.vision_model.";

QString line_starting(const QByteArray& out, const char* start) {
  for (const QByteArray& line : out.split('\n'))
    if (line.startsWith(start)) return QString::fromUtf8(line);
  return {};
}

QString vision_line(const QByteArray& out) {
  return line_starting(out, "  vision ");
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
    QCOMPARE(vision[u"memory_bytes"].toInteger(), kTowerMemoryBytes);
    QCOMPARE(vision[u"scratch_bytes"].toInteger(), kTowerScratchBytes);
    QCOMPARE(vision[u"tensor_prefix"].toString(), QLatin1String(kTowerPrefix));
    QCOMPARE(vision[u"images_given_to_model"].toBool(false), true);
    QVERIFY(!vision.contains(u"problem"));
  }

  // Mistral Small 3's directory loads as a Mistral language model beside its
  // Pixtral tower, whose images reach the model.
  void mistral3ShowsItsTowerAndLoads() {
    const QString dir = make("mistral3", {"--arch", "mistral", "--multimodal"});
    QVERIFY(!dir.isEmpty());
    const cli_test::Run run = cli_test::run_cli({QStringLiteral("inspect"), dir});
    QCOMPARE(run.exit_code, 0);
    QVERIFY2(run.out.contains("  architecture  Mistral 3 (multimodal) "
                              "(Mistral3ForConditionalGeneration), 2 layers"),
             qPrintable(run.out));
    QCOMPARE(vision_line(run.out),
             QStringLiteral("  vision        Pixtral tower, Mistral 3 projector: images up to 56 x "
                            "56 in patches of 14, up to 4 tokens per image; 1 layer of width 64, "
                            "F16, 119808 parameters, 234.0 KiB"));
    const QJsonObject vision = inspect_json(dir)[u"vision"].toObject();
    QCOMPARE(vision[u"tower"].toString(), QStringLiteral("Pixtral"));
    QCOMPARE(vision[u"variable_size"].toBool(false), true);
    QCOMPARE(vision[u"images_given_to_model"].toBool(false), true);
  }

  // The plan prices the tower in host memory, in the text and in --json;
  // what is left for it depends on this machine's free memory.
  void thePlanPricesTheTowerInHostMemory() {
    const QString dir = make("vision-plan", {"--arch", "gemma3", "--multimodal"});
    QVERIFY(!dir.isEmpty());
    const cli_test::Run run = cli_test::run_cli({QStringLiteral("inspect"), dir});
    QCOMPARE(run.exit_code, 0);
    const QString line = line_starting(run.out, "  vision tower ");
    QVERIFY2(line.startsWith(QStringLiteral(
                 "  vision tower (SigLIP tower, Gemma 3 projector) in host memory: weights 161 "
                 "KiB, 86 KiB to read an image; ")),
             qPrintable(line));
    QVERIFY(line.endsWith(QStringLiteral(" of host memory left for it")));

    const QJsonObject tower = inspect_json(dir)[u"plan"][u"vision_tower"].toObject();
    QCOMPARE(tower[u"name"].toString(), QStringLiteral("SigLIP tower, Gemma 3 projector"));
    QCOMPARE(tower[u"where"].toString(), QStringLiteral("host memory"));
    QCOMPARE(tower[u"weight_bytes"].toInteger(), kTowerMemoryBytes);
    QCOMPARE(tower[u"scratch_bytes"].toInteger(), kTowerScratchBytes);
    QVERIFY(tower[u"usable"].toInteger() > 0);
    QVERIFY(tower[u"fits"].toBool());
    QCOMPARE(tower[u"problem"].toString(), QString());
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
    QVERIFY(out[u"plan"][u"vision_tower"].isNull());
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
