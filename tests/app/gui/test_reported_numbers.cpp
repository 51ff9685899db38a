// The figures the program reports about one model and one reply agree with
// each other: the context the planner, the settings, the status bar and the
// footer state, and the statistics under a reply.

#include <QChart>
#include <QChartView>
#include <QDockWidget>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QTest>

#include "app_test_support.h"
#include "context_text.h"
#include "cuda_note.h"
#include "demo_model_text.h"
#include "main_window.h"
#include "quire/ui/input_box.h"
#include "quire/ui/plan_widget.h"
#include "quire/ui/settings_panel.h"
#include "quire/ui/status_line.h"
#include "reply_stats.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

class ReportedNumbersTest : public QObject {
  Q_OBJECT

 private slots:
  // The demo model reads 256 positions; the 4,096-token cache and the
  // 8,192-token setting are both larger, and memory would hold far more.
  void everyContextFigureStopsAtTheModelsLimit() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();

    const auto* state = window.findChild<QLabel*>(QStringLiteral("engineState"));
    QVERIFY(state);
    QVERIFY(run.app->model());
    QCOMPARE(state->text(),
             QStringLiteral("Ready · %1 · 256-token context: the model's limit · prompt: %2")
                 .arg(run.app->model()->name, run.app->model()->prompt_format_title));

    ui::SettingsPanel& panel = *window.settingsPanel();
    auto* plan = panel.findChild<ui::PlanWidget*>(QStringLiteral("plan"));
    QVERIFY(plan);
    QTRY_VERIFY(plan->plan().valid && !plan->isStale());
    QCOMPARE(plan->plan().largest_context_tokens, qint64{256});
    QVERIFY(plan->plan().largest_context_is_model_limit);
    const auto* largest = plan->findChild<QLabel*>(QStringLiteral("planLargestContext"));
    QVERIFY(largest);
    QCOMPARE(largest->text(),
             QStringLiteral("Largest context that fits: 256 tokens: the model's limit"));
    const auto* cap = panel.findChild<QLabel*>(QStringLiteral("maxContextCap"));
    QVERIFY(cap);
    QVERIFY(!cap->isHidden());
    QCOMPARE(cap->text(), QStringLiteral("Capped at 256 tokens: the model's limit"));

