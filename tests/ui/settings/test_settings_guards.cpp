// What keeps the settings panel from doing harm by accident: settings the plan
// rejects cannot be applied (by the button or by Enter), and the mouse wheel
// scrolls the form instead of changing the field under the pointer.

#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QVBoxLayout>
#include <QWheelEvent>

#include "quire/app/cache_format_choices.h"
#include "quire/ui/settings_panel.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::EngineSettings;
using quire::ui::PlanView;
using quire::ui::SettingsPanel;
namespace fixtures = quire::ui::test;

namespace {

template <typename T>
T* child(QWidget& root, const char* name) {
  return root.findChild<T*>(QString::fromLatin1(name));
}

// What the application's pricer says for a folder that holds no model.
PlanView not_a_model_plan(const QString& folder) {
  PlanView plan;
  plan.error = QStringLiteral("no config.json in %1").arg(folder);
  return plan;
}

// `notches` of a mouse wheel rolled towards the user (scrolling down) over
// `target`; whether `target` took the event. QApplication hands an event a
// widget leaves ignored on to its parents, up to the scroll area; a test
// cannot send one that travels (only the window system's events do), so the
// scroll area is rolled on its own below.
bool roll_wheel(QWidget* target, int notches) {
  const QPointF inside(target->width() / 2.0, target->height() / 2.0);
  QWheelEvent event(inside, target->mapToGlobal(inside), QPoint(), QPoint(0, -120 * notches),
                    Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(target, &event);
  return event.isAccepted();
}

}  // namespace

class TestSettingsGuards : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(model_.isValid());
    QVERIFY(not_a_model_.isValid());
    dialog_ = std::make_unique<QDialog>();
    panel_ = new SettingsPanel(quire::app::cache_format_choices(), dialog_.get());
    auto* layout = new QVBoxLayout(dialog_.get());
    layout->addWidget(panel_);
    panel_->setAvailableDevices(fixtures::two_gpus());
    panel_->setSettings(fixtures::sample_settings(model_.path()));
    panel_->setPlan(fixtures::fitting_plan());
    // Priced at once, as the application does: the model's folder fits, any
    // other folder holds no model.
    connect(panel_, &SettingsPanel::settingsEdited, this, [this](const EngineSettings& edited) {
      panel_->setPlan(edited.model_directory == model_.path()
                          ? fixtures::fitting_plan()
                          : not_a_model_plan(edited.model_directory));
    });
  }

  void cleanup() {
    panel_ = nullptr;
    dialog_.reset();
  }

  // The demo model reads 256 positions: its 8,192-token context setting is
  // capped there, and a 4,096-token cache holds that whole. The panel showed
  // "fewer than one full context of 8192" beside "Capped at 256 tokens".
  void aCacheThatHoldsTheCappedContextIsNoIssue() {
    EngineSettings settings = fixtures::sample_settings(model_.path());
    settings.max_context = 8192;
    settings.cache_tokens = 4096;
    panel_->setSettings(settings);
    PlanView capped = fixtures::fitting_plan();
    capped.model_context_tokens = 256;
    panel_->setPlan(capped);
    QVERIFY(panel_->issues().isEmpty());
    // A model that reads 32,768 positions needs the cache to hold all 8,192.
    capped.model_context_tokens = 32768;
    panel_->setPlan(capped);
    QCOMPARE(panel_->issues().size(), 1);
    QCOMPARE(panel_->issues().at(0).field, quire::ui::SettingsIssue::Field::CacheTokens);
  }

  void aFolderThePlanRejectsCannotBeApplied() {
    QSignalSpy applied(panel_, &SettingsPanel::applyRequested);
    auto* apply = child<QPushButton>(*panel_, "applyButton");
    child<QLineEdit>(*panel_, "modelDirectory")->setText(not_a_model_.path());
    // Pressed before the plan arrived: the edit is priced first, and refused.
    panel_->apply();
    QCOMPARE(applied.count(), 0);
    QVERIFY(!apply->isEnabled());
    QCOMPARE(apply->text(), QStringLiteral("Apply and reload model"));
    apply->click();
    QCOMPARE(applied.count(), 0);
    QCOMPARE(panel_->appliedSettings().model_directory, model_.path());

    // Back to a folder that fits: Apply can be used again.
    child<QLineEdit>(*panel_, "modelDirectory")->setText(model_.path());
    QVERIFY(!panel_->hasUnappliedChanges());
    child<QSpinBox>(*panel_, "maxBatch")->setValue(4);
    QTRY_VERIFY(apply->isEnabled());
    apply->click();
    QCOMPARE(applied.count(), 1);
  }

  void enterDoesNotApplyARejectedFolder() {
    QSignalSpy applied(panel_, &SettingsPanel::applyRequested);
    dialog_->show();
    QVERIFY(QTest::qWaitForWindowExposed(dialog_.get()));
    auto* folder = child<QLineEdit>(*panel_, "modelDirectory");
    folder->setFocus();
    folder->selectAll();
    QTest::keyClicks(folder, not_a_model_.path());
    QTest::keyClick(folder, Qt::Key_Return);
    QCOMPARE(applied.count(), 0);
    QTest::qWait(3 * SettingsPanel::kEditDebounceMs);
    QTest::keyClick(folder, Qt::Key_Return);
    QCOMPARE(applied.count(), 0);
    QCOMPARE(panel_->appliedSettings().model_directory, model_.path());
  }

  void aCacheThatDoesNotFitCannotBeApplied() {
    disconnect(panel_, &SettingsPanel::settingsEdited, this, nullptr);
    connect(panel_, &SettingsPanel::settingsEdited, this,
            [this] { panel_->setPlan(fixtures::overflowing_plan()); });
    QSignalSpy applied(panel_, &SettingsPanel::applyRequested);
    child<QSpinBox>(*panel_, "cacheTokens")->setValue(1 << 20);
    panel_->apply();
    QCOMPARE(applied.count(), 0);
    QVERIFY(!child<QPushButton>(*panel_, "applyButton")->isEnabled());
  }

  void aLiveChangeIsAppliedWhateverThePlanSays() {
    // The plan prices the loaded placement; sampling does not touch it.
    panel_->setPlan(fixtures::overflowing_plan());
    disconnect(panel_, &SettingsPanel::settingsEdited, this, nullptr);
    QSignalSpy applied(panel_, &SettingsPanel::applyRequested);
    child<QSpinBox>(*panel_, "topK")->setValue(12);
    QVERIFY(child<QPushButton>(*panel_, "applyButton")->isEnabled());
    panel_->apply();
    QCOMPARE(applied.count(), 1);
  }

  void theWheelScrollsTheFormOverUnfocusedFields() {
    dialog_->resize(900, 320);
    dialog_->show();
    QVERIFY(QTest::qWaitForWindowExposed(dialog_.get()));
    auto* scroll = child<QScrollArea>(*panel_, "settingsFields");
    QVERIFY(scroll->verticalScrollBar()->maximum() > 0);
    auto* top_k = child<QSpinBox>(*panel_, "topK");
    auto* format = child<QComboBox>(*panel_, "cacheKeys");
    QCOMPARE(top_k->value(), 30);
    const int format_index = format->currentIndex();
    child<QLineEdit>(*panel_, "modelDirectory")->setFocus();

    QVERIFY(!roll_wheel(top_k, 1));
    QCOMPARE(top_k->value(), 30);
    QVERIFY(!roll_wheel(format, 1));
    QCOMPARE(format->currentIndex(), format_index);
    QVERIFY(!panel_->hasUnappliedChanges());
    // Where the wheel goes once the fields leave it: the form scrolls.
    QVERIFY(roll_wheel(scroll->viewport(), 1));
    QVERIFY(scroll->verticalScrollBar()->value() > 0);

    // A field the user clicked into (or tabbed to) takes the wheel.
    QCOMPARE(top_k->focusPolicy(), Qt::StrongFocus);
    QCOMPARE(format->focusPolicy(), Qt::StrongFocus);
    top_k->setFocus();
    QVERIFY(roll_wheel(top_k, 1));
    QCOMPARE(top_k->value(), 29);
  }

 private:
  QTemporaryDir model_;
  QTemporaryDir not_a_model_;
  std::unique_ptr<QDialog> dialog_;
  SettingsPanel* panel_ = nullptr;
};

QUIRE_TEST(TestSettingsGuards)
#include "test_settings_guards.moc"
