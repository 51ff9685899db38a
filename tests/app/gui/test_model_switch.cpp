// Switching models: a loaded model keeps serving until another one has
// loaded, what cannot be a model is never applied, failures say what the
// folder lacks, and the title and status line always name what is loaded.

#include <QDialog>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/settings_panel.h"
#include "quire/ui/welcome_view.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// Two budgeted logical devices of 512 MiB (256 of them kept free): the demo
// model fits with a small cache, and a cache of a million tokens (3 GiB)
// does not.
const QString kSmallDevices = QStringLiteral("cpu:2x512MiB");

const QString kDemoName = QStringLiteral("Demo model (5.8M parameters)");

QString label_text(gui::MainWindow& window, const char* name) {
  auto* label = window.findChild<QLabel*>(QString::fromLatin1(name));
  return label == nullptr ? QStringLiteral("<no %1>").arg(QString::fromLatin1(name))
                          : label->text();
}

bool label_shown(gui::MainWindow& window, const char* name) {
  auto* label = window.findChild<QLabel*>(QString::fromLatin1(name));
  return label != nullptr && !label->isHidden();
}

// Loads `directory` through the application's own load path and waits for its
// answer: the failure, or nullopt when the model loaded.
std::optional<gui::EngineFailure> load_folder(AppRun& run, const QString& directory) {
  QSignalSpy loaded(run.app.get(), &gui::QuireApplication::modelLoaded);
  QSignalSpy failed(run.app.get(), &gui::QuireApplication::loadFailed);
  ui::EngineSettings settings = run.app->settings().engine;
  settings.model_directory = directory;
  run.app->loadModel(settings);
  for (int waited = 0; waited < 60'000 && loaded.isEmpty() && failed.isEmpty(); waited += 20)
    QTest::qWait(20);
  if (failed.isEmpty()) return std::nullopt;
  return failed.first().first().value<gui::EngineFailure>();
}

}  // namespace

class ModelSwitchTest : public QObject {
  Q_OBJECT

