#include <QTest>

#include "planner_test_helpers.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

class PlanSummaryTest : public QObject {
  Q_OBJECT

 private slots:
  void fittingPlanOneLinePerDevice() {
    PlacementRequest request = model_a(1024);
    request.devices.push_back(device(2, "C", 100 * MiB));
    QCOMPARE(describe_plan(plan_placement(request)),
             std::string(
                 "fill in order, 1024-token context (4 pages of 256): fits; largest context 3840 "
                 "tokens\n"
                 "  device 0 (A): embedding, layers 0-2 — weights 700 MiB, cache 120 MiB, "
                 "scratch 64 MiB; free 1000 MiB, reserve 36 MiB, left 116 MiB\n"
                 "  device 1 (B): layer 3, head — weights 350 MiB, cache 40 MiB, scratch 114 MiB; "
                 "free 1000 MiB, reserve 36 MiB, left 496 MiB\n"
                 "  device 2 (C): unused — free 100 MiB, reserve 36 MiB\n"
                 "  note: device 2 (C) has 64 MiB free after the 36 MiB reserve, too little for "
                 "any module (the smallest, model.embed_tokens, needs 164 MiB with scratch); not "
                 "used\n"));
  }

  // A mixed model: layers 0 and 2 slide, their window pool holds at most 2
  // pages, so with 4 pages in the main pool their caches are 20 MiB (layers
  // 0-2: 20 + 40 + 20). At 28 pages device 0 holds the embedding and layers
  // 0 and 1 (810 of its 900 MiB after scratch) and device 1 layers 2 and 3
  // and the head (220 + 480 + 200 + 64 = 964 MiB); at 29, 974 MiB.
  void aWindowPoolIsNamedWithItsPages() {
    PlacementRequest request = model_a(1024);
    request.modules[1].in_window_pool = true;
    request.modules[3].in_window_pool = true;
    request.window_pool_pages = 2;
    const std::string text = describe_plan(plan_placement(request));
    QCOMPARE(text.substr(0, text.find('\n')),
             std::string("fill in order, 1024-token context (4 pages of 256; the sliding layers' "
                         "window pool 2 pages): fits; largest context 7168 tokens"));
    QVERIFY(text.find("layers 0-2 — weights 700 MiB, cache 80 MiB") != std::string::npos);
  }

  void failingPlanShowsTheOverflow() {
    QCOMPARE(
        describe_plan(plan_placement(model_a(8192))),
        std::string("fill in order, 8192-token context (32 pages of 256): does not fit: needs 1824 "
                    "MiB on device 1 (B), has 964 MiB free after the 36 MiB reserve — lower the "
                    "context to 3840 tokens, use a smaller cache format, or add a device\n"
                    "  device 0 (A): embedding, layer 0 — weights 300 MiB, cache 320 MiB, scratch "
                    "64 MiB; free 1000 MiB, reserve 36 MiB, left 316 MiB\n"
                    "  device 1 (B): layers 1-3, head — weights 750 MiB, cache 960 MiB, scratch "
                    "114 MiB; free 1000 MiB, reserve 36 MiB, left -824 MiB\n"));
  }

  void gibAndManualLimits() {
    PlacementRequest request;
    request.modules = layers_only(6, GiB);
    request.devices = {device(0, "big", 24 * GiB), device(1, "small", 12 * GiB)};
    request.policy.mode = PlacementMode::Manual;
    request.policy.default_reserve_bytes = 0;
    request.policy.manual_limit_bytes = {4 * GiB, 12 * GiB};
    QCOMPARE(describe_plan(plan_placement(request)),
             std::string("manual, 0-token context (0 pages of 256): fits; the context is not "
                         "limited by memory\n"
                         "  device 0 (big): layers 0-3 — weights 4.00 GiB, cache 0 B, scratch 0 B; "
                         "free 24.00 GiB, reserve 0 B, limit 4.00 GiB, left 20.00 GiB\n"
                         "  device 1 (small): layers 4-5 — weights 2.00 GiB, cache 0 B, scratch "
                         "0 B; free 12.00 GiB, reserve 0 B, left 10.00 GiB\n"));
  }
};

QUIRE_TEST(PlanSummaryTest)
#include "test_plan_summary.moc"
