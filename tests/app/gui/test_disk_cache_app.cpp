// The disk tier in the application: a long chat quit and started again
// resumes from the pages the quit wrote to disk instead of computing them;
// Settings shows the folder's usage and clears it; a folder that cannot be
// used leaves one notice and replies that work.

#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <cerrno>
#include <filesystem>

#include "app_test_support.h"
#include "disk_cache_link.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/engine/disk_cache/disk_cache_usage.h"
#include "quire/engine/disk_cache/file_ops.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/settings_panel.h"
#include "quire/ui/status_line.h"
#include "reply_stats.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// Pages of every model under `root`.
std::uint64_t pages_on_disk(const QString& root) {
  std::uint64_t pages = 0;
  for (const engine::disk_cache::ModelUsage& model :
       engine::disk_cache::usage_by_model(std::filesystem::path(root.toStdString())))
    pages += model.pages;
  return pages;
}

// Every page write fails as on a full disk.
class FullDisk : public engine::disk_cache::PageFileOps {
 public:
  int write_all(int, std::span<const std::byte>) override { return ENOSPC; }
};

// A message of about a thousand tokens of the random model's small
// vocabulary: several 256-token pages, well within its 2,048 positions.
// Messages of different `first` items share no page.
QString long_message(int first = 0) {
  QStringList words;
  for (int i = first; i < first + 100; ++i)
    words << QStringLiteral("item%1 garden").arg(i);
  return words.join(u' ');
}

}  // namespace

class DiskCacheAppTest : public QObject {
  Q_OBJECT

