#include "disk_cache_link.h"

#include <algorithm>
#include <exception>
#include <filesystem>

#include "engine_host.h"
#include "quire/engine/disk_cache/disk_cache_usage.h"
#include "quire/ui/settings_panel.h"

namespace quire::gui {

DiskCacheLink::DiskCacheLink(ui::SettingsPanel& panel, EngineHost& host, Confirm confirm,
                             QObject* parent)
    : QObject(parent), panel_(panel), host_(host), confirm_(std::move(confirm)) {
  connect(&panel_, &ui::SettingsPanel::clearDiskCacheRequested, this, &DiskCacheLink::clear);
  // Whatever may have written or removed page files.
  connect(&host_, &EngineHost::modelLoaded, this, &DiskCacheLink::refresh);
  connect(&host_, &EngineHost::modelRestored, this, &DiskCacheLink::refresh);
  connect(&host_, &EngineHost::modelUnloaded, this, &DiskCacheLink::refresh);
  connect(&host_, &EngineHost::diskTierChanged, this, &DiskCacheLink::refresh);
  connect(&host_, &EngineHost::busyChanged, this, [this](bool busy) {
    if (!busy) refresh();
  });
  connect(&host_, &EngineHost::diskCacheCleared, this, [this](const QString& error) {
    refresh();
    if (!error.isEmpty()) {
      emit problem(tr("The disk cache could not be cleared completely: %1").arg(error));
    }
  });
}

ui::DiskCacheUsageView DiskCacheLink::usage() const {
  ui::DiskCacheUsageView view;
  view.folder = host_.diskCache().root;
  if (view.folder.isEmpty()) return view;
  std::vector<engine::disk_cache::ModelUsage> models;
  try {
    models = engine::disk_cache::usage_by_model(std::filesystem::path(view.folder.toStdString()));
  } catch (const std::exception& error) {
    view.error = QString::fromStdString(error.what());
    return view;
  }
  const std::optional<ModelInfo>& loaded = host_.model();
  const QString loaded_identity = loaded ? loaded->disk_identity : QString();
  for (const engine::disk_cache::ModelUsage& model : models) {
    if (model.pages == 0) continue;
    ui::DiskCacheModelUsage entry;
    entry.identity = QString::fromStdString(model.model);
    if (!loaded_identity.isEmpty() && entry.identity == loaded_identity) entry.name = loaded->name;
    entry.bytes = static_cast<qint64>(model.bytes);
    entry.pages = static_cast<qint64>(model.pages);
    view.models.append(entry);
  }
  std::stable_sort(view.models.begin(), view.models.end(),
                   [](const ui::DiskCacheModelUsage& a, const ui::DiskCacheModelUsage& b) {
                     if (a.name.isEmpty() != b.name.isEmpty()) return !a.name.isEmpty();
                     return a.bytes > b.bytes;
                   });
  return view;
}

void DiskCacheLink::refresh() {
  panel_.setDiskCacheUsage(usage());
}

void DiskCacheLink::clear() {
  const QString question =
      tr("Remove every model's cache pages from %1? Chats are computed again when resumed; "
         "the chats themselves are kept.")
          .arg(host_.diskCache().root);
  if (confirm_ && !confirm_(tr("Clear the disk cache"), question)) return;
  host_.clearDiskCache();
}

}  // namespace quire::gui
