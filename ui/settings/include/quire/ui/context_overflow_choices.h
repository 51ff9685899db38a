#pragma once

// The context policies as the settings offer them: the engine's names
// (engine::to_string(ContextPolicy), which ui/ does not include) and what
// people read for each.

#include <QCoreApplication>
#include <QString>
#include <QStringList>

namespace quire::ui {

inline QStringList context_overflow_ids() {
  return {QStringLiteral("stop"), QStringLiteral("drop_oldest"), QStringLiteral("truncate_middle")};
}

// "Drop the oldest turns"; an unknown id as it is.
inline QString context_overflow_label(const QString& id) {
  if (id == QLatin1String("stop"))
    return QCoreApplication::translate("quire::ui::ContextOverflow", "Stop and say so");
  if (id == QLatin1String("drop_oldest"))
    return QCoreApplication::translate("quire::ui::ContextOverflow", "Drop the oldest turns");
  if (id == QLatin1String("truncate_middle"))
    return QCoreApplication::translate("quire::ui::ContextOverflow", "Truncate the middle");
  return id;
}

// One sentence for a tooltip: what the policy keeps, and what it costs.
inline QString context_overflow_explanation() {
  return QCoreApplication::translate(
      "quire::ui::ContextOverflow",
      "When the chat outgrows the context: stop and say by how much; drop the oldest turns "
      "(the system prompt stays; the whole prompt is read again); or truncate the middle "
      "(the system prompt and the first turn stay, so less is read again). Whole turns go, "
      "down to about half the context, so that it happens rarely.");
}

}  // namespace quire::ui
