// The view shown before a model is configured.

#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include "quire/ui/welcome_view.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::PlanView;
using quire::ui::WelcomeView;
namespace fixtures = quire::ui::test;

class TestWelcomeView : public QObject {
  Q_OBJECT

 private slots:
  void init() { view_ = std::make_unique<WelcomeView>(); }
  void cleanup() { view_.reset(); }

  void explainsWhatQuireNeeds() {
    const QString text = label("welcomeText")->text();
    QVERIFY2(text.contains(QLatin1String(
                 "a model directory from Hugging Face in EXL3, EXL2, GPTQ, AWQ, W4A16, FP8 or FP16 "
                 "safetensors form")),
             qPrintable(text));
  }

  void buttonsAskTheApplication() {
    QSignalSpy choose(view_.get(), &WelcomeView::chooseModelRequested);
    QSignalSpy demo(view_.get(), &WelcomeView::useDemoModelRequested);
    QSignalSpy get(view_.get(), &WelcomeView::getModelsRequested);
    button("chooseModelButton")->click();
    button("demoModelButton")->click();
    button("getModelsButton")->click();
    QCOMPARE(choose.count(), 1);
    QCOMPARE(demo.count(), 1);
    QCOMPARE(get.count(), 1);
    QCOMPARE(button("getModelsButton")->text(), QStringLiteral("Get models…"));
    QCOMPARE(button("chooseModelButton")->text(), QStringLiteral("Choose model folder…"));
    QCOMPARE(button("demoModelButton")->text(),
             QStringLiteral("Try the 5.8M-parameter demo model"));
  }

  void demoHiddenWhenUnavailable() {
    QVERIFY(!button("demoModelButton")->isHidden());
    view_->setDemoAvailable(false);
    QVERIFY(button("demoModelButton")->isHidden());
    QVERIFY(!view_->isDemoAvailable());
    view_->setDemoAvailable(true);
    QVERIFY(!button("demoModelButton")->isHidden());
  }

  void nothingToLoadBeforeAFolderIsChosen() {
    QVERIFY(view_->findChild<QGroupBox*>(QStringLiteral("welcomePlan"))->isHidden());
    QVERIFY(!button("loadButton")->isEnabled());
  }

  void loadWhenThePlanFits() {
    QSignalSpy load(view_.get(), &WelcomeView::loadRequested);
    view_->setModelDirectory(QStringLiteral("/models/Llama-3-8B-exl2-4.0bpw"));
    QVERIFY(!view_->findChild<QGroupBox*>(QStringLiteral("welcomePlan"))->isHidden());
    QCOMPARE(label("chosenModel")->text(),
             QStringLiteral("Model folder: /models/Llama-3-8B-exl2-4.0bpw"));
    QVERIFY(!button("loadButton")->isEnabled());  // no verdict yet
    view_->setPlan(fixtures::fitting_plan());
    QCOMPARE(label("planVerdict")->text(), QStringLiteral("fits"));
    QCOMPARE(label("planLargestContext")->text(),
             QStringLiteral("Largest context that fits: 253,696 tokens"));
    QVERIFY(button("loadButton")->isEnabled());
    button("loadButton")->click();
    QCOMPARE(load.count(), 1);
  }

  void noLoadWhenItDoesNotFit() {
    view_->setModelDirectory(QStringLiteral("/models/big"));
    view_->setPlan(fixtures::overflowing_plan());
    QCOMPARE(label("planVerdict")->text(), fixtures::overflow_verdict());
    QVERIFY(!button("loadButton")->isEnabled());
    PlanView unreadable;
    unreadable.error = QStringLiteral("model.safetensors: header is not valid JSON");
    view_->setPlan(unreadable);
    QCOMPARE(label("planVerdict")->text(), unreadable.error);
    QVERIFY(!button("loadButton")->isEnabled());
  }

  void screenshots() {
    view_->resize(900, 640);
    view_->show();
    QVERIFY(QTest::qWaitForWindowExposed(view_.get()));
    fixtures::save_screenshot(*view_, QStringLiteral("welcome_view.png"));
    view_->setModelDirectory(QStringLiteral("/models/Llama-3-8B-Instruct-exl2-4.0bpw"));
    view_->setPlan(fixtures::fitting_plan());
    fixtures::save_screenshot(*view_, QStringLiteral("welcome_view_plan.png"));
  }

 private:
  QLabel* label(const char* name) { return view_->findChild<QLabel*>(QString::fromLatin1(name)); }
  QPushButton* button(const char* name) {
    return view_->findChild<QPushButton*>(QString::fromLatin1(name));
  }

  std::unique_ptr<WelcomeView> view_;
};

QUIRE_TEST(TestWelcomeView)
#include "test_welcome_view.moc"
