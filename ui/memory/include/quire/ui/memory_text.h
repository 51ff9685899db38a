#pragma once

// The words and numbers of the memory panel: byte sizes, tooltips and the cache
// summary. Kept apart from the widgets so the exact texts can be tested.

#include <QList>
#include <QString>
#include <QtGlobal>

#include "quire/ui/memory_view_data.h"

namespace quire::ui {

// Binary units with three significant digits: "512 B", "12.0 KiB", "512 MiB",
// "8.20 GiB", "23.5 GiB".
QString formatBytes(qint64 bytes);
// Digits grouped by commas, independent of the user's locale so numbers line
// up with the C++ side's logs: 8804682752 -> "8,804,682,752".
QString groupDigits(qint64 value);
// One decimal: 0.7243 -> "72.4%".
QString formatPercent(double fraction);
// "1 eviction", "12 evictions".
QString countNoun(qint64 count, const QString& singular, const QString& plural);

// Bytes the device's bar shows as used: weights, cache, scratch and other processes.
qint64 usedBytes(const DeviceMemoryView& device);
// "12.4 GiB of 24.0 GiB used".
QString deviceUsageText(const DeviceMemoryView& device);
// Every part with its exact byte count, one per line.
QString deviceToolTip(const DeviceMemoryView& device);

// Page number, state, tokens, references, hash and holders, one per line.
QString pageToolTip(const PageCellView& page);
// A cell that stands for several pages: their range and how many are in each state.
QString pageGroupToolTip(const QList<PageCellView>& pages, int first, int count);

// "72.4%" for the headline; "—" before any prompt was admitted.
QString hitRateText(const CacheSummaryView& cache);
// "18,432 tokens reused, 7,020 computed · 12 evictions · host tier: 3 saved, 2 restored ·
// 1 defragmentation"; with preemptions, "· 2 replies paused for pages" after the evictions;
// with the disk tier on, diskTierText after the host tier's figures.
QString cacheSummaryText(const CacheSummaryView& cache);
// "disk tier: 96.0 MiB of 4.00 GiB in 12 pages, 3 saved, 2 restored": this
// model's page files, the limit of every model's together, and what the
// cache gave to the tier and read back from it.
QString diskTierText(const DiskTierView& disk);
// "600 pages of 256 tokens · Q4"
QString cacheShapeText(const CacheSummaryView& cache);

// The captions of the two maps of a model whose sliding layers have a pool of
// their own (WindowPoolView): "Global layers (5 of 34): every token of each
// chat · 2.50 GiB" over the main map, "Sliding layers (29 of 34): the last
// 1,024 tokens of each chat · 1.41 GiB" over the pool's (no size when 0).
QString globalLayersCaptionText(const WindowPoolView& pool);
QString slidingLayersCaptionText(const WindowPoolView& pool);

// The vision tower's line under the devices: "Vision tower (SigLIP tower,
// Gemma 3 projector) · host memory: 812 MiB of weights, 289 MiB to read an
// image · not loaded: images are not yet given to the model"; the last part
// only when it is not in memory.
QString visionTowerText(const VisionTowerView& tower);
// Its tooltip: each figure with its exact byte count, where, and why it is
// not loaded, one per line.
QString visionTowerToolTip(const VisionTowerView& tower);

}  // namespace quire::ui
