#include <QTest>

#include "parser_cases.h"
#include "quire/engine/tools/tool_call_parser.h"
#include "test_main.h"

using quire::engine::tools::counting_call_ids;
using quire::engine::tools::parse_tool_calls;
using quire::engine::tools::ParsedReply;
using quire::engine::tools::StreamDelta;
using quire::engine::tools::ToolCall;
using quire::engine::tools::ToolCallFormat;
using quire::engine::tools::ToolCallStream;
using quire::test::parser_cases;

namespace {

std::string describe(const ParsedReply& reply) {
  std::string out = "content=[" + reply.content + "] reasoning=[" + reply.reasoning + "]";
  for (const ToolCall& call : reply.tool_calls)
    out += " call(" + call.id + ", " + call.name + ", " + call.arguments + ")";
  if (reply.broken) out += " broken: " + reply.broken_reason;
  return out;
}

// What a client rebuilds from the deltas, as OpenAI's SDK does.
ParsedReply assemble(const std::vector<StreamDelta>& deltas) {
  ParsedReply reply;
  for (const StreamDelta& delta : deltas) {
    reply.content += delta.content;
    reply.reasoning += delta.reasoning;
    for (const auto& piece : delta.tool_calls) {
      if (piece.index == reply.tool_calls.size()) {
        // A new call: its first delta names it.
        if (piece.id.empty() || piece.name.empty()) throw std::runtime_error("unnamed first delta");
        reply.tool_calls.push_back({piece.id, piece.name, {}});
      } else if (piece.index + 1 != reply.tool_calls.size() || !piece.id.empty()) {
        throw std::runtime_error("a delta for a call that is not the newest");
      }
      reply.tool_calls.back().arguments += piece.arguments;
    }
  }
  return reply;
}

// Streams `text` in the given pieces; checks that the deltas rebuild the
// reply (unless it broke) and returns the reply.
ParsedReply stream_pieces(ToolCallFormat format, const std::vector<std::string_view>& pieces,
                          bool whole_calls = false) {
  quire::engine::tools::StreamOptions options;
  options.whole_calls = whole_calls;
  ToolCallStream stream(format, counting_call_ids(format), options);
  std::vector<StreamDelta> deltas;
  for (std::string_view piece : pieces)
    deltas.push_back(stream.feed(piece));
  deltas.push_back(stream.finish());
  const ParsedReply& reply = stream.reply();
  if (!reply.broken) {
    const ParsedReply rebuilt = assemble(deltas);
    if (rebuilt != reply)
      throw std::runtime_error("deltas rebuild " + describe(rebuilt) + " not " + describe(reply));
  }
  return reply;
}

}  // namespace

class ToolCallParsersTest : public QObject {
  Q_OBJECT

