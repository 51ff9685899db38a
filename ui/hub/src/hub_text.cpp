#include "hub_text.h"

#include <QLocale>
#include <cmath>

namespace quire::ui::hub_text {

QString size(qint64 bytes) {
  const double value = static_cast<double>(bytes);
  if (bytes >= (1LL << 30)) return QStringLiteral("%1 GiB").arg(value / (1LL << 30), 0, 'f', 1);
  if (bytes >= (1LL << 20)) return QStringLiteral("%1 MiB").arg(value / (1LL << 20), 0, 'f', 1);
  if (bytes >= 1024) return QStringLiteral("%1 KiB").arg(std::llround(value / 1024.0));
  return QStringLiteral("%1 B").arg(bytes);
}

QString speed(double bytes_per_second) {
  if (bytes_per_second >= 1e6)
    return QStringLiteral("%1 MB/s").arg(bytes_per_second / 1e6, 0, 'f', 1);
  return QStringLiteral("%1 kB/s").arg(bytes_per_second / 1e3, 0, 'f', 0);
}

QString time_left(qint64 bytes_left, double bytes_per_second) {
  if (bytes_per_second <= 0 || bytes_left <= 0) return QString();
  const qint64 seconds = std::llround(static_cast<double>(bytes_left) / bytes_per_second);
  if (seconds < 60) return QStringLiteral("less than a minute left");
  const qint64 minutes = (seconds + 59) / 60;
  if (minutes < 60) return QStringLiteral("about %1 min left").arg(minutes);
  return QStringLiteral("about %1 h %2 min left").arg(minutes / 60).arg(minutes % 60);
}

QString verdict(const QuantizationRow& row) {
  const QLocale locale;
  switch (row.verdict) {
    case FitVerdict::Pending:
      return QStringLiteral("checking…");
    case FitVerdict::Fits:
      if (row.largest_context_tokens > 0 && row.context_is_model_limit)
        return QStringLiteral("fits with its whole %1-token context")
            .arg(locale.toString(row.largest_context_tokens));
      if (row.largest_context_tokens > 0)
        return QStringLiteral("fits: up to %1 tokens of context")
            .arg(locale.toString(row.largest_context_tokens));
      return QStringLiteral("fits");
    case FitVerdict::FitsSmaller:
      return QStringLiteral("fits only with %1").arg(row.fit_label);
    case FitVerdict::DoesNotFit:
      return QStringLiteral("does not fit");
    case FitVerdict::Unsupported:
      return QStringLiteral("Quire cannot run it");
    case FitVerdict::Unknown:
      return QStringLiteral("could not be checked");
  }
  return QString();
}

QString popularity(const HubModelRow& row) {
  const QLocale locale;
  QString text = QStringLiteral("%1 downloads · %2 likes")
                     .arg(locale.toString(row.downloads), locale.toString(row.likes));
  if (!row.last_modified.isEmpty())
    text += QStringLiteral(" · updated %1").arg(row.last_modified.left(10));
  if (row.gated) text += QStringLiteral(" · gated");
  return text;
}

QString progress(const DownloadRow& row) {
  switch (row.state) {
    case DownloadRow::State::Queued:
      return QStringLiteral("waiting");
    case DownloadRow::State::Paused:
      return QStringLiteral("paused at %1 of %2").arg(size(row.bytes_done), size(row.bytes_total));
    case DownloadRow::State::Failed:
      return row.message;
    case DownloadRow::State::Done:
      return QStringLiteral("downloaded, %1").arg(size(row.bytes_total));
    case DownloadRow::State::Running:
      break;
  }
  QString text = QStringLiteral("%1 of %2").arg(size(row.bytes_done), size(row.bytes_total));
  if (row.bytes_per_second > 0) {
    text += QStringLiteral(" · ") + speed(row.bytes_per_second);
    const QString left = time_left(row.bytes_total - row.bytes_done, row.bytes_per_second);
    if (!left.isEmpty()) text += QStringLiteral(" · ") + left;
  }
  return text;
}

}  // namespace quire::ui::hub_text
