// quire-cli render and what inspect says of a model's tokenizer and prompt
// format: the model's own chat template when it has one that works, the
// built-in format it falls back to (and why) when it does not, and exit code
// 2 for what the user must fix.

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

QJsonObject json_of(const Run& run) {
  return QJsonDocument::fromJson(run.out).object();
}

void write(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  file.write(bytes);
}

constexpr char kTemplate[] =
    "{%- for message in messages %}"
    "{{ message.role | upper }}: {{ message.content | trim }}{{ '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}ASSISTANT:{%- endif %}";

}  // namespace

class RenderCommandTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;
  QString conversation_;

 private slots:
  void initTestCase() {
    model_ = root_.filePath(QStringLiteral("model"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), model_, QStringLiteral("--seed"),
                      QStringLiteral("3")})
                 .exit_code,
             0);
    conversation_ = root_.filePath(QStringLiteral("chat.json"));
    write(conversation_,
          R"({"system": "Be brief.", "messages": ["Hello there", "  And then?  "],
              "replies": ["Hi."]})");
  }

  void rendersTheModelsTemplate() {
    write(model_ + QStringLiteral("/chat_template.jinja"), kTemplate);
    const Run run = run_cli({QStringLiteral("render"), model_, QStringLiteral("--conversation"),
                             conversation_, QStringLiteral("--json")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject out = json_of(run);
    QCOMPARE(out[u"format"].toString(), QStringLiteral("template"));
    QVERIFY(out[u"format_title"].toString().contains(QStringLiteral("chat_template.jinja")));
    QCOMPARE(out[u"text"].toString(),
             QStringLiteral("SYSTEM: Be brief.\nUSER: Hello there\nASSISTANT: Hi.\nUSER: And "
                            "then?\nASSISTANT:"));
    const QJsonArray turns = out[u"turns"].toArray();
    QCOMPARE(turns.size(), 2);
    // The second turn only adds what follows the first turn and its reply.
    const int first = turns[0].toObject()[u"prompt_tokens"].toInt();
    const int second = turns[1].toObject()[u"prompt_tokens"].toInt();
    QCOMPARE(turns[1].toObject()[u"recomputed_tokens"].toInt(), 0);
    QVERIFY(second > first);
    QCOMPARE(out[u"ids"].toArray().size(), second);

    // The same ids as tokenize gives for the text, a piece at a time.
    const Run text = run_cli(
        {QStringLiteral("render"), model_, QStringLiteral("--conversation"), conversation_});
    QCOMPARE(text.exit_code, 0);
    QVERIFY(text.out.startsWith("SYSTEM: Be brief.\nUSER: Hello there\n"));
    QVERIFY(text.err.contains(QStringLiteral("chat template")));

    // A built-in format on request.
    const Run builtin =
        run_cli({QStringLiteral("render"), model_, QStringLiteral("--conversation"), conversation_,
                 QStringLiteral("--format"), QStringLiteral("chatml"), QStringLiteral("--json")});
    QCOMPARE(builtin.exit_code, 0);
    QCOMPARE(json_of(builtin)[u"format"].toString(), QStringLiteral("chatml"));
    QVERIFY(!json_of(builtin).contains(QStringLiteral("notice")));
  }

  void aBrokenTemplateFallsBackAndSaysWhy() {
    write(model_ + QStringLiteral("/chat_template.jinja"),
          "{% for message in messages %}\n{{ message.content }\n{% endfor %}");
    const Run run = run_cli({QStringLiteral("render"), model_, QStringLiteral("--conversation"),
                             conversation_, QStringLiteral("--json")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject out = json_of(run);
    QCOMPARE(out[u"format"].toString(), QStringLiteral("plain"));
    const QString notice = out[u"notice"].toString();
    QVERIFY2(notice.contains(QStringLiteral("chat_template.jinja")), qPrintable(notice));
    QVERIFY2(notice.contains(QStringLiteral("line 2")), qPrintable(notice));
    QVERIFY2(notice.contains(QStringLiteral("Plain")), qPrintable(notice));

    // Insisting on the template is an error the user must fix.
    const Run insist =
        run_cli({QStringLiteral("render"), model_, QStringLiteral("--conversation"), conversation_,
                 QStringLiteral("--format"), QStringLiteral("template")});
    QCOMPARE(insist.exit_code, 2);
    QVERIFY2(insist.err.contains(QStringLiteral("line 2")), qPrintable(insist.err));
    QVERIFY(QFile::remove(model_ + QStringLiteral("/chat_template.jinja")));

    const Run none =
        run_cli({QStringLiteral("render"), model_, QStringLiteral("--conversation"), conversation_,
                 QStringLiteral("--format"), QStringLiteral("template")});
    QCOMPARE(none.exit_code, 2);
    QVERIFY2(none.err.contains(QStringLiteral("no chat template")), qPrintable(none.err));
  }

  void badConversationFilesAreRefused() {
    const QString bad = root_.filePath(QStringLiteral("bad.json"));
    write(bad, R"({"messages": ["one"], "replies": ["a", "b"]})");
    const Run replies =
        run_cli({QStringLiteral("render"), model_, QStringLiteral("--conversation"), bad});
    QCOMPARE(replies.exit_code, 2);
    QVERIFY2(replies.err.contains(QStringLiteral("2 replies for 1 messages")),
             qPrintable(replies.err));
    write(bad, R"({"messages": ["one", "two", "three"], "replies": ["a"]})");
    const Run missing =
        run_cli({QStringLiteral("render"), model_, QStringLiteral("--conversation"), bad});
    QCOMPARE(missing.exit_code, 2);
    QVERIFY2(missing.err.contains(QStringLiteral("3 messages and 1 replies")),
             qPrintable(missing.err));
    write(bad, "{\"messages\": [\"one\"");
    QCOMPARE(run_cli({QStringLiteral("render"), model_, QStringLiteral("--conversation"), bad})
                 .exit_code,
             2);
    const Run unknown =
        run_cli({QStringLiteral("render"), model_, QStringLiteral("--conversation"), conversation_,
                 QStringLiteral("--format"), QStringLiteral("vicuna")});
    QCOMPARE(unknown.exit_code, 2);
    QVERIFY2(unknown.err.contains(QStringLiteral("vicuna")), qPrintable(unknown.err));
  }

  void inspectNamesTheTokenizerAndTheFormat() {
    write(model_ + QStringLiteral("/chat_template.jinja"), kTemplate);
    const Run run = run_cli({QStringLiteral("inspect"), model_, QStringLiteral("--json")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject out = json_of(run);
    QVERIFY(out[u"tokenizer"].toObject()[u"description"].toString().contains(
        QStringLiteral("SentencePiece")));
    QCOMPARE(out[u"prompt_format"].toObject()[u"name"].toString(), QStringLiteral("template"));
    QVERIFY(QFile::remove(model_ + QStringLiteral("/chat_template.jinja")));

    // Tokenizer files of another model: described, and refused with both sizes.
    const QString other = root_.filePath(QStringLiteral("other"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), other, QStringLiteral("--vocab"),
                      QStringLiteral("1000")})
                 .exit_code,
             0);
    const QString mixed = root_.filePath(QStringLiteral("mixed"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), mixed, QStringLiteral("--vocab"),
                      QStringLiteral("320")})
                 .exit_code,
             0);
    QVERIFY(QFile::remove(mixed + QStringLiteral("/tokenizer.model")));
    QVERIFY(QFile::copy(other + QStringLiteral("/tokenizer.model"),
                        mixed + QStringLiteral("/tokenizer.model")));
    const Run refused = run_cli({QStringLiteral("inspect"), mixed});
    QCOMPARE(refused.exit_code, 2);
    QVERIFY2(
        refused.err.contains(QStringLiteral("1000")) && refused.err.contains(QStringLiteral("320")),
        qPrintable(refused.err));
    QVERIFY(refused.out.contains("tokenizer     cannot be used"));
  }
};

QUIRE_TEST(RenderCommandTest)
#include "test_render_command.moc"
