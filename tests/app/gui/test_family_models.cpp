// The desktop program with directories laid out as the downloads of the
// newer families: the published config.json of Gemma 3 4B (multimodal, its
// language model nested beside a vision tower) and of Qwen3-30B-A3B (a
// mixture of experts), shapes scaled down, with each model's real tokenizer
// and chat template; and of Qwen3-8B, Gemma 2 9B, Phi-3.5-mini, Phi-4-mini
// and Mixtral 8x7B. Each loads, chats, and a second turn comes from the cache.
// And the weight formats people download in 2026: EXL3 (dense and MoE),
// llm-compressor's W4A16 and AutoAWQ, each named in the memory panel.

#include <QClipboard>
#include <QGuiApplication>
#include <QImage>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTest>
#include <algorithm>
#include <functional>

#include "app_test_support.h"
#include "main_window.h"
#include "quire/engine/generator/image_input.h"
#include "quire/ui/input_box.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/memory_text.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// Runs `after` on the application once both turns are done.
void chat_twice(const QString& model, bool own_template,
                const std::function<void(AppRun&)>& after = {}) {
  AppRun run(model, 8);
  run.start();
  QVERIFY(run.waitForModel());
  const auto* state = run.app->window().findChild<QLabel*>(QStringLiteral("engineState"));
  QVERIFY(state);
  if (own_template) {
    QVERIFY2(state->text().contains(QStringLiteral("the model's chat template")),
             qPrintable(state->text()));
  }
  const std::optional<store::GenerationStats> first = run.send(QStringLiteral("Hello!"));
  QVERIFY(first);
  QCOMPARE(first->cached_tokens, 0);
  QVERIFY(first->prompt_tokens > 4);
  const std::optional<store::GenerationStats> second = run.send(QStringLiteral("And then?"));
  QVERIFY(second);
  // Everything of the first prompt is reused (a template may rewrite the
  // reply, never the prompt before it).
  QVERIFY2(second->cached_tokens >= first->prompt_tokens - 1,
           qPrintable(QStringLiteral("%1 cached, first prompt %2")
                          .arg(second->cached_tokens)
                          .arg(first->prompt_tokens)));
  if (after) after(run);
}

// The memory panel maps a mixed model's sliding layers apart: `sliding` of
// `layers` keep the last `window` tokens of each chat in a pool of their own,
// holding the chat's latest pages.
void expect_window_pool(AppRun& run, int sliding, int layers, int window) {
  ui::MemoryPanel& memory = *run.app->window().memoryPanel();
  QTRY_VERIFY(memory.isShowingWindowPool());
  const ui::WindowPoolView& pool = memory.snapshot().window_pool;
  QCOMPARE(pool.sliding_layers, sliding);
  QCOMPARE(pool.layers, layers);
  QCOMPARE(pool.window_tokens, window);
  QVERIFY(pool.cache.cached_pages + pool.cache.active_pages + pool.cache.shared_pages > 0);
  QVERIFY(pool.bytes > 0 && pool.global_bytes > 0);
  qint64 device_cache = 0;
  for (const ui::DeviceMemoryView& device : memory.snapshot().devices)
    device_cache += device.cache;
  QCOMPARE(pool.bytes + pool.global_bytes, device_cache);
  QCOMPARE(memory.slidingLayersCaptionText(),
           QStringLiteral("Sliding layers (%1 of %2): the last %3 tokens of each chat · %4")
               .arg(sliding)
               .arg(layers)
               .arg(ui::groupDigits(window), ui::formatBytes(pool.bytes)));
}

// A model with a vision tower: the model line says "sees images" when the
// generator takes images, else nothing about them and its tooltip why; the
// memory panel shows the tower as an item of its own, "not loaded" while
// images are not given to the model.
void expect_vision_tower(AppRun& run) {
  const auto* state = run.app->window().findChild<QLabel*>(QStringLiteral("engineState"));
  QVERIFY(state);
  ui::MemoryPanel& memory = *run.app->window().memoryPanel();
  QTRY_VERIFY(!memory.visionTowerText().isEmpty());
  const ui::VisionTowerView& tower = memory.snapshot().vision_tower;
  QCOMPARE(tower.name, QStringLiteral("SigLIP tower, Gemma 3 projector"));
  QVERIFY(tower.weights > 0 && tower.scratch > 0);
  QCOMPARE(memory.visionTowerText(), ui::visionTowerText(tower));
  if (engine::kGeneratorTakesImages) {
    QVERIFY2(state->text().endsWith(QStringLiteral(" · sees images")), qPrintable(state->text()));
    QCOMPARE(state->toolTip(), state->text());
    QVERIFY(tower.not_loaded.isEmpty());
    return;
  }
  QVERIFY(!state->text().contains(QStringLiteral("images")));
  QVERIFY2(state->toolTip().contains(QStringLiteral(
               "has a vision tower (SigLIP tower, Gemma 3 projector), but Quire does not give "
               "images to models yet")),
           qPrintable(state->toolTip()));
  QVERIFY(memory.visionTowerText().endsWith(
      QStringLiteral("not loaded: images are not yet given to the model")));
}

}  // namespace

class FamilyModelsAppTest : public QObject {
  Q_OBJECT

