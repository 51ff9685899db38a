#pragma once

// The cache's own table of formats (names, titles, bits per value) as the
// plain data the settings panel offers, so the panel and the stored settings
// name and price a format exactly as the engine does.

#include "quire/ui/cache_format_choices.h"

namespace quire::app {

// Every coding of a half and every pair of them, in the cache's order.
ui::CacheFormatChoices cache_format_choices();

}  // namespace quire::app
