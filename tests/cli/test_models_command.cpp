// quire-cli models over a Hugging Face cache laid out as huggingface_hub
// writes it (blobs named by their SHA-256, relative links, refs) holding the
// demo model, and a models folder with a copy of it and a model Quire cannot
// open; the fits column for logical CPU devices of known size.

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "test_main.h"

namespace {

const QString kMainCommit = QStringLiteral("e5").repeated(20);
const QString kQuantCommit = QStringLiteral("f6").repeated(20);
// The demo model's six files.
constexpr qint64 kDemoBytes = 11610197;

struct ModelsRun {
  int exit_code = -1;
  QString out;
  QString err;
};

ModelsRun run_models(const QStringList& arguments, const QMap<QString, QString>& environment = {}) {
  QProcessEnvironment variables = QProcessEnvironment::systemEnvironment();
  for (const QString& name : variables.keys())
    if (name.startsWith(QLatin1String("HF_")) || name.startsWith(QLatin1String("XDG_")))
      variables.remove(name);
  for (auto item = environment.cbegin(); item != environment.cend(); ++item)
    variables.insert(item.key(), item.value());
  QProcess process;
  process.setProcessEnvironment(variables);
  process.start(QStringLiteral(QUIRE_CLI_PATH), QStringList{QStringLiteral("models")} + arguments);
  if (!process.waitForStarted() || !process.waitForFinished(120000)) return {};
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromUtf8(process.readAllStandardOutput()),
          QString::fromUtf8(process.readAllStandardError())};
}

bool write_file(const QString& path, const QByteArray& content) {
  QDir().mkpath(QFileInfo(path).path());
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(content) == content.size();
}

// The demo model's files into snapshots/<commit>/<subfolder> of demo/tiny,
// each a relative link to its blob, and refs/<ref>.
bool put_demo_snapshot(const QString& cache, const QString& commit, const QString& ref,
                       const QString& subfolder) {
  const QString repo = cache + QStringLiteral("/models--demo--tiny");
  const QDir demo(QStringLiteral(QUIRE_DEMO_MODEL_DIR));
  const QString folder = repo + QStringLiteral("/snapshots/") + commit +
                         (subfolder.isEmpty() ? QString() : QLatin1Char('/') + subfolder);
  if (!QDir().mkpath(folder)) return false;
  const QString up = subfolder.isEmpty() ? QStringLiteral("../../") : QStringLiteral("../../../");
  for (const QString& name : demo.entryList(QDir::Files)) {
    QFile source(demo.filePath(name));
    if (!source.open(QIODevice::ReadOnly)) return false;
    const QByteArray content = source.readAll();
    const QString blob =
        QString::fromLatin1(QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex());
    if (!QFile::exists(repo + QStringLiteral("/blobs/") + blob) &&
        !write_file(repo + QStringLiteral("/blobs/") + blob, content))
      return false;
    if (!QFile::link(up + QStringLiteral("blobs/") + blob, folder + QLatin1Char('/') + name))
      return false;
  }
  return write_file(repo + QStringLiteral("/refs/") + ref, commit.toLatin1());
}

// A cache with demo/tiny at main, and at 4.0bpw in the subfolder fp16; a
// models folder with a copy of the demo model and a Mamba model.
struct Machine {
  QTemporaryDir home;
  QString cache;
  QString models;

  bool build() {
    cache = home.path() + QStringLiteral("/hf/hub");
    models = home.path() + QStringLiteral("/data/Quire/models");
    if (!put_demo_snapshot(cache, kMainCommit, QStringLiteral("main"), QString()) ||
        !put_demo_snapshot(cache, kQuantCommit, QStringLiteral("4.0bpw"), QStringLiteral("fp16")))
      return false;
    const QDir demo(QStringLiteral(QUIRE_DEMO_MODEL_DIR));
    const QString copy = models + QStringLiteral("/demo-copy/");
    if (!QDir().mkpath(copy)) return false;
    for (const QString& name : demo.entryList(QDir::Files))
      if (!QFile::copy(demo.filePath(name), copy + name)) return false;
    return write_file(models + QStringLiteral("/mamba/config.json"),
                      R"({"architectures":["MambaForCausalLM"],"model_type":"mamba"})");
  }

