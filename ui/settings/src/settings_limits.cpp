#include "quire/ui/settings_limits.h"

namespace quire::ui {

QStringList backend_ids() {
  return {QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")};
}

QStringList draft_method_ids() {
  return {QStringLiteral("off"), QStringLiteral("ngram"), QStringLiteral("model")};
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

QStringList cache_residence_ids() {
  return {QStringLiteral("device"), QStringLiteral("offloaded"), QStringLiteral("offload-global")};
}

QString cache_residence_explanation(const QString& id) {
  if (id == QLatin1String("device")) {
    return QStringLiteral(
        "Pages stay in device memory beside their layers: the fastest decoding, as long as "
        "the cache fits there");
  }
  if (id == QLatin1String("offloaded")) {
    return QStringLiteral(
        "Pages stay in host memory and stream to the GPU layer by layer: fits long chats in "
        "little VRAM, decodes slower");
  }
  if (id == QLatin1String("offload-global")) {
    return QStringLiteral(
        "Only the global-attention layers of sliding-window models keep their pages in host "
        "memory; windowed layers keep theirs on the device (other models offload every layer)");
  }
  return {};
}

}  // namespace quire::ui
