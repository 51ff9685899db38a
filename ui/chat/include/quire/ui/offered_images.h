#pragma once

// Images the user hands to the message box by dropping or pasting: local
// files (by path) or picture data from another application (as bytes). The
// app probes them (app/attachments) before they become attachments; the
// widgets only recognise what is on offer.

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>

class QMimeData;

namespace quire::ui {

struct OfferedImage {
  QString name;      // the file's name, or "pasted image"
  QString path;      // a local file; empty when `bytes` holds the image
  QByteArray bytes;  // picture data without a file (PNG)
  friend bool operator==(const OfferedImage&, const OfferedImage&) = default;
};

// Whether a file's name ends in an image extension a chat takes (.png,
// .jpg, .jpeg, .webp, .gif, .bmp, in any case).
bool is_image_file_name(const QString& path);

// The images in `data`: the local files whose names end in an image
// extension (.png, .jpg, .jpeg, .webp, .gif, .bmp), else a picture (saved as
// PNG). Empty when it holds neither: text drops and pastes stay text.
QList<OfferedImage> offered_images(const QMimeData* data);

}  // namespace quire::ui

Q_DECLARE_METATYPE(quire::ui::OfferedImage)
