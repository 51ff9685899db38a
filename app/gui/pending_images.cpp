#include "pending_images.h"

#include <QFile>
#include <QFileInfo>
#include <QLocale>

#include "engine_host.h"
#include "image_support.h"
#include "quire/app/attachments/image_views.h"
#include "quire/ui/attachment_strip.h"
#include "quire/ui/input_box.h"

namespace quire::gui {

PendingImages::PendingImages(ui::InputBox& input, EngineHost& host, QObject* parent)
    : QObject(parent), input_(input), host_(host) {
  connect(&input_, &ui::InputBox::imagesOffered, this, &PendingImages::offer);
  connect(input_.attachmentStrip(), &ui::AttachmentStrip::removeRequested, this,
          &PendingImages::remove);
  connect(&host_, &EngineHost::modelLoaded, this, &PendingImages::refresh);
  connect(&host_, &EngineHost::modelRestored, this, &PendingImages::refresh);
  connect(&host_, &EngineHost::modelUnloaded, this, &PendingImages::refresh);
}

QString PendingImages::fileFilter() {
  return tr("Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)");
}

void PendingImages::offer(const QList<ui::OfferedImage>& images) {
  QStringList refused;
  for (const ui::OfferedImage& offered : images) {
    QByteArray bytes = offered.bytes;
    if (!offered.path.isEmpty()) {
      QFile file(offered.path);
      // The size is checked before reading: a huge file is not loaded to be refused.
      if (file.size() > limits_.max_bytes) {
        refused << tr("“%1” is %2; an image can be at most %3. Scale it down or save it as JPEG "
                      "first.")
                       .arg(offered.name, QLocale::c().formattedDataSize(file.size()),
                            QLocale::c().formattedDataSize(limits_.max_bytes));
        continue;
      }
      if (!file.open(QIODevice::ReadOnly)) {
        refused << tr("“%1” could not be opened: %2.").arg(offered.name, file.errorString());
        continue;
      }
      bytes = file.readAll();
    }
    const attachments::ProbeResult probed = attachments::probe_image(bytes, offered.name, limits_);
    if (!probed.image) {
      refused << probed.error;
      continue;
    }
    images_ << *probed.image;
    names_ << offered.name;
  }
  refresh();
  if (!refused.isEmpty()) emit problem(refused.join(QLatin1Char(' ')));
}

void PendingImages::attachFiles(const QStringList& paths) {
  QList<ui::OfferedImage> offered;
  for (const QString& path : paths)
    offered << ui::OfferedImage{QFileInfo(path).fileName(), path, {}};
  offer(offered);
}

void PendingImages::remove(int index) {
  if (index < 0 || index >= images_.size()) return;
  images_.removeAt(index);
  names_.removeAt(index);
  refresh();
}

QList<store::ChatImage> PendingImages::take() {
  QList<store::ChatImage> taken;
  taken.swap(images_);
  names_.clear();
  refresh();
  return taken;
}

void PendingImages::refresh() {
  QList<ui::PendingImageView> views;
  for (qsizetype i = 0; i < images_.size(); ++i) {
    views << ui::PendingImageView{
        attachments::make_thumbnail(images_[i].bytes, ui::AttachmentStrip::kThumbnailSide),
        names_.value(i)};
  }
  ui::AttachmentStrip& strip = *input_.attachmentStrip();
  const std::optional<ModelInfo>& model = host_.model();
  strip.setNote(model && !model_sees_images(model)
                    ? images_kept_not_sent_note(model->name, model->vision_problem)
                    : QString());
  strip.setImages(views);
}

}  // namespace quire::gui