 private slots:
  void wholeReply_data() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < parser_cases().size(); ++i)
      QTest::newRow(parser_cases()[i].name) << static_cast<int>(i);
  }
  void wholeReply() {
    QFETCH(int, index);
    const auto& c = parser_cases()[static_cast<std::size_t>(index)];
    const ParsedReply reply = parse_tool_calls(c.format, c.text, counting_call_ids(c.format));
    QCOMPARE(describe(reply), describe(c.expected));
    QVERIFY(reply == c.expected);
  }

  // Every split into two pieces, and byte by byte: the same reply, and
  // deltas that rebuild it.
  void streamedAtEverySplit_data() { wholeReply_data(); }
  void streamedAtEverySplit() {
    QFETCH(int, index);
    const auto& c = parser_cases()[static_cast<std::size_t>(index)];
    const std::string_view text = c.text;
    try {
      for (std::size_t split = 0; split <= text.size(); ++split) {
        const ParsedReply reply =
            stream_pieces(c.format, {text.substr(0, split), text.substr(split)});
        if (reply != c.expected)
          QFAIL(qPrintable(QString::fromStdString("split at " + std::to_string(split) + ": " +
                                                  describe(reply))));
      }
      std::vector<std::string_view> bytes;
      for (std::size_t i = 0; i < text.size(); ++i)
        bytes.push_back(text.substr(i, 1));
      QCOMPARE(describe(stream_pieces(c.format, bytes)), describe(c.expected));
      QCOMPARE(describe(stream_pieces(c.format, bytes, true)), describe(c.expected));
    } catch (const std::exception& error) {
      QFAIL(error.what());
    }
  }

  // The shape OpenAI streams: a call's first delta has its id and name, the
  // arguments follow in fragments as they are written; nothing that may
  // still be a marker is sent early.
  void deltasAsOpenAIStreamsThem() {
    ToolCallStream stream(ToolCallFormat::Hermes, counting_call_ids(ToolCallFormat::Hermes));
    QCOMPARE(stream.feed("Checking.\n<tool").content, std::string("Checking."));
    QVERIFY(stream.feed("_call>\n{\"name\": \"get_wea").empty());
    StreamDelta named = stream.feed("ther\", \"arguments\": {\"ci");
    QCOMPARE(named.tool_calls.size(), std::size_t{1});
    QCOMPARE(named.tool_calls[0].id, std::string("call_1"));
    QCOMPARE(named.tool_calls[0].name, std::string("get_weather"));
    QCOMPARE(named.tool_calls[0].arguments, std::string("{\"ci"));
    StreamDelta more = stream.feed("ty\": \"Paris\"}}\n</tool_call>");
    QCOMPARE(more.tool_calls.size(), std::size_t{1});
    QVERIFY(more.tool_calls[0].id.empty());
    QVERIFY(more.tool_calls[0].name.empty());
    QCOMPARE(more.tool_calls[0].arguments, std::string("ty\": \"Paris\"}"));
    QVERIFY(stream.finish().empty());
    QCOMPARE(stream.reply().tool_calls.size(), std::size_t{1});
  }

  void brokenCallIsSentAsText() {
    ToolCallStream stream(ToolCallFormat::Hermes, counting_call_ids(ToolCallFormat::Hermes));
    std::string content = stream.feed("Hi <tool_call>\n{\"name\": ").content;
    content += stream.feed("\"f\", \"arguments\": [1]}").content;
    content += stream.finish().content;
    // The space before the broken call is sent too: the stream's text is the reply's.
    QCOMPARE(content, std::string("Hi <tool_call>\n{\"name\": \"f\", \"arguments\": [1]}"));
    QVERIFY(stream.reply().broken);
    QCOMPARE(stream.reply().content, content);
  }

  // With whole_calls, a call that breaks off was never shown: the stream's
  // text is the reply's text.
  void wholeCallsNeverShowABrokenCall() {
    quire::engine::tools::StreamOptions options;
    options.whole_calls = true;
    const std::string cut = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\"";
    ToolCallStream stream(ToolCallFormat::Hermes, counting_call_ids(ToolCallFormat::Hermes),
                          options);
    QVERIFY(stream.feed(cut).empty());
    const StreamDelta last = stream.finish();
    QVERIFY(last.tool_calls.empty());
    QCOMPARE(last.content, cut);
    QVERIFY(stream.reply().broken);

    ToolCallStream whole(ToolCallFormat::Hermes, counting_call_ids(ToolCallFormat::Hermes),
                         options);
    QVERIFY(whole.feed(cut + ": 1}}").empty());
    const StreamDelta call = whole.feed("\n</tool_call>");
    QCOMPARE(call.tool_calls.size(), std::size_t{1});
    QCOMPARE(call.tool_calls[0].id, std::string("call_1"));
    QCOMPARE(call.tool_calls[0].name, std::string("f"));
    QCOMPARE(call.tool_calls[0].arguments, std::string("{\"a\": 1}"));
  }

  void utf8IsNeverSplit() {
    ToolCallStream stream(ToolCallFormat::Hermes);
    const std::string text = "caf\xC3\xA9";
    QCOMPARE(stream.feed(text.substr(0, 4)).content, std::string("caf"));
    QCOMPARE(stream.feed(text.substr(4)).content, std::string("\xC3\xA9"));
  }

  void idsAreFreshAndShaped() {
    const std::string a = quire::engine::tools::new_call_id(ToolCallFormat::Hermes);
    const std::string b = quire::engine::tools::new_call_id(ToolCallFormat::Hermes);
    QVERIFY(a != b);
    QVERIFY(a.starts_with("call_"));
    QCOMPARE(a.size(), std::size_t{29});
    // Mistral's templates refuse any id but 9 letters and digits.
    const std::string m = quire::engine::tools::new_call_id(ToolCallFormat::Mistral);
    QCOMPARE(m.size(), std::size_t{9});
    for (char ch : m)
      QVERIFY(std::isalnum(static_cast<unsigned char>(ch)) != 0);
  }

  void feedAfterFinishThrows() {
    ToolCallStream stream(ToolCallFormat::None);
    stream.finish();
    QVERIFY_THROWS_EXCEPTION(std::logic_error, stream.feed("x"));
  }
};

QUIRE_TEST(ToolCallParsersTest)
#include "test_tool_call_parsers.moc"