 private slots:
  void aLongChatResumesFromDiskAfterARestart() {
    AppRun run(random_model());
    run.start();
    QVERIFY(run.waitForModel());
    // On by default, the model's folder open under the test's root.
    QVERIFY(run.app->settings().engine.disk_cache);
    QCOMPARE(run.app->engine().diskCache().root, run.disk_cache_dir);
    QVERIFY(!run.app->model()->disk_identity.isEmpty());
    QCOMPARE(run.app->window().noticeText(), QString());

    const std::optional<store::GenerationStats> first = run.send(long_message());
    QVERIFY(first);
    QVERIFY2(first->prompt_tokens >= 3 * 256 && first->stop_reason != QLatin1String("error"),
             qPrintable(QStringLiteral("%1 prompt tokens, %2")
                            .arg(first->prompt_tokens)
                            .arg(run.app->window().noticeText())));
    QCOMPARE(first->disk_tokens, 0);
    const std::optional<store::ChatId> chat = run.app->chats().currentChat();
    QVERIFY(chat);

    // Quitting writes the chat's pages before the engine thread ends.
    run.app.reset();
    const std::uint64_t archived = pages_on_disk(run.disk_cache_dir);
    QVERIFY2(archived >= 3, qPrintable(QString::number(archived)));

    // Started again on the same folders: the chat is open, and its next
    // turn reads the earlier pages back instead of computing them.
    run.restart();
    gui::MainWindow& window = run.app->window();
    // Sized and shown as the README's screenshot wants it.
    window.resize(1440, 900);
    window.memoryDock()->show();
    run.app->show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(run.waitForModel());
    QVERIFY(run.app->chats().currentChat() == chat);
    const std::optional<store::GenerationStats> second = run.send(QStringLiteral("And then?"));
    QVERIFY(second);
    QVERIFY2(second->disk_tokens >= 3 * 256, qPrintable(QString::number(second->disk_tokens)));
    QVERIFY(second->disk_tokens % 256 == 0);
    // A fresh engine had nothing else cached.
    QCOMPARE(second->cached_tokens, second->disk_tokens);
    QCOMPARE(second->computed_tokens, second->prompt_tokens - second->cached_tokens);
    // The reply's line says so, and the store keeps it.
    QVERIFY(gui::stats_text(*second).contains(
        QStringLiteral("%1 of %2 prompt tokens from the cache, %3 from disk")
            .arg(second->cached_tokens)
            .arg(second->prompt_tokens)
            .arg(second->disk_tokens)));
    const QList<store::Message> messages = run.app->store().messages(*chat);
    QCOMPARE(messages.size(), 4);
    QVERIFY(messages[3].stats);
    QCOMPARE(messages[3].stats->disk_tokens, second->disk_tokens);

    // The memory panel counts the restores, draws the pages as restored and
    // shows the tier's files.
    ui::MemoryPanel& panel = *run.app->window().memoryPanel();
    QTRY_VERIFY(panel.snapshot().cache.disk.restores * 256 >= second->disk_tokens);
    const ui::CacheSummaryView& cache = panel.snapshot().cache;
    QVERIFY(cache.disk.enabled);
    QVERIFY(cache.disk.pages >= 3);
    QCOMPARE(cache.disk.limit_bytes, qint64{4096} << 20);
    QVERIFY(cache.disk_pages >= 3);
    int drawn_from_disk = 0;
    for (const ui::PageCellView& page : panel.snapshot().pages)
      drawn_from_disk += page.from_disk ? 1 : 0;
    QCOMPARE(drawn_from_disk, cache.disk_pages);
    // The README's picture: the page map's restored pages and the reply's line.
    QTest::qWait(300);
    keep_screenshot(window.grab().toImage(), "quire-disk-cache.png");

    // Settings names the loaded model's pages.
    ui::SettingsPanel& settings = *run.app->window().settingsPanel();
    auto* usage = settings.findChild<QLabel*>(QStringLiteral("diskCacheUsage"));
    QVERIFY(usage);
    QTRY_VERIFY(usage->text().startsWith(run.app->model()->name + QStringLiteral(" (loaded): ")));
    QCOMPARE(settings.findChild<QLabel*>(QStringLiteral("diskCacheFolder"))->text(),
             run.disk_cache_dir);

    // Clear asks first: declined, nothing goes; accepted, every page goes.
    auto* clear = settings.findChild<QPushButton*>(QStringLiteral("diskCacheClear"));
    QVERIFY(clear && clear->isEnabled());
    QStringList asked;
    bool answer = false;
    run.confirm = [&](const QString&, const QString& question) {
      asked << question;
      return answer;
    };
    QTest::mouseClick(clear, Qt::LeftButton);
    QCOMPARE(asked.size(), 1);
    QVERIFY(asked.first().contains(run.disk_cache_dir));
    QTest::qWait(100);
    QVERIFY(pages_on_disk(run.disk_cache_dir) > 0);
    answer = true;
    QSignalSpy cleared(&run.app->engine(), &gui::EngineHost::diskCacheCleared);
    QTest::mouseClick(clear, Qt::LeftButton);
    QVERIFY(cleared.wait(30'000));
    QCOMPARE(cleared.first().first().toString(), QString());
    QCOMPARE(pages_on_disk(run.disk_cache_dir), std::uint64_t{0});
    QTRY_COMPARE(usage->text(), QStringLiteral("Empty"));
    QVERIFY(!clear->isEnabled());
  }

  // Another model loaded in place of this one: its chats' pages are written
  // before it goes, and the other model's Settings count them as another's.
  void aModelSwitchWritesTheChatsPages() {
    AppRun run(random_model());
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(run.send(long_message()));
    const QString first_identity = run.app->model()->disk_identity;
    QCOMPARE(pages_on_disk(run.disk_cache_dir), std::uint64_t{0});

    QSignalSpy loaded(run.app.get(), &gui::QuireApplication::modelLoaded);
    ui::EngineSettings demo = run.app->settings().engine;
    demo.model_directory = demo_model();
    run.app->loadModel(demo);
    QVERIFY(loaded.wait(120'000));
    QVERIFY(pages_on_disk(run.disk_cache_dir) >= 3);
    QVERIFY(run.app->model()->disk_identity != first_identity);
    auto* usage =
        run.app->window().settingsPanel()->findChild<QLabel*>(QStringLiteral("diskCacheUsage"));
    QTRY_VERIFY2(
        usage->text().startsWith(QStringLiteral("Other model %1: ").arg(first_identity.left(8))),
        qPrintable(usage->text()));
  }

  // Without a folder of its own the application uses the user's cache
  // folder; nothing is made there before a model loads.
  void theDefaultFolderIsTheUsersCacheFolder() {
    AppRun run{QString()};
    run.disk_cache_dir.clear();
    run.restart();
    QCOMPARE(run.app->engine().diskCache().root,
             QDir(QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation))
                 .filePath(QStringLiteral("quire/pages")));
    QVERIFY(run.app->engine().diskCache().enabled);
    QCOMPARE(run.app->engine().diskCache().limit_bytes, qint64{4} << 30);
    QCOMPARE(run.app->window()
                 .settingsPanel()
                 ->findChild<QLabel*>(QStringLiteral("diskCacheFolder"))
                 ->text(),
             run.app->engine().diskCache().root);
  }

  void aLimitChangedInSettingsAppliesLive() {
    AppRun run(random_model());
    run.start();
    QVERIFY(run.waitForModel());
    // Another model's pages: 300 MiB (a sparse file) of the folder.
    const QString other =
        QDir(run.disk_cache_dir).filePath(QStringLiteral("ffffffffffffffffffffffffffffffff"));
    QVERIFY(QDir().mkpath(other + QStringLiteral("/fp16-256-0000000000000000")));
    QFile page(other + QStringLiteral("/fp16-256-0000000000000000/") + QString(32, u'a') +
               QStringLiteral(".page"));
    QVERIFY(page.open(QIODevice::WriteOnly));
    QVERIFY(page.resize(qint64{300} << 20));
    page.close();

    ui::SettingsPanel& settings = *run.app->window().settingsPanel();
    QSignalSpy loads(&run.app->engine(), &gui::EngineHost::loadStarted);
    settings.findChild<QSpinBox*>(QStringLiteral("diskCacheMib"))->setValue(512);
    settings.apply();
    QTRY_COMPARE(run.app->window().memoryPanel()->snapshot().cache.disk.limit_bytes,
                 qint64{512} << 20);
    // The limit is the whole folder's: other models' pages give way first,
    // down to half of it.
    QVERIFY(!QFileInfo::exists(other));
    // Turned off: the model runs on without it, no reload.
    settings.findChild<QCheckBox*>(QStringLiteral("diskCacheEnabled"))->setChecked(false);
    settings.apply();
    QTRY_VERIFY(run.app->model()->disk_identity.isEmpty());
    QTRY_VERIFY(!run.app->window().memoryPanel()->snapshot().cache.disk.enabled);
    QCOMPARE(loads.size(), 0);
    QVERIFY(run.send(QStringLiteral("Still here?")));
    // Stored with the other settings.
    run.restart();
    QVERIFY(!run.app->settings().engine.disk_cache);
    QCOMPARE(run.app->settings().engine.disk_cache_mib, 512);
  }

  // Pages evicted from a full cache go to disk; a full disk stops the tier's
  // writing with one notice, and replies go on.
  void aFullDiskIsToldOnceAndRepliesGoOn() {
    AppRun run(random_model());
    run.disk_file_ops = std::make_shared<FullDisk>();
    run.app.reset();
    run.restart();
    QVERIFY(run.waitForModel());
    QSignalSpy notices(&run.app->engine(), &gui::EngineHost::notice);
    // Five chats of four pages each do not fit the 16-page cache: the
    // oldest pages are evicted, and written to disk.
    for (int chat = 0; chat < 5; ++chat) {
      run.app->chats().openChat(std::nullopt);
      const std::optional<store::GenerationStats> reply = run.send(long_message(1000 * chat));
      QVERIFY(reply);
      QVERIFY(reply->generated_tokens > 0);
      QVERIFY(reply->stop_reason != QLatin1String("error"));
    }
    QTRY_COMPARE(notices.size(), 1);
    const QString notice = notices.first().first().toString();
    QVERIFY2(notice.startsWith(QStringLiteral("The disk cache stopped: the disk is full; the "
                                              "cache's disk tier stopped writing. ")),
             qPrintable(notice));
    QCOMPARE(run.app->window().noticeText(), notice);
    QVERIFY(run.app->window().memoryPanel()->snapshot().cache.disk.saves > 0);
    QCOMPARE(pages_on_disk(run.disk_cache_dir), std::uint64_t{0});
    // Said once: more evictions say nothing more.
    run.app->chats().openChat(std::nullopt);
    QVERIFY(run.send(long_message(9000)));
    QTest::qWait(200);
    QCOMPARE(notices.size(), 1);
  }

  void aFolderThatCannotBeMadeGivesANoticeAndRepliesWork() {
    AppRun run(random_model());
    // A file where the folder's parent should be: nothing can be made there.
    QFile blocker(run.data.filePath(QStringLiteral("not-a-folder")));
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    run.disk_cache_dir = run.data.filePath(QStringLiteral("not-a-folder/pages"));
    run.app.reset();
    run.restart();
    QVERIFY(run.waitForModel());
    QVERIFY(run.app->model()->disk_identity.isEmpty());
    const QString notice = run.app->window().noticeText();
    QVERIFY2(notice.startsWith(QStringLiteral("The disk cache could not be opened: ")),
             qPrintable(notice));
    QVERIFY2(notice.contains(QStringLiteral("not-a-folder")), qPrintable(notice));
    QVERIFY(notice.contains(QStringLiteral("Settings → Disk cache")));

    const std::optional<store::GenerationStats> reply = run.send(long_message());
    QVERIFY(reply);
    QVERIFY(reply->generated_tokens > 0);
    QVERIFY(reply->stop_reason != QLatin1String("error"));
    QCOMPARE(reply->disk_tokens, 0);
    QVERIFY(!run.app->window().memoryPanel()->snapshot().cache.disk.enabled);
  }
};

QUIRE_TEST(DiskCacheAppTest)
#include "test_disk_cache_app.moc"