    QVERIFY(run.send(QStringLiteral("Hello!")));
    QCOMPARE(window.statusLine()->contextMaximum(), qint64{256});
  }

  void firstTokenBelowASecondInMilliseconds() {
    store::GenerationStats stats;
    stats.generated_tokens = 24;
    stats.tokens_per_second = 1523.46;
    stats.time_to_first_token_ms = 12.4;
    stats.prompt_tokens = 40;
    stats.cached_tokens = 39;
    QCOMPARE(gui::stats_text(stats),
             QStringLiteral("24 tokens · 1523.5 tok/s · 12 ms to first token · 39 of 40 prompt "
                            "tokens from the cache"));
    stats.time_to_first_token_ms = 0.3;
    QCOMPARE(gui::first_token_text(stats.time_to_first_token_ms),
             QStringLiteral("1 ms to first token"));
    QCOMPARE(gui::first_token_text(1250), QStringLiteral("1.25 s to first token"));
  }

  // A reply that drafted says how many drafts the model accepted and how
  // many tokens each step gave: 40 tokens with 26 of 36 drafts accepted
  // took 14 steps.
  void aReplyThatDraftedShowsItsAcceptanceAndTokensPerStep() {
    store::GenerationStats stats;
    stats.generated_tokens = 40;
    stats.tokens_per_second = 88.04;
    stats.time_to_first_token_ms = 120;
    stats.prompt_tokens = 300;
    stats.cached_tokens = 0;
    stats.drafted_tokens = 36;
    stats.accepted_tokens = 26;
    QCOMPARE(gui::drafts_text(stats), QStringLiteral("drafts 72% accepted, 2.9 tok/step"));
    QCOMPARE(gui::stats_text(stats),
             QStringLiteral("40 tokens · 88.0 tok/s · drafts 72% accepted, 2.9 tok/step · 120 ms "
                            "to first token · 0 of 300 prompt tokens from the cache"));
    // Kept with the reply, and read back.
    QCOMPARE(store::GenerationStats::from_json(stats.to_json()), stats);

    // Drafting on, nothing drafted (no repeat to copy): no figure at all.
    stats.drafted_tokens = 0;
    stats.accepted_tokens = 0;
    QCOMPARE(gui::drafts_text(stats), QString());
    QVERIFY(!stats.to_json().contains(QStringLiteral("drafted_tokens")));
    QCOMPARE(gui::stats_text(stats),
             QStringLiteral("40 tokens · 88.0 tok/s · 120 ms to first token · 0 of 300 prompt "
                            "tokens from the cache"));

    // From the engine's statistics.
    engine::JobResult result;
    result.statistics.generated_tokens = 40;
    result.statistics.drafted_tokens = 36;
    result.statistics.accepted_tokens = 26;
    const store::GenerationStats from_job = gui::generation_stats(result, QString());
    QCOMPARE(from_job.drafted_tokens, 36);
    QCOMPARE(from_job.accepted_tokens, 26);
  }

  // A chat resumed after a restart: the cache's figure says how much of it
  // was read from the disk tier; without disk tokens the line reads as before.
  void aReplyResumedFromDiskSaysHowManyTokensCameFromDisk() {
    store::GenerationStats stats;
    stats.generated_tokens = 12;
    stats.tokens_per_second = 20.0;
    stats.time_to_first_token_ms = 480;
    stats.prompt_tokens = 30500;
    stats.cached_tokens = 30464;
    QCOMPARE(gui::stats_text(stats),
             QStringLiteral("12 tokens · 20.0 tok/s · 480 ms to first token · 30464 of 30500 "
                            "prompt tokens from the cache"));
    QVERIFY(!stats.to_json().contains(QStringLiteral("disk_tokens")));
    stats.disk_tokens = 29952;
    QCOMPARE(gui::stats_text(stats),
             QStringLiteral("12 tokens · 20.0 tok/s · 480 ms to first token · 30464 of 30500 "
                            "prompt tokens from the cache, 29952 from disk"));
    // Kept with the reply, and read back.
    QCOMPARE(stats.to_json().value(QStringLiteral("disk_tokens")).toInt(), 29952);
    QCOMPARE(store::GenerationStats::from_json(stats.to_json()), stats);

    engine::JobResult result;
    result.statistics.prompt_tokens = 600;
    result.statistics.cached_tokens = 512;
    result.statistics.disk_tokens = 256;
    QCOMPARE(gui::generation_stats(result, QString()).disk_tokens, 256);
  }

  // A remote engine's reply names the engine, and one that does not report
  // its cache (-1) gets no cache figure rather than a wrong 0.
  void aRemoteReplyNamesItsEngineAndNoCacheItDidNotReport() {
    store::GenerationStats stats;
    stats.generated_tokens = 12;
    stats.tokens_per_second = 41.24;
    stats.time_to_first_token_ms = 230;
    stats.prompt_tokens = 30;
    stats.cached_tokens = -1;
    stats.endpoint = QStringLiteral("gpu-box:8000");
    QCOMPARE(gui::stats_text(stats), QStringLiteral("12 tokens · 41.2 tok/s · 230 ms to first "
                                                    "token · 30 prompt tokens · from "
                                                    "gpu-box:8000"));
    stats.cached_tokens = 16;
    QCOMPARE(gui::stats_text(stats), QStringLiteral("12 tokens · 41.2 tok/s · 230 ms to first "
                                                    "token · 16 of 30 prompt tokens from the "
                                                    "cache · from gpu-box:8000"));
    QCOMPARE(store::GenerationStats::from_json(stats.to_json()), stats);
  }

  // Esc after the first token: one token in the time it decoded, not 0.
  void aStoppedReplyReportsTheRateOfWhatItGenerated() {
    engine::JobResult result;
    result.stop_reason = engine::StopReason::Cancelled;
    result.statistics.generated_tokens = 1;
    result.statistics.decode_seconds = 0.25;
    QCOMPARE(gui::generation_stats(result, QString()).tokens_per_second, 4.0);

    result.statistics.generated_tokens = 9;
    result.statistics.decode_seconds = 0.5;
    QCOMPARE(gui::generation_stats(result, QString()).tokens_per_second, 18.0);

    // Finished normally: tokens after the first over the time between them.
    result.stop_reason = engine::StopReason::Eos;
    QCOMPARE(gui::generation_stats(result, QString()).tokens_per_second, 16.0);
  }

  void theStatusLineHidesARateOfNothing() {
    ui::StatusLine line;
    line.setTokensPerSecond(0);
    const auto* speed = line.findChild<QLabel*>(QStringLiteral("speedLabel"));
    QVERIFY(speed);
    QVERIFY(speed->isHidden());
  }

  // On a machine with no NVIDIA GPU at all, CPU is simply how Quire runs.
  void noCudaNoteWithoutAnNvidiaGpu() {
    const std::string no_driver =
        "no NVIDIA driver was found, or it is older than CUDA 12.4 needs "
        "(cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime "
        "version)";
    QCOMPARE(gui::cuda_fallback_note(no_driver, gui::NvidiaPresence{}, false), QString());
    QCOMPARE(gui::cuda_fallback_note("this build of Quire has no CUDA backend",
                                     gui::NvidiaPresence{}, false),
             QString());

    // A GPU whose driver cannot serve: plain words, no runtime error names.
    const gui::NvidiaPresence gpu{true, false};
    QCOMPARE(gui::cuda_fallback_note(no_driver, gpu, false),
             QStringLiteral("Running on the CPU: this machine's NVIDIA driver is missing or too "
                            "old for Quire's CUDA backend. Install or update the NVIDIA driver "
                            "to use the GPU."));
    QCOMPARE(gui::plain_cuda_reason(no_driver),
             QStringLiteral("no NVIDIA driver was found, or it is older than CUDA 12.4 needs"));
  }

  void theDemoModelSaysWhatItIs() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    const auto* name = window.findChild<QLabel*>(QStringLiteral("modelLabel"));
    QVERIFY(name);
    QCOMPARE(name->text(), QStringLiteral("Demo model (5.8M parameters)"));
    QCOMPARE(window.windowTitle(), QStringLiteral("Demo model (5.8M parameters) — Quire"));
    QWidget* empty = window.findChild<QWidget*>(QStringLiteral("emptyState"));
    QVERIFY(empty);
    QStringList texts;
    for (const QLabel* label : empty->findChildren<QLabel*>())
      texts << label->text();
    QVERIFY2(texts.contains(gui::demo_chat_title()), qPrintable(texts.join(u'|')));
    QVERIFY2(texts.contains(gui::demo_chat_hint()), qPrintable(texts.join(u'|')));
    QVERIFY(gui::demo_chat_hint().startsWith(
        QStringLiteral("This is a 5.8M-parameter demonstration model")));
    QVERIFY(gui::demo_chat_hint().contains(QStringLiteral("Model ▸ Settings…")));
  }

  // The texts of the status bar and the footer change with every reply; the
  // memory panel beside the chat keeps its width.
  void theMemoryPanelKeepsItsWidthAcrossReplies() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    window.resize(1024, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QWidget* dock = window.memoryDock();
    QVERIFY(dock && dock->isVisible());
    QVERIFY(run.send(QStringLiteral("Hello!")));
    QCoreApplication::processEvents();
    const int width = dock->width();
    window.setEngineState(QStringLiteral("Ready · %1").arg(QString(400, u'x')));
    window.statusLine()->setModelName(QString(300, u'y'));
    QVERIFY(run.send(QStringLiteral("Tell me a fortune.")));
    QCoreApplication::processEvents();
    QCOMPARE(dock->width(), width);
    QCOMPARE(window.width(), 1024);
  }

  // In the window as the walkthrough sees it (1280 px, memory panel open),
  // the footer shows whole items only: none cut into a fragment, and the
  // model name, if shortened, ends in "…".
  void theFooterShowsWholeItemsInANarrowColumn() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    window.resize(1280, 800);
    window.memoryDock()->show();
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(run.send(QStringLiteral("Hello!")));
    QCoreApplication::processEvents();
    ui::StatusLine* line = window.statusLine();
    QCoreApplication::processEvents();
    for (QLabel* label : line->findChildren<QLabel*>()) {
      if (!label->isVisible() || label->text() == QStringLiteral("·")) continue;
      const QString whole = line->itemText(label->objectName());
      if (label->text() != whole) {
        QVERIFY2(label->objectName() == QStringLiteral("modelLabel") &&
                     label->text().endsWith(QChar(0x2026)),
                 qPrintable(label->objectName() + QStringLiteral(": ") + label->text()));
      }
      QVERIFY2(label->width() >= label->sizeHint().width(),
               qPrintable(QStringLiteral("%1 \"%2\": %3 of %4 px")
                              .arg(label->objectName(), label->text())
                              .arg(label->width())
                              .arg(label->sizeHint().width())));
    }
  }

  void theMessageBoxKeepsClearOfTheWindowsEdge() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    window.resize(1024, 700);
    window.memoryDock()->hide();
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QWidget* input = window.input();
    QTRY_VERIFY(input->isVisible());
    const QRect box(input->mapTo(&window, QPoint(0, 0)), input->size());
    QVERIFY2(
        box.right() <= window.width() - 12,
        qPrintable(QStringLiteral("box ends at %1 of %2").arg(box.right()).arg(window.width())));
  }

  // The chart's time axis in the memory panel of a 1024-pixel window, the
  // panel as narrow as it goes: every label whole (Qt Charts elides a label
  // that has no room with "..."), in order without overlapping, and inside the
  // chart's visible area.
  void theChartsTimeLabelsStayWholeInsideTheWindowAt1024Pixels() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    window.resize(1024, 768);
    window.memoryDock()->show();
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    // As narrow as the user can drag the panel.
    QDockWidget* dock = window.memoryDock();
    window.resizeDocks({dock}, {dock->minimumSizeHint().width()}, Qt::Horizontal);
    QVERIFY(run.send(QStringLiteral("Hello!")));
    auto* view = window.findChild<QChartView*>(QStringLiteral("memoryHistoryChart"));
    QVERIFY(view);
    QTRY_VERIFY(view->isVisible() && view->width() > 0);
    QCoreApplication::processEvents();
    const QRectF plot = view->chart()->plotArea();
    QVERIFY(!plot.isEmpty());

    QList<QRect> labels;
    QStringList texts;
    for (QGraphicsItem* item : view->scene()->items(Qt::AscendingOrder)) {
      auto* text = dynamic_cast<QGraphicsTextItem*>(item);
      if (!text || !text->isVisible() || text->toPlainText().isEmpty()) continue;
      const QRectF scene_rect = text->sceneBoundingRect();
      // The time axis' labels sit right under the plot; the axis title and
      // the legend come below them.
      if (scene_rect.top() < plot.bottom() || scene_rect.top() > plot.bottom() + 8) continue;
      texts << text->toPlainText();
      labels << view->mapFromScene(scene_rect).boundingRect();
    }
    QCOMPARE(texts, (QStringList{QStringLiteral("-300"), QStringLiteral("-200"),
                                 QStringLiteral("-100"), QStringLiteral("0")}));
    const QRect visible = view->viewport()->rect();
    for (qsizetype i = 0; i < labels.size(); ++i) {
      QVERIFY2(visible.contains(labels[i]), qPrintable(QStringLiteral("\"%1\" at %2..%3 of 0..%4")
                                                           .arg(texts[i])
                                                           .arg(labels[i].left())
                                                           .arg(labels[i].right())
                                                           .arg(visible.right())));
      if (i > 0) QVERIFY2(labels[i - 1].right() < labels[i].left(), qPrintable(texts[i]));
    }
  }
};

QUIRE_TEST(ReportedNumbersTest)
#include "test_reported_numbers.moc"
