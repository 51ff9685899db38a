#include "parser_cases.h"

namespace quire::test {

using quire::engine::tools::ParsedReply;
using quire::engine::tools::ToolCall;
using quire::engine::tools::ToolCallFormat;

namespace {

ParsedReply text_only(std::string content) {
  ParsedReply reply;
  reply.content = std::move(content);
  return reply;
}

ParsedReply calls(std::string content, std::vector<ToolCall> tool_calls,
                  std::string reasoning = {}) {
  ParsedReply reply;
  reply.content = std::move(content);
  reply.reasoning = std::move(reasoning);
  reply.tool_calls = std::move(tool_calls);
  return reply;
}

ParsedReply broken(std::string text, std::string reason) {
  ParsedReply reply;
  reply.content = std::move(text);
  reply.broken = true;
  reply.broken_reason = std::move(reason);
  return reply;
}

constexpr const char* kEnded = "generation ended inside a tool call";

std::vector<ParserCase> make_cases() {
  using F = ToolCallFormat;
  std::vector<ParserCase> cases;
  const auto add = [&](const char* name, F format, std::string text, ParsedReply expected) {
    cases.push_back({name, format, std::move(text), std::move(expected)});
  };

  // Qwen2.5 / Qwen3 (Hermes).
  add("hermes one call", F::Hermes,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", "
      "\"unit\": \"celsius\"}}\n</tool_call>",
      calls("", {{"call_1", "get_weather", R"({"city": "Paris", "unit": "celsius"})"}}));
  add("hermes thinking and two calls", F::Hermes,
      "<think>\nThe user wants the weather and the time.\n</think>\n\n<tool_call>\n"
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"Europe/Paris\"}}\n"
      "</tool_call>",
      calls("<think>\nThe user wants the weather and the time.\n</think>",
            {{"call_1", "get_weather", R"({"city": "Paris"})"},
             {"call_2", "get_time", R"({"zone": "Europe/Paris"})"}}));
  add("hermes text only", F::Hermes, "It is 18 °C in Paris, with <b>light</b> rain.\n",
      text_only("It is 18 °C in Paris, with <b>light</b> rain.\n"));
  add("hermes text before call", F::Hermes,
      "Let me check.\n\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
      calls("Let me check.", {{"call_1", "get_time", "{}"}}));
  add("hermes closing tag cut", F::Hermes,
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}\n",
      calls("", {{"call_1", "get_time", R"({"zone": "UTC"})"}}));
  add("hermes quoted arguments", F::Hermes,
      "<tool_call>\n{\"name\": \"add\", \"arguments\": \"{\\\"a\\\": 1, \\\"b\\\": 2}\"}\n"
      "</tool_call>",
      calls("", {{"call_1", "add", R"({"a": 1, "b": 2})"}}));
  add("hermes no arguments", F::Hermes, "<tool_call>\n{\"name\": \"get_time\"}\n</tool_call>",
      calls("", {{"call_1", "get_time", "{}"}}));
  add("hermes nested arguments", F::Hermes,
      "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"a \\\"}\\\" b\", "
      "\"filters\": [{\"k\": \"lang\", \"v\": [\"en\", \"fr\"]}]}}\n</tool_call>",
      calls("", {{"call_1", "search",
                  R"({"q": "a \"}\" b", "filters": [{"k": "lang", "v": ["en", "fr"]}]})"}}));
  add("hermes cut by length", F::Hermes,
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
      broken("Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
             "{\"city\": \"Par",
             kEnded));
  add("hermes invalid arguments", F::Hermes,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": Paris}}\n</tool_call>",
      broken("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": Paris}}\n"
             "</tool_call>",
             "the arguments are not valid JSON"));
  add("hermes not json", F::Hermes, "<tool_call>\nget_weather(city=\"Paris\")\n</tool_call>",
      broken("<tool_call>\nget_weather(city=\"Paris\")\n</tool_call>",
             "<tool_call> is not followed by a JSON object"));

