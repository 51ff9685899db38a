#pragma once

// Settings → Disk cache, wired: the folder and what each model's pages take
// there (read on the GUI thread when something may have changed it), and
// Clear, asked first and done by the engine worker, whose loaded model's
// tier knows its own pages.

#include <QObject>
#include <QString>
#include <functional>

#include "quire/ui/disk_cache_group.h"

namespace quire::ui {
class SettingsPanel;
}

namespace quire::gui {

class EngineHost;

class DiskCacheLink : public QObject {
  Q_OBJECT

 public:
  // Asked before the pages are removed; true: go ahead.
  using Confirm = std::function<bool(const QString& title, const QString& question)>;

  DiskCacheLink(ui::SettingsPanel& panel, EngineHost& host, Confirm confirm,
                QObject* parent = nullptr);

  // What each model's pages take under the host's disk cache folder, the
  // loaded model named and first.
  ui::DiskCacheUsageView usage() const;
  // Shows usage() in the panel.
  void refresh();

 signals:
  // Clear failed: what went wrong, for the notice bar.
  void problem(const QString& text);

 private:
  void clear();

  ui::SettingsPanel& panel_;
  EngineHost& host_;
  Confirm confirm_;
};

}  // namespace quire::gui
