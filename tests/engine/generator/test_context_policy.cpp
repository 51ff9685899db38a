// The context policies as plan_context() applies them to token counts: which
// turns go, how many tokens, and how many the paged prefix cache recomputes.
// The worked example here is the one docs/context-policy.md walks through.

#include <QTest>
#include <string>
#include <vector>

#include "quire/engine/generator/context_policy.h"
#include "quire/engine/generator/conversation.h"
#include "test_main.h"

using namespace quire::engine;

namespace {

// A system prompt of 100 tokens, a long first turn, six turns of 300 and a
// newest turn of 200: 2,600 tokens in a context of 2,048 with 248 kept for
// the reply, so 1,800 of room and a target of 900.
ContextShape long_chat() {
  ContextShape shape;
  shape.preamble = 100;
  shape.turns = {500, 300, 300, 300, 300, 300, 300, 200};
  shape.context = 2048;
  shape.reserve = 248;
  return shape;
}

}  // namespace

class ContextPolicyTest : public QObject {
  Q_OBJECT

 private slots:
  void namesRoundTripAndLmStudioSpellingsParse() {
    for (const ContextPolicy policy :
         {ContextPolicy::Stop, ContextPolicy::DropOldest, ContextPolicy::TruncateMiddle}) {
      QCOMPARE(parse_context_policy(to_string(policy)), std::optional(policy));
    }
    QCOMPARE(to_string(ContextPolicy::TruncateMiddle), std::string_view("truncate_middle"));
    QCOMPARE(parse_context_policy("drop-oldest"), std::optional(ContextPolicy::DropOldest));
    QCOMPARE(parse_context_policy("truncate-middle"), std::optional(ContextPolicy::TruncateMiddle));
    QCOMPARE(parse_context_policy("stopAtLimit"), std::optional(ContextPolicy::Stop));
    QCOMPARE(parse_context_policy("rollingWindow"), std::optional(ContextPolicy::DropOldest));
    QCOMPARE(parse_context_policy("truncateMiddle"), std::optional(ContextPolicy::TruncateMiddle));
    QCOMPARE(parse_context_policy("Stop"), std::optional<ContextPolicy>());
    QCOMPARE(parse_context_policy(""), std::optional<ContextPolicy>());
  }

  void nothingHappensWhileItFits() {
    ContextShape shape = long_chat();
    shape.context = 2600 + 248;
    for (const ContextPolicy policy :
         {ContextPolicy::Stop, ContextPolicy::DropOldest, ContextPolicy::TruncateMiddle}) {
      const ContextPlan plan = plan_context(policy, shape);
      QCOMPARE(plan.outcome, ContextPlan::Outcome::Fits);
      QCOMPARE(plan.tokens_after, std::int64_t{2600});
      QCOMPARE(plan.recomputed_tokens, std::int64_t{0});
      QCOMPARE(plan.over_by, std::int64_t{0});
      QCOMPARE(describe(plan), std::string());
    }
  }

  void stopSaysHowFarOver() {
    const ContextPlan plan = plan_context(ContextPolicy::Stop, long_chat());
    QCOMPARE(plan.outcome, ContextPlan::Outcome::Stopped);
    QCOMPARE(plan.over_by, std::int64_t{800});
    QCOMPARE(plan.dropped_turns, 0);
    QCOMPARE(plan.tokens_after, std::int64_t{2600});
    QCOMPARE(describe(plan), std::string("the chat is 800 tokens over the context"));
    const std::string why = stopped_message(plan, long_chat());
    QVERIFY2(why.find("800 tokens over the context of 2,048") != std::string::npos, why.c_str());
    QVERIFY2(why.find("choose another policy") != std::string::npos, why.c_str());

    // A message not among the turns yet takes its room too.
    ContextShape sending = long_chat();
    sending.incoming = 40;
    const ContextPlan with_message = plan_context(ContextPolicy::Stop, sending);
    QCOMPARE(with_message.over_by, std::int64_t{840});
    const std::string said = stopped_message(with_message, sending);
    QVERIFY2(said.find("248 kept for the reply and about 40 for the new message that is 840 "
                       "tokens over the context of 2,048") != std::string::npos,
             said.c_str());
  }

