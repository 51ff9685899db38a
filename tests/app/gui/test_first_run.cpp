// The first run without a model, a model that cannot load, and the welcome
// view's way to the demo model.

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/welcome_view.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

class FirstRunTest : public QObject {
  Q_OBJECT

 private slots:
  void withoutAModelTheWelcomeViewOffersTheDemoWithItsPlan() {
    AppRun run{QString()};
    run.start();
    gui::MainWindow& window = run.app->window();
    QVERIFY(window.isShowingWelcome());
    QVERIFY(!run.app->engine().isLoading());
    ui::WelcomeView& welcome = *window.welcome();
    QVERIFY(welcome.isDemoAvailable());
    QCOMPARE(welcome.modelDirectory(), demo_model());

    // One click loads it, and the chat takes the place of the welcome.
    QSignalSpy loaded(run.app.get(), &gui::QuireApplication::modelLoaded);
    emit welcome.loadRequested();
    QVERIFY(loaded.wait(60'000));
    QVERIFY(!window.isShowingWelcome());
    QCOMPARE(run.app->settings().engine.model_directory, demo_model());
    QCOMPARE(run.app->settings().engine.recent_models.value(0), demo_model());
    // The demo model's own chat template (ChatML after <s>).
    const gui::ModelInfo info = loaded.first().first().value<gui::ModelInfo>();
    QCOMPARE(info.prompt_format, QStringLiteral("template"));
    QCOMPARE(info.prompt_format_title,
             QStringLiteral("the model's chat template (tokenizer_config.json)"));
    QVERIFY(info.format_notice.isEmpty());
  }

  void aBrokenModelFolderIsReportedAndTheWindowCarriesOn() {
    QTemporaryDir broken;
    // A config the loader reads, next to a safetensors file cut short.
    QVERIFY(QFile::copy(QDir(demo_model()).filePath(QStringLiteral("config.json")),
                        broken.filePath(QStringLiteral("config.json"))));
    QVERIFY(QFile::copy(QDir(demo_model()).filePath(QStringLiteral("tokenizer.model")),
                        broken.filePath(QStringLiteral("tokenizer.model"))));
    QFile source(QDir(demo_model()).filePath(QStringLiteral("model.safetensors")));
    QVERIFY(source.open(QIODevice::ReadOnly));
    QFile cut(broken.filePath(QStringLiteral("model.safetensors")));
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write(source.read(source.size() / 2));
    cut.close();

    AppRun run(broken.path());
    QSignalSpy failed(run.app.get(), &gui::QuireApplication::loadFailed);
    run.start();
    QVERIFY(failed.wait(60'000));
    const auto failure = failed.first().first().value<gui::EngineFailure>();
    QCOMPARE(failure.kind, gui::EngineFailure::Kind::CorruptFiles);
    const QString notice = run.app->window().noticeText();
    QVERIFY2(notice.contains(QStringLiteral("model.safetensors")), qPrintable(notice));
    QVERIFY(!run.app->model());
    QVERIFY(run.app->window().isShowingWelcome());

    // The demo model still loads afterwards.
    QSignalSpy loaded(run.app.get(), &gui::QuireApplication::modelLoaded);
    run.app->window().demoAction()->trigger();
    QVERIFY(loaded.wait(60'000));
    QVERIFY(run.app->window().noticeText().isEmpty());
  }

  void aMissingFolderSaysWhatToDo() {
    AppRun run(QStringLiteral("/nonexistent/model"));
    QSignalSpy failed(run.app.get(), &gui::QuireApplication::loadFailed);
    run.start();
    QVERIFY(failed.wait(60'000));
    QVERIFY2(run.app->window().noticeText().contains(QStringLiteral("/nonexistent/model")),
             qPrintable(run.app->window().noticeText()));
  }

  void aDamagedHistoryIsReportedAndLeftAlone() {
    AppRun run{QString()};
    const QString path = run.data.filePath(QStringLiteral("chats.sqlite"));
    const QByteArray garbage(4096, 'x');
    {
      QFile file(path);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write(garbage);
    }
    run.start();
    QVERIFY(!run.app->store().is_open());
    const QString notice = run.app->window().noticeText();
    QVERIFY2(notice.contains(QStringLiteral("could not be opened")), qPrintable(notice));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), garbage);
  }

  void loadingCanBeCancelled() {
    AppRun run(demo_model());
    QSignalSpy failed(run.app.get(), &gui::QuireApplication::loadFailed);
    run.start();
    QVERIFY(run.app->engine().isLoading());
    QVERIFY(run.app->window().isShowingLoading());
    run.app->engine().cancelLoad();
    QCOMPARE(failed.size(), 1);
    QCOMPARE(failed.first().first().value<gui::EngineFailure>().kind,
             gui::EngineFailure::Kind::Cancelled);
    QVERIFY(!run.app->window().isShowingLoading());
    // The worker's late answer for the cancelled load is dropped: nothing
    // stays loaded behind the window's back.
    QTest::qWait(500);
    QVERIFY(!run.app->model());
  }
};

QUIRE_TEST(FirstRunTest)
#include "test_first_run.moc"
