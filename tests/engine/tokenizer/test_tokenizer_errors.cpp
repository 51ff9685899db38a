#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <string>

#include "quire/engine/model_error.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "test_main.h"
#include "tokenizer_test_support.h"

using quire::engine::ModelError;
using quire::engine::Tokenizer;

namespace {

// How a case breaks the model directory: its files by name; the value
// kTrainedModel stands for the trained tokenizer.model.
using Files = QMap<QString, QByteArray>;
const QByteArray kTrainedModel = "<trained>";

}  // namespace

class TokenizerErrorsTest : public QObject {
  Q_OBJECT

 private slots:
  void namesTheFileAndTheProblem_data() {
    QTest::addColumn<Files>("files");
    QTest::addColumn<QStringList>("expected");  // parts of the message; %1 is the directory

    const QString model = QStringLiteral("tokenizer.model");
    const QString generation = QStringLiteral("generation_config.json");
    const QString config = QStringLiteral("config.json");
    const QString tokenizer = QStringLiteral("tokenizer_config.json");

    QTest::newRow("no tokenizer file")
        << Files{{config, "{}"}}
        << QStringList{"no tokenizer.json or tokenizer.model in %1",
                       "Hugging Face tokenizer.json and SentencePiece tokenizer.model"};
    QTest::newRow("tokenizer.json without a model")
        << Files{{QStringLiteral("tokenizer.json"), "{}"}}
        << QStringList{"%1/tokenizer.json: the file has no \"model\""};
    QTest::newRow("tokenizer.json as a Git LFS pointer")
        << Files{{QStringLiteral("tokenizer.json"),
                  "version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 9085657\n"},
                 {model, kTrainedModel}}
        << QStringList{"%1/tokenizer.json is a Git LFS pointer", "git lfs pull"};
    QTest::newRow("corrupt tokenizer.model")
        << Files{{model, "this is certainly not a protocol buffer \xff\xfe"}}
        << QStringList{"%1/tokenizer.model is not a SentencePiece model"};
    QTest::newRow("empty tokenizer.model")
        << Files{{model, ""}} << QStringList{"%1/tokenizer.model is not a SentencePiece model"};
    QTest::newRow("Git LFS pointer")
        << Files{{model,
                  "version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 499723\n"}}
        << QStringList{"%1/tokenizer.model is a Git LFS pointer", "git lfs pull"};
    QTest::newRow("bad JSON in generation_config.json")
        << Files{{model, kTrainedModel}, {generation, "{\n  \"eos_token_id\": 2,\n}"}}
        << QStringList{"%1/generation_config.json is not valid JSON", "line 3, column 1"};
    QTest::newRow("bad JSON in config.json")
        << Files{{model, kTrainedModel}, {config, "{\"bos_token_id\": 1"}}
        << QStringList{"%1/config.json is not valid JSON", "line 1, column 19"};
    QTest::newRow("bad JSON in tokenizer_config.json")
        << Files{{model, kTrainedModel}, {tokenizer, "[1, 2"}}
        << QStringList{"%1/tokenizer_config.json is not valid JSON", "line 1"};
    QTest::newRow("JSON that is not an object")
        << Files{{model, kTrainedModel}, {config, "[]"}}
        << QStringList{"%1/config.json must hold a JSON object"};
    QTest::newRow("BOS beyond the vocabulary")
        << Files{{model, kTrainedModel}, {generation, R"({"bos_token_id": 512})"}}
        << QStringList{"%1/generation_config.json: \"bos_token_id\" is 512", "512 tokens"};
    QTest::newRow("negative EOS") << Files{{model, kTrainedModel},
                                           {config, R"({"eos_token_id": -1})"}}
                                  << QStringList{"%1/config.json: \"eos_token_id\" is -1"};
    QTest::newRow("EOS list with an id beyond the vocabulary")
        << Files{{model, kTrainedModel},
                 {config, R"({"text_config": {"eos_token_id": [2, 32000]}})"}}
        << QStringList{"%1/config.json: \"text_config.eos_token_id\" is 32000"};
    QTest::newRow("EOS that is not a number")
        << Files{{model, kTrainedModel}, {generation, R"({"eos_token_id": "</s>"})"}}
        << QStringList{"%1/generation_config.json: \"eos_token_id\" must be a token id"};
    QTest::newRow("BOS given as a list")
        << Files{{model, kTrainedModel}, {config, R"({"bos_token_id": [1, 2]})"}}
        << QStringList{"%1/config.json: \"bos_token_id\" must be a single token id"};
    QTest::newRow("EOS name outside the vocabulary")
        << Files{{model, kTrainedModel}, {tokenizer, R"({"eos_token": "<|im_end|>"})"}}
        << QStringList{"%1/tokenizer_config.json: \"eos_token\" is \"<|im_end|>\"",
                       "not in tokenizer.model's vocabulary"};
    QTest::newRow("add_bos_token that is not a boolean")
        << Files{{model, kTrainedModel}, {tokenizer, R"({"add_bos_token": "yes"})"}}
        << QStringList{"%1/tokenizer_config.json: \"add_bos_token\" must be true or false"};
  }

  void namesTheFileAndTheProblem() {
    QFETCH(Files, files);
    QFETCH(QStringList, expected);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (auto it = files.begin(); it != files.end(); ++it) {
      quire::test::write_file(dir.filePath(it.key()), it.value() == kTrainedModel
                                                          ? quire::test::trained_tokenizer_model()
                                                          : it.value());
    }
    QString message;
    try {
      Tokenizer::load(dir.path().toStdString());
    } catch (const ModelError& error) {
      message = QString::fromUtf8(error.what());
    }
    QVERIFY2(!message.isEmpty(), "no ModelError");
    for (const QString& part : expected) {
      QVERIFY2(message.contains(QString(part).replace(QStringLiteral("%1"), dir.path())),
               qPrintable(message));
    }
  }

  void namesAMissingDirectory() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString missing = dir.filePath(QStringLiteral("gone"));
    try {
      Tokenizer::load(missing.toStdString());
      QFAIL("no ModelError");
    } catch (const ModelError& error) {
      QCOMPARE(QString::fromUtf8(error.what()),
               QStringLiteral("model directory %1 does not exist").arg(missing));
    }
  }
};

QUIRE_TEST(TokenizerErrorsTest)
#include "test_tokenizer_errors.moc"
