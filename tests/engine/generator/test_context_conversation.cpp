// Conversation::fit() under each context policy: the prompt a long chat
// becomes, with a built-in format and with a chat template, and Stop's refusal.

#include <QTest>
#include <algorithm>
#include <string>
#include <vector>

#include "generator_test_support.h"
#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/context_policy.h"
#include "quire/engine/generator/conversation.h"
#include "test_main.h"

using namespace quire::engine;
using quire::test::marker_tokenizer;
using quire::test::readable;

namespace {

using TokenIds = std::vector<std::int32_t>;

// Ten turns of one question and one reply each, the newest awaiting its reply.
template <typename Format>
Conversation long_conversation(Format format) {
  const Tokenizer& t = marker_tokenizer();
  Conversation chat(std::move(format), t, "Be brief.");
  for (int turn = 0; turn < 10; ++turn) {
    chat.begin_turn("question " + std::to_string(turn) + " asks about pages and the cache");
    chat.end_turn(t.encode("reply " + std::to_string(turn) + " explains the pages", false), true);
  }
  chat.begin_turn("the newest question");
  return chat;
}

// The ids of messages [from, to) of a conversation as it was.
TokenIds ids_of(const std::vector<Message>& messages, std::size_t from, std::size_t to) {
  TokenIds ids;
  for (std::size_t i = from; i < to; ++i)
    ids.insert(ids.end(), messages[i].tokens.begin(), messages[i].tokens.end());
  return ids;
}

ChatFormat chatml_template() {
  auto chat_template = std::make_shared<const ChatTemplate>(
      ChatTemplateSource{"{%- for message in messages %}"
                         "{{ '<|im_start|>' + message.role + '\\n' + message.content + "
                         "'<|im_end|>' + '\\n' }}"
                         "{%- endfor %}"
                         "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
                         "{%- endif %}",
                         "tokenizer_config.json",
                         {}},
      std::map<std::string, std::string>{{"bos_token", "<|begin_of_text|>"},
                                         {"eos_token", "<|endoftext|>"}});
  return check_chat_template(chat_template, PromptFormatId::ChatML).format;
}

}  // namespace

class ContextConversationTest : public QObject {
  Q_OBJECT

 private slots:
  // The prompt is the system message, the first turn and the newest turns,
  // exactly; what went is what plan_context() says for the chat's shape.
  void truncateMiddleKeepsTheHeadAndTheNewestTurns() {
    Conversation chat = long_conversation(ChatFormat(PromptFormatId::ChatML));
    const std::vector<Message> before = chat.messages();
    const std::int64_t total = chat.token_count();
    const std::int64_t context = total - 20;
    const std::int64_t reserve = 40;
    const ContextPlan plan =
        plan_context(ContextPolicy::TruncateMiddle, chat.context_shape(context, reserve));

    const std::optional<Trimmed> trimmed =
        chat.fit(context, reserve, ContextPolicy::TruncateMiddle);
    QVERIFY(trimmed);
    QCOMPARE(plan.first_dropped, 1);
    QCOMPARE(trimmed->first_turn, 1);
    QCOMPARE(trimmed->turns, plan.dropped_turns);
    QCOMPARE(trimmed->tokens, plan.dropped_tokens());
    QCOMPARE(trimmed->recomputed, plan.recomputed_tokens);
    QCOMPARE(chat.token_count(), plan.tokens_after);

    // Messages: system (0), turn 0 (1, 2), the dropped turns, then the rest.
    const std::size_t resume = 1 + 2 * static_cast<std::size_t>(1 + trimmed->turns);
    TokenIds expected = ids_of(before, 0, 3);
    const TokenIds rest = ids_of(before, resume, before.size());
    expected.insert(expected.end(), rest.begin(), rest.end());
    QCOMPARE(chat.ids(), expected);
    const std::string prompt = readable(marker_tokenizer(), chat.ids());
    QVERIFY2(prompt.find("question 0 ") != std::string::npos, prompt.c_str());
    QVERIFY2(prompt.find("question 1 ") == std::string::npos, prompt.c_str());
    QVERIFY2(prompt.find("the newest question") != std::string::npos, prompt.c_str());
    QCOMPARE(chat.messages().back(), before.back());
    // The unchanged start is the system message and the first turn, and the
    // markers the next kept turn happens to begin with as the dropped one did.
    const TokenIds old_prompt = ids_of(before, 0, before.size());
    const auto same = std::mismatch(old_prompt.begin(), old_prompt.end(), chat.ids().begin());
    QVERIFY(same.first - old_prompt.begin() >=
            static_cast<std::ptrdiff_t>(ids_of(before, 0, 3).size()));
    QCOMPARE(chat.recomputed_tokens(), chat.token_count() - (same.first - old_prompt.begin()));
  }

