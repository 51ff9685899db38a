// The Get models window on its own: what it shows of the rows it is given
// (sizes, verdicts, progress with speed and time left) and what it asks for
// when the user searches, chooses, downloads, pauses, resumes, cancels,
// opens, removes or saves a token.

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>

#include "quire/ui/model_hub_window.h"
#include "test_main.h"

using quire::ui::DownloadRow;
using quire::ui::FitVerdict;
using quire::ui::HubFormat;
using quire::ui::HubModelRow;
using quire::ui::LocalModelRow;
using quire::ui::ModelHubWindow;
using quire::ui::QuantizationRow;

namespace {

template <typename T>
T* child(const ModelHubWindow& window, const char* name) {
  T* found = window.findChild<T*>(QString::fromLatin1(name));
  if (found == nullptr) qFatal("no child %s", name);
  return found;
}

QList<QuantizationRow> three_sizes() {
  QuantizationRow small;
  small.key = QStringLiteral("2.5bpw");
  small.label = QStringLiteral("2.5bpw");
  small.bytes = 3 * (1LL << 30);
  small.weights = QStringLiteral("EXL2 2.5 bits per weight");
  small.verdict = FitVerdict::Fits;
  small.largest_context_tokens = 32768;
  QuantizationRow middle = small;
  middle.key = middle.label = QStringLiteral("4.0bpw");
  middle.bytes = 5 * (1LL << 30);
  middle.verdict = FitVerdict::FitsSmaller;
  middle.fit_label = QStringLiteral("a q8 cache");
  QuantizationRow big = small;
  big.key = big.label = QStringLiteral("8.0bpw");
  big.bytes = 9 * (1LL << 30);
  big.verdict = FitVerdict::Pending;
  return {small, middle, big};
}

}  // namespace

class ModelHubWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void searchAsksWithTheChosenSortAndFormat() {
    ModelHubWindow window;
    QSignalSpy asked(&window, &ModelHubWindow::searchRequested);
    child<QLineEdit>(window, "hubSearchText")->setText(QStringLiteral("  llama 3  "));
    auto* sort = child<QComboBox>(window, "hubSort");
    sort->setCurrentIndex(sort->findData(QStringLiteral("likes")));
    auto* format = child<QComboBox>(window, "hubFormat");
    format->setCurrentIndex(format->findData(static_cast<int>(HubFormat::Exl3)));
    child<QPushButton>(window, "hubSearchButton")->click();
    QCOMPARE(asked.size(), 1);
    const auto request = asked[0][0].value<quire::ui::HubSearchRequest>();
    QCOMPARE(request.text, QStringLiteral("llama 3"));
    QCOMPARE(request.sort, QStringLiteral("likes"));
    QCOMPARE(request.format, HubFormat::Exl3);
  }

  void resultsListTheirPopularityAndChoosingOneAsksForIt() {
    ModelHubWindow window;
    HubModelRow row;
    row.repo = QStringLiteral("turbo/Llama-3-8B-exl2");
    row.downloads = 12345;
    row.likes = 67;
    row.last_modified = QStringLiteral("2026-03-01T10:00:00.000Z");
    row.formats = {QStringLiteral("EXL2")};
    row.gated = true;
    window.setResults({row}, QString());
    auto* list = child<QListWidget>(window, "hubResults");
    QCOMPARE(list->count(), 1);
    QCOMPARE(list->item(0)->text(),
             QStringLiteral("turbo/Llama-3-8B-exl2  [EXL2]\n12,345 downloads · 67 likes · "
                            "updated 2026-03-01 · gated"));
    QCOMPARE(child<QLabel>(window, "hubSearchStatus")->text(), QStringLiteral("1 model"));
    QSignalSpy chosen(&window, &ModelHubWindow::repositoryChosen);
    list->setCurrentRow(0);
    QCOMPARE(chosen.size(), 1);
    QCOMPARE(chosen[0][0].toString(), row.repo);

    window.setResults({}, QStringLiteral("Could not reach the Hub."));
    QCOMPARE(list->count(), 0);
    QCOMPARE(child<QLabel>(window, "hubSearchStatus")->text(),
             QStringLiteral("Could not reach the Hub."));
  }

  void quantizationsShowSizeAndVerdictAndDownloadOnlyWhatCanBe() {
    ModelHubWindow window;
    window.showRepository(QStringLiteral("turbo/M"), QStringLiteral("Reading…"));
    window.setQuantizations(three_sizes(), QStringLiteral("3 quantizations."));
    auto* list = child<QTreeWidget>(window, "hubQuantizations");
    QCOMPARE(list->topLevelItemCount(), 3);
    QCOMPARE(list->topLevelItem(0)->text(1), QStringLiteral("3.0 GiB"));
    QCOMPARE(list->topLevelItem(0)->text(3),
             QStringLiteral("fits: up to 32,768 tokens of context"));
    QCOMPARE(list->topLevelItem(1)->text(3), QStringLiteral("fits only with a q8 cache"));
    QCOMPARE(list->topLevelItem(2)->text(3), QStringLiteral("checking…"));
    QuantizationRow whole = three_sizes()[0];
    whole.context_is_model_limit = true;
    window.updateQuantization(whole);
    QCOMPARE(list->topLevelItem(0)->text(3),
             QStringLiteral("fits with its whole 32,768-token context"));
    window.updateQuantization(three_sizes()[0]);
    QCOMPARE(child<QLabel>(window, "hubRepoStatus")->text(), QStringLiteral("3 quantizations."));

    auto* download = child<QPushButton>(window, "hubDownloadButton");
    QVERIFY(!download->isEnabled());  // nothing chosen
    QSignalSpy asked(&window, &ModelHubWindow::downloadRequested);
    window.selectQuantization(QStringLiteral("4.0bpw"));
    QVERIFY(download->isEnabled());
    download->click();
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked[0][0].toString(), QStringLiteral("turbo/M"));
    QCOMPARE(asked[0][1].toString(), QStringLiteral("4.0bpw"));

    // Its verdict arrives: Quire cannot run it, so it is not offered.
    QuantizationRow big = three_sizes()[2];
    big.verdict = FitVerdict::Unsupported;
    big.detail = QStringLiteral("Mamba is not an architecture Quire runs.");
    window.updateQuantization(big);
    QCOMPARE(list->topLevelItem(2)->text(3), QStringLiteral("Quire cannot run it"));
    QCOMPARE(list->topLevelItem(2)->toolTip(3), big.detail);
    window.selectQuantization(QStringLiteral("8.0bpw"));
    QVERIFY(!download->isEnabled());
    // Downloaded already: nothing to download.
    QuantizationRow small = three_sizes()[0];
    small.downloaded = true;
    window.updateQuantization(small);
    QCOMPARE(list->topLevelItem(0)->text(1), QStringLiteral("3.0 GiB, downloaded"));
    window.selectQuantization(QStringLiteral("2.5bpw"));
    QVERIFY(!download->isEnabled());
  }

  void downloadsShowProgressSpeedAndTimeLeftAndTheirButtons() {
    ModelHubWindow window;
    DownloadRow running;
    running.id = QStringLiteral("turbo/M@4.0bpw");
    running.title = QStringLiteral("turbo/M 4.0bpw");
    running.state = DownloadRow::State::Running;
    running.bytes_done = 1LL << 30;
    running.bytes_total = 4LL << 30;
    running.bytes_per_second = 10e6;
    window.setDownloads({running});
    auto* list = child<QTreeWidget>(window, "hubDownloads");
    auto* bar = qobject_cast<QProgressBar*>(list->itemWidget(list->topLevelItem(0), 1));
    QVERIFY(bar != nullptr);
    QCOMPARE(bar->value(), 250);
    // 3 GiB at 10 MB/s: 322 s, about 6 minutes.
    QCOMPARE(bar->format(), QStringLiteral("1.0 GiB of 4.0 GiB · 10.0 MB/s · about 6 min left"));
    auto* pause = child<QPushButton>(window, "hubPauseButton");
    auto* resume = child<QPushButton>(window, "hubResumeButton");
    auto* cancel = child<QPushButton>(window, "hubCancelButton");
    QVERIFY(pause->isEnabled());
    QVERIFY(!resume->isEnabled());
    QVERIFY(cancel->isEnabled());
    QSignalSpy paused(&window, &ModelHubWindow::pauseRequested);
    pause->click();
    QCOMPARE(paused.size(), 1);
    QCOMPARE(paused[0][0].toString(), running.id);

    running.state = DownloadRow::State::Paused;
    window.setDownloads({running});
    QCOMPARE(bar->format(), QStringLiteral("paused at 1.0 GiB of 4.0 GiB"));
    QVERIFY(!pause->isEnabled());
    QVERIFY(resume->isEnabled());
    QSignalSpy resumed(&window, &ModelHubWindow::resumeRequested);
    QSignalSpy cancelled(&window, &ModelHubWindow::cancelRequested);
    resume->click();
    cancel->click();
    QCOMPARE(resumed.size(), 1);
    QCOMPARE(cancelled.size(), 1);

    running.state = DownloadRow::State::Failed;
    running.message = QStringLiteral("The Hub failed model.safetensors (HTTP 500).");
    window.setDownloads({running});
    QCOMPARE(bar->format(), running.message);
    QVERIFY(resume->isEnabled());
  }

  void localModelsOpenAndOnlyCachedOnesAreRemovable() {
    ModelHubWindow window;
    LocalModelRow cached;
    cached.id = QStringLiteral("turbo/M@") + QString(40, u'a');
    cached.title = QStringLiteral("turbo/M 4.0bpw");
    cached.folder = QStringLiteral("/cache/models--turbo--M/snapshots/aaaa");
    cached.bytes = 5LL << 30;
    cached.removable = true;
    LocalModelRow own;
    own.id = own.folder = QStringLiteral("/home/me/.local/share/Quire/models/mine");
    own.title = QStringLiteral("mine");
    own.bytes = 123 * 1024;
    window.setLocalModels({cached, own});
    auto* list = child<QTreeWidget>(window, "hubLocalModels");
    QCOMPARE(list->topLevelItemCount(), 2);
    QCOMPARE(list->topLevelItem(0)->text(1), QStringLiteral("5.0 GiB"));
    QCOMPARE(list->topLevelItem(1)->text(1), QStringLiteral("123 KiB"));
    auto* open = child<QPushButton>(window, "hubOpenButton");
    auto* remove = child<QPushButton>(window, "hubRemoveButton");
    QVERIFY(!open->isEnabled());
    QSignalSpy opened(&window, &ModelHubWindow::openRequested);
    QSignalSpy removed(&window, &ModelHubWindow::removeRequested);
    window.selectLocalModel(cached.id);
    QVERIFY(open->isEnabled());
    QVERIFY(remove->isEnabled());
    open->click();
    remove->click();
    QCOMPARE(opened.size(), 1);
    QCOMPARE(opened[0][0].toString(), cached.folder);
    QCOMPARE(removed[0][0].toString(), cached.id);
    window.selectLocalModel(own.id);
    QVERIFY(open->isEnabled());
    QVERIFY(!remove->isEnabled());
  }

  void aSavedTokenLeavesTheField() {
    ModelHubWindow window;
    QSignalSpy entered(&window, &ModelHubWindow::tokenEntered);
    auto* text = child<QLineEdit>(window, "hubTokenText");
    QCOMPARE(text->echoMode(), QLineEdit::Password);
    text->setText(QStringLiteral(" hf_secret "));
    child<QPushButton>(window, "hubTokenSave")->click();
    QCOMPARE(entered.size(), 1);
    QCOMPARE(entered[0][0].toString(), QStringLiteral("hf_secret"));
    QCOMPARE(text->text(), QString());
  }
};

QUIRE_TEST(ModelHubWindowTest)
#include "test_model_hub_window.moc"
