#include "vision_status.h"

#include <QCoreApplication>

#include "image_support.h"

namespace quire::gui {
namespace {

QString vision_tr(const char* text) {
  return QCoreApplication::translate("quire", text);
}

const char kImagesNotYetGiven[] = "images are not yet given to the model";

}  // namespace

void describe_vision(ModelInfo& info, const engine::vision::VisionAvailability& vision,
                     const std::optional<engine::VisionTowerPlacement>& planned) {
  info.vision_tower.clear();
  info.vision_problem = QString::fromStdString(vision.problem);
  info.has_vision = false;
  if (!vision.tower) return;
  info.vision_tower = QString::fromStdString(vision.tower->tower + " tower, " +
                                             vision.tower->projector + " projector");
  // The plan prices every tower the description finds; without a plan
  // (nothing to say about memory) the tower counts as usable.
  if (planned && !planned->fits) {
    info.vision_problem = QString::fromStdString(planned->problem);
    return;
  }
  info.has_vision = true;
}

QString images_phrase(const ModelInfo& info, bool generator_takes_images) {
  return model_sees_images(info, generator_takes_images) ? vision_tr("sees images") : QString();
}

QString images_note(const ModelInfo& info, bool generator_takes_images) {
  if (info.backend == QLatin1String("remote")) return {};
  if (!info.vision_problem.isEmpty()) {
    return vision_tr("%1 cannot see images: %2").arg(info.name, info.vision_problem);
  }
  if (info.has_vision && !generator_takes_images) {
    return vision_tr(
               "%1 has a vision tower (%2), but Quire does not give images to models yet: images "
               "attached to a message are kept with the chat and not sent to it.")
        .arg(info.name, info.vision_tower);
  }
  return {};
}

ui::VisionTowerView vision_tower_view(const engine::vision::VisionAvailability& vision,
                                      const std::optional<engine::VisionTowerPlacement>& planned,
                                      bool generator_takes_images) {
  ui::VisionTowerView view;
  if (!vision.tower) return view;
  const engine::vision::VisionTowerSummary& tower = *vision.tower;
  view.name = QString::fromStdString(tower.tower + " tower, " + tower.projector + " projector");
  // It runs on the CPU (docs/vision.md): weights and activations in host memory.
  view.where = vision_tr("host memory");
  view.weights = tower.memory_bytes;
  view.scratch = tower.scratch_bytes;
  if (planned && !planned->fits) {
    view.not_loaded = QString::fromStdString(planned->problem);
  } else if (!generator_takes_images) {
    // Nothing reads the tower's weights until the generator takes images;
    // the piece that turns that on loads the tower with the model.
    view.not_loaded = vision_tr(kImagesNotYetGiven);
  }
  return view;
}

}  // namespace quire::gui
