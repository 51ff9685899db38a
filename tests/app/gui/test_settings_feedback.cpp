// What Settings says in the dialog itself, where the user looks while
// changing it: a remote address is checked on Apply and a wrong one is named
// next to its field, with the field kept and the main window left alone.

#include <QDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "main_window.h"
#include "quire/ui/settings_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace quire::test::settings_feedback {

QPushButton* apply_button_of(ui::SettingsPanel& panel) {
  for (QPushButton* button : panel.findChildren<QPushButton*>()) {
    if (button->text().startsWith(QStringLiteral("Apply"))) return button;
  }
  return nullptr;
}

}  // namespace quire::test::settings_feedback

using namespace quire::test::settings_feedback;

class SettingsFeedbackTest : public QObject {
  Q_OBJECT

 private slots:
  void aWrongRemoteAddressIsNamedInTheDialogAndNothingChanges() {
    AppRun run(random_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    window.show();
    window.settingsAction()->trigger();
    QVERIFY(window.settingsDialog()->isVisible());
    ui::SettingsPanel& panel = *window.settingsPanel();
    auto* url = panel.findChild<QLineEdit*>(QStringLiteral("remoteUrl"));
    QVERIFY(url);
    const QString address = QStringLiteral("127.0.0.1:%1/v1").arg(free_port());
    QTest::keyClicks(url, address);
    QTest::qWait(ui::SettingsPanel::kEditDebounceMs + 50);

    // Before anything answers, the plan does not say that it runs there.
    auto* verdict = panel.findChild<QLabel*>(QStringLiteral("planVerdict"));
    QTRY_VERIFY2(verdict->text().startsWith(QStringLiteral("will run on the remote engine at ")),
                 qPrintable(verdict->text()));

    QSignalSpy loading(run.app.get(), &gui::QuireApplication::loadFailed);
    QPushButton* apply = apply_button_of(panel);
    QVERIFY(apply && apply->isEnabled());
    QTest::mouseClick(apply, Qt::LeftButton);
    auto* status = panel.findChild<QLabel*>(QStringLiteral("remoteStatus"));
    QTRY_VERIFY_WITH_TIMEOUT(!status->text().startsWith(QStringLiteral("Asking")), 30'000);
    QVERIFY2(status->text().contains(QStringLiteral("127.0.0.1:")), qPrintable(status->text()));
    QVERIFY(status->isVisibleTo(window.settingsDialog()));

    // Nothing was applied: the model here still runs, the field keeps the
    // address for correcting, and the main window shows no error behind
    // the dialog.
    QCOMPARE(url->text(), address);
    QVERIFY(run.app->settings().engine.remote_url.isEmpty());
    QVERIFY(run.app->model());
    QCOMPARE(run.app->model()->backend, QStringLiteral("cpu"));
    QVERIFY(loading.isEmpty());
    QCOMPARE(window.noticeText(), QString());
    QVERIFY(panel.hasUnappliedChanges());
  }
};

QUIRE_TEST(SettingsFeedbackTest)
#include "test_settings_feedback.moc"
