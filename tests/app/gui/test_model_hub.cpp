// Get models, end to end on a fake Hub: a new user searches, sees each
// quantization's size and whether it fits (the planner's verdict from the
// headers alone, equal to its verdict on the downloaded folder), downloads
// one through a dropped connection and a restart of the program, opens it
// and chats; then removes it, and the cache keeps nothing of it.

#include <QAction>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QTest>
#include <QTreeWidget>

#include "app_test_support.h"
#include "engine_host.h"
#include "fake_hub.h"
#include "main_window.h"
#include "model_hub_controller.h"
#include "plan_pricer.h"
#include "quire/hub/download_queue.h"
#include "quire/ui/model_hub_window.h"
#include "test_main.h"

using quire::test::AppRun;
using quire::test::FakeHub;
using quire::test::FakeRepo;

namespace {

QString commit_of(const char* pair) {
  return QString::fromLatin1(pair).repeated(20);
}

// The demo model's folder as a branch of files.
QList<quire::test::FakeFile> files_of(const QString& folder) {
  QList<quire::test::FakeFile> files;
  const QDir model(folder);
  for (const QString& name : model.entryList(QDir::Files)) {
    QFile file(model.filePath(name));
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file.fileName()));
    files.append({name, file.readAll(), !name.endsWith(QLatin1String(".json"))});
  }
  return files;
}

// turboderp's shape: a README on main, a branch per quantization.
FakeRepo demo_repo() {
  FakeRepo repo;
  repo.id = QStringLiteral("demo/Tiny-exl2");
  repo.tags = {QStringLiteral("exl2"), QStringLiteral("safetensors")};
  repo.downloads = 900;
  repo.branches = {{QStringLiteral("main"),
                    commit_of("a1"),
                    {{QStringLiteral("README.md"), "# Tiny, quantized", false}}},
                   {QStringLiteral("4.0bpw"), commit_of("b4"), files_of(quire::test::demo_model())},
                   {QStringLiteral("fp16"), commit_of("f6"),
                    files_of(quire::test::demo_model() + QStringLiteral("/../fp16"))}};
  return repo;
}

FakeRepo gguf_repo() {
  FakeRepo repo;
  repo.id = QStringLiteral("demo/Tiny-GGUF");
  repo.tags = {QStringLiteral("gguf")};
  repo.downloads = 100;
  repo.branches = {{QStringLiteral("main"),
                    commit_of("c1"),
                    {{QStringLiteral("tiny-Q4_K_M.gguf"), "GGUF....", true}}}};
  return repo;
}

template <typename T>
T* child(QWidget* window, const char* name) {
  T* found = window->findChild<T*>(QString::fromLatin1(name));
  if (found == nullptr) qFatal("no child %s", name);
  return found;
}

const quire::ui::QuantizationRow* row_of(const quire::ui::ModelHubWindow& window,
                                         const QString& key) {
  for (const quire::ui::QuantizationRow& row : window.quantizations())
    if (row.key == key) return &row;
  return nullptr;
}

QString main_notice(AppRun& run) {
  return run.app->window().noticeText();
}

// With QUIRE_SCREENSHOT_DIR set (scripts/screenshots.sh), the window as the
// README shows it.
void keep_screenshot(quire::ui::ModelHubWindow& window) {
  const QString dir = qEnvironmentVariable("QUIRE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  window.resize(1280, 760);
  QTest::qWait(300);
  QDir().mkpath(dir);
  QVERIFY(window.grab().toImage().save(QDir(dir).filePath(QStringLiteral("quire-get-models.png"))));
}

}  // namespace

class ModelHubAppTest : public QObject {
  Q_OBJECT

