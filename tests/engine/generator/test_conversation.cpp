#include <QTest>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "generator_test_support.h"
#include "quire/engine/generator/conversation.h"
#include "test_main.h"

using namespace quire::engine;
using quire::test::marker_tokenizer;
using quire::test::plain_tokenizer;
using quire::test::readable;

namespace {

using Ids = std::vector<std::int32_t>;

bool starts_with(const Ids& ids, const Ids& prefix) {
  return ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

Ids concat(const Ids& a, const Ids& b) {
  Ids out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

Ids all_message_tokens(const Conversation& conversation) {
  Ids out;
  for (const Message& message : conversation.messages())
    out.insert(out.end(), message.tokens.begin(), message.tokens.end());
  return out;
}

// Messages of varied length, with accents and symbols among the words. The
// generator only shapes inputs; nothing here depends on its exact values.
std::string random_message(std::mt19937& random) {
  static const char* const kWords[] = {"the", "cache", "page", "Hello",      "world", "naïve",
                                       "€5",  "why?",  "123",  "<|im_end|>", "\n",    "ok."};
  std::string text;
  for (std::size_t n = 1 + random() % 12; n > 0; --n) {
    if (!text.empty()) text += ' ';
    text += kWords[random() % std::size(kWords)];
  }
  return text;
}

Ids tokens_of(const Tokenizer& tokenizer, const std::string& text) {
  return tokenizer.encode(text, false);
}

// A chat of `turns` exchanges with messages of about `words` words each.
Conversation chat(PromptFormatId format, int turns, int words) {
  const Tokenizer& t = marker_tokenizer();
  Conversation conversation(format, t, "Be brief.");
  std::string message;
  for (int w = 0; w < words; ++w)
    message += "word ";
  for (int turn = 0; turn < turns; ++turn) {
    conversation.begin_turn("turn " + std::to_string(turn) + " " + message);
    conversation.end_turn(tokens_of(t, "reply " + message), false);
  }
  return conversation;
}

}  // namespace

class ConversationTest : public QObject {
  Q_OBJECT

 private slots:
  // The property the prefix cache lives on: turn N+1's prompt starts with
  // turn N's prompt followed by exactly the reply ids of turn N.
  void eachPromptExtendsThePrevious_data() {
    QTest::addColumn<PromptFormatId>("format");
    QTest::addColumn<bool>("markers");
    for (const PromptFormatId id : all_prompt_formats()) {
      const QByteArray name(to_string(id).data(), static_cast<qsizetype>(to_string(id).size()));
      QTest::newRow((name + ", markers").constData()) << id << true;
      QTest::newRow((name + ", text").constData()) << id << false;
    }
  }

  void eachPromptExtendsThePrevious() {
    QFETCH(PromptFormatId, format);
    QFETCH(bool, markers);
    const Tokenizer& t = markers ? marker_tokenizer() : plain_tokenizer();
    std::mt19937 random(static_cast<unsigned>(format) * 2 + markers);
    Conversation conversation(format, t, "You answer in one line.");
    Ids previous;
    std::vector<std::string> sent;
    for (int turn = 0; turn < 10; ++turn) {
      sent.push_back(random_message(random));
      const Ids prompt = conversation.begin_turn(sent.back());
      QVERIFY2(starts_with(prompt, previous), qPrintable(QString("turn %1").arg(turn)));
      QCOMPARE(prompt, conversation.ids());
      QCOMPARE(conversation.token_count(), static_cast<std::int64_t>(prompt.size()));

      Ids reply = tokens_of(t, random_message(random));
      const bool stopped = random() % 2 == 0;
      if (stopped && random() % 2 == 0) reply.push_back(conversation.stops().tokens.front());
      conversation.end_turn(reply, stopped);
      previous = concat(prompt, reply);
      QCOMPARE(all_message_tokens(conversation), conversation.ids());
    }
    QCOMPARE(conversation.turn_count(), 10);
    QCOMPARE(conversation.messages().size(), std::size_t{21});

    // Restored from what a chat store keeps, the conversation continues
    // identically, without tokenizing the old messages again.
    Conversation restored = Conversation::restore(format, t, conversation.messages());
    QCOMPARE(restored.ids(), conversation.ids());
    QCOMPARE(restored.begin_turn("And now?"), conversation.begin_turn("And now?"));
  }

  void endTurnClosesTheReply_data() {
    QTest::addColumn<PromptFormatId>("format");
    QTest::addColumn<QStringList>("replyEnd");  // pieces appended to the reply
    QTest::addColumn<bool>("closedByStopToken");
    QTest::addColumn<QString>("expected");  // readable reply and closing
    QTest::newRow("chatml, cut off")
        << PromptFormatId::ChatML << QStringList{} << false << "Hello!<|im_end|>\n";
    QTest::newRow("chatml, stop token excluded by the generator")
        << PromptFormatId::ChatML << QStringList{} << true << "Hello!<|im_end|>\n";
    QTest::newRow("chatml, stop token included")
        << PromptFormatId::ChatML << QStringList{"<|im_end|>"} << true << "Hello!<|im_end|>\n";
    QTest::newRow("chatml, the other stop token kept as the marker")
        << PromptFormatId::ChatML << QStringList{"</s>"} << true << "Hello!</s>\n";
    QTest::newRow("chatml, the whole closing already there")
        << PromptFormatId::ChatML << QStringList{"<|im_end|>", "\n"} << false
        << "Hello!<|im_end|>\n";
    QTest::newRow("llama3, marker included")
        << PromptFormatId::Llama3 << QStringList{"<|eot_id|>"} << false << "Hello!<|eot_id|>";
    QTest::newRow("llama3, marker excluded")
        << PromptFormatId::Llama3 << QStringList{} << true << "Hello!<|eot_id|>";
    QTest::newRow("llama2, EOS included")
        << PromptFormatId::Llama2 << QStringList{"</s>"} << true << "Hello!</s>";
    QTest::newRow("llama2, cut off")
        << PromptFormatId::Llama2 << QStringList{} << false << "Hello!</s>";
    QTest::newRow("gemma, marker included")
        << PromptFormatId::Gemma << QStringList{"<end_of_turn>"} << true << "Hello!<end_of_turn>\n";
    QTest::newRow("plain, EOS stays and the blank line follows")
        << PromptFormatId::Plain << QStringList{"</s>"} << true << "Hello!</s>\n\n";
  }

  void endTurnClosesTheReply() {
    QFETCH(PromptFormatId, format);
    QFETCH(QStringList, replyEnd);
    QFETCH(bool, closedByStopToken);
    QFETCH(QString, expected);
    const Tokenizer& t = marker_tokenizer();
    Conversation conversation(format, t);
    conversation.begin_turn("Hi");
    Ids reply = tokens_of(t, "Hello!");
    for (const QString& piece : replyEnd) {
      if (piece == "\n") {
        const Ids newline = tokens_of(t, "\n");
        reply.insert(reply.end(), newline.begin(), newline.end());
      } else {
        reply.push_back(t.find_piece(piece.toStdString()).value());
      }
    }
    conversation.end_turn(reply, closedByStopToken);
    const Message& stored = conversation.messages().back();
    QCOMPARE(stored.role, Role::Assistant);
    QVERIFY(starts_with(stored.tokens, reply));  // never re-tokenized
    QCOMPARE(QString::fromStdString(readable(t, stored.tokens)), expected);
  }

  void replyTextIsKeptOrDecoded() {
    const Tokenizer& t = marker_tokenizer();
    Conversation conversation(PromptFormatId::ChatML, t);
    conversation.begin_turn("Hi");
    Ids reply = tokens_of(t, "Hello there");
    reply.push_back(t.find_piece("<|im_end|>").value());
    conversation.end_turn(reply, true);
    QCOMPARE(conversation.messages().back().text, std::string("Hello there"));
    conversation.begin_turn("Again");
    conversation.end_turn(reply, true, "Hello");  // what was shown, a stop string cut
    QCOMPARE(conversation.messages().back().text, std::string("Hello"));
  }

  void turnsAlternate() {
    Conversation conversation(PromptFormatId::ChatML, marker_tokenizer());
    QVERIFY(!conversation.awaiting_reply());
    QVERIFY_THROWS_EXCEPTION(std::logic_error, conversation.end_turn(Ids{5}, false));
    conversation.begin_turn("Hi");
    QVERIFY(conversation.awaiting_reply());
    QVERIFY_THROWS_EXCEPTION(std::logic_error, conversation.begin_turn("Hi again"));
    conversation.end_turn(Ids{}, false);  // an empty reply still closes the turn
    QCOMPARE(conversation.turn_count(), 1);
  }

  void fitDoesNothingWhileItFits() {
    Conversation conversation = chat(PromptFormatId::ChatML, 3, 5);
    const Ids before = conversation.ids();
    QCOMPARE(conversation.fit(before.size() + 10, 10), std::optional<Trimmed>());
    QCOMPARE(conversation.ids(), before);
  }

  // Dropping turns happens in one large step down to about half of what the
  // reply leaves, so the prompt is re-read rarely; the system prompt and the
  // newest message stay.
  void fitDropsOldTurnsInOneStep_data() {
    QTest::addColumn<PromptFormatId>("format");
    QTest::newRow("chatml") << PromptFormatId::ChatML;
    QTest::newRow("llama3") << PromptFormatId::Llama3;
    QTest::newRow("llama2, system in the first message") << PromptFormatId::Llama2;
    QTest::newRow("gemma, system in the first message") << PromptFormatId::Gemma;
  }

  void fitDropsOldTurnsInOneStep() {
    QFETCH(PromptFormatId, format);
    const Tokenizer& t = marker_tokenizer();
    Conversation conversation = chat(format, 10, 8);
    conversation.begin_turn("newest question");
    const std::vector<Message> before = conversation.messages();
    const std::int64_t total = conversation.token_count();
    const std::int64_t max_tokens = total - 40;
    const std::int64_t reserve = 60;
    const std::int64_t room = max_tokens - reserve;

    const std::optional<Trimmed> trimmed = conversation.fit(max_tokens, reserve);
    QVERIFY(trimmed.has_value());
    QVERIFY2(trimmed->turns >= 5, qPrintable(QString::number(trimmed->turns)));
    QCOMPARE(trimmed->tokens, total - conversation.token_count());
    QVERIFY(conversation.token_count() <= room / 2);
    const auto dropped = static_cast<std::size_t>(trimmed->turns);
    if (!PromptFormat::get(format).system_in_first_message()) {
      // One turn fewer would not have reached half. (Where the first message
      // is rendered again with the system prompt, the sizes shift a little.)
      const std::int64_t one_fewer =
          conversation.token_count() +
          static_cast<std::int64_t>(before[2 * dropped - 1].tokens.size() +
                                    before[2 * dropped].tokens.size());
      QVERIFY(one_fewer > room / 2);
    }

    const std::vector<Message>& after = conversation.messages();
    QCOMPARE(after.front(), before.front());  // the system message, untouched
    QCOMPARE(after.back(), before.back());    // the newest message, awaiting its reply
    QCOMPARE(after.size(), before.size() - 2 * dropped);
    QCOMPARE(conversation.turn_count(), 11 - trimmed->turns);
    QCOMPARE(all_message_tokens(conversation), conversation.ids());
    const std::string first = readable(t, after[1].tokens);
    const std::string expected_start = "turn " + std::to_string(dropped) + " ";
    QVERIFY2(first.find(expected_start) != std::string::npos, first.c_str());
    if (PromptFormat::get(format).system_in_first_message()) {
      QVERIFY2(first.find("Be brief.") != std::string::npos, first.c_str());
    }
    QVERIFY(readable(t, conversation.ids()).find("Be brief.") != std::string::npos);

    // It fits now; the next turns extend this prompt again.
    QCOMPARE(conversation.fit(max_tokens, reserve), std::optional<Trimmed>());
    const Ids prompt = conversation.ids();
    conversation.end_turn(tokens_of(t, "fine"), false);
    QVERIFY(starts_with(conversation.begin_turn("more"), prompt));
  }

  void fitRefusesWhenTheNewestMessageCannotFit() {
    Conversation conversation = chat(PromptFormatId::ChatML, 2, 3);
    std::string huge;
    for (int i = 0; i < 200; ++i)
      huge += "word ";
    conversation.begin_turn(huge);
    const Ids before = conversation.ids();
    const std::int64_t newest_alone =
        static_cast<std::int64_t>(conversation.messages().front().tokens.size() +
                                  conversation.messages().back().tokens.size());
    try {
      conversation.fit(newest_alone + 50, 100);
      QFAIL("no error");
    } catch (const ContextOverflow& error) {
      QCOMPARE(error.needed(), newest_alone + 100);
      QCOMPARE(error.available(), newest_alone + 50);
      QVERIFY2(QString::fromUtf8(error.what()).contains("exceeds the context"), error.what());
    }
    QCOMPARE(conversation.ids(), before);  // unchanged
    // With room for it, the old turns go and the newest stays.
    QCOMPARE(conversation.fit(newest_alone + 100, 100)->turns, 2);
    QCOMPARE(conversation.token_count(), newest_alone);
  }

  void fitRefusesASystemPromptTooLong() {
    Conversation conversation(PromptFormatId::ChatML, marker_tokenizer(),
                              std::string(300, 'x') + " long");
    QVERIFY_THROWS_EXCEPTION(ContextOverflow, conversation.fit(64, 16));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, conversation.fit(0, 16));
  }

  void restoreKeepsTheStoredIds() {
    const Tokenizer& t = marker_tokenizer();
    // Ids a chat store kept, deliberately not what rendering would give now:
    // they must be used as they are.
    std::vector<Message> stored{{Role::System, "sys", {1, 300}},
                                {Role::User, "hi", {301, 302}},
                                {Role::Assistant, "yo", {303}},
                                {Role::User, "again", {304}}};
    Conversation conversation = Conversation::restore(PromptFormatId::ChatML, t, stored);
    QCOMPARE(conversation.ids(), (Ids{1, 300, 301, 302, 303, 304}));
    QVERIFY(conversation.awaiting_reply());
    QCOMPARE(conversation.system_prompt(), std::string("sys"));
    conversation.end_turn(Ids{305}, false);
    QVERIFY(starts_with(conversation.ids(), Ids{1, 300, 301, 302, 303, 304, 305}));
  }

  void restoreValidates() {
    const Tokenizer& t = marker_tokenizer();
    const Message system{Role::System, "", {}};
    const Message user{Role::User, "a", {5}};
    const Message assistant{Role::Assistant, "b", {6}};
    using Messages = std::vector<Message>;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             Conversation::restore(PromptFormatId::ChatML, t, Messages{}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             Conversation::restore(PromptFormatId::ChatML, t, Messages{user}));
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        Conversation::restore(PromptFormatId::ChatML, t, Messages{system, assistant}));
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        Conversation::restore(PromptFormatId::ChatML, t, Messages{system, user, user}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             Conversation::restore(PromptFormatId::ChatML, t,
                                                   Messages{system, {Role::User, "x", {99999}}}));
    QCOMPARE(Conversation::restore(PromptFormatId::ChatML, t, Messages{system, user, assistant})
                 .turn_count(),
             1);
  }

  void rolesHaveNames() {
    QCOMPARE(to_string(Role::System), std::string_view("system"));
    QCOMPARE(to_string(Role::User), std::string_view("user"));
    QCOMPARE(to_string(Role::Assistant), std::string_view("assistant"));
  }
};

QUIRE_TEST(ConversationTest)
#include "test_conversation.moc"
