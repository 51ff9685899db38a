#pragma once

// Settings → Disk cache: the KV cache's third tier, page files on disk that
// let a chat resume after a restart without being computed again. On or off
// and the size limit are settings (EngineSettings::disk_cache,
// disk_cache_mib); the folder, what each model's pages take and the Clear
// button are the application's (setUsage, clearRequested).

#include <QGroupBox>
#include <QList>
#include <QString>
#include <QtGlobal>

class QCheckBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace quire::ui {

// One model's pages in the disk cache.
struct DiskCacheModelUsage {
  // The loaded model's name, or empty for another model's folder.
  QString name;
  QString identity;  // the model's folder: its identity in hex
  qint64 bytes = 0;
  qint64 pages = 0;

  friend bool operator==(const DiskCacheModelUsage&, const DiskCacheModelUsage&) = default;
};

// The disk cache as the application finds it.
struct DiskCacheUsageView {
  QString folder;
  QList<DiskCacheModelUsage> models;  // the loaded model first, then by size
  // Why the folder could not be read; empty when it could.
  QString error;

  friend bool operator==(const DiskCacheUsageView&, const DiskCacheUsageView&) = default;
};

// "Qwen3 0.6B (loaded): 96.0 MiB in 12 pages" or "Other model 3f2a5c7e: ...",
// one line per model; "Empty" without pages; the error when there is one.
QString disk_cache_usage_text(const DiskCacheUsageView& usage);

class DiskCacheGroup : public QGroupBox {
  Q_OBJECT

 public:
  explicit DiskCacheGroup(QWidget* parent = nullptr);

  void setValues(bool enabled, int limit_mib);
  bool isOn() const;
  int limitMib() const;
  void setUsage(const DiskCacheUsageView& usage);
  const DiskCacheUsageView& usage() const { return usage_; }

 signals:
  // On or off, or the limit, changed by the user.
  void edited();
  // Clear was pressed: remove every model's pages (the application asks
  // first).
  void clearRequested();

 private:
  void enableFields();

  QCheckBox* enabled_ = nullptr;
  QSpinBox* limit_ = nullptr;
  QLabel* folder_ = nullptr;
  QLabel* usage_label_ = nullptr;
  QPushButton* clear_ = nullptr;
  DiskCacheUsageView usage_;
};

}  // namespace quire::ui
