#include "quire/ui/memory_text.h"

#include <QStringList>
#include <algorithm>
#include <array>
#include <limits>

#include "quire/ui/memory_style.h"

namespace quire::ui {
namespace {

const QString kSeparator = QStringLiteral(" · ");

QString exactBytes(qint64 bytes) {
  return QStringLiteral("%1 (%2 bytes)").arg(formatBytes(bytes), groupDigits(bytes));
}

}  // namespace

QString formatBytes(qint64 bytes) {
  if (bytes < 0) {
    // Negative sizes appear when stale numbers are subtracted; the most
    // negative value has no positive counterpart, so it borrows the largest.
    return QStringLiteral("-") + formatBytes(bytes == std::numeric_limits<qint64>::min()
                                                 ? std::numeric_limits<qint64>::max()
                                                 : -bytes);
  }
  static constexpr std::array<const char*, 4> kUnits{"B", "KiB", "MiB", "GiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (unit + 1 < kUnits.size() && value >= 1024.0) {
    value /= 1024.0;
    ++unit;
  }
  const int decimals = unit == 0 || value >= 100.0 ? 0 : value >= 10.0 ? 1 : 2;
  return QStringLiteral("%1 %2").arg(QString::number(value, 'f', decimals),
                                     QLatin1String(kUnits[unit]));
}

QString groupDigits(qint64 value) {
  const bool negative = value < 0;
  QString digits = QString::number(value);
  if (negative) digits.remove(0, 1);
  for (qsizetype at = digits.size() - 3; at > 0; at -= 3)
    digits.insert(at, u',');
  return negative ? QStringLiteral("-") + digits : digits;
}

QString formatPercent(double fraction) {
  return QString::number(fraction * 100.0, 'f', 1) + u'%';
}

QString countNoun(qint64 count, const QString& singular, const QString& plural) {
  return QStringLiteral("%1 %2").arg(groupDigits(count), count == 1 ? singular : plural);
}

qint64 usedBytes(const DeviceMemoryView& device) {
  return device.weights + device.cache + device.host_tier + device.scratch + device.program +
         device.other;
}

QString deviceUsageText(const DeviceMemoryView& device) {
  return QStringLiteral("%1 of %2 used")
      .arg(formatBytes(usedBytes(device)), formatBytes(device.total));
}

QString deviceToolTip(const DeviceMemoryView& device) {
  QStringList lines{device.name};
  for (MemorySegment segment : kMemorySegments) {
    if (!segmentListed(device, segment)) continue;
    const qint64 bytes = segmentBytes(device, segment);
    QString line = QStringLiteral("%1: %2").arg(segmentLabel(segment), exactBytes(bytes));
    if (device.total > 0) {
      line +=
          QStringLiteral(", %1 of total")
              .arg(formatPercent(static_cast<double>(bytes) / static_cast<double>(device.total)));
    }
    lines << line;
    if (segment == MemorySegment::Weights && !device.weights_detail.isEmpty()) {
      lines << QStringLiteral("  stored as %1").arg(device.weights_detail);
    }
  }
  lines << QStringLiteral("Total: %1").arg(exactBytes(device.total));
  return lines.join(u'\n');
}

QString pageToolTip(const PageCellView& page) {
  QStringList lines{QStringLiteral("Page %1 · %2").arg(page.index).arg(pageStateName(page.state))};
  if (page.state == PageCellState::Free) {
    lines << QStringLiteral("No content");
    return lines.join(u'\n');
  }
  lines << QStringLiteral("%1 / %2 tokens").arg(page.tokens).arg(page.page_size);
  if (page.refs == 0) {
    lines << QStringLiteral("No references: kept for reuse");
  } else {
    lines << countNoun(page.refs, QStringLiteral("reference"), QStringLiteral("references"));
  }
  lines << (page.hash_prefix.isEmpty() ? QStringLiteral("Not hashed yet")
                                       : QStringLiteral("Hash %1…").arg(page.hash_prefix));
  if (page.from_disk) lines << QStringLiteral("Restored from disk");
  if (!page.holders.isEmpty()) {
    // A page at the start of a popular system prompt can be held by dozens of
    // chats; name a few and count the rest so the tooltip stays small.
    constexpr qsizetype kNamed = 4;
    QStringList named = page.holders.mid(0, kNamed);
    QString holders = named.join(QStringLiteral(", "));
    if (page.holders.size() > kNamed) {
      holders += QStringLiteral(" and %1 more").arg(page.holders.size() - kNamed);
    }
    lines << QStringLiteral("Held by %1").arg(holders);
  }
  return lines.join(u'\n');
}

QString pageGroupToolTip(const QList<PageCellView>& pages, int first, int count) {
  const int end = std::min<int>(first + count, static_cast<int>(pages.size()));
  if (first < 0 || first >= end) return QString();
  std::array<int, kPageCellStateCount> counts{};
  for (int i = first; i < end; ++i)
    ++counts[static_cast<int>(pages[i].state)];
  QStringList parts;
  for (PageCellState state :
       {PageCellState::Active, PageCellState::Shared, PageCellState::Cached, PageCellState::Free}) {
    const int n = counts[static_cast<int>(state)];
    if (n > 0) parts << QStringLiteral("%1 %2").arg(groupDigits(n), pageStateName(state));
  }
  return QStringLiteral("Pages %1–%2\n%3")
      .arg(pages[first].index)
      .arg(pages[end - 1].index)
      .arg(parts.join(QStringLiteral(", ")));
}

QString hitRateText(const CacheSummaryView& cache) {
  if (cache.reused_tokens + cache.computed_tokens == 0) return QStringLiteral("—");
  return formatPercent(cache.hit_rate);
}

QString diskTierText(const DiskTierView& disk) {
  return QStringLiteral("disk tier: %1 of %2 in %3, %4 saved, %5 restored")
      .arg(formatBytes(disk.used_bytes), formatBytes(disk.limit_bytes),
           countNoun(disk.pages, QStringLiteral("page"), QStringLiteral("pages")),
           groupDigits(disk.saves), groupDigits(disk.restores));
}

QString cacheSummaryText(const CacheSummaryView& cache) {
  QStringList parts;
  parts << QStringLiteral("%1 reused, %2 computed")
               .arg(countNoun(cache.reused_tokens, QStringLiteral("token"),
                              QStringLiteral("tokens")),
                    groupDigits(cache.computed_tokens));
  parts << countNoun(cache.evictions, QStringLiteral("eviction"), QStringLiteral("evictions"));
  // Only a cache that takes pages as replies grow pauses one; a count that
  // is always zero would only lengthen the line.
  if (cache.preemptions > 0) {
    parts << countNoun(cache.preemptions, QStringLiteral("reply paused for pages"),
                       QStringLiteral("replies paused for pages"));
  }
  parts << QStringLiteral("host tier: %1 saved, %2 restored")
               .arg(groupDigits(cache.host_saves), groupDigits(cache.host_restores));
  if (cache.disk.enabled) parts << diskTierText(cache.disk);
  parts << countNoun(cache.defragmentations, QStringLiteral("defragmentation"),
                     QStringLiteral("defragmentations"));
  return parts.join(kSeparator);
}

QString cacheShapeText(const CacheSummaryView& cache) {
  QString text =
      QStringLiteral("%1 of %2 tokens")
          .arg(countNoun(cache.total_pages, QStringLiteral("page"), QStringLiteral("pages")))
          .arg(cache.page_size);
  if (!cache.format.isEmpty()) text += kSeparator + cache.format.toUpper();
  return text;
}

namespace {

QString withBytes(const QString& text, qint64 bytes) {
  return bytes > 0 ? text + kSeparator + formatBytes(bytes) : text;
}

}  // namespace

QString globalLayersCaptionText(const WindowPoolView& pool) {
  return withBytes(QStringLiteral("Global layers (%1 of %2): every token of each chat")
                       .arg(pool.layers - pool.sliding_layers)
                       .arg(pool.layers),
                   pool.global_bytes);
}

QString slidingLayersCaptionText(const WindowPoolView& pool) {
  return withBytes(
      QStringLiteral("Sliding layers (%1 of %2): the last %3 of each chat")
          .arg(pool.sliding_layers)
          .arg(pool.layers)
          .arg(countNoun(pool.window_tokens, QStringLiteral("token"), QStringLiteral("tokens"))),
      pool.bytes);
}

QString visionTowerText(const VisionTowerView& tower) {
  QString text = QStringLiteral("Vision tower (%1)%2%3: %4 of weights, %5 to read an image")
                     .arg(tower.name, kSeparator, tower.where, formatBytes(tower.weights),
                          formatBytes(tower.scratch));
  if (!tower.not_loaded.isEmpty())
    text += kSeparator + QStringLiteral("not loaded: ") + tower.not_loaded;
  return text;
}

QString visionTowerToolTip(const VisionTowerView& tower) {
  QStringList lines{QStringLiteral("Vision tower: %1").arg(tower.name),
                    QStringLiteral("Weights: %1").arg(exactBytes(tower.weights)),
                    QStringLiteral("Reading one image: %1 at most").arg(exactBytes(tower.scratch)),
                    QStringLiteral("In %1: the tower runs on the CPU").arg(tower.where)};
  if (!tower.not_loaded.isEmpty()) lines << QStringLiteral("Not loaded: %1").arg(tower.not_loaded);
  return lines.join(u'\n');
}

}  // namespace quire::ui