  void dropOldestMatchesThePlanToo() {
    Conversation chat = long_conversation(ChatFormat(PromptFormatId::Llama2));
    const std::int64_t context = chat.token_count() - 20;
    const ContextPlan plan =
        plan_context(ContextPolicy::DropOldest, chat.context_shape(context, 40));
    const std::optional<Trimmed> trimmed = chat.fit(context, 40, ContextPolicy::DropOldest);
    QVERIFY(trimmed);
    QCOMPARE(trimmed->first_turn, 0);
    QCOMPARE(trimmed->turns, plan.dropped_turns);
    QCOMPARE(chat.token_count(), plan.tokens_after);
    // Llama 2 writes the system prompt into the first user message: it moved.
    const std::string prompt = readable(marker_tokenizer(), chat.messages()[1].tokens);
    QVERIFY2(prompt.find("Be brief.") != std::string::npos, prompt.c_str());
  }

  void stopRefusesAndChangesNothing() {
    Conversation chat = long_conversation(ChatFormat(PromptFormatId::ChatML));
    const TokenIds before = chat.ids();
    const std::int64_t over = 30;
    try {
      chat.fit(chat.token_count() + 40 - over, 40, ContextPolicy::Stop);
      QFAIL("no error");
    } catch (const ContextOverflow& error) {
      const std::string what = error.what();
      QVERIFY2(what.find(std::to_string(over) + " tokens over the context") != std::string::npos,
               what.c_str());
      QCOMPARE(error.needed(), chat.token_count() + 40);
    }
    QCOMPARE(chat.ids(), before);
    QCOMPARE(chat.fit(chat.token_count() + 40, 40, ContextPolicy::Stop), std::optional<Trimmed>());
  }

  // With a template the candidates are rendered; the first turn stays and the
  // next turn extends the shortened prompt.
  void truncateMiddleWithAChatTemplate() {
    const Tokenizer& t = marker_tokenizer();
    Conversation chat = long_conversation(chatml_template());
    const std::int64_t context = chat.token_count() - 20;
    const std::optional<Trimmed> trimmed = chat.fit(context, 40, ContextPolicy::TruncateMiddle);
    QVERIFY(trimmed);
    QCOMPARE(trimmed->first_turn, 1);
    QVERIFY(chat.token_count() <= (context - 40) / 2);
    const std::string text = chat.text();
    QVERIFY2(text.starts_with("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n"
                              "question 0 "),
             text.c_str());
    QVERIFY2(text.find("question 1 ") == std::string::npos, text.c_str());
    QCOMPARE(readable(t, chat.ids()), text);
    QCOMPARE(static_cast<int>(chat.messages().size()), 1 + 2 + 2 * (10 - 1 - trimmed->turns) + 1);
    const TokenIds shortened = chat.ids();
    chat.end_turn(t.encode("fine", false), true);
    const TokenIds next = chat.begin_turn("more");
    QVERIFY(std::equal(shortened.begin(), shortened.end(), next.begin()));
    QCOMPARE(chat.recomputed_tokens(), std::int64_t{0});
  }
};

QUIRE_TEST(ContextConversationTest)

#include "test_context_conversation.moc"
