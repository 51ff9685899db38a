// A reply's text into what OpenAI's API sends: a leading think block as
// reasoning, calls whole once their arguments are complete, the same reply
// whole or streamed in any pieces, parallel_tool_calls false keeping the
// first call, and a broken call sent back as text with the reason; then the
// JSON of the whole response and of the stream's chunks.

#include <QTest>
#include <nlohmann/json.hpp>

#include "quire/server/openai_response.h"
#include "reply_shaper.h"
#include "test_main.h"

using quire::engine::tools::ToolCallFormat;
using quire::server::ChatDelta;
using quire::server::Choice;
using quire::server::FinishReason;
using quire::server::ReplyShape;
using quire::server::detail::ReplyShaper;

namespace {

ReplyShape hermes(bool think = true, bool parallel = true) {
  ReplyShape shape;
  shape.format = ToolCallFormat::Hermes;
  shape.think_tags = think;
  shape.parallel = parallel;
  return shape;
}

quire::engine::tools::CallIdSource counting() {
  return [n = 0]() mutable { return "call_" + std::to_string(++n); };
}

// Everything a stream sends for `text` cut into pieces of `size` bytes.
ChatDelta streamed(ReplyShape shape, const std::string& text, std::size_t size) {
  ReplyShaper shaper(shape, counting());
  ChatDelta all;
  const auto add = [&](const ChatDelta& delta) {
    all.content += delta.content;
    all.reasoning += delta.reasoning;
    for (const ChatDelta::CallPart& part : delta.calls) {
      if (!part.id.empty())
        all.calls.push_back(part);
      else
        all.calls.back().arguments += part.arguments;
    }
  };
  for (std::size_t at = 0; at < text.size(); at += size)
    add(shaper.feed(std::string_view(text).substr(at, size)));
  add(shaper.finish());
  return all;
}

const std::string kCall =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";

}  // namespace

class ReplyShaperTest : public QObject {
  Q_OBJECT

 private slots:
  void thinkingIsReasoningAndCallsAreCalls() {
    const std::string text = "<think>\nThe user wants weather.\n</think>\n\n" + kCall;
    for (const std::size_t size : {std::size_t{1}, std::size_t{3}, std::size_t{7}, text.size()}) {
      const ChatDelta all = streamed(hermes(), text, size);
      QCOMPARE(all.reasoning, std::string("\nThe user wants weather.\n"));
      QCOMPARE(all.content, std::string());
      QCOMPARE(all.calls.size(), std::size_t{1});
      QCOMPARE(all.calls[0].id, std::string("call_1"));
      QCOMPARE(all.calls[0].name, std::string("get_weather"));
      QCOMPARE(all.calls[0].arguments, std::string("{\"city\": \"Oslo\"}"));
    }
    const Choice whole = ReplyShaper::choice_of(hermes(), text, FinishReason::Stop);
    QCOMPARE(whole.finish, FinishReason::ToolCalls);
    QCOMPARE(whole.reasoning, std::string("\nThe user wants weather.\n"));
    QCOMPARE(whole.tool_calls.size(), std::size_t{1});
    QCOMPARE(whole.tool_calls[0].arguments, std::string("{\"city\": \"Oslo\"}"));
  }

  void aPromptThatOpenedThinkingStartsInReasoning() {
    ReplyShape shape = hermes();
    shape.starts_in_reasoning = true;
    const Choice choice =
        ReplyShaper::choice_of(shape, "Short thought.</think>\n\nThe answer.", FinishReason::Stop);
    QCOMPARE(choice.reasoning, std::string("Short thought."));
    QCOMPARE(choice.text, std::string("The answer."));
    QCOMPARE(choice.finish, FinishReason::Stop);
  }

  void withoutThinkTagsEverythingIsContent() {
    const Choice choice =
        ReplyShaper::choice_of(hermes(false), "<think>kept</think> as text", FinishReason::Length);
    QCOMPARE(choice.text, std::string("<think>kept</think> as text"));
    QVERIFY(choice.reasoning.empty());
    QCOMPARE(choice.finish, FinishReason::Length);
  }

  void notParallelKeepsTheFirstCall() {
    const std::string two =
        kCall + "\n" + "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
    QCOMPARE(ReplyShaper::choice_of(hermes(), two, FinishReason::Stop).tool_calls.size(),
             std::size_t{2});
    QCOMPARE(ReplyShaper::choice_of(hermes(true, false), two, FinishReason::Stop).tool_calls.size(),
             std::size_t{1});
    QCOMPARE(streamed(hermes(true, false), two, 5).calls.size(), std::size_t{1});
  }