 private slots:
  void gemma3MultimodalChatsWithItsLanguageModel() {
    chat_twice(published_family_model(QStringLiteral("gemma-3-4b-it"), "gemma-3-4b-it.json",
                                      "tokenizer-gemma3"),
               true, [](AppRun& run) {
                 // Scaled to one period of its pattern: five sliding layers, one global.
                 expect_window_pool(run, 5, 6, 1024);
                 // The disk tier does not keep a window pool's pages yet: the
                 // model runs without it, and says so as information.
                 QVERIFY(run.app->model()->disk_identity.isEmpty());
                 QVERIFY2(run.app->model()->disk_notice.startsWith(
                              QStringLiteral("Chats with this model are not kept on disk: ")),
                          qPrintable(run.app->model()->disk_notice));
                 QVERIFY(!run.app->model()->disk_notice_is_error);
                 QVERIFY(!run.app->window().memoryPanel()->snapshot().cache.disk.enabled);
               });
  }

  // Right after the load (the line says the same again after each reply).
  void gemma3WithATowerSaysWhetherItSeesImages() {
    AppRun run(published_family_model(QStringLiteral("gemma-3-4b-it"), "gemma-3-4b-it.json",
                                      "tokenizer-gemma3"),
               8);
    run.start();
    QVERIFY(run.waitForModel());
    expect_vision_tower(run);
  }

  // A picture pasted into the message reaches the model: the stored
  // question holds its four content-keyed positions, no note says the text
  // went alone, and the next turn finds the whole first prompt, image
  // included, in the cache.
  void gemma3SeesAPastedPicture() {
    AppRun run(published_family_model(QStringLiteral("gemma-3-4b-it"), "gemma-3-4b-it.json",
                                      "tokenizer-gemma3"),
               8);
    run.start();
    QVERIFY(run.waitForModel());
    QImage picture(24, 20, QImage::Format_RGB32);
    picture.fill(QColor(200, 40, 40));
    const PictureTurns turns = ask_twice_about_a_picture(run, picture);
    QVERIFY2(turns.problem.isEmpty(), qPrintable(turns.problem));
    QCOMPARE(turns.image_positions, std::ptrdiff_t{4});
  }

  void qwen3MoeChatsThroughItsExperts() {
    chat_twice(published_family_model(QStringLiteral("Qwen3-30B-A3B"), "qwen3-30b-a3b.json",
                                      "tokenizer-qwen3"),
               true);
  }

  // The other published configs, with a trained tokenizer (their own are
  // not among the reference packages): each loads and keeps its cache.
  void everyPublishedFamilyLoads_data() {
    QTest::addColumn<QString>("config");
    for (const char* config : {"qwen3-8b.json", "gemma-2-9b-it.json", "phi-3.5-mini-instruct.json",
                               "phi-4-mini-instruct.json", "mixtral-8x7b-instruct-v0.1.json"}) {
      QTest::newRow(config) << QString::fromLatin1(config);
    }
  }

  void everyPublishedFamilyLoads() {
    QFETCH(QString, config);
    const QByteArray file = config.toLatin1();
    chat_twice(published_family_model(config.chopped(5), file.constData(), nullptr), false,
               [&](AppRun& run) {
                 if (config == QStringLiteral("gemma-2-9b-it.json")) {
                   // Every other layer slides over 4,096 of its 8,192 positions.
                   expect_window_pool(run, 1, 2, 4096);
                 } else {
                   // No window, or (Phi) one no shorter than the model's positions.
                   QTRY_VERIFY(!run.app->window().memoryPanel()->snapshot().isEmpty());
                   QVERIFY(!run.app->window().memoryPanel()->isShowingWindowPool());
                 }
               });
  }

  void everyWeightFormatChats_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("shown");  // the memory panel's weights line begins so
    // The embeddings (the MoE model's routers too) stay in 16 bits.
    QTest::newRow("Qwen3 EXL3 4.0") << "qwen3-8b.json"
                                    << "exl3:4.0"
                                    << "EXL3, codebook MUL1:";
    QTest::newRow("Qwen3-MoE EXL3 3.0 MCG") << "qwen3-30b-a3b.json"
                                            << "exl3:3.0:mcg"
                                            << "F16 and EXL3, codebook MCG: attention 3 bits";
    QTest::newRow("Llama 3.1 W4A16") << "llama-3.1-8b-instruct.json"
                                     << "w4a16"
                                     << "BF16 and pack-quantized: attention 4.12 bits";
    QTest::newRow("Qwen3 AWQ") << "qwen3-8b.json"
                               << "awq"
                               << "F16 and AWQ: attention 4.16 bits";
  }

  void everyWeightFormatChats() {
    QFETCH(QString, config);
    QFETCH(QString, format);
    QFETCH(QString, shown);
    const QByteArray file = config.toLatin1();
    const QByteArray weights = format.toLatin1();
    const QString name = config.chopped(5) + u'-' + QString(format).replace(u':', u'-');
    chat_twice(published_family_model(name, file.constData(), nullptr, weights.constData()), false,
               [&](AppRun& run) {
                 ui::MemoryPanel& memory = *run.app->window().memoryPanel();
                 QTRY_VERIFY(!memory.snapshot().isEmpty());
                 const QString detail = memory.snapshot().devices.value(0).weights_detail;
                 QVERIFY2(detail.startsWith(shown), qPrintable(detail));
               });
  }
};

QUIRE_TEST(FamilyModelsAppTest)
#include "test_family_models.moc"
