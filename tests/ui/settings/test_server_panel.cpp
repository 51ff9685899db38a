// Settings → Server: off by default, announces each change at once, shows
// the address with a Copy button while serving, the API requests in flight,
// and why the server could not start.

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include "quire/ui/server_panel.h"
#include "test_main.h"

using quire::ui::ServerPanel;
using quire::ui::ServerSettings;
using quire::ui::ServerStatusView;
using State = quire::ui::ServerStatusView::State;

class TestServerPanel : public QObject {
  Q_OBJECT

 private slots:
  void init() { panel_ = std::make_unique<ServerPanel>(); }
  void cleanup() { panel_.reset(); }

  void offByDefaultOnQuireCliServesPort() {
    QCOMPARE(panel_->settings(), (ServerSettings{false, 8642}));
    QVERIFY(!child<QCheckBox>("serverEnabled")->isChecked());
    QCOMPARE(child<QLineEdit>("serverUrl")->text(), QStringLiteral("http://127.0.0.1:8642/v1"));
    QVERIFY(!child<QPushButton>("copyServerUrl")->isEnabled());
    QCOMPARE(child<QSpinBox>("serverPort")->minimum(), 1024);
    QCOMPARE(child<QSpinBox>("serverPort")->maximum(), 65535);
  }

  void changesAreAnnouncedAtOnceAndSettingsAreNot() {
    QSignalSpy changed(panel_.get(), &ServerPanel::settingsChanged);
    panel_->setSettings({true, 9000});
    QCOMPARE(changed.count(), 0);
    QCOMPARE(child<QLineEdit>("serverUrl")->text(), QStringLiteral("http://127.0.0.1:9000/v1"));
    child<QCheckBox>("serverEnabled")->click();
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.last().first().value<ServerSettings>(), (ServerSettings{false, 9000}));
    child<QSpinBox>("serverPort")->setValue(9001);
    QCOMPARE(changed.count(), 2);
    QCOMPARE(changed.last().first().value<ServerSettings>(), (ServerSettings{false, 9001}));
    QCOMPARE(child<QLineEdit>("serverUrl")->text(), QStringLiteral("http://127.0.0.1:9001/v1"));
  }

  void servingShowsTheAddressAndTheRequests() {
    panel_->setSettings({true, 9000});
    QCOMPARE(label("serverMessage"), QStringLiteral("Starting…"));
    panel_->setStatus({State::WaitingModel, {}, {}, 0, 0});
    QCOMPARE(label("serverMessage"), QStringLiteral("The server starts once a model is loaded."));
    QVERIFY(!child<QPushButton>("copyServerUrl")->isEnabled());

    panel_->setStatus({State::Serving, QStringLiteral("http://127.0.0.1:9000/v1"), {}, 2, 3});
    QCOMPARE(label("serverRequests"), QStringLiteral("2 running, 3 waiting"));
    QCOMPARE(label("serverMessage"), QStringLiteral("Serving on http://127.0.0.1:9000/v1."));
    auto* copy = child<QPushButton>("copyServerUrl");
    QVERIFY(copy->isEnabled());
    QApplication::clipboard()->clear();
    copy->click();
    QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("http://127.0.0.1:9000/v1"));

    panel_->setStatus({State::Failed, {}, QStringLiteral("Port 9000 is in use."), 0, 0});
    QCOMPARE(label("serverMessage"), QStringLiteral("Port 9000 is in use."));
    QCOMPARE(label("serverRequests"), QStringLiteral("none (the server is off)"));
    QVERIFY(!copy->isEnabled());
  }

 private:
  template <typename Widget>
  Widget* child(const char* name) {
    auto* widget = panel_->findChild<Widget*>(QString::fromLatin1(name));
    if (widget == nullptr) qFatal("no %s", name);
    return widget;
  }
  QString label(const char* name) { return child<QLabel>(name)->text(); }

  std::unique_ptr<ServerPanel> panel_;
};

QUIRE_TEST(TestServerPanel)
#include "test_server_panel.moc"