 private slots:
  void aFolderThatIsNotAModelIsNeverApplied() {
    QTemporaryDir not_a_model;
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    window.settingsDialog()->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.settingsDialog()));
    ui::SettingsPanel& panel = *window.settingsPanel();
    auto* folder = panel.findChild<QLineEdit*>(QStringLiteral("modelDirectory"));
    auto* apply = panel.findChild<QPushButton*>(QStringLiteral("applyButton"));
    QVERIFY(folder && apply);

    QSignalSpy started(&run.app->engine(), &gui::EngineHost::loadStarted);
    folder->setFocus();
    folder->selectAll();
    QTest::keyClicks(folder, not_a_model.path());
    QTest::keyClick(folder, Qt::Key_Return);
    QTRY_VERIFY(!apply->isEnabled());
    QTest::keyClick(folder, Qt::Key_Return);
    apply->click();
    QCOMPARE(started.count(), 0);
    QVERIFY(!run.app->engine().isLoading());
    QVERIFY(run.app->model());
    QCOMPARE(run.app->model()->name, kDemoName);
    QCOMPARE(run.app->settings().engine.model_directory, demo_model());
  }

  void aModelThatFailsValidationLeavesTheLoadedOneServing() {
    QTemporaryDir not_a_model;
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(run.send(QStringLiteral("Hello")));
    gui::MainWindow& window = run.app->window();
    const QString speed = label_text(window, "speedLabel");
    QVERIFY(label_shown(window, "speedLabel"));
    QSignalSpy unloaded(&run.app->engine(), &gui::EngineHost::modelUnloaded);

    const std::optional<gui::EngineFailure> failure = load_folder(run, not_a_model.path());
    QVERIFY(failure);
    QCOMPARE(failure->text(),
             QStringLiteral("%1 is not a model folder: it has no config.json. Choose the folder "
                            "that holds the model's config.json, its .safetensors weights and "
                            "its tokenizer (tokenizer.json or tokenizer.model).")
                 .arg(not_a_model.path()));
    QCOMPARE(window.noticeText(), failure->text());
    // Nothing was unloaded: the same model answers, and says so everywhere.
    QCOMPARE(unloaded.count(), 0);
    QVERIFY(run.app->model());
    QCOMPARE(run.app->model()->name, kDemoName);
    QCOMPARE(window.windowTitle(), kDemoName + QStringLiteral(" — Quire"));
    QCOMPARE(label_text(window, "modelLabel"), kDemoName);
    QCOMPARE(label_text(window, "speedLabel"), speed);
    QVERIFY(label_text(window, "engineState").startsWith(QStringLiteral("Ready · ") + kDemoName));
    QVERIFY(run.send(QStringLiteral("Still there?")));
  }

  void aLoadThatFailsAfterTheSwitchLoadsTheOldModelAgain() {
    AppRun run(demo_model(), 24, kSmallDevices);
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(run.send(QStringLiteral("Hello")));
    gui::MainWindow& window = run.app->window();
    QVERIFY(label_shown(window, "speedLabel"));

    // The folder is fine; the cache it asks for fits nowhere, which the plan
    // only finds once the old model's memory is counted free.
    ui::EngineSettings huge = run.app->settings().engine;
    huge.cache_tokens = 1 << 20;
    QSignalSpy loaded(run.app.get(), &gui::QuireApplication::modelLoaded);
    QSignalSpy failed(run.app.get(), &gui::QuireApplication::loadFailed);
    run.app->loadModel(huge);
    QVERIFY(failed.wait(60'000));
    const auto failure = failed.first().first().value<gui::EngineFailure>();
    QCOMPARE(failure.kind, gui::EngineFailure::Kind::DoesNotFit);
    QVERIFY2(failure.text().endsWith(
                 QStringLiteral("Quire loaded %1 again with its earlier settings.").arg(kDemoName)),
             qPrintable(failure.text()));
    QCOMPARE(loaded.count(), 0);
    QVERIFY(run.app->model());
    QCOMPARE(run.app->model()->name, kDemoName);
    QCOMPARE(run.app->model()->cache_tokens, 4096);
    QCOMPARE(window.windowTitle(), kDemoName + QStringLiteral(" — Quire"));
    QCOMPARE(label_text(window, "modelLabel"), kDemoName);
    QVERIFY(label_text(window, "engineState").startsWith(QStringLiteral("Ready · ") + kDemoName));
    // Loaded anew: the last reply's speed belonged to the model before.
    QVERIFY(!label_shown(window, "speedLabel"));
    // The settings are the ones the serving model runs with.
    QCOMPARE(run.app->settings().engine.cache_tokens, 4096);
    QCOMPARE(window.settingsPanel()->appliedSettings().cache_tokens, 4096);
    QVERIFY(run.send(QStringLiteral("Still there?")));
  }

  void withNothingLoadedTheTitleAndStatusSaySo() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(run.send(QStringLiteral("Hello")));
    gui::MainWindow& window = run.app->window();
    QCOMPARE(window.windowTitle(), kDemoName + QStringLiteral(" — Quire"));

    QSignalSpy unloaded(&run.app->engine(), &gui::EngineHost::modelUnloaded);
    window.unloadAction()->trigger();
    QVERIFY(unloaded.wait(10'000));
    QCOMPARE(window.windowTitle(), QStringLiteral("No model loaded — Quire"));
    QCOMPARE(label_text(window, "modelLabel"), QStringLiteral("No model loaded"));
    QCOMPARE(label_text(window, "engineState"), QStringLiteral("No model loaded"));
    QVERIFY(!label_shown(window, "speedLabel"));
    QVERIFY(!label_shown(window, "firstTokenLabel"));
  }

  void aFirstLoadThatFailsLeavesNoModelNamed() {
    QTemporaryDir not_a_model;
    AppRun run(not_a_model.path());
    QSignalSpy failed(run.app.get(), &gui::QuireApplication::loadFailed);
    run.start();
    QVERIFY(failed.wait(60'000));
    gui::MainWindow& window = run.app->window();
    QVERIFY(!run.app->model());
    QCOMPARE(window.windowTitle(), QStringLiteral("No model loaded — Quire"));
    QCOMPARE(label_text(window, "modelLabel"), QStringLiteral("No model loaded"));
    QCOMPARE(label_text(window, "engineState"), QStringLiteral("No model loaded"));
  }

  void aFolderSaysWhatItLacks_data() {
    QTest::addColumn<QStringList>("files");
    QTest::addColumn<QString>("text");
    QTest::newRow("no config.json")
        << QStringList{QStringLiteral("tokenizer.model"), QStringLiteral("model.safetensors")}
        << QStringLiteral(
               "%1 is not a model folder: it has no config.json. Choose the folder that "
               "holds the model's config.json, its .safetensors weights and its "
               "tokenizer (tokenizer.json or tokenizer.model).");
    QTest::newRow("no weights") << QStringList{QStringLiteral("config.json"),
                                               QStringLiteral("tokenizer.model")}
                                << QStringLiteral(
                                       "%1 holds no model weights: it has a config.json but no "
                                       ".safetensors files. Choose the folder with the model's "
                                       "weights, or finish downloading them.");
    QTest::newRow("no tokenizer")
        << QStringList{QStringLiteral("config.json"), QStringLiteral("model.safetensors")}
        << QStringLiteral(
               "%1 has no tokenizer: it has no tokenizer.json or tokenizer.model. Copy "
               "the model's tokenizer files into the folder, or download the model "
               "again.");
  }

  void aFolderSaysWhatItLacks() {
    QFETCH(QStringList, files);
    QFETCH(QString, text);
    QTemporaryDir folder;
    for (const QString& file : files)
      QVERIFY(QFile::copy(QDir(demo_model()).filePath(file), folder.filePath(file)));
    AppRun run{QString()};
    run.start();
    const std::optional<gui::EngineFailure> failure = load_folder(run, folder.path());
    QVERIFY(failure);
    QCOMPARE(failure->text(), text.arg(folder.path()));
    QCOMPARE(run.app->window().noticeText(), text.arg(folder.path()));
  }

  void sentencesOfAFailureAreSeparated() {
    const gui::EngineFailure no_detail{gui::EngineFailure::Kind::NoModel,
                                       QStringLiteral("No model is chosen"), QString(),
                                       QStringLiteral("Choose a model folder in Settings.")};
    QCOMPARE(no_detail.text(),
             QStringLiteral("No model is chosen. Choose a model folder in Settings."));
    const gui::EngineFailure detail{
        gui::EngineFailure::Kind::CorruptFiles, QStringLiteral("The model cannot be used"),
        QStringLiteral("model.safetensors is cut short (read 10 bytes)"),
        QStringLiteral("Download it again.")};
    QCOMPARE(detail.text(), QStringLiteral("The model cannot be used: model.safetensors is cut "
                                           "short (read 10 bytes). Download it again."));
    const gui::EngineFailure ended{gui::EngineFailure::Kind::Other, QStringLiteral("Stopped"),
                                   QStringLiteral("it ended."), QStringLiteral("Try again.")};
    QCOMPARE(ended.text(), QStringLiteral("Stopped: it ended. Try again."));
  }

  void useTheDemoModelLoadsIt() {
    AppRun run{QString()};
    run.start();
    gui::MainWindow& window = run.app->window();
    QVERIFY(window.isShowingWelcome());
    auto* demo = window.welcome()->findChild<QPushButton*>(QStringLiteral("demoModelButton"));
    QVERIFY(demo);
    QSignalSpy loaded(run.app.get(), &gui::QuireApplication::modelLoaded);
    demo->click();
    QVERIFY(run.app->engine().isLoading());
    QVERIFY(loaded.wait(60'000));
    QCOMPARE(run.app->model()->name, kDemoName);
    QVERIFY(!window.isShowingWelcome());
    QCOMPARE(run.app->settings().engine.model_directory, demo_model());
  }
};

QUIRE_TEST(ModelSwitchTest)
#include "test_model_switch.moc"
