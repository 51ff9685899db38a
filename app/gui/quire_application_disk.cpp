// The disk cache's part of the application (Settings → Disk cache): where
// the tier lives, what the engine is told, and its notices.

#include <QDir>
#include <QMessageBox>
#include <QStandardPaths>

#include "disk_cache_link.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire_application.h"

namespace quire::gui {

DiskCacheRequest QuireApplication::diskCacheRequest() const {
  DiskCacheRequest request;
  request.root = options_.disk_cache_dir.isEmpty()
                     ? QDir(QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation))
                           .filePath(QStringLiteral("quire/pages"))
                     : options_.disk_cache_dir;
  request.enabled = settings_.engine.disk_cache;
  request.limit_bytes = qint64{settings_.engine.disk_cache_mib} << 20;
  request.file_ops = options_.disk_file_ops;
  return request;
}

void QuireApplication::wireDiskCache() {
  DiskCacheLink::Confirm confirm = options_.confirm;
  if (!confirm) {
    confirm = [this](const QString& title, const QString& question) {
      return QMessageBox::question(window_.get(), title, question) == QMessageBox::Yes;
    };
  }
  disk_cache_ = std::make_unique<DiskCacheLink>(*window_->settingsPanel(), *host_, confirm);
  connect(disk_cache_.get(), &DiskCacheLink::problem, this,
          [this](const QString& text) { window_->showNotice(text); });
  // A full disk, an archive that failed: told once, where notices are.
  connect(host_.get(), &EngineHost::notice, this,
          [this](const QString& text) { window_->showNotice(text); });
  // Turned on in Settings and could not open.
  connect(host_.get(), &EngineHost::diskTierChanged, this,
          [this](const QString& notice, bool notice_is_error) {
            if (notice.isEmpty()) return;
            window_->showNotice(
                notice, notice_is_error ? MainWindow::Notice::Error : MainWindow::Notice::Info);
          });
}

}  // namespace quire::gui
