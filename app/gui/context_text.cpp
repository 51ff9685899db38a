#include "context_text.h"

#include <QCoreApplication>
#include <QLocale>

#include "vision_status.h"

namespace quire::gui {

QString context_summary(const ModelInfo& info) {
  // A remote engine that does not state its context (Ollama, llama.cpp).
  if (info.context_tokens <= 0)
    return QCoreApplication::translate("quire", "context set by the engine");
  const QString figure = QCoreApplication::translate("quire", "%1-token context")
                             .arg(QLocale().toString(info.context_tokens));
  if (!info.context_is_model_limit) return figure;
  return QCoreApplication::translate("quire", "%1: the model's limit").arg(figure);
}

QString ready_text(const ModelInfo& info, bool generator_takes_images) {
  if (info.backend == QLatin1String("remote")) {
    return QCoreApplication::translate("quire", "Ready · %1 on the remote engine at %2 · %3")
        .arg(info.name, info.devices.join(QStringLiteral(", ")), context_summary(info));
  }
  QString text = QCoreApplication::translate("quire", "Ready · %1 · %2 · prompt: %3")
                     .arg(info.name, context_summary(info), info.prompt_format_title);
  if (const QString images = images_phrase(info, generator_takes_images); !images.isEmpty())
    text += QStringLiteral(" · ") + images;
  return text;
}

QString ready_tooltip(const ModelInfo& info, bool generator_takes_images) {
  const QString text = ready_text(info, generator_takes_images);
  const QString note = images_note(info, generator_takes_images);
  return note.isEmpty() ? text : text + u'\n' + note;
}

}  // namespace quire::gui
