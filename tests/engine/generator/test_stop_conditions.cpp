#include <QStringList>
#include <QTest>
#include <random>
#include <string>
#include <vector>

#include "quire/engine/generator/stop_conditions.h"
#include "test_main.h"

using quire::engine::StopMatcher;
using quire::engine::StopReason;

namespace {

using Strings = std::vector<std::string>;

std::string utf8(const QString& text) {
  return text.toStdString();
}

Strings utf8(const QStringList& list) {
  Strings out;
  for (const QString& text : list)
    out.push_back(text.toStdString());
  return out;
}

// Whether `text` ends on a whole UTF-8 character.
bool ends_whole(const std::string& text) {
  std::size_t lead = text.size();
  while (lead > 0 && (static_cast<unsigned char>(text[lead - 1]) & 0xC0) == 0x80)
    --lead;
  if (lead == 0) return lead == text.size();
  const auto byte = static_cast<unsigned char>(text[lead - 1]);
  const std::size_t length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
  return text.size() - (lead - 1) == length;
}

constexpr std::int32_t kText = 100;  // the token id of every text piece below

}  // namespace

class StopConditionsTest : public QObject {
  Q_OBJECT

 private slots:
  // Pieces go in one per token; each step's released text is compared, then
  // what finish() adds.
  void stopStrings_data() {
    QTest::addColumn<QStringList>("stops");
    QTest::addColumn<QStringList>("pieces");
    QTest::addColumn<QStringList>("emits");   // one per piece, fed until a stop
    QTest::addColumn<QString>("finished");    // what finish() returns afterwards
    QTest::addColumn<QString>("stopString");  // empty: no stop

    QTest::newRow("no stop strings")
        << QStringList{} << QStringList{"Hel", "lo"} << QStringList{"Hel", "lo"} << ""
        << "";
    QTest::newRow("text without a stop")
        << QStringList{"END"} << QStringList{"a", "b c"} << QStringList{"a", "b c"} << ""
        << "";
    QTest::newRow("split across two tokens")
        << QStringList{"END"} << QStringList{"ab E", "ND tail"} << QStringList{"ab ", ""} << ""
        << "END";
    QTest::newRow("split across three tokens")
        << QStringList{"<|user|>"} << QStringList{"Hi <|", "us", "er|> more"}
        << QStringList{"Hi ", "", ""} << ""
        << "<|user|>";
    QTest::newRow("partial match, then a mismatch releases the held text")
        << QStringList{"END"} << QStringList{"ab E", "N", "x"} << QStringList{"ab ", "", "ENx"}
        << ""
        << "";
    QTest::newRow("mismatch that starts a new partial match")
        << QStringList{"END"} << QStringList{"E", "E", "N", "D"} << QStringList{"", "E", "", ""}
        << ""
        << "END";
    QTest::newRow("partial match at the end is released by finish")
        << QStringList{"END"} << QStringList{"ab E", "N"} << QStringList{"ab ", ""} << "EN"
        << "";
    QTest::newRow("stop at the very beginning")
        << QStringList{"Hello"} << QStringList{"Hello world"} << QStringList{""} << ""
        << "Hello";
    QTest::newRow("stop inside one piece, text after it dropped")
        << QStringList{"STOP"} << QStringList{"one STOP two"} << QStringList{"one "} << ""
        << "STOP";
    QTest::newRow("overlapping: the shorter completes first")
        << QStringList{"abcd", "bc"} << QStringList{"a", "b", "c", "d"} << QStringList{"", "", "a"}
        << ""
        << "bc";
    QTest::newRow("overlapping: both in one piece, the earlier start wins")
        << QStringList{"bc", "abcd"} << QStringList{"xabcd"} << QStringList{"x"} << ""
        << "abcd";
    QTest::newRow("same start: the longer wins")
        << QStringList{"ab", "abc"} << QStringList{"xabcy"} << QStringList{"x"} << ""
        << "abc";
    QTest::newRow("self-overlapping stop string")
        << QStringList{"aab"} << QStringList{"x", "a", "a", "a", "b"}
        << QStringList{"x", "", "", "a", ""} << ""
        << "aab";
    QTest::newRow("multi-byte character completed by a later token")
        << QStringList{"é»"} << QStringList{"caf", "", "é", "»", "more"}
        << QStringList{"caf", "", "", ""} << ""
        << "é»";
    QTest::newRow("multi-byte prefix released whole")
        << QStringList{"€uro"} << QStringList{"5", "", "", "€", "u", "x"}
        << QStringList{"5", "", "", "", "", "€ux"} << ""
        << "";
    QTest::newRow("a similar multi-byte character is not held")
        << QStringList{"é"} << QStringList{"ê", "è"} << QStringList{"ê", "è"} << ""
        << "";
    QTest::newRow("stop string after multi-byte text")
        << QStringList{"\n\nUser:"} << QStringList{"Grüße", "\n", "\nUs", "er: hi"}
        << QStringList{"Grüße", "", "", ""} << ""
        << "\n\nUser:";
    QTest::newRow("empty and repeated stop strings are ignored")
        << QStringList{"", "x", "x"} << QStringList{"ab", "cx"} << QStringList{"ab", "c"} << ""
        << "x";
  }

