#include "context_text.h"

#include <QCoreApplication>
#include <QLocale>

namespace quire::gui {

QString context_summary(const ModelInfo& info) {
  const QString figure = QCoreApplication::translate("quire", "%1-token context")
                             .arg(QLocale().toString(info.context_tokens));
  if (!info.context_is_model_limit) return figure;
  return QCoreApplication::translate("quire", "%1: the model's limit").arg(figure);
}

QString ready_text(const ModelInfo& info) {
  return QCoreApplication::translate("quire", "Ready · %1 · %2 · prompt: %3")
      .arg(info.name, context_summary(info), info.prompt_format_title);
}

}  // namespace quire::gui
