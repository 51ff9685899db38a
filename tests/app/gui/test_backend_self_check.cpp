// The CUDA backend's self-check in the desktop application, with a fake CUDA
// backend library (the CPU backend under the name "cuda"; its linear layers
// 10% wrong with QUIRE_FAKE_CUDA_SCALE=1.1): "auto" runs on the CPU and the
// status line says why and where the log is; "cuda" is refused with the same
// and the way to override; a faithful fake is used; the settings panel offers
// the CPU's devices once the failure is remembered. The cache folder
// (XDG_CACHE_HOME) is a temporary directory per test.

#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

#include "app_test_support.h"
#include "backend_choice.h"
#include "main_window.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

ui::EngineSettings with_backend(const QString& backend) {
  ui::EngineSettings settings;
  settings.backend = backend;
  return settings;
}

const gui::DeviceLists kLists{QStringLiteral("cpu:2x64MiB"), QStringLiteral("cuda")};

}  // namespace

class BackendSelfCheckTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> cache_;

  QString log_path() const { return cache_->filePath(QStringLiteral("Quire/cuda-self-check.log")); }

 private slots:
  void init() {
    cache_ = std::make_unique<QTemporaryDir>();
    qputenv("XDG_CACHE_HOME", cache_->path().toUtf8());
    qputenv("QUIRE_CUDA_LIBRARY", QUIRE_FAKE_CUDA_LIBRARY);
  }
  void cleanup() {
    for (const char* name : {"XDG_CACHE_HOME", "QUIRE_CUDA_LIBRARY", "QUIRE_FAKE_CUDA_SCALE",
                             "QUIRE_SKIP_CUDA_SELF_CHECK"}) {
      qunsetenv(name);
    }
  }

  void aFaithfulBackendIsUsed() {
    const gui::BackendSelection selection = gui::make_backend(with_backend("auto"), kLists);
    QCOMPARE(selection.backend->name(), std::string("cuda"));
    QVERIFY(selection.fallback_reason.isEmpty());
    QVERIFY(QFile::exists(cache_->filePath(QStringLiteral("Quire/cuda-self-check.json"))));
    QCOMPARE(gui::device_labels(with_backend("auto"), kLists).size(), 1);
  }

  void autoRunsOnTheCpuAndSaysWhy() {
    qputenv("QUIRE_FAKE_CUDA_SCALE", "1.1");
    const gui::BackendSelection selection = gui::make_backend(with_backend("auto"), kLists);
    QCOMPARE(selection.backend->name(), std::string("cpu"));
    QCOMPARE(selection.indices, (std::vector<int>{0, 1}));
    const QString reason = selection.fallback_reason;
    QVERIFY2(reason.startsWith(QStringLiteral(
                 "Running on the CPU: the CUDA backend failed its self-check against the CPU: "
                 "device 0 (Fake GPU 0, sm_86): logits differ from the CPU's by ")),
             qPrintable(reason));
    QVERIFY2(reason.endsWith(QStringLiteral("; details in ") + log_path() + u'.'),
             qPrintable(reason));
    QVERIFY(!reason.contains(u'\n'));
    QFile log(log_path());
    QVERIFY(log.open(QIODevice::ReadOnly));
    QVERIFY(log.readAll().contains("result: failed: device 0 (Fake GPU 0, sm_86)"));
    // Settings offer what loading will use: the CPU's devices.
    QCOMPARE(gui::device_labels(with_backend("auto"), kLists),
             (QStringList{QStringLiteral("cpu0 · 64 MiB"), QStringLiteral("cpu1 · 64 MiB")}));
  }

  void cudaIsRefusedWithTheWayToOverride() {
    qputenv("QUIRE_FAKE_CUDA_SCALE", "1.1");
    try {
      gui::make_backend(with_backend("cuda"), kLists);
      QFAIL("a CUDA backend was made");
    } catch (const gui::BackendUnavailable& refused) {
      const QString text = QString::fromStdString(refused.what());
      QVERIFY2(text.startsWith(
                   QStringLiteral("The CUDA backend failed its self-check against the CPU: ")),
               qPrintable(text));
      QVERIFY2(text.contains(QStringLiteral("; details in ") + log_path() + u'.'),
               qPrintable(text));
      QVERIFY2(text.endsWith(QStringLiteral("Choose Automatic or CPU as the backend in Settings, "
                                            "or set QUIRE_SKIP_CUDA_SELF_CHECK=1 to use it "
                                            "anyway.")),
               qPrintable(text));
    }
    qputenv("QUIRE_SKIP_CUDA_SELF_CHECK", "1");
    QCOMPARE(gui::make_backend(with_backend("cuda"), kLists).backend->name(), std::string("cuda"));
  }

  void theStatusLineSaysWhyTheCpuRuns() {
    qputenv("QUIRE_FAKE_CUDA_SCALE", "1.1");
    AppRun run(random_model(), 24, QStringLiteral("cpu"), QStringLiteral("auto"));
    run.start();
    QVERIFY(run.waitForModel());
    QCOMPARE(run.app->model()->backend, QStringLiteral("cpu"));
    const QString note = run.app->window().backendNote();
    QVERIFY2(note.startsWith(QStringLiteral("Running on the CPU: the CUDA backend failed its "
                                            "self-check against the CPU")) &&
                 note.contains(log_path()),
             qPrintable(note));
    auto* label = run.app->window().findChild<QLabel*>(QStringLiteral("backendNote"));
    QVERIFY(label && !label->isHidden());
  }
};

QUIRE_TEST(BackendSelfCheckTest)
#include "test_backend_self_check.moc"
