#include "tool_conversations.h"

namespace quire::test {

namespace {

const char* const kTools = R"([
  {"type": "function", "function": {"name": "get_weather",
   "description": "Get the current weather in a city",
   "parameters": {"type": "object", "properties": {
     "city": {"type": "string", "description": "City name, e.g. Paris"},
     "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
   "required": ["city"]}}},
  {"type": "function", "function": {"name": "get_time",
   "description": "The time now in a time zone",
   "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}}}}])";

}  // namespace

Ordered tools_json() {
  return Ordered::parse(kTools);
}

std::vector<std::pair<std::string, Ordered>> tool_conversations() {
  return {
      {"tool loop", Ordered::parse(R"([
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call_abc123", "type": "function", "function": {"name": "get_weather",
           "arguments": "{\"city\": \"Paris\", \"unit\": \"celsius\"}"}}]},
        {"role": "tool", "tool_call_id": "call_abc123", "name": "get_weather",
         "content": "{\"temperature\": 18, \"sky\": \"light rain\"}"}])")},
      {"parallel calls and answer", Ordered::parse(R"([
        {"role": "user", "content": "Weather and time in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call_1", "type": "function", "function": {"name": "get_weather",
           "arguments": "{\"city\": \"Paris\"}"}},
          {"id": "call_2", "type": "function", "function": {"name": "get_time",
           "arguments": "{\"zone\": \"Europe/Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18 °C, light rain"},
        {"role": "tool", "tool_call_id": "call_2", "content": "14:05"},
        {"role": "assistant", "content": "It is 14:05 and 18 °C with light rain in Paris."},
        {"role": "user", "content": "Thanks! <tool_call> is a tag, right?"}])")},
  };
}

}  // namespace quire::test