  void aBrokenCallComesBackAsText() {
    const std::string broken = "Let me look. <tool_call>\n{\"name\": \"get_weather\", \"argu";
    const Choice choice = ReplyShaper::choice_of(hermes(), broken, FinishReason::Length);
    QCOMPARE(choice.text, broken);
    QVERIFY(choice.tool_calls.empty());
    QCOMPARE(choice.finish, FinishReason::Length);
    QCOMPARE(choice.tool_call_error, std::string("generation ended inside a tool call"));
    const ChatDelta all = streamed(hermes(), broken, 4);
    QCOMPARE(all.content, broken);
    QVERIFY(all.calls.empty());
  }

  void harmonyChannels() {
    ReplyShape shape;
    shape.format = ToolCallFormat::Harmony;
    const Choice choice = ReplyShaper::choice_of(
        shape,
        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>"
        "commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Oslo\"}",
        FinishReason::Stop);
    QCOMPARE(choice.reasoning, std::string("Need weather."));
    QCOMPARE(choice.tool_calls.size(), std::size_t{1});
    QCOMPARE(choice.tool_calls[0].name, std::string("get_weather"));
    QCOMPARE(choice.finish, FinishReason::ToolCalls);
    const Choice answer = ReplyShaper::choice_of(shape, "<|channel|>final<|message|>It is sunny.",
                                                 FinishReason::Stop);
    QCOMPARE(answer.text, std::string("It is sunny."));
    QCOMPARE(answer.finish, FinishReason::Stop);
  }

  void theResponseCarriesCallsAsOpenAiSendsThem() {
    Choice choice("", FinishReason::ToolCalls);
    choice.reasoning = "why";
    choice.tool_calls = {{"call_1", "get_weather", "{\"city\":\"Oslo\"}"}};
    const nlohmann::json response = nlohmann::json::parse(quire::server::chat_completion_json(
        {"chatcmpl-1", 7, "m"}, std::vector<Choice>{choice}, {10, 5, 0}));
    const nlohmann::json& message = response["choices"][0]["message"];
    QVERIFY(message["content"].is_null());
    QCOMPARE(message["reasoning_content"].get<std::string>(), std::string("why"));
    QVERIFY(message["tool_calls"] ==
            nlohmann::json::parse("[{\"id\": \"call_1\", \"type\": \"function\", \"function\": "
                                  "{\"name\": \"get_weather\", \"arguments\": "
                                  "\"{\\\"city\\\":\\\"Oslo\\\"}\"}}]"));
    QCOMPARE(response["choices"][0]["finish_reason"].get<std::string>(), std::string("tool_calls"));
    QVERIFY(!response["choices"][0].contains("tool_call_error"));
  }

  void chunksCarryCallParts() {
    ChatDelta delta;
    delta.calls = {{0, "call_1", "get_weather", "{\"city\":"}, {0, "", "", "\"Oslo\"}"}};
    const nlohmann::json chunk = nlohmann::json::parse(
        quire::server::chat_delta_chunk({"chatcmpl-1", 7, "m"}, 0, delta, false));
    const nlohmann::json& calls = chunk["choices"][0]["delta"]["tool_calls"];
    QCOMPARE(calls.size(), std::size_t{2});
    QVERIFY(calls[0] ==
            nlohmann::json::parse("{\"index\": 0, \"id\": \"call_1\", \"type\": "
                                  "\"function\", \"function\": {\"name\": "
                                  "\"get_weather\", \"arguments\": \"{\\\"city\\\":\"}}"));
    QVERIFY(calls[1] == nlohmann::json::parse(
                            "{\"index\": 0, \"function\": {\"arguments\": \"\\\"Oslo\\\"}\"}}"));
    QVERIFY(!chunk["choices"][0]["delta"].contains("content"));
    const nlohmann::json finish = nlohmann::json::parse(
        quire::server::chat_finish_chunk({"chatcmpl-1", 7, "m"}, 0, FinishReason::Stop, true,
                                         "generation ended inside a tool call"));
    QCOMPARE(finish["choices"][0]["tool_call_error"].get<std::string>(),
             std::string("generation ended inside a tool call"));
    QVERIFY(finish["usage"].is_null());
  }
};

QUIRE_TEST(ReplyShaperTest)
#include "test_reply_shaper.moc"
