#include "quire/ui/settings_limits.h"

namespace quire::ui {

QStringList backend_ids() {
  return {QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")};
}

QStringList reservation_ids() {
  return {QStringLiteral("all"), QStringLiteral("on-demand")};
}

QString reservation_explanation(const QString& id) {
  if (id == QLatin1String("all")) {
    return QStringLiteral(
        "Reserve every page a reply may need when it starts (no reply is ever "
        "paused)");
  }
  if (id == QLatin1String("on-demand")) {
    return QStringLiteral(
        "Allocate pages as replies grow (more chats at once; a reply may pause "
        "while others finish)");
  }
  return {};
}

}  // namespace quire::ui