  // 2,600 → turns 1–5 go (2,100, 1,800, 1,500, 1,200, then 900 ≤ 900). Only
  // the 100-token system prompt stays in front: less than a page, so the
  // cache serves nothing and all 900 tokens are read again.
  void dropOldestGoesDownToHalfTheRoom() {
    const ContextPlan plan = plan_context(ContextPolicy::DropOldest, long_chat());
    QCOMPARE(plan.outcome, ContextPlan::Outcome::Dropped);
    QCOMPARE(plan.first_dropped, 0);
    QCOMPARE(plan.dropped_turns, 5);
    QCOMPARE(plan.first_dropped_turn(), 1);
    QCOMPARE(plan.last_dropped_turn(), 5);
    QCOMPARE(plan.tokens_before, std::int64_t{2600});
    QCOMPARE(plan.tokens_after, std::int64_t{900});
    QCOMPARE(plan.dropped_tokens(), std::int64_t{1700});
    QCOMPARE(plan.over_by, std::int64_t{800});
    QCOMPARE(plan.kept_prefix, std::int64_t{100});
    QCOMPARE(plan.reused_tokens, std::int64_t{0});
    QCOMPARE(plan.recomputed_tokens, std::int64_t{900});
    QCOMPARE(describe(plan),
             std::string("turns 1\u20135 left the context (1,700 tokens); 900 tokens read again"));
  }

  // The system prompt and the first turn (600 tokens) stay; turns 2–7 go
  // (2,300 … 800 ≤ 900). The 600 unchanged tokens hold two full pages (512),
  // so only 288 of the 800 are read again.
  void truncateMiddleKeepsTheFirstTurn() {
    const ContextPlan plan = plan_context(ContextPolicy::TruncateMiddle, long_chat());
    QCOMPARE(plan.outcome, ContextPlan::Outcome::Dropped);
    QCOMPARE(plan.first_dropped, 1);
    QCOMPARE(plan.dropped_turns, 6);
    QCOMPARE(plan.first_dropped_turn(), 2);
    QCOMPARE(plan.last_dropped_turn(), 7);
    QCOMPARE(plan.tokens_after, std::int64_t{800});
    QCOMPARE(plan.dropped_tokens(), std::int64_t{1800});
    QCOMPARE(plan.kept_prefix, std::int64_t{600});
    QCOMPARE(plan.reused_tokens, std::int64_t{512});
    QCOMPARE(plan.recomputed_tokens, std::int64_t{288});
  }

  // A first turn too long to keep beside the newest goes as the oldest would.
  void truncateMiddleLetsAFirstTurnTooLongGo() {
    ContextShape shape = long_chat();
    shape.turns.front() = 1600;  // 100 + 1,600 + 200 > 1,800
    const ContextPlan plan = plan_context(ContextPolicy::TruncateMiddle, shape);
    QCOMPARE(plan.first_dropped, 0);
    QCOMPARE(plan.dropped_turns, 5);
    QCOMPARE(plan.tokens_after, std::int64_t{900});
    QCOMPARE(plan.recomputed_tokens, std::int64_t{900});
  }

  // Formats that write the system prompt into the first user message render
  // the new first turn again, larger.
  void theNewFirstTurnTakesItsSizeAsFirst() {
    ContextShape shape = long_chat();
    shape.turns_as_first = {500, 340, 340, 340, 340, 340, 340, 240};
    const ContextPlan plan = plan_context(ContextPolicy::DropOldest, shape);
    // Five turns leave 100 + 340 + 300 + 200 = 940 > 900: six go.
    QCOMPARE(plan.dropped_turns, 6);
    QCOMPARE(plan.tokens_after, std::int64_t{100 + 340 + 200});
  }

  void aNewestTurnTooLongIsRefusedWithItsSizes() {
    ContextShape shape = long_chat();
    shape.turns = {300, 2000};
    for (const ContextPolicy policy : {ContextPolicy::DropOldest, ContextPolicy::TruncateMiddle}) {
      try {
        plan_context(policy, shape);
        QFAIL("no error");
      } catch (const ContextOverflow& error) {
        QCOMPARE(error.needed(), std::int64_t{2100 + 248});
        QCOMPARE(error.available(), std::int64_t{2048});
        const std::string what = error.what();
        QVERIFY2(what.find("takes 2,000 tokens and the system prompt 100, 2,100 together") !=
                     std::string::npos,
                 what.c_str());
        QVERIFY2(what.find("exceeds the context of 2,048 tokens, which leaves 1,800") !=
                     std::string::npos,
                 what.c_str());
      }
    }
    // Stop reports it as over, like any other chat that does not fit.
    QCOMPARE(plan_context(ContextPolicy::Stop, shape).over_by, std::int64_t{600});
  }

  void badShapesAreRefused() {
    ContextShape shape = long_chat();
    shape.turns.clear();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_context(ContextPolicy::Stop, shape));
    shape = long_chat();
    shape.turns_as_first = {1, 2};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_context(ContextPolicy::Stop, shape));
    shape = long_chat();
    shape.reserve = shape.context;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_context(ContextPolicy::Stop, shape));
  }
};

QUIRE_TEST(ContextPolicyTest)

#include "test_context_policy.moc"
