// Broken model directories through quire-cli: each gives its own clear,
// one-line message and exit status 2, never a crash (this suite also runs
// under the sanitizer build).

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>
#include <functional>

#include "bad_model_support.h"
#include "quire/engine/modelgen/random_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

using Damage = std::function<void(const QString& dir)>;

}  // namespace

Q_DECLARE_METATYPE(Damage)

class BadModelsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString good_;

 private slots:
  void initTestCase() {
    good_ = root_.filePath(QStringLiteral("good"));
    engine::modelgen::RandomModelSpec spec;
    spec.seed = 2;
    engine::modelgen::write_random_model(spec, good_.toStdString());
  }

  void eachProblemHasItsOwnMessage_data() {
    QTest::addColumn<Damage>("damage");
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("message");
    const QString st = QStringLiteral("/model.safetensors");
    QTest::newRow("missing config")
        << Damage([](const QString& d) { QFile::remove(d + "/config.json"); }) << "logits"
        << "no config.json in";
    QTest::newRow("config not json")
        << Damage([](const QString& d) { write(d + "/config.json", "{\"hidden_size\": "); })
        << "logits"
        << "config.json is not valid JSON";
    QTest::newRow("unknown architecture")
        << Damage([](const QString& d) {
             write(d + "/config.json", read(d + "/config.json")
                                           .replace("LlamaForCausalLM", "GPTNeoXForCausalLM")
                                           .replace("\"llama\"", "\"gpt_neox\""));
           })
        << "logits"
        << "\"GPTNeoXForCausalLM\" (model_type \"gpt_neox\") is not supported; Quire runs "
           "LlamaForCausalLM";
    QTest::newRow("no safetensors")
        << Damage([st](const QString& d) { QFile::remove(d + st); }) << "logits"
        << "safetensors";
    QTest::newRow("truncated safetensors") << Damage([st](const QString& d) {
      const QByteArray bytes = read(d + st);
      write(d + st, bytes.left(bytes.size() - 1000));
    }) << "logits"
                                           << "the file is truncated";
    QTest::newRow("header length past the end") << Damage([st](const QString& d) {
      QByteArray bytes = read(d + st);
      bytes[6] = char(0x7f);
      write(d + st, bytes);
    }) << "logits"
                                                << "runs past the end";
    QTest::newRow("offsets out of range") << Damage([st](const QString& d) {
      QByteArray bytes = read(d + st);
      // The first tensor's end offset gets three more digits; the header grows by three.
      const qsizetype comma = bytes.indexOf(',', bytes.indexOf("\"data_offsets\":["));
      bytes.insert(comma + 1, "999");
      qToLittleEndian(qFromLittleEndian<quint64>(bytes.constData()) + 3, bytes.data());
      write(d + st, bytes);
    }) << "logits"
                                          << "run past the end of the";
    QTest::newRow("dtype disagrees with the bytes") << Damage([st](const QString& d) {
      QByteArray bytes = read(d + st);
      const qsizetype at = bytes.indexOf("\"dtype\":\"F16\"");
      bytes.replace(at, 13, "\"dtype\":\"F32\"");
      write(d + st, bytes);
    }) << "logits"
                                                    << "bytes";
    QTest::newRow("missing tensor") << Damage([](const QString& d) {
      rewrite_tensors(d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>&) {
        return info.name != "model.layers.1.mlp.up_proj.weight";
      });
    }) << "logits"
                                    << "no tensor model.layers.1.mlp.up_proj.weight";
    QTest::newRow("wrong shape") << Damage([](const QString& d) {
      rewrite_tensors(d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>& shape) {
        if (info.name == "model.layers.0.self_attn.k_proj.weight") shape[0] = 32;
        return true;
      });
    }) << "logits"
                                 << "has shape [32, 128] where [64, 128] is needed";
    QTest::newRow("config disagrees with files") << Damage([](const QString& d) {
      write(d + "/config.json",
            read(d + "/config.json")
                .replace("\"intermediate_size\": 256", "\"intermediate_size\": 320"));
    }) << "logits"
                                                 << "where [320, 128] is needed";
    QTest::newRow("tokenizer missing")
        << Damage([](const QString& d) { QFile::remove(d + "/tokenizer.model"); }) << "tokenize"
        << "no tokenizer.json or tokenizer.model";
    QTest::newRow("tokenizer corrupt")
        << Damage([](const QString& d) { write(d + "/tokenizer.model", "not a model at all"); })
        << "tokenize"
        << "tokenizer.model";
    QTest::newRow("does not fit") << Damage([](const QString&) {}) << "fit"
                                  << "does not fit";
  }

  void eachProblemHasItsOwnMessage() {
    QFETCH(Damage, damage);
    QFETCH(QString, command);
    QFETCH(QString, message);
    const QString dir =
        root_.filePath(QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'-'));
    QVERIFY(QDir().mkpath(dir));
    for (const QString& name : QDir(good_).entryList(QDir::Files)) {
      QVERIFY(QFile::copy(good_ + u'/' + name, dir + u'/' + name));
    }
    damage(dir);
    QStringList arguments;
    if (command == "tokenize") {
      arguments = {QStringLiteral("tokenize"), dir, QStringLiteral("--text"),
                   QStringLiteral("hello")};
    } else if (command == "fit") {
      arguments = {QStringLiteral("logits"),    dir,
                   QStringLiteral("--tokens"),  QStringLiteral("1,2,3"),
                   QStringLiteral("--devices"), QStringLiteral("cpu:128KiB")};
    } else {
      arguments = {QStringLiteral("logits"), dir, QStringLiteral("--tokens"),
                   QStringLiteral("1,2,3")};
    }
    const Run run = run_cli(arguments);
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QCOMPARE(run.err.count(u'\n'), 1);  // one line
  }

  void badTokenIdsAreRefused() {
    for (const QString& tokens :
         {QStringLiteral("1,x"), QStringLiteral("1,-2"), QStringLiteral("99999")}) {
      const Run run =
          run_cli({QStringLiteral("logits"), good_, QStringLiteral("--tokens"), tokens});
      QCOMPARE(run.exit_code, 2);
      QCOMPARE(run.err.count(u'\n'), 1);
    }
  }
};

QUIRE_TEST(BadModelsTest)
#include "test_bad_models.moc"