 private slots:
  void aNewUserSearchesDownloadsThroughFaultsAndChats() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(demo_repo());
    hub.addRepo(gguf_repo());
    QTemporaryDir cache;
    AppRun run{QString()};
    bool confirm_answer = true;
    run.adjust_hub = [&](quire::gui::ModelHubOptions& options) {
      options.hub.endpoint = hub.endpoint().toStdString();
      options.hub.cache_dir = cache.path().toStdString();
      options.hub.token.clear();
      options.models_folder = cache.filePath(QStringLiteral("own-models"));
      options.retry.first_delay_ms = 50;
      options.snapshot.transfer.stall_timeout_ms = 60'000;
      options.confirm = [&](const QString&) { return confirm_answer; };
    };
    run.start();
    quire::gui::MainWindow& main = run.app->window();
    quire::ui::ModelHubWindow& window = *main.modelHubWindow();
    main.getModelsAction()->trigger();
    QVERIFY(window.isVisible());

    // Search: both repositories, the most downloaded first.
    child<QLineEdit>(&window, "hubSearchText")->setText(QStringLiteral("Tiny"));
    child<QPushButton>(&window, "hubSearchButton")->click();
    QTRY_VERIFY2_WITH_TIMEOUT(window.results().size() == 2,
                              qPrintable(child<QLabel>(&window, "hubSearchStatus")->text()),
                              10'000);
    QCOMPARE(window.results()[0].repo, QStringLiteral("demo/Tiny-exl2"));
    QCOMPARE(window.results()[0].formats, QStringList{QStringLiteral("EXL2")});
    QCOMPARE(window.results()[1].formats, QStringList{QStringLiteral("GGUF")});

    // A GGUF repository is named as one Quire does not run.
    auto* results = child<QListWidget>(&window, "hubResults");
    results->setCurrentRow(1);
    auto* status = child<QLabel>(&window, "hubRepoStatus");
    QTRY_VERIFY_WITH_TIMEOUT(status->text().contains(QStringLiteral("GGUF")), 10'000);
    QVERIFY(window.quantizations().isEmpty());

    // The quantized repository: a row per branch, each priced from its headers.
    results->setCurrentRow(0);
    QTRY_COMPARE_WITH_TIMEOUT(window.quantizations().size(), 2, 10'000);
    QCOMPARE(window.quantizations()[0].label, QStringLiteral("4.0bpw"));
    QCOMPARE(window.quantizations()[1].label, QStringLiteral("fp16"));
    QTRY_VERIFY_WITH_TIMEOUT(
        std::all_of(window.quantizations().begin(), window.quantizations().end(),
                    [](const quire::ui::QuantizationRow& row) {
                      return row.verdict != quire::ui::FitVerdict::Pending;
                    }),
        20'000);
    const quire::ui::QuantizationRow exl2 = *row_of(window, QStringLiteral("4.0bpw"));
    QCOMPARE(exl2.bytes, qint64(4618208 + 613 + 126 + 147 + 60961 + 1462));
    QVERIFY2(exl2.verdict == quire::ui::FitVerdict::Fits, qPrintable(exl2.detail));
    QVERIFY2(exl2.weights.startsWith(QStringLiteral("EXL2")), qPrintable(exl2.weights));
    // The verdict from the headers is the planner's on the model itself.
    quire::gui::PlanPricer pricer{quire::gui::DeviceLists{}};
    quire::ui::EngineSettings settings = run.app->settings().engine;
    settings.model_directory = quire::test::demo_model();
    const quire::ui::PlanView real = pricer.price(settings);
    QCOMPARE(exl2.largest_context_tokens, real.largest_context_tokens);
    QCOMPARE(exl2.context_is_model_limit, real.largest_context_is_model_limit);
    QCOMPARE(exl2.weights, real.weights);

    // The download: its weights fall silent at 1 MB, and the program quits.
    hub.faults().stalls = 1;
    hub.faults().stall_after = 1'000'000;
    window.selectQuantization(QStringLiteral("4.0bpw"));
    child<QPushButton>(&window, "hubDownloadButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(window.downloads().size(), 1, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(window.downloads()[0].bytes_done >= 1'000'000, 20'000);
    QCOMPARE(window.downloads()[0].state, quire::ui::DownloadRow::State::Running);
    keep_screenshot(window);
    run.restart();

    // Back, paused where it stopped; resumed through a dropped connection.
    quire::ui::ModelHubWindow& again = *run.app->window().modelHubWindow();
    QCOMPARE(again.downloads().size(), 1);
    QCOMPARE(again.downloads()[0].state, quire::ui::DownloadRow::State::Paused);
    QCOMPARE(again.downloads()[0].title, QStringLiteral("demo/Tiny-exl2 4.0bpw"));
    QVERIFY(again.downloads()[0].bytes_done >= 1'000'000);
    hub.faults().drops = 1;
    hub.faults().drop_after = 500'000;
    const qsizetype requests_before_index = hub.requests().size();
    child<QPushButton>(&again, "hubResumeButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(again.downloads()[0].state, quire::ui::DownloadRow::State::Done,
                              30'000);
    // The weights went on from where the first run left them, and from where
    // the dropped connection left them: never from the start again.
    QFile original(QDir(quire::test::demo_model()).filePath(QStringLiteral("model.safetensors")));
    QVERIFY(original.open(QIODevice::ReadOnly));
    const QByteArray original_bytes = original.readAll();
    const QByteArray weights_blob =
        QCryptographicHash::hash(original_bytes, QCryptographicHash::Sha256).toHex();
    QByteArrayList weight_ranges;
    for (qsizetype i = 0; i < hub.requests().size(); ++i) {
      const quire::test::SeenRequest& seen = hub.requests()[i];
      if (i >= requests_before_index && seen.file_host && seen.target.contains(weights_blob))
        weight_ranges << seen.headers.value("range");
    }
    QCOMPARE(weight_ranges, (QByteArrayList{"bytes=1000000-", "bytes=1500000-"}));
    const QString folder =
        cache.filePath(QStringLiteral("models--demo--Tiny-exl2/snapshots/") + commit_of("b4"));
    QFile weights(QDir(folder).filePath(QStringLiteral("model.safetensors")));
    QVERIFY(weights.open(QIODevice::ReadOnly));
    QVERIFY(weights.readAll() == original_bytes);

    // On this computer: open it and chat.
    QCOMPARE(again.localModels().size(), 1);
    QCOMPARE(again.localModels()[0].title, QStringLiteral("demo/Tiny-exl2 4.0bpw"));
    QCOMPARE(again.localModels()[0].folder, folder);
    again.selectLocalModel(again.localModels()[0].id);
    child<QPushButton>(&again, "hubOpenButton")->click();
    QVERIFY(run.waitForModel());
    QCOMPARE(QDir(run.app->model()->directory).canonicalPath(), QDir(folder).canonicalPath());
    QVERIFY(run.send(QStringLiteral("Hello")).has_value());

    // Removed: not while it is loaded; then the snapshot and its blobs go,
    // after the question.
    again.selectLocalModel(again.localModels()[0].id);
    child<QPushButton>(&again, "hubRemoveButton")->click();
    QCOMPARE(again.localModels().size(), 1);
    QVERIFY2(main_notice(run).contains(QStringLiteral("unload it first")),
             qPrintable(main_notice(run)));
    run.app->engine().unload();
    QTRY_VERIFY_WITH_TIMEOUT(!run.app->model().has_value(), 10'000);
    confirm_answer = false;
    again.selectLocalModel(again.localModels()[0].id);
    child<QPushButton>(&again, "hubRemoveButton")->click();
    QCOMPARE(again.localModels().size(), 1);
    confirm_answer = true;
    child<QPushButton>(&again, "hubRemoveButton")->click();
    QCOMPARE(again.localModels().size(), 0);
    QVERIFY(!QDir(cache.filePath(QStringLiteral("models--demo--Tiny-exl2"))).exists());
  }

  void aGatedModelTakesATokenKeptInTheKeyring() {
    FakeHub hub;
    QVERIFY(hub.start());
    FakeRepo gated = demo_repo();
    gated.id = QStringLiteral("gated/Tiny-exl2");
    gated.gated = QStringLiteral("manual");
    hub.addRepo(gated);
    hub.setAcceptedToken("hf_accepted");
    QTemporaryDir cache;
    AppRun run{QString()};
    run.adjust_hub = [&](quire::gui::ModelHubOptions& options) {
      options.hub.endpoint = hub.endpoint().toStdString();
      options.hub.cache_dir = cache.path().toStdString();
      options.hub.token.clear();
      options.retry.first_delay_ms = 50;
    };
    run.start();
    quire::ui::ModelHubWindow& window = *run.app->window().modelHubWindow();
    run.app->window().getModelsAction()->trigger();
    auto* state = child<QLabel>(&window, "hubTokenState");
    QVERIFY2(state->text().startsWith(QStringLiteral("No token")), qPrintable(state->text()));

    // Without a token: listed, but its headers and files are refused, with
    // the way out in the message.
    child<QLineEdit>(&window, "hubSearchText")->setText(QStringLiteral("gated"));
    child<QPushButton>(&window, "hubSearchButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(window.results().size(), 1, 10'000);
    QVERIFY(window.results()[0].gated);
    child<QListWidget>(&window, "hubResults")->setCurrentRow(0);
    QTRY_VERIFY_WITH_TIMEOUT(
        !window.quantizations().isEmpty() &&
            window.quantizations()[0].verdict != quire::ui::FitVerdict::Pending,
        20'000);
    const quire::ui::QuantizationRow refused = window.quantizations()[0];
    QCOMPARE(refused.verdict, quire::ui::FitVerdict::Unknown);
    QVERIFY2(refused.detail.contains(QStringLiteral("Accept the licence on the model's page")),
             qPrintable(refused.detail));
    window.selectQuantization(refused.key);
    child<QPushButton>(&window, "hubDownloadButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(
        !window.downloads().isEmpty() &&
            window.downloads()[0].state == quire::ui::DownloadRow::State::Failed,
        20'000);
    QVERIFY2(window.downloads()[0].message.contains(QStringLiteral("is gated")),
             qPrintable(window.downloads()[0].message));

    // The token goes into the keyring; the verdict is asked again and the
    // download resumes. The file host never sees it.
    child<QLineEdit>(&window, "hubTokenText")->setText(QStringLiteral("hf_accepted"));
    child<QPushButton>(&window, "hubTokenSave")->click();
    QString kept;
    run.keys->read(QString::fromStdString(hub.endpoint().toStdString()),
                   [&](const QString& key, const QString&) { kept = key; });
    QCOMPARE(kept, QStringLiteral("hf_accepted"));
    QVERIFY2(state->text().contains(QStringLiteral("the keyring")), qPrintable(state->text()));
    QTRY_COMPARE_WITH_TIMEOUT(window.quantizations()[0].verdict, quire::ui::FitVerdict::Fits,
                              20'000);
    child<QPushButton>(&window, "hubResumeButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(window.downloads()[0].state, quire::ui::DownloadRow::State::Done,
                              30'000);
    QCOMPARE(hub.fileHostRequestsWithAuthorization(), 0);

    // The next start finds it in the keyring.
    run.restart();
    auto* again = child<QLabel>(run.app->window().modelHubWindow(), "hubTokenState");
    QTRY_VERIFY_WITH_TIMEOUT(again->text().contains(QStringLiteral("the keyring")), 5000);
  }

  void offlineTheHubIsNotAsked() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(demo_repo());
    QTemporaryDir cache;
    AppRun run{QString()};
    run.adjust_hub = [&](quire::gui::ModelHubOptions& options) {
      options.hub.endpoint = hub.endpoint().toStdString();
      options.hub.cache_dir = cache.path().toStdString();
      options.hub.offline = true;
    };
    run.start();
    quire::ui::ModelHubWindow& window = *run.app->window().modelHubWindow();
    child<QPushButton>(&window, "hubSearchButton")->click();
    QVERIFY(window.results().isEmpty());
    QVERIFY2(child<QLabel>(&window, "hubSearchStatus")
                 ->text()
                 .startsWith(QStringLiteral("HF_HUB_OFFLINE is set")),
             qPrintable(child<QLabel>(&window, "hubSearchStatus")->text()));
    QCOMPARE(hub.requests().size(), 0);
  }
};

QUIRE_TEST(ModelHubAppTest)
#include "test_model_hub.moc"