  void stopStrings() {
    QFETCH(QStringList, stops);
    QFETCH(QStringList, pieces);
    QFETCH(QStringList, emits);
    QFETCH(QString, finished);
    QFETCH(QString, stopString);

    StopMatcher matcher(utf8(stops), {2});
    QStringList actual;
    std::optional<StopReason> stop;
    std::string matched;
    for (const QString& piece : pieces) {
      const StopMatcher::Step step = matcher.feed(kText, utf8(piece));
      QVERIFY(ends_whole(step.text));
      actual << QString::fromStdString(step.text);
      if (step.stop) {
        stop = step.stop;
        matched = step.stop_string;
        break;
      }
    }
    QCOMPARE(actual, emits);
    QCOMPARE(QString::fromStdString(matcher.finish()), finished);
    QCOMPARE(stop.has_value(), !stopString.isEmpty());
    if (stop) {
      QCOMPARE(*stop, StopReason::StopString);
      QCOMPARE(QString::fromStdString(matched), stopString);
    }
  }

  void tokenStopsEndWithoutTheirText() {
    StopMatcher matcher({"END"}, {7}, {2});
    QVERIFY(matcher.is_stop_token(7));
    QVERIFY(matcher.is_stop_token(2));
    QVERIFY(!matcher.is_stop_token(kText));

    StopMatcher::Step step = matcher.feed(kText, "Hi");
    QCOMPARE(step.text, std::string("Hi"));
    QVERIFY(!step.stop);
    step = matcher.feed(2, "</s>");
    QCOMPARE(step.text, std::string());
    QCOMPARE(step.stop, std::optional(StopReason::Eos));
    QVERIFY(matcher.stopped());
    // The reply has ended: nothing new comes out.
    step = matcher.feed(kText, "more");
    QCOMPARE(step.text, std::string());
    QCOMPARE(step.stop, std::optional(StopReason::Eos));
  }

  void tokenStopReleasesHeldText() {
    StopMatcher matcher({"END"}, {7}, {2});
    QCOMPARE(matcher.feed(kText, "a E").text, std::string("a "));
    QCOMPARE(matcher.held(), std::string("E"));
    const StopMatcher::Step step = matcher.feed(7, "ignored");
    QCOMPARE(step.stop, std::optional(StopReason::StopToken));
    QCOMPARE(step.text, std::string("E"));
    QCOMPARE(matcher.finish(), std::string());
  }

  void aTokenInBothListsCountsAsEos() {
    StopMatcher matcher({}, {2, 7}, {2});
    QCOMPARE(matcher.feed(2, "").stop, std::optional(StopReason::Eos));
  }

  void finishTakesTheDetokenizersRest() {
    StopMatcher plain({"ab"}, {});
    QCOMPARE(plain.feed(kText, "xa").text, std::string("x"));
    QCOMPARE(plain.finish("c\xEF\xBF\xBD"), std::string("ac\xEF\xBF\xBD"));

    StopMatcher completed({"ab"}, {});
    QCOMPARE(completed.feed(kText, "xa").text, std::string("x"));
    QCOMPARE(completed.finish("b and more"), std::string());
    QVERIFY(completed.stopped());
  }

  void finishAfterAStopStringReturnsNothing() {
    StopMatcher matcher({"END"}, {});
    QVERIFY(matcher.feed(kText, "xEND y").stop);
    QCOMPARE(matcher.finish("z"), std::string());
    const StopMatcher::Step again = matcher.feed(kText, "w");
    QCOMPARE(again.stop, std::optional(StopReason::StopString));
    QCOMPARE(again.stop_string, std::string("END"));
  }

  void rejectsInvalidUtf8StopStrings() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, StopMatcher({std::string("\x82\xAC")}, {}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, StopMatcher({std::string("ok\xE2\x82")}, {}));
  }

  // However the text is cut into pieces, what is shown is the text up to the
  // stop string's first occurrence, and every emit ends on a whole character.
  void anySplitGivesTheSameText() {
    const std::vector<std::string> alphabet{"a", "b", "é", "€", " "};
    const std::vector<std::string> stops{"ab", "é€a", "b b", "€€"};
    std::mt19937 random(12345);  // only shapes the inputs; the matcher has no randomness
    for (int round = 0; round < 2000; ++round) {
      std::vector<std::string> characters(1 + random() % 24);
      for (std::string& c : characters)
        c = alphabet[random() % alphabet.size()];
      std::string text;
      for (const std::string& c : characters)
        text += c;
      const std::string& stop = stops[random() % stops.size()];
      const std::size_t found = text.find(stop);
      const std::string expected = found == std::string::npos ? text : text.substr(0, found);

      StopMatcher matcher({stop}, {});
      std::string shown;
      bool stopped = false;
      for (std::size_t i = 0; i < characters.size() && !stopped;) {
        std::string piece;
        for (std::size_t n = random() % 4; n > 0 && i < characters.size(); --n)
          piece += characters[i++];
        const StopMatcher::Step step = matcher.feed(kText, piece);
        QVERIFY(ends_whole(step.text));
        shown += step.text;
        stopped = step.stop.has_value();
      }
      if (!stopped) shown += matcher.finish();
      QCOMPARE(shown, expected);
      QCOMPARE(stopped, found != std::string::npos);
    }
  }

  void reasonsHaveNames_data() {
    QTest::addColumn<StopReason>("reason");
    QTest::addColumn<QString>("name");
    QTest::newRow("eos") << StopReason::Eos << "eos";
    QTest::newRow("stop token") << StopReason::StopToken << "stop_token";
    QTest::newRow("stop string") << StopReason::StopString << "stop_string";
    QTest::newRow("max new tokens") << StopReason::MaxNewTokens << "max_new_tokens";
    QTest::newRow("cancelled") << StopReason::Cancelled << "cancelled";
    QTest::newRow("error") << StopReason::Error << "error";
  }

  void reasonsHaveNames() {
    QFETCH(StopReason, reason);
    QFETCH(QString, name);
    QCOMPARE(QString::fromUtf8(quire::engine::to_string(reason)), name);
  }
};

QUIRE_TEST(StopConditionsTest)
#include "test_stop_conditions.moc"
