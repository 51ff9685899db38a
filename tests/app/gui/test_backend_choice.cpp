// Which backend the settings get on a machine where the CUDA backend cannot
// run (forced with a QUIRE_CUDA_LIBRARY that does not exist, so that the
// answers are the same on machines with a GPU): "auto" falls back to the CPU
// and the window says why in its status bar; "cuda" is refused with the
// loader's reason in the notice; "cpu" never asks for CUDA.

#include <QLabel>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "backend_choice.h"
#include "main_window.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

constexpr const char* kMissingLibrary = "/nonexistent/quire/libquire_cuda.so";

ui::EngineSettings with_backend(const QString& backend) {
  ui::EngineSettings settings;
  settings.backend = backend;
  return settings;
}

const gui::DeviceLists kLists{QStringLiteral("cpu:2x64MiB"), QStringLiteral("cuda")};

}  // namespace

class BackendChoiceTest : public QObject {
  Q_OBJECT

 private slots:
  void init() { qputenv("QUIRE_CUDA_LIBRARY", kMissingLibrary); }
  void cleanup() { qunsetenv("QUIRE_CUDA_LIBRARY"); }

  void autoFallsBackToTheCpuWithTheReason() {
    const gui::BackendSelection selection = gui::make_backend(with_backend("auto"), kLists);
    QVERIFY(selection.backend);
    QCOMPARE(selection.backend->name(), std::string("cpu"));
    QCOMPARE(selection.indices, (std::vector<int>{0, 1}));
    QVERIFY2(selection.fallback_reason.startsWith(
                 QStringLiteral("Running on the CPU: the CUDA backend cannot run (")),
             qPrintable(selection.fallback_reason));
    QVERIFY2(selection.fallback_reason.contains(QString::fromLatin1(kMissingLibrary)),
             qPrintable(selection.fallback_reason));

    // The devices offered are the CPU's, and the settings' choice applies to them.
    QCOMPARE(gui::device_labels(with_backend("auto"), kLists),
             (QStringList{QStringLiteral("cpu0 · 64 MiB"), QStringLiteral("cpu1 · 64 MiB")}));
    ui::EngineSettings second = with_backend("auto");
    second.devices = {1};
    const gui::BackendSelection one = gui::make_backend(second, kLists);
    QCOMPARE(one.indices, std::vector<int>{1});
    QCOMPARE(one.backend->devices().size(), std::size_t(1));
  }

  void cudaIsRefusedWithTheLoadersReason() {
    try {
      gui::make_backend(with_backend("cuda"), kLists);
      QFAIL("a CUDA backend was made");
    } catch (const gui::BackendUnavailable& refused) {
      const QString text = QString::fromStdString(refused.what());
      QVERIFY2(text.contains(QStringLiteral("the CUDA backend cannot run: ")) &&
                   text.contains(QString::fromLatin1(kMissingLibrary)) &&
                   text.contains(QStringLiteral("Choose Automatic or CPU")),
               qPrintable(text));
    }
    QVERIFY(gui::device_labels(with_backend("cuda"), kLists).isEmpty());
  }

  void cpuNeedsNoReason() {
    const gui::BackendSelection selection = gui::make_backend(with_backend("cpu"), kLists);
    QCOMPARE(selection.backend->name(), std::string("cpu"));
    QVERIFY(selection.fallback_reason.isEmpty());
  }

  void aMistakeInTheCudaListIsNamed() {
    const gui::DeviceLists bad{QStringLiteral("cpu"), QStringLiteral("cuda:zero")};
    for (const char* backend : {"auto", "cuda"}) {
      try {
        gui::make_backend(with_backend(backend), bad);
        QFAIL("a backend was made");
      } catch (const gui::BackendUnavailable& refused) {
        QVERIFY2(std::string(refused.what()).find("QUIRE_CUDA_DEVICES") != std::string::npos,
                 refused.what());
      }
    }
  }

  void theWindowSaysWhyTheCpuRuns() {
    AppRun run(random_model(), 24, QStringLiteral("cpu"), QStringLiteral("auto"));
    run.start();
    QVERIFY(run.waitForModel());
    QCOMPARE(run.app->model()->backend, QStringLiteral("cpu"));
    const QString note = run.app->window().backendNote();
    QVERIFY2(note.startsWith(QStringLiteral("Running on the CPU: ")) &&
                 note.contains(QString::fromLatin1(kMissingLibrary)),
             qPrintable(note));
    auto* label = run.app->window().findChild<QLabel*>(QStringLiteral("backendNote"));
    QVERIFY(label && !label->isHidden());
    // A fallback is information, not an error: no notice covers the chat.
    QVERIFY2(run.app->window().noticeText().isEmpty(), qPrintable(run.app->window().noticeText()));
  }

  void theWindowSaysWhyCudaCannotRun() {
    AppRun run(random_model(), 24, QStringLiteral("cpu"), QStringLiteral("cuda"));
    QSignalSpy failed(run.app.get(), &gui::QuireApplication::loadFailed);
    run.start();
    QVERIFY(failed.wait(60'000));
    QVERIFY(!run.app->model());
    const QString notice = run.app->window().noticeText();
    QVERIFY2(notice.contains(QStringLiteral("the CUDA backend cannot run")) &&
                 notice.contains(QString::fromLatin1(kMissingLibrary)),
             qPrintable(notice));
    QVERIFY(run.app->window().backendNote().isEmpty());
  }

  void aCpuRunHasNoNote() {
    AppRun run(random_model());
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(run.app->window().backendNote().isEmpty());
    auto* label = run.app->window().findChild<QLabel*>(QStringLiteral("backendNote"));
    QVERIFY(label && label->isHidden());
  }
};

QUIRE_TEST(BackendChoiceTest)
#include "test_backend_choice.moc"
