// The settings of a remote engine in the panel: an address that is no http(s)
// address keeps Apply disabled and says so; a good one turns off the groups
// that mean nothing for a remote engine and reloads; a new key alone can be
// applied, is handed over before the reload that uses it, and is never part of
// the settings; "List models" asks for the typed address and key and fills the
// model field, keeping the model chosen before when the engine still serves it.

#include <QComboBox>
#include <QDialog>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QVBoxLayout>

#include "quire/app/cache_format_choices.h"
#include "quire/ui/settings_panel.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::EngineSettings;
using quire::ui::PlanView;
using quire::ui::SettingsPanel;
namespace fixtures = quire::ui::test;

class TestRemoteFields : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(model_.isValid());
    dialog_ = std::make_unique<QDialog>();
    panel_ = new SettingsPanel(quire::app::cache_format_choices(), dialog_.get());
    auto* layout = new QVBoxLayout(dialog_.get());
    layout->addWidget(panel_);
    panel_->setAvailableDevices(fixtures::two_gpus());
    panel_->setSettings(fixtures::sample_settings(model_.path()));
    panel_->setPlan(fixtures::fitting_plan());
    connect(panel_, &SettingsPanel::settingsEdited, this, [this](const EngineSettings& edited) {
      PlanView plan = fixtures::fitting_plan();
      if (quire::ui::is_remote(edited)) {
        plan = PlanView{};
        plan.valid = plan.fits = plan.remote = true;
        plan.verdict = QStringLiteral("runs on the remote engine");
      }
      panel_->setPlan(plan);
    });
  }

  void cleanup() {
    panel_ = nullptr;
    dialog_.reset();
  }

  void anAddressThatIsNoHttpAddressCannotBeApplied() {
    type("remoteUrl", QStringLiteral("ftp://gpu-box"));
    QSignalSpy applied(panel_, &SettingsPanel::applyRequested);
    panel_->apply();
    QVERIFY(applied.isEmpty());
    QVERIFY(!apply_button()->isEnabled());
    auto* issue = panel_->findChild<QLabel*>(QStringLiteral("remoteUrlIssue"));
    QVERIFY(!issue->isHidden());
    QCOMPARE(issue->text(), QStringLiteral("This is not an http or https address such as "
                                           "http://gpu-box:8000/v1."));
  }

  void aRemoteEngineTurnsOffTheLocalGroupsAndReloads() {
    type("remoteUrl", QStringLiteral("gpu-box:8000/v1"));
    QTRY_VERIFY(apply_button()->isEnabled());
    QVERIFY(!panel_->findChild<QLineEdit*>(QStringLiteral("modelDirectory"))->isEnabled());
    QVERIFY(!panel_->findChild<QComboBox*>(QStringLiteral("split"))->isEnabled());
    // Sampling still applies: it is sent with every request.
    QVERIFY(panel_->findChild<QWidget*>(QStringLiteral("temperature"))->isEnabled());
    QSignalSpy applied(panel_, &SettingsPanel::applyRequested);
    QSignalSpy asked(panel_, &SettingsPanel::remoteModelsRequested);
    panel_->apply();
    // The address is checked before anything is applied.
    QCOMPARE(asked.size(), 1);
    QVERIFY(applied.isEmpty());
    panel_->setRemoteModels({QStringLiteral("m")}, QString());
    QCOMPARE(applied.size(), 1);
    const auto settings = applied.at(0).at(0).value<EngineSettings>();
    QCOMPARE(settings.remote_url, QStringLiteral("gpu-box:8000/v1"));
    QCOMPARE(settings.remote_model, QStringLiteral("m"));
    QCOMPARE(settings.model_directory, model_.path());  // kept for going back
    QVERIFY(applied.at(0).at(1).toBool());
    // Emptied again, the folder runs here.
    auto* url = panel_->findChild<QLineEdit*>(QStringLiteral("remoteUrl"));
    url->selectAll();
    QTest::keyClick(url, Qt::Key_Backspace);
    QVERIFY(panel_->findChild<QLineEdit*>(QStringLiteral("modelDirectory"))->isEnabled());
  }

  void aNewKeyAloneIsAppliedBeforeTheReloadThatUsesIt() {
    EngineSettings remote = fixtures::sample_settings(model_.path());
    remote.remote_url = QStringLiteral("http://gpu-box:8000/v1");
    panel_->setSettings(remote);
    panel_->setApiKey(QStringLiteral("old"));
    QVERIFY(!apply_button()->isEnabled());
    auto* key = panel_->findChild<QLineEdit*>(QStringLiteral("remoteKey"));
    QCOMPARE(key->echoMode(), QLineEdit::Password);
    key->clear();
    type("remoteKey", QStringLiteral("new-key"));
    QVERIFY(apply_button()->isEnabled());
    QStringList order;
    connect(panel_, &SettingsPanel::apiKeyApplied, this,
            [&](const QString& url, const QString& value) {
              order << QStringLiteral("key %1 %2").arg(url, value);
            });
    connect(panel_, &SettingsPanel::applyRequested, this, [&](const EngineSettings&, bool reload) {
      order << QStringLiteral("apply %1").arg(reload ? "reload" : "live");
    });
    // The new key is checked with the address first; the engine answers.
    connect(panel_, &SettingsPanel::remoteModelsRequested, this,
            [&](const QString& url, const QString& value) {
              order << QStringLiteral("check %1 %2").arg(url, value);
              panel_->setRemoteModels({QStringLiteral("m")}, QString());
            });
    panel_->apply();
    QCOMPARE(order, (QStringList{QStringLiteral("check http://gpu-box:8000/v1 new-key"),
                                 QStringLiteral("key http://gpu-box:8000/v1 new-key"),
                                 QStringLiteral("apply reload")}));
    QVERIFY(!apply_button()->isEnabled());
    QVERIFY(!panel_->hasUnappliedChanges());
  }

  // A wrong address is found out in the dialog, next to its field: Apply
  // asks the engine first, applies nothing when it does not answer, keeps
  // the address in its field, and the plan promises nothing meanwhile.
  void aWrongAddressIsSaidNextToItsFieldAndNothingIsApplied() {
    type("remoteUrl", QStringLiteral("gpu-box:8000/v1"));
    auto* verdict = panel_->findChild<QLabel*>(QStringLiteral("planVerdict"));
    QCOMPARE(verdict->text(), QStringLiteral("will run on the remote engine at gpu-box:8000/v1 "
                                             "once it answers: Apply checks the address first"));
    QVERIFY2(!verdict->styleSheet().contains(QStringLiteral("#2e7d32")),
             qPrintable(verdict->styleSheet()));
    QSignalSpy applied(panel_, &SettingsPanel::applyRequested);
    QSignalSpy asked(panel_, &SettingsPanel::remoteModelsRequested);
    QTest::mouseClick(apply_button(), Qt::LeftButton);
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked.at(0).at(0).toString(), QStringLiteral("gpu-box:8000/v1"));
    auto* status = panel_->findChild<QLabel*>(QStringLiteral("remoteStatus"));
    QVERIFY(!status->isHidden());
    QCOMPARE(status->text(), QStringLiteral("Asking gpu-box:8000/v1 for its models…"));

    panel_->setRemoteModels({}, QStringLiteral("Nothing answers at gpu-box:8000."));
    QVERIFY(applied.isEmpty());
    QCOMPARE(status->text(), QStringLiteral("Nothing answers at gpu-box:8000."));
    QVERIFY(!status->isHidden());
    QCOMPARE(panel_->findChild<QLineEdit*>(QStringLiteral("remoteUrl"))->text(),
             QStringLiteral("gpu-box:8000/v1"));
    QVERIFY(panel_->hasUnappliedChanges());
    QVERIFY(!verdict->styleSheet().contains(QStringLiteral("#2e7d32")));

    // Asked again, the engine answers now: the settings are applied, and the
    // plan says where the model runs.
    QTest::mouseClick(apply_button(), Qt::LeftButton);
    QCOMPARE(asked.size(), 2);
    panel_->setRemoteModels({QStringLiteral("m")}, QString());
    QCOMPARE(applied.size(), 1);
    QCOMPARE(applied.at(0).at(0).value<EngineSettings>().remote_url,
             QStringLiteral("gpu-box:8000/v1"));
    QTRY_COMPARE(verdict->text(), QStringLiteral("runs on the remote engine"));
    QVERIFY(verdict->styleSheet().contains(QStringLiteral("#2e7d32")));
  }

  // An answer for the address before an edit checks nothing of the new one.
  void anAnswerForAnEarlierAddressAppliesNothing() {
    type("remoteUrl", QStringLiteral("gpu-box:8000"));
    QSignalSpy applied(panel_, &SettingsPanel::applyRequested);
    panel_->apply();
    type("remoteUrl", QStringLiteral("/v1"));
    panel_->setRemoteModels({QStringLiteral("m")}, QString());
    QVERIFY(applied.isEmpty());
    QSignalSpy asked(panel_, &SettingsPanel::remoteModelsRequested);
    panel_->apply();
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked.at(0).at(0).toString(), QStringLiteral("gpu-box:8000/v1"));
  }

  void listingModelsFillsTheModelField() {
    type("remoteUrl", QStringLiteral("gpu-box:8000"));
    type("remoteKey", QStringLiteral("k"));
    auto* model = panel_->findChild<QComboBox*>(QStringLiteral("remoteModel"));
    model->setEditText(QStringLiteral("b"));
    QSignalSpy asked(panel_, &SettingsPanel::remoteModelsRequested);
    QTest::mouseClick(panel_->findChild<QPushButton*>(QStringLiteral("listRemoteModels")),
                      Qt::LeftButton);
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked.at(0).at(0).toString(), QStringLiteral("gpu-box:8000"));
    QCOMPARE(asked.at(0).at(1).toString(), QStringLiteral("k"));
    panel_->setRemoteModels({QStringLiteral("a"), QStringLiteral("b")}, QString());
    QCOMPARE(model->count(), 2);
    QCOMPARE(model->currentText(), QStringLiteral("b"));
    auto* status = panel_->findChild<QLabel*>(QStringLiteral("remoteStatus"));
    QCOMPARE(status->text(), QStringLiteral("The engine serves 2 models."));
    panel_->setRemoteModels({QStringLiteral("c")}, QString());
    QCOMPARE(model->currentText(), QStringLiteral("c"));
    QCOMPARE(status->text(), QStringLiteral("The engine serves 1 model."));
    panel_->setRemoteModels({}, QStringLiteral("Nothing answers at gpu-box:8000."));
    QCOMPARE(status->text(), QStringLiteral("Nothing answers at gpu-box:8000."));
    QCOMPARE(panel_->settings().remote_model, QStringLiteral("c"));
  }

 private:
  void type(const char* name, const QString& text) {
    QTest::keyClicks(panel_->findChild<QLineEdit*>(QString::fromLatin1(name)), text);
    // The edit is announced after the debounce, and priced at once.
    QTest::qWait(SettingsPanel::kEditDebounceMs + 50);
  }
  QPushButton* apply_button() const {
    for (QPushButton* button : panel_->findChildren<QPushButton*>()) {
      if (button->text().startsWith(QStringLiteral("Apply"))) return button;
    }
    return nullptr;
  }

  QTemporaryDir model_;
  std::unique_ptr<QDialog> dialog_;
  SettingsPanel* panel_ = nullptr;
};

QUIRE_TEST(TestRemoteFields)
#include "test_remote_fields.moc"