  QString snapshot(const QString& commit) const {
    return cache + QStringLiteral("/models--demo--tiny/snapshots/") + commit;
  }
};

const QString kMambaError = QStringLiteral(
    "/config.json: architecture \"MambaForCausalLM\" (model_type \"mamba\") is not supported; "
    "Quire runs LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, "
    "Qwen3ForCausalLM, Qwen3MoeForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, "
    "Gemma3ForConditionalGeneration, Phi3ForCausalLM, Qwen2VLForConditionalGeneration, "
    "Qwen2_5_VLForConditionalGeneration, Qwen3VLForConditionalGeneration, "
    "Mistral3ForConditionalGeneration");
const QString kDemoWeights = QStringLiteral("F16: attention 16 bits, MLP 16 bits");

}  // namespace

class ModelsCommandTest : public QObject {
  Q_OBJECT

 private slots:
  void listsTheCacheAndTheModelsFolderAsJson() {
    Machine machine;
    QVERIFY(machine.build());
    const ModelsRun run = run_models({QStringLiteral("--json"), QStringLiteral("--cache-dir"),
                                      machine.cache, QStringLiteral("--models-dir"), machine.models,
                                      QStringLiteral("--devices"), QStringLiteral("cpu:1x64MiB")});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    QCOMPARE(run.err, QString());
    const QJsonArray rows = QJsonDocument::fromJson(run.out.toUtf8()).array();
    QCOMPARE(rows.size(), 4);

    const QJsonObject quant = rows[0].toObject();
    QCOMPARE(quant.keys(), (QStringList{"bytes", "commit", "error", "fits", "folder", "format",
                                        "largest_context", "modified", "name", "refs", "repo",
                                        "revision", "source", "subfolder", "verdict"}));
    QCOMPARE(quant[QStringLiteral("name")].toString(), QStringLiteral("demo/tiny@4.0bpw/fp16"));
    QCOMPARE(quant[QStringLiteral("source")].toString(), QStringLiteral("hub_cache"));
    QCOMPARE(quant[QStringLiteral("repo")].toString(), QStringLiteral("demo/tiny"));
    QCOMPARE(quant[QStringLiteral("revision")].toString(), QStringLiteral("4.0bpw"));
    QCOMPARE(quant[QStringLiteral("refs")].toArray(), QJsonArray{QStringLiteral("4.0bpw")});
    QCOMPARE(quant[QStringLiteral("commit")].toString(), kQuantCommit);
    QCOMPARE(quant[QStringLiteral("subfolder")].toString(), QStringLiteral("fp16"));
    QCOMPARE(quant[QStringLiteral("folder")].toString(),
             machine.snapshot(kQuantCommit) + QStringLiteral("/fp16"));
    QCOMPARE(quant[QStringLiteral("bytes")].toInteger(), kDemoBytes);
    QCOMPARE(quant[QStringLiteral("format")].toString(), kDemoWeights);
    QVERIFY(quant[QStringLiteral("error")].isNull());
    QCOMPARE(quant[QStringLiteral("fits")].toString(), QStringLiteral("yes"));
    QCOMPARE(quant[QStringLiteral("largest_context")].toInteger(), 256);
    QCOMPARE(quant[QStringLiteral("verdict")].toString(),
             QStringLiteral("fits, with up to 256 tokens of context (the model's limit)"));
    QCOMPARE(quant[QStringLiteral("modified")].toString().size(), 20);  // 2026-11-29T10:04:05Z

    const QJsonObject main = rows[1].toObject();
    QCOMPARE(main[QStringLiteral("name")].toString(), QStringLiteral("demo/tiny@main"));
    QCOMPARE(main[QStringLiteral("folder")].toString(), machine.snapshot(kMainCommit));
    QCOMPARE(main[QStringLiteral("subfolder")].toString(), QString());
    QCOMPARE(main[QStringLiteral("bytes")].toInteger(), kDemoBytes);
    QCOMPARE(main[QStringLiteral("fits")].toString(), QStringLiteral("yes"));

    const QJsonObject copy = rows[2].toObject();
    QCOMPARE(copy[QStringLiteral("name")].toString(),
             machine.models + QStringLiteral("/demo-copy"));
    QCOMPARE(copy[QStringLiteral("source")].toString(), QStringLiteral("models_folder"));
    QCOMPARE(copy[QStringLiteral("repo")].toString(), QString());
    QCOMPARE(copy[QStringLiteral("commit")].toString(), QString());
    QCOMPARE(copy[QStringLiteral("refs")].toArray(), QJsonArray());
    QCOMPARE(copy[QStringLiteral("subfolder")].toString(), QStringLiteral("demo-copy"));
    QCOMPARE(copy[QStringLiteral("bytes")].toInteger(), kDemoBytes);
    QCOMPARE(copy[QStringLiteral("fits")].toString(), QStringLiteral("yes"));

    // Quire cannot run it: a row that says why, and the command still succeeds.
    const QJsonObject mamba = rows[3].toObject();
    const QString mamba_folder = machine.models + QStringLiteral("/mamba");
    QCOMPARE(mamba[QStringLiteral("name")].toString(), mamba_folder);
    QCOMPARE(mamba[QStringLiteral("bytes")].toInteger(), 59);
    QVERIFY(mamba[QStringLiteral("format")].isNull());
    QCOMPARE(mamba[QStringLiteral("error")].toString(), mamba_folder + kMambaError);
    QCOMPARE(mamba[QStringLiteral("fits")].toString(), QStringLiteral("unknown"));
    QVERIFY(mamba[QStringLiteral("largest_context")].isNull());
    QCOMPARE(mamba[QStringLiteral("verdict")].toString(),
             QStringLiteral("Quire cannot open it: ") + mamba_folder + kMambaError);
  }

