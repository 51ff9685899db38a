#pragma once

// The memory panel's view of a running engine: each device's memory by
// purpose, every cache page with its state and holders, and the cache's
// counters (a mixed model's window pool beside the main one). Built on the engine thread, sent to
// the GUI as plain data.

#include "quire/cache/cache_stats.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/ui/memory_view_data.h"

namespace quire::gui {

// The four states of the page map: free, active (one sequence holds the
// page), shared (several do), cached (none does, its content kept by hash).
ui::PageCellState page_cell_state(const cache::PageInfo& page);

ui::MemorySnapshotView memory_snapshot(engine::ModelRuntime& runtime,
                                       const engine::Generator& generator);

}  // namespace quire::gui
