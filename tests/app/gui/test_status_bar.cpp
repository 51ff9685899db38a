// The status bar while the program works: the load progress shows its name
// without clipping the percentage, the built-in API server's address stays
// in view while it serves, and an API request is not taken for a reply of
// the chat on show.

#include <httplib.h>

#include <QLabel>
#include <QProgressBar>
#include <QTest>
#include <future>
#include <nlohmann/json.hpp>

#include "app_test_support.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/app/app_settings.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace quire::test::status_bar {

QString shown_label_text(gui::MainWindow& window, const char* name) {
  auto* label = window.findChild<QLabel*>(QString::fromLatin1(name));
  return label != nullptr && !label->isHidden() ? label->text() : QString();
}

// A chat completion of `max_tokens` posted on a thread of its own while
// this thread's event loop runs; its HTTP status.
int post_chat(int port, int max_tokens) {
  std::future<int> status = std::async(std::launch::async, [=] {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(120);
    const nlohmann::json body = {
        {"messages", nlohmann::json::array({{{"role", "user"}, {"content", "Go on."}}})},
        {"max_tokens", max_tokens}};
    const httplib::Result result =
        client.Post("/v1/chat/completions", body.dump(), "application/json");
    return result ? result->status : 0;
  });
  (void)QTest::qWaitFor(
      [&] { return status.wait_for(std::chrono::seconds(0)) == std::future_status::ready; },
      180'000);
  return status.get();
}

}  // namespace quire::test::status_bar

using namespace quire::test::status_bar;

class StatusBarTest : public QObject {
  Q_OBJECT

 private slots:
  void loadProgressKeepsItsPercentageInView() {
    AppRun run{QString()};
    run.start();
    gui::MainWindow& window = run.app->window();
    window.show();
    const QString name = QStringLiteral("Loading /home/someone/models/") + QString(60, u'x') +
                         QStringLiteral("-Instruct-exl3-4.0bpw");
    window.showLoading(name, 45, 100);
    auto* progress = window.findChild<QProgressBar*>(QStringLiteral("loadProgress"));
    QVERIFY(progress && progress->isVisible());
    const QString shown = progress->text();
    QVERIFY2(shown.endsWith(QStringLiteral(" 45%")), qPrintable(shown));
    QVERIFY2(progress->fontMetrics().horizontalAdvance(shown) <= progress->maximumWidth() - 24,
             qPrintable(shown));
    QCOMPARE(progress->toolTip(), name);
  }

  void theServersAddressStaysInViewAndItsRequestsAreNamedAsSuch() {
    const int port = free_port();
    AppRun run(random_model(), 200);
    {
      app::AppSettings settings(run.data.filePath(QStringLiteral("quire.conf")));
      settings.load();
      settings.server = {true, port};
      QVERIFY(settings.save());
    }
    run.restart(200);
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    window.show();
    const QString url = QStringLiteral("http://127.0.0.1:%1/v1").arg(port);
    QTRY_COMPARE_WITH_TIMEOUT(shown_label_text(window, "serverState"),
                              QStringLiteral("API server: %1").arg(url), 60'000);

    // What the engine state said while the request ran.
    QStringList states;
    QObject context;
    connect(&run.app->engine(), &gui::EngineHost::busyChanged, &context,
            [&] { states << shown_label_text(window, "engineState"); });
    QCOMPARE(post_chat(port, 200), 200);
    QTRY_VERIFY(!run.app->engine().isBusy());
    QVERIFY2(states.contains(QStringLiteral("Answering API requests…")),
             qPrintable(states.join(QStringLiteral(" | "))));
    QVERIFY2(!states.contains(QStringLiteral("Generating…")),
             qPrintable(states.join(QStringLiteral(" | "))));
    // Still in view afterwards.
    QCOMPARE(shown_label_text(window, "serverState"), QStringLiteral("API server: %1").arg(url));
  }
};

QUIRE_TEST(StatusBarTest)
#include "test_status_bar.moc"