  void saysWhetherEachFitsTheDevices_data() {
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("fits");
    QTest::addColumn<QJsonValue>("context");
    QTest::addColumn<QString>("verdict");
    QTest::newRow("the machine's memory")
        << QStringList{} << QStringLiteral("yes") << QJsonValue(256)
        << QStringLiteral(
               "fits, with up to 256 tokens of context (the "
               "model's limit)");
    QTest::newRow("a smaller cache")
        << QStringList{QStringLiteral("--devices"), QStringLiteral("cpu:1x26MiB"),
                       QStringLiteral("--context"), QStringLiteral("4096")}
        << QStringLiteral("smaller") << QJsonValue(256)
        << QStringLiteral(
               "fits with the cache reduced from 4,096 to 1,792 tokens, or with the whole cache "
               "kept in host memory (slower: every step streams it to the device)");
    QTest::newRow("too small") << QStringList{QStringLiteral("--devices"),
                                              QStringLiteral("cpu:1x16MiB")}
                               << QStringLiteral("no") << QJsonValue(QJsonValue::Null)
                               << QStringLiteral(
                                      "does not fit even with no context: the weights and "
                                      "scratch alone need 21 MiB on device 0 (cpu0), has 16 MiB "
                                      "free after the 0 MiB reserve — use a smaller "
                                      "quantization or add a device");
  }
  void saysWhetherEachFitsTheDevices() {
    QFETCH(QStringList, options);
    QFETCH(QString, fits);
    QFETCH(QJsonValue, context);
    QFETCH(QString, verdict);
    Machine machine;
    QVERIFY(machine.build());
    const ModelsRun run =
        run_models(QStringList{QStringLiteral("--json"), QStringLiteral("--cache-dir"),
                               machine.cache, QStringLiteral("--models-dir"), machine.models} +
                   options);
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QJsonArray rows = QJsonDocument::fromJson(run.out.toUtf8()).array();
    QCOMPARE(rows.size(), 4);
    for (int i = 0; i < 3; ++i) {
      const QJsonObject row = rows[i].toObject();
      QCOMPARE(row[QStringLiteral("fits")].toString(), fits);
      QCOMPARE(row[QStringLiteral("largest_context")], context);
      QCOMPARE(row[QStringLiteral("verdict")].toString(), verdict);
    }
  }

