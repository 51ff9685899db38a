// Settings → Disk cache: on or off and the limit travel with the settings
// and apply live; the folder and each model's usage are shown as the
// application finds them; Clear is only asked for, never done here.

#include <QCheckBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/cache_format_choices.h"
#include "quire/ui/disk_cache_group.h"
#include "quire/ui/settings_panel.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::DiskCacheModelUsage;
using quire::ui::DiskCacheUsageView;
using quire::ui::EngineSettings;
using quire::ui::SettingsPanel;

class DiskCacheGroupTest : public QObject {
  Q_OBJECT

  QTemporaryDir model_;
  std::unique_ptr<SettingsPanel> panel_;
  EngineSettings sample_;

  template <typename T>
  T* field(const char* name) {
    return panel_->findChild<T*>(QString::fromLatin1(name));
  }

 private slots:
  void init() {
    panel_ = std::make_unique<SettingsPanel>(quire::app::cache_format_choices());
    panel_->setAvailableDevices(quire::ui::test::two_gpus());
    sample_ = quire::ui::test::sample_settings(model_.path());
    panel_->setSettings(sample_);
  }

  void cleanup() { panel_.reset(); }

  void fieldsShowTheSettingsAndChangesApplyLive() {
    auto* enabled = field<QCheckBox>("diskCacheEnabled");
    auto* limit = field<QSpinBox>("diskCacheMib");
    QVERIFY(enabled && limit);
    QVERIFY(enabled->isChecked());
    QCOMPARE(limit->value(), 8192);
    QCOMPARE(limit->minimum(), 256);

    QSignalSpy applied(panel_.get(), &SettingsPanel::applyRequested);
    limit->setValue(2048);
    QVERIFY(panel_->hasUnappliedChanges());
    panel_->apply();
    QCOMPARE(applied.size(), 1);
    QCOMPARE(applied.first().at(0).value<EngineSettings>().disk_cache_mib, 2048);
    // No reload: the tier takes the new limit while the model runs.
    QCOMPARE(applied.first().at(1).toBool(), false);

    enabled->setChecked(false);
    QVERIFY(!limit->isEnabled());
    panel_->apply();
    QCOMPARE(applied.size(), 2);
    QVERIFY(!applied.last().at(0).value<EngineSettings>().disk_cache);
    QCOMPARE(applied.last().at(1).toBool(), false);
  }

  void usageNamesTheLoadedModelAndCountsTheOthers() {
    auto* folder = field<QLabel>("diskCacheFolder");
    auto* usage = field<QLabel>("diskCacheUsage");
    auto* clear = field<QPushButton>("diskCacheClear");
    QVERIFY(folder && usage && clear);
    QCOMPARE(usage->text(), QStringLiteral("Empty"));
    QVERIFY(!clear->isEnabled());

    DiskCacheUsageView view;
    view.folder = QStringLiteral("/home/ada/.cache/quire/pages");
    view.models = {
        DiskCacheModelUsage{QStringLiteral("Qwen3 0.6B"), QStringLiteral("0123456789abcdef0123"),
                            96 * (qint64{1} << 20), 12},
        DiskCacheModelUsage{QString(), QStringLiteral("3f2a5c7e9b0d2f4a1111"), qint64{3} << 29, 1},
    };
    panel_->setDiskCacheUsage(view);
    QCOMPARE(folder->text(), view.folder);
    QCOMPARE(usage->text(), QStringLiteral("Qwen3 0.6B (loaded): 96.0 MiB in 12 pages\n"
                                           "Other model 3f2a5c7e: 1.5 GiB in 1 page"));
    QVERIFY(clear->isEnabled());

    view.models.clear();
    view.error = QStringLiteral("cannot list /home/ada/.cache/quire/pages: Permission denied");
    panel_->setDiskCacheUsage(view);
    QCOMPARE(usage->text(), view.error);
    QVERIFY(!clear->isEnabled());
  }

  void clearIsAskedForNotDone() {
    DiskCacheUsageView view;
    view.folder = QStringLiteral("/tmp/pages");
    view.models = {DiskCacheModelUsage{QString(), QStringLiteral("ab"), 4096, 1}};
    panel_->setDiskCacheUsage(view);
    QSignalSpy asked(panel_.get(), &SettingsPanel::clearDiskCacheRequested);
    QTest::mouseClick(field<QPushButton>("diskCacheClear"), Qt::LeftButton);
    QCOMPARE(asked.size(), 1);
    // Nothing of the settings changed.
    QVERIFY(!panel_->hasUnappliedChanges());
  }
};

QUIRE_TEST(DiskCacheGroupTest)
#include "test_disk_cache_group.moc"
