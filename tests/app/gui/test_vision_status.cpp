// What the window says about a model's vision tower: ModelInfo's vision
// fields from the description and the plan, the model line's "sees images"
// and its tooltip, and the memory panel's item, for each case: images reach
// the model, a tower whose images are not yet given to it, a tower that
// cannot be used (damaged, or too little host memory), a text-only model
// and a remote one. Both answers of the generator's switch are tried, since
// engine::kGeneratorTakesImages is a constant.

#include <QTest>

#include "context_text.h"
#include "image_support.h"
#include "test_main.h"
#include "vision_status.h"

using namespace quire;

namespace {

engine::vision::VisionAvailability siglip_availability() {
  engine::vision::VisionAvailability vision;
  engine::vision::VisionTowerSummary& tower = vision.tower.emplace();
  tower.tower = "SigLIP";
  tower.projector = "Gemma 3";
  tower.memory_bytes = 851'223'552;
  tower.scratch_bytes = 302'972'928;
  return vision;
}

engine::VisionTowerPlacement planned_tower(bool fits) {
  engine::VisionTowerPlacement tower;
  tower.name = "SigLIP tower, Gemma 3 projector";
  tower.fits = fits;
  if (!fits) tower.problem = "images cannot be read: host memory is short";
  return tower;
}

gui::ModelInfo gemma_info(const engine::vision::VisionAvailability& vision,
                          const std::optional<engine::VisionTowerPlacement>& plan) {
  gui::ModelInfo info;
  info.name = QStringLiteral("gemma-3-4b-it");
  info.backend = QStringLiteral("cpu");
  info.context_tokens = 8192;
  info.prompt_format_title = QStringLiteral("the model's chat template");
  gui::describe_vision(info, vision, plan);
  return info;
}

const QString kGemmaLine = QStringLiteral(
    "Ready · gemma-3-4b-it · 8,192-token context · prompt: the model's chat template");

}  // namespace

class VisionStatusTest : public QObject {
  Q_OBJECT

 private slots:
  void aModelThatSeesImagesSaysSo() {
    const gui::ModelInfo info = gemma_info(siglip_availability(), planned_tower(true));
    QVERIFY(info.has_vision);
    QCOMPARE(info.vision_tower, QStringLiteral("SigLIP tower, Gemma 3 projector"));
    QCOMPARE(info.vision_problem, QString());
    QVERIFY(gui::model_sees_images(info, true));
    QCOMPARE(gui::ready_text(info, true), kGemmaLine + QStringLiteral(" · sees images"));
    QCOMPARE(gui::ready_tooltip(info, true), kGemmaLine + QStringLiteral(" · sees images"));
  }

  // Until the generator takes images, a model with a tower is, for the chat,
  // a text-only model: the line says nothing about images, the tooltip why.
  void aTowerWhoseImagesAreNotYetGivenSaysNothingInTheLine() {
    const gui::ModelInfo info = gemma_info(siglip_availability(), planned_tower(true));
    QVERIFY(!gui::model_sees_images(info, false));
    QCOMPARE(gui::ready_text(info, false), kGemmaLine);
    QCOMPARE(
        gui::ready_tooltip(info, false),
        kGemmaLine +
            QStringLiteral("\ngemma-3-4b-it has a vision tower (SigLIP tower, Gemma 3 projector), "
                           "but Quire does not give images to models yet: images attached to a "
                           "message are kept with the chat and not sent to it."));
    // The application's answer is the switch's.
    QCOMPARE(gui::ready_text(info), gui::ready_text(info, engine::kGeneratorTakesImages));
    QCOMPARE(gui::ready_tooltip(info), gui::ready_tooltip(info, engine::kGeneratorTakesImages));
  }