  // Llama 3.1 - 3.3.
  add("llama3 json call", F::Llama3,
      "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
      calls("", {{"call_1", "get_weather", R"({"city": "Paris"})"}}));
  add("llama3 python tag", F::Llama3,
      "<|python_tag|>{\"type\": \"function\", \"name\": \"get_weather\", \"parameters\": "
      "{\"city\": \"Paris\"}}",
      calls("", {{"call_1", "get_weather", R"({"city": "Paris"})"}}));
  add("llama3 two calls", F::Llama3,
      "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; "
      "{\"name\": \"get_time\", \"parameters\": {}}",
      calls("", {{"call_1", "get_weather", R"({"city": "Paris"})"}, {"call_2", "get_time", "{}"}}));
  add("llama3 json that is no call", F::Llama3, "{\"name\": \"Bob\", \"age\": 42}",
      text_only("{\"name\": \"Bob\", \"age\": 42}"));
  add("llama3 json inside text", F::Llama3,
      "Use {\"name\": \"x\", \"parameters\": {}} as the body.",
      text_only("Use {\"name\": \"x\", \"parameters\": {}} as the body."));
  add("llama3 cut by length", F::Llama3, "{\"name\": \"get_weather\", \"parameters\": {\"city\": ",
      broken("{\"name\": \"get_weather\", \"parameters\": {\"city\": ", kEnded));

  // Mistral.
  add("mistral list", F::Mistral,
      "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, "
      "{\"name\": \"get_time\", \"arguments\": {}}]",
      calls("", {{"call00001", "get_weather", R"({"city": "Paris"})"},
                 {"call00002", "get_time", "{}"}}));
  add("mistral args form", F::Mistral, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}",
      calls("", {{"call00001", "get_weather", R"({"city": "Paris"})"}}));
  add("mistral call ids", F::Mistral,
      "[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"Paris\"}"
      "[TOOL_CALLS]get_time[ARGS]{}",
      calls("", {{"call00001", "get_weather", R"({"city": "Paris"})"},
                 {"call00002", "get_time", "{}"}}));
  add("mistral text", F::Mistral, "The [TOOL] list is [1, 2].",
      text_only("The [TOOL] list is [1, 2]."));
  add("mistral list not closed", F::Mistral,
      "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
      broken("[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
             kEnded));

  // gpt-oss (Harmony).
  add("harmony call", F::Harmony,
      "<|channel|>analysis<|message|>Need the weather in Paris.<|end|><|start|>assistant"
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
      "{\"city\":\"Paris\"}<|call|>",
      calls("", {{"call_1", "get_weather", R"({"city":"Paris"})"}}, "Need the weather in Paris."));
  add("harmony final", F::Harmony,
      "<|channel|>analysis<|message|>Simple greeting.<|end|><|start|>assistant<|channel|>final"
      "<|message|>Hello! How can I help?<|return|>",
      calls("Hello! How can I help?", {}, "Simple greeting."));
  add("harmony recipient first", F::Harmony,
      "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>",
      calls("", {{"call_1", "get_time", "{}"}}));
  add("harmony call token cut", F::Harmony,
      "<|channel|>commentary to=functions.add <|constrain|>json<|message|>{\"a\": 1, \"b\": 2}",
      calls("", {{"call_1", "add", R"({"a": 1, "b": 2})"}}));
  add("harmony cut by length", F::Harmony,
      "<|channel|>commentary to=functions.add <|constrain|>json<|message|>{\"a\": 1, ",
      broken("<|channel|>commentary to=functions.add <|constrain|>json<|message|>{\"a\": 1, ",
             kEnded));

  // DeepSeek V3 and V3.1.
  add("deepseek v3 two calls", F::DeepSeekV3,
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
      "{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function"
      "<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
      calls("", {{"call_1", "get_weather", R"({"city": "Paris"})"}, {"call_2", "get_time", "{}"}}));
  add("deepseek v3.1 call", F::DeepSeekV3,
      "Let me look.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
      "{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
      calls("Let me look.", {{"call_1", "get_weather", R"({"city": "Paris"})"}}));
  add("deepseek end markers cut", F::DeepSeekV3,
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n"
      "```<｜tool▁call▁end｜>",
      calls("", {{"call_1", "get_time", "{}"}}));
  add("deepseek cut by length", F::DeepSeekV3,
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
      "{\"city\"",
      broken("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
             "```json\n{\"city\"",
             kEnded));

  add("none keeps markers", F::None, "<tool_call>\n{\"name\": \"x\"}\n</tool_call>",
      text_only("<tool_call>\n{\"name\": \"x\"}\n</tool_call>"));
  return cases;
}

}  // namespace

const std::vector<ParserCase>& parser_cases() {
  static const std::vector<ParserCase> cases = make_cases();
  return cases;
}

}  // namespace quire::test
