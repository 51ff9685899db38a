#include <QTest>

#include "quire/engine/grammar/grammar.h"
#include "schema_cases.h"
#include "test_main.h"

using quire::engine::grammar::compile_json_schema_text;
using quire::engine::grammar::GrammarError;

// What cannot be enforced is refused by name, never ignored.
class SchemaRefusalsTest : public QObject {
  Q_OBJECT

 private slots:
  void refusesByName_data() {
    QTest::addColumn<QByteArray>("schema");
    QTest::addColumn<QString>("message_part");
    for (const auto& c : quire::test::schema_refusal_cases())
      QTest::newRow(c.name) << QByteArray(c.schema) << QString::fromUtf8(c.message_part);
  }
  void refusesByName() {
    QFETCH(QByteArray, schema);
    QFETCH(QString, message_part);
    try {
      compile_json_schema_text(schema.toStdString());
      QFAIL("the schema was accepted");
    } catch (const GrammarError& error) {
      const QString message = QString::fromUtf8(error.what());
      if (!message.contains(message_part)) {
        QFAIL(qPrintable(QStringLiteral("message \"%1\" lacks \"%2\"").arg(message, message_part)));
      }
    }
  }

  void annotationsAreAccepted() {
    const auto grammar = compile_json_schema_text(
        R"({"$schema":"https://json-schema.org/draft/2020-12/schema","title":"T",)"
        R"("description":"d","type":"integer","default":1,"examples":[2],"$comment":"c"})");
    QVERIFY(quire::engine::grammar::grammar_matches(*grammar, "12"));
  }
};

QUIRE_TEST(SchemaRefusalsTest)
#include "test_schema_refusals.moc"
