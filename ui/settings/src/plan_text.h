#pragma once

// How the plan's numbers read on screen. Binary units, a dot as the decimal
// separator whatever the locale, so numbers look like the CLI's and tests can
// compare them.

#include <QString>
#include <QtGlobal>

#include "quire/ui/settings_data.h"

namespace quire::ui::plan_text {

// "12 B", "512 KiB", "12.5 MiB", "3.9 GiB"; negative counts get a minus sign.
QString bytes(qint64 count);

// "253,696"
QString tokens(qint64 count);

// "weights 3.9 GiB · cache 1.0 GiB · scratch 256 MiB · reserve 256 MiB ·
// free 8.0 GiB, left 2.6 GiB"; "short by ..." in place of "left" on a device
// that overflows; "not used · free 8.0 GiB" for a device the plan leaves out.
QString device_numbers(const PlanDeviceView& device);

// Bytes missing on the device to keep its reserve free; 0 when it fits.
qint64 device_shortfall(const PlanDeviceView& device);

// "Host memory: cache 1.2 GiB of 30.0 GiB free", for pages kept offloaded.
QString host_cache(qint64 cache, qint64 usable);

// "Largest context that fits: 253,696 tokens", or that not even the weights
// fit; "...: 256 tokens: the model's limit" when the model, not memory, caps it.
QString largest_context(qint64 tokens, bool model_limit = false);

}  // namespace quire::ui::plan_text
