#pragma once

// The words and numbers of the "Get models" window: sizes, speeds, times
// left and the planner's verdicts, formatted one way everywhere.

#include <QString>

#include "quire/ui/model_hub_data.h"

namespace quire::ui::hub_text {

// "812 KiB", "4.3 GiB"
QString size(qint64 bytes);
// "12.4 MB/s"
QString speed(double bytes_per_second);
// "about 3 min left", "about 1 h 12 min left"; "" when it cannot be said.
QString time_left(qint64 bytes_left, double bytes_per_second);
// "fits: up to 32,768 tokens", "fits with a q8 cache", "does not fit", ...
QString verdict(const QuantizationRow& row);
// "1.2M downloads · 340 likes · updated 2026-03-01"
QString popularity(const HubModelRow& row);
// One download's line under its bar: "1.1 GiB of 4.3 GiB · 12.4 MB/s · about 3 min left".
QString progress(const DownloadRow& row);

}  // namespace quire::ui::hub_text
