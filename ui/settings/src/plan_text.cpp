#include "plan_text.h"

#include <QLocale>
#include <QStringList>
#include <array>

namespace quire::ui::plan_text {

QString bytes(qint64 count) {
  if (count < 0) return QStringLiteral("-") + bytes(-count);
  static constexpr std::array<const char*, 4> kUnits = {"KiB", "MiB", "GiB", "TiB"};
  if (count < 1024) return QStringLiteral("%1 B").arg(count);
  double value = static_cast<double>(count) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  // Three significant digits at most: "3.9 GiB", "12.5 MiB", "256 MiB".
  const int decimals = value >= 100.0 ? 0 : 1;
  return QStringLiteral("%1 %2").arg(QString::number(value, 'f', decimals),
                                     QLatin1String(kUnits[unit]));
}

QString tokens(qint64 count) {
  return QLocale(QLocale::English).toString(count);
}

qint64 device_shortfall(const PlanDeviceView& device) {
  return device.free_after < device.reserve ? device.reserve - device.free_after : 0;
}

QString device_numbers(const PlanDeviceView& device) {
  const QString free = QStringLiteral("free %1").arg(bytes(device.free_before));
  if (!device.used) return QStringLiteral("not used · ") + free;
  QStringList parts = {
      QStringLiteral("weights %1").arg(bytes(device.weights)),
      QStringLiteral("cache %1").arg(bytes(device.cache)),
      QStringLiteral("scratch %1").arg(bytes(device.scratch)),
      QStringLiteral("reserve %1").arg(bytes(device.reserve)),
  };
  const qint64 shortfall = device_shortfall(device);
  const QString after = shortfall > 0 ? QStringLiteral("short by %1").arg(bytes(shortfall))
                                      : QStringLiteral("left %1").arg(bytes(device.free_after));
  parts.append(free + QStringLiteral(", ") + after);
  return parts.join(QStringLiteral(" · "));
}

QString host_cache(qint64 cache, qint64 usable) {
  return QStringLiteral("Host memory: cache %1 of %2 free").arg(bytes(cache), bytes(usable));
}

QString largest_context(qint64 count, bool model_limit) {
  if (count <= 0) {
    return QStringLiteral("Largest context that fits: none — the weights alone do not fit");
  }
  if (model_limit) {
    return QStringLiteral("Largest context that fits: %1 tokens: the model's limit")
        .arg(tokens(count));
  }
  return QStringLiteral("Largest context that fits: %1 tokens").arg(tokens(count));
}

}  // namespace quire::ui::plan_text
