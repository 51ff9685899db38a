#include "quire/ui/memory_view_data.h"

namespace quire::ui {

void registerMemoryViewMetaTypes() {
  qRegisterMetaType<DeviceMemoryView>("quire::ui::DeviceMemoryView");
  qRegisterMetaType<PageCellState>("quire::ui::PageCellState");
  qRegisterMetaType<PageCellView>("quire::ui::PageCellView");
  qRegisterMetaType<DiskTierView>("quire::ui::DiskTierView");
  qRegisterMetaType<CacheSummaryView>("quire::ui::CacheSummaryView");
  qRegisterMetaType<WindowPoolView>("quire::ui::WindowPoolView");
  qRegisterMetaType<VisionTowerView>("quire::ui::VisionTowerView");
  qRegisterMetaType<MemorySnapshotView>("quire::ui::MemorySnapshotView");
}

}  // namespace quire::ui
