// Where the cache lives, end to end: settings stored with the cache offloaded
// to host memory, or held whole by one device, load the model and give the
// reply the cache on each layer's device gives.

#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "engine_host.h"
#include "quire/app/app_settings.h"
#include "quire/ui/memory_view_data.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// Two logical devices of 512 MiB: the random model's two layers go on the
// first, so a cache moved to the second is seen there alone.
const QString kTwoDevices = QStringLiteral("cpu:2x512MiB");

struct Outcome {
  QString reply;                 // empty when something failed (and said so)
  QList<qint64> device_cache;    // cache bytes on each device, from the memory view
  QList<qint64> device_scratch;  // the forward pass's scratch on each device, likewise
  QStringList names;             // of the memory view's rows
};

Outcome reply_with(const QString& residence, int cache_device) {
  Outcome outcome;
  AppRun run(random_model(), 30, kTwoDevices);
  // The application writes its settings when it closes: closed first, so
  // that what it writes is not what this test writes next.
  run.app.reset();
  app::AppSettings stored(run.data.filePath(QStringLiteral("quire.conf")));
  if (!stored.load().isEmpty()) return outcome;
  stored.engine.cache_residence = residence;
  stored.engine.cache_device = cache_device;
  if (!stored.save()) return outcome;
  run.restart(30);
  if (!run.waitForModel()) return outcome;
  const ui::EngineSettings& used = run.app->settings().engine;
  if (used.cache_residence != residence || used.cache_device != cache_device) {
    qWarning() << "the application read" << used.cache_residence << used.cache_device;
    return outcome;
  }
  const std::optional<store::GenerationStats> stats = run.send(QStringLiteral("Hello"));
  if (!stats || stats->stop_reason != QStringLiteral("max_tokens")) {
    qWarning() << "the reply ended" << (stats ? stats->stop_reason : QStringLiteral("late"));
    return outcome;
  }
  QSignalSpy snapshots(&run.app->engine(), &gui::EngineHost::snapshotReady);
  run.app->engine().requestSnapshot();
  if (!snapshots.wait(10'000)) return outcome;
  const auto snapshot = snapshots.last().first().value<ui::MemorySnapshotView>();
  for (const ui::DeviceMemoryView& device : snapshot.devices) {
    outcome.device_cache.append(device.cache);
    outcome.device_scratch.append(device.scratch);
    outcome.names.append(device.name);
  }
  const store::ChatId chat = *run.app->chats().currentChat();
  outcome.reply = run.app->store().messages(chat).last().text;
  return outcome;
}

}  // namespace

class CacheResidenceTest : public QObject {
  Q_OBJECT

  Outcome on_devices_;

 private slots:
  void initTestCase() {
    on_devices_ = reply_with(QStringLiteral("device"), -1);
    QVERIFY(!on_devices_.reply.isEmpty());
    QCOMPARE(on_devices_.device_cache.size(), 2);
    QVERIFY(on_devices_.device_cache.at(0) > 0);
    QCOMPARE(on_devices_.device_cache.at(1), 0);
    QVERIFY(on_devices_.device_scratch.at(0) > 0);
    QCOMPARE(on_devices_.device_scratch.at(1), 0);
  }

  void anOffloadedCacheGivesTheSameReply() {
    const Outcome offloaded = reply_with(QStringLiteral("offloaded"), -1);
    QCOMPARE(offloaded.reply, on_devices_.reply);
    // No page on either device: they are in host memory, which the memory
    // view shows as a row of its own after the devices.
    QCOMPARE(offloaded.device_cache, (QList<qint64>{0, 0, on_devices_.device_cache.at(0)}));
    QCOMPARE(offloaded.names.value(2), QStringLiteral("Host memory"));
  }

  void aCacheHeldByAnotherDeviceGivesTheSameReply() {
    const Outcome moved = reply_with(QStringLiteral("device"), 1);
    QCOMPARE(moved.reply, on_devices_.reply);
    // Every page went to the device the settings named.
    QCOMPARE(moved.device_cache, (QList<qint64>{0, on_devices_.device_cache.at(0)}));
    // The device that holds only the cache still runs attention over it, and
    // the memory view counts the scratch the plan gave it.
    QVERIFY(moved.device_scratch.at(0) > 0);
    QVERIFY(moved.device_scratch.at(1) > 0);
  }
};

QUIRE_TEST(CacheResidenceTest)
#include "test_cache_residence.moc"
