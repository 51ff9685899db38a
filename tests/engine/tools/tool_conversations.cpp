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

const char* llama_style_template() {
  return R"({{- bos_token }}
{%- set ns = namespace(system='', first_user=true) %}
{%- if messages[0].role == 'system' %}{% set ns.system = messages[0].content | trim %}{% endif %}
{{- '<|start_header_id|>system<|end_header_id|>\n\n' }}
{%- if tools is defined %}{{- 'Environment: ipython\n' }}{% endif %}
{{- 'Today Date: ' + date_string + '\n\n' + ns.system + '<|eot_id|>' }}
{%- for message in messages %}
  {%- if message.role == 'user' %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' }}
    {%- if tools is defined and ns.first_user %}
      {{- 'Given the following functions, please respond with a JSON for a function call.\n\n' }}
      {%- for t in tools %}{{- t | tojson(indent=4) }}{{- '\n\n' }}{% endfor %}
      {%- set ns.first_user = false %}
    {%- endif %}
    {{- message.content | trim + '<|eot_id|>' }}
  {%- elif message.role == 'assistant' and message.tool_calls %}
    {%- for tool_call in message.tool_calls %}
      {%- set call = tool_call.function %}
      {{- '<|start_header_id|>assistant<|end_header_id|>\n\n{"name": "' + call.name + '", "parameters": ' }}
      {{- call.arguments | tojson }}{{- '}<|eot_id|>' }}
    {%- endfor %}
  {%- elif message.role == 'assistant' %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' + message.content | trim + '<|eot_id|>' }}
  {%- elif message.role == 'tool' %}
    {{- '<|start_header_id|>ipython<|end_header_id|>\n\n' }}
    {%- if message.content is mapping or message.content is iterable and message.content is not string %}
      {{- message.content | tojson }}
    {%- else %}{{- message.content }}{% endif %}
    {{- '<|eot_id|>' }}
  {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %})";
}

}  // namespace quire::test
