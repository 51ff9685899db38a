// The chat's images: the full view of one, and the note on a reply whose
// question had images the model could not see.

#include "chat_controller.h"
#include "engine_host.h"
#include "image_support.h"
#include "quire/app/attachments/image_views.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/image_viewer.h"

namespace quire::gui {

void ChatController::openImage(qint64 message_id, int index) {
  const std::optional<store::Message> message = store_.message(store::MessageId{message_id});
  if (!message || index < 0 || index >= message->images.size()) return;
  const QImage image = attachments::decode_image(message->images[index].bytes);
  if (image.isNull()) {
    emit problem(tr("Image %1 of this message could not be read: its stored data is damaged.")
                     .arg(index + 1));
    return;
  }
  const QString title = message->images.size() == 1
                            ? tr("Image (%1 × %2)").arg(image.width()).arg(image.height())
                            : tr("Image %1 of %2 (%3 × %4)")
                                  .arg(index + 1)
                                  .arg(message->images.size())
                                  .arg(image.width())
                                  .arg(image.height());
  auto* viewer = new ui::ImageViewer(image, title, view_.window());
  viewer->show();
  viewer->raise();
  viewer->activateWindow();
}

QString ChatController::imagesNoteOf(const store::Message& reply) const {
  if (reply.role != store::Role::Assistant || !reply.parent) return {};
  const std::optional<store::Message> question = store_.message(*reply.parent);
  if (!question || question->images.isEmpty() || model_sees_images(host_.model())) return {};
  // The model that wrote the reply, when it is known; else the loaded one.
  QString model = reply.stats ? reply.stats->model : QString();
  if (model.isEmpty() && host_.model()) model = host_.model()->name;
  return reply_without_images_note(model);
}

}  // namespace quire::gui
