#include "image_support.h"

#include <QObject>

#include "quire/engine/generator/image_input.h"

namespace quire::gui {

bool model_sees_images(const std::optional<ModelInfo>& model) {
  return model_sees_images(model, engine::kGeneratorTakesImages);
}

bool model_sees_images(const std::optional<ModelInfo>& model, bool generator_takes_images) {
  return generator_takes_images && model && model->has_vision &&
         model->backend != QLatin1String("remote");
}

QString images_kept_not_sent_note(const QString& model_name, const QString& reason) {
  const QString name = model_name.isEmpty() ? QObject::tr("The model") : model_name;
  if (!reason.isEmpty()) {
    return QObject::tr(
               "%1 cannot see images: %2. They will be kept with the chat but not sent "
               "to it.")
        .arg(name, reason);
  }
  return QObject::tr("%1 cannot see images; they will be kept with the chat but not sent to it.")
      .arg(name);
}

QString reply_without_images_note(const QString& model_name) {
  const QString name = model_name.isEmpty() ? QObject::tr("The model") : model_name;
  return QObject::tr(
             "%1 cannot see images: it was sent the text of the message only. The images "
             "are kept with the chat.")
      .arg(name);
}

}  // namespace quire::gui