  void printsATableFromTheDefaultFolders() {
    Machine machine;
    QVERIFY(machine.build());
    // HF_HOME and XDG_DATA_HOME lead to the folders the options named above.
    const ModelsRun run = run_models(
        {QStringLiteral("--devices"), QStringLiteral("cpu:1x16MiB")},
        {{QStringLiteral("HF_HOME"), machine.home.path() + QStringLiteral("/hf")},
         {QStringLiteral("XDG_DATA_HOME"), machine.home.path() + QStringLiteral("/data")}});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QString copy = machine.models + QStringLiteral("/demo-copy");
    const QString mamba = machine.models + QStringLiteral("/mamba");
    const qsizetype width = copy.size() + 2;
    const QString no_fit = QStringLiteral(
        "    does not fit even with no context: the weights and scratch alone need 21 MiB on "
        "device 0 (cpu0), has 16 MiB free after the 0 MiB reserve — use a smaller quantization "
        "or add a device");
    const auto line = [&](const QString& model, const char* size, const char* fits,
                          const char* context, const QString& weights) {
      return model.leftJustified(width) + QString::fromLatin1(size).leftJustified(10) +
             QString::fromLatin1(fits).leftJustified(9) +
             QString::fromLatin1(context).leftJustified(9) + weights;
    };
    QCOMPARE(
        run.out.split(QLatin1Char('\n')),
        (QStringList{
            line(QStringLiteral("MODEL"), "SIZE", "FITS", "CONTEXT", QStringLiteral("WEIGHTS")),
            line(QStringLiteral("demo/tiny@4.0bpw/fp16"), "11.1 MiB", "no", "-", kDemoWeights),
            QStringLiteral("    ") + machine.snapshot(kQuantCommit) + QStringLiteral("/fp16"),
            no_fit,
            line(QStringLiteral("demo/tiny@main"), "11.1 MiB", "no", "-", kDemoWeights),
            QStringLiteral("    ") + machine.snapshot(kMainCommit),
            no_fit,
            line(copy, "11.1 MiB", "no", "-", kDemoWeights),
            no_fit,
            line(mamba, "59 B", "unknown", "-", QStringLiteral("-")),
            QStringLiteral("    Quire cannot open it: ") + mamba + kMambaError,
            QString(),
        }));

    const ModelsRun empty = run_models(
        {}, {{QStringLiteral("HF_HUB_CACHE"), machine.home.path() + QStringLiteral("/none")},
             {QStringLiteral("HOME"), machine.home.path() + QStringLiteral("/nobody")}});
    QCOMPARE(empty.exit_code, 0);
    QCOMPARE(empty.out, QStringLiteral("No models in the Hugging Face cache %1/none or in Quire's "
                                       "models folder %1/nobody/.local/share/Quire/models.\n")
                            .arg(machine.home.path()));
  }

  void failsOnOneLine() {
    const ModelsRun folder = run_models({QStringLiteral("--cache-dir"), QStringLiteral("/none")});
    QCOMPARE(folder.exit_code, 2);
    QCOMPARE(folder.out, QString());
    QCOMPARE(folder.err, QStringLiteral("quire-cli: --cache-dir /none is not a folder\n"));
    const ModelsRun devices = run_models({QStringLiteral("--devices"), QStringLiteral("tpu")});
    QCOMPARE(devices.exit_code, 2);
    QVERIFY2(
        devices.err.startsWith(QLatin1String("quire-cli: --devices \"tpu\" is not understood")),
        qPrintable(devices.err));
    QCOMPARE(devices.err.count(QLatin1Char('\n')), 1);
  }
};

QUIRE_TEST(ModelsCommandTest)
#include "test_models_command.moc"