  // config.json declares a tower the files do not hold: the tooltip gives
  // the description's reason, whatever the generator takes.
  void aDamagedTowerSaysWhyInTheTooltip() {
    engine::vision::VisionAvailability vision;
    vision.problem = "/models/g: the vision tower has no tensor x; the download is incomplete";
    const gui::ModelInfo info = gemma_info(vision, std::nullopt);
    QVERIFY(!info.has_vision);
    QCOMPARE(info.vision_tower, QString());
    for (const bool takes : {false, true}) {
      QCOMPARE(gui::ready_text(info, takes), kGemmaLine);
      QCOMPARE(
          gui::ready_tooltip(info, takes),
          kGemmaLine + QStringLiteral("\ngemma-3-4b-it cannot see images: /models/g: the vision "
                                      "tower has no tensor x; the download is incomplete"));
    }
  }

  // Host memory cannot hold the tower: the model loads, and images are
  // refused with the plan's reason.
  void aTowerHostMemoryCannotHoldGivesThePlansReason() {
    const gui::ModelInfo info = gemma_info(siglip_availability(), planned_tower(false));
    QVERIFY(!info.has_vision);
    QCOMPARE(info.vision_tower, QStringLiteral("SigLIP tower, Gemma 3 projector"));
    QCOMPARE(info.vision_problem, QStringLiteral("images cannot be read: host memory is short"));
    QVERIFY(!gui::model_sees_images(info, true));
    QCOMPARE(gui::ready_text(info, true), kGemmaLine);
    QCOMPARE(
        gui::ready_tooltip(info, true),
        kGemmaLine + QStringLiteral("\ngemma-3-4b-it cannot see images: images cannot be read: "
                                    "host memory is short"));
  }

  // Images attached for such a model are kept, and the strip says why.
  void theAttachmentNoteGivesTheReason() {
    const gui::ModelInfo info = gemma_info(siglip_availability(), planned_tower(false));
    QCOMPARE(gui::images_kept_not_sent_note(info.name, info.vision_problem),
             QStringLiteral("gemma-3-4b-it cannot see images: images cannot be read: host memory "
                            "is short. They will be kept with the chat but not sent to it."));
    QCOMPARE(gui::images_kept_not_sent_note(info.name),
             QStringLiteral("gemma-3-4b-it cannot see images; they will be kept with the chat "
                            "but not sent to it."));
  }

  void aTextOnlyModelSaysNothingAboutImages() {
    const gui::ModelInfo info = gemma_info(engine::vision::VisionAvailability{}, std::nullopt);
    QVERIFY(!info.has_vision);
    for (const bool takes : {false, true}) {
      QCOMPARE(gui::ready_text(info, takes), kGemmaLine);
      QCOMPARE(gui::ready_tooltip(info, takes), kGemmaLine);
    }
  }

  void aRemoteModelSaysNothingAboutImages() {
    gui::ModelInfo info = gemma_info(siglip_availability(), planned_tower(true));
    info.backend = QStringLiteral("remote");
    info.devices = {QStringLiteral("gpu-box:8000")};
    QCOMPARE(gui::ready_text(info, true), gui::ready_tooltip(info, true));
    QVERIFY(!gui::ready_tooltip(info, true).contains(QStringLiteral("image")));
  }

  // The memory panel's item: name, bytes and where, and why it is not in
  // memory; nothing for a model without a usable tower.
  void theMemoryPanelsItem() {
    ui::VisionTowerView view =
        gui::vision_tower_view(siglip_availability(), planned_tower(true), false);
    QCOMPARE(view.name, QStringLiteral("SigLIP tower, Gemma 3 projector"));
    QCOMPARE(view.where, QStringLiteral("host memory"));
    QCOMPARE(view.weights, qint64{851'223'552});
    QCOMPARE(view.scratch, qint64{302'972'928});
    QCOMPARE(view.not_loaded, QStringLiteral("images are not yet given to the model"));
    view = gui::vision_tower_view(siglip_availability(), planned_tower(true), true);
    QCOMPARE(view.not_loaded, QString());
    view = gui::vision_tower_view(siglip_availability(), planned_tower(false), true);
    QCOMPARE(view.not_loaded, QStringLiteral("images cannot be read: host memory is short"));
    QVERIFY(gui::vision_tower_view({}, std::nullopt, true).isEmpty());
  }
};

QUIRE_TEST(VisionStatusTest)
#include "test_vision_status.moc"
