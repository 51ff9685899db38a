#include "quire/server/openai_request.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "chat_messages_parser.h"
#include "quire/server/api_error.h"
#include "request_fields.h"
#include "response_format_parser.h"
#include "tuned_sampling_fields.h"

namespace quire::server {
namespace {

using nlohmann::json;
using request::fail;
using request::Fields;
using request::format_number;
using request::kind_of;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
// Deeper nesting than any request needs; refused before parsing so that no
// recursive step (parsing, destruction) meets an adversarial depth.
constexpr int kMaxNesting = 64;

// Nesting depth of brackets outside strings; the body is known to be UTF-8.
int nesting_depth(std::string_view body) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

json parse_body(std::string_view body) {
  if (const std::optional<std::size_t> bad = first_invalid_utf8(body)) {
    fail("The request body is not valid UTF-8: byte " + std::to_string(*bad) +
         " starts a malformed sequence. Send the JSON encoded as UTF-8.");
  }
  if (nesting_depth(body) > kMaxNesting) {
    fail("The request body nests arrays and objects more than " + std::to_string(kMaxNesting) +
         " levels deep.");
  }
  json value;
  try {
    value = json::parse(body);
  } catch (const json::exception& error) {
    // parse_error for syntax, out_of_range for a number beyond a double.
    std::string what = error.what();
    // "[json.exception.parse_error.101] parse error at line 1, ..." without the tag.
    if (const std::size_t tag_end = what.find("] "); tag_end != std::string::npos) {
      what.erase(0, tag_end + 2);
    }
    fail("The request body is not valid JSON (" + what + ").");
  }
  if (!value.is_object()) {
    fail("The request body must be a JSON object, not " + std::string(kind_of(value)) + ".");
  }
  return value;
}

std::vector<std::string> parse_stop(const Fields& fields) {
  const json* stop = fields.find("stop");
  if (!stop) return {};
  if (stop->is_string()) return {stop->get<std::string>()};
  if (!stop->is_array()) {
    fail("stop must be a string or an array of strings, not " + std::string(kind_of(*stop)) + ".",
         "stop");
  }
  if (stop->size() > kMaxStopStrings) {
    fail("stop may hold at most " + std::to_string(kMaxStopStrings) + " strings; it holds " +
             std::to_string(stop->size()) + ".",
         "stop");
  }
  std::vector<std::string> strings;
  for (std::size_t i = 0; i < stop->size(); ++i) {
    const json& item = (*stop)[i];
    if (!item.is_string()) {
      fail("stop[" + std::to_string(i) + "] must be a string, not " + std::string(kind_of(item)) +
               ".",
           "stop");
    }
    strings.push_back(item.get<std::string>());
  }
  return strings;
}

// One logit_bias entry: `key` a token id (decimal digits) or text to
// tokenize, as llama.cpp's server takes it; `label` names it in errors.
void add_logit_bias(const std::string& key, const json& value, const std::string& label,
                    SamplingFields& sampling) {
  if (!value.is_number()) {
    fail(label + " must be a number, not " + std::string(kind_of(value)) + ".", "logit_bias");
  }
  const double number = value.get<double>();
  if (!(number >= -100 && number <= 100)) {
    fail(label + " must be between -100 and 100; it is " + format_number(number) + ".",
         "logit_bias");
  }
  const bool digits = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    if (key.empty()) fail("logit_bias keys must be token ids or text, not empty.", "logit_bias");
    sampling.logit_bias_text[key] = number;
    return;
  }
  if (key.size() > 10 || std::stoll(key) > kInt32Max) {
    fail("logit_bias names token " + key + ", beyond any vocabulary.", "logit_bias");
  }
  sampling.logit_bias[std::stoll(key)] = number;
}

// OpenAI's object of token ids (llama.cpp's text keys too), or llama.cpp's
// array of [token id or text, bias] pairs.
void parse_logit_bias(const Fields& fields, SamplingFields& sampling) {
  const json* bias = fields.find("logit_bias");
  if (!bias) return;
  if (!bias->is_object() && !bias->is_array()) {
    fail(
        "logit_bias must be an object mapping token ids (or text) to biases, or an array of "
        "[token id or text, bias] pairs, not " +
            std::string(kind_of(*bias)) + ".",
        "logit_bias");
  }
  if (bias->size() > kMaxLogitBias) {
    fail("logit_bias may hold at most " + std::to_string(kMaxLogitBias) + " entries; it holds " +
             std::to_string(bias->size()) + ".",
         "logit_bias");
  }
  if (bias->is_object()) {
    for (const auto& [key, value] : bias->items())
      add_logit_bias(key, value, "logit_bias[\"" + key + "\"]", sampling);
    return;
  }
  for (std::size_t i = 0; i < bias->size(); ++i) {
    const json& pair = (*bias)[i];
    const std::string label = "logit_bias[" + std::to_string(i) + "]";
    if (!pair.is_array() || pair.size() != 2 ||
        !(pair[0].is_string() || pair[0].is_number_unsigned())) {
      fail(label + " must be a [token id or text, bias] pair.", "logit_bias");
    }
    const std::string key = pair[0].is_string() ? pair[0].get<std::string>()
                                                : std::to_string(pair[0].get<std::uint64_t>());
    // In the array a string is always text, even "42", and a number an id.
    if (pair[0].is_string()) {
      if (key.empty()) fail(label + " names empty text.", "logit_bias");
      if (!pair[1].is_number()) {
        fail(label + "[1] must be a number, not " + std::string(kind_of(pair[1])) + ".",
             "logit_bias");
      }
      const double number = pair[1].get<double>();
      if (!(number >= -100 && number <= 100)) {
        fail(label + "[1] must be between -100 and 100; it is " + format_number(number) + ".",
             "logit_bias");
      }
      sampling.logit_bias_text[key] = number;
      continue;
    }
    add_logit_bias(key, pair[1], label + "[1]", sampling);
  }
}

std::vector<std::string> parse_banned_strings(const Fields& fields) {
  const json* banned = fields.find("banned_strings");
  if (!banned) return {};
  if (banned->is_string()) return {banned->get<std::string>()};
  if (!banned->is_array()) {
    fail("banned_strings must be a string or an array of strings, not " +
             std::string(kind_of(*banned)) + ".",
         "banned_strings");
  }
  if (banned->size() > kMaxBannedStrings) {
    fail("banned_strings may hold at most " + std::to_string(kMaxBannedStrings) +
             " strings; it holds " + std::to_string(banned->size()) + ".",
         "banned_strings");
  }
  std::vector<std::string> strings;
  for (std::size_t i = 0; i < banned->size(); ++i) {
    const json& item = (*banned)[i];
    if (!item.is_string()) {
      fail("banned_strings[" + std::to_string(i) + "] must be a string, not " +
               std::string(kind_of(item)) + ".",
           "banned_strings");
    }
    strings.push_back(item.get<std::string>());
  }
  return strings;
}

int parse_choices(const Fields& fields) {
  return static_cast<int>(fields.integer("n", 1, kMaxChoices).value_or(1));
}

// /v1/completions has no messages for tool calls to answer.
void refuse_tools(const Fields& fields) {
  for (const char* name : {"tools", "functions"}) {
    const json* list = fields.find(name);
    if (list && !(list->is_array() && list->empty())) {
      fail(std::string(name) + " are taken by /v1/chat/completions only.", name);
    }
  }
}

// /v1/completions: only text (chat completions parse response_format in
// response_format_parser.cpp).
void refuse_unsupported(const Fields& fields) {
  refuse_tools(fields);
  if (const json* format = fields.find("response_format")) {
    const json* type = format->is_object() ? Fields(*format).find("type") : nullptr;
    if (!type || !type->is_string()) {
      fail("response_format must be an object with a string \"type\".", "response_format");
    }
    if (type->get<std::string>() != "text") {
      fail("response_format type \"" + type->get<std::string>() +
               "\" is not supported by this server; only \"text\" is.",
           "response_format");
    }
  }
}

SamplingFields parse_sampling(const Fields& fields) {
  SamplingFields sampling;
  sampling.max_tokens = fields.integer("max_tokens", 1, kInt32Max);
  if (const auto completion = fields.integer("max_completion_tokens", 1, kInt32Max)) {
    sampling.max_tokens = completion;
  }
  sampling.temperature = fields.number("temperature", 0, 2);
  sampling.top_p = fields.number("top_p", 0, 1);
  sampling.top_k = fields.integer("top_k", -1, kInt32Max);
  sampling.min_p = fields.number("min_p", 0, 1);
  sampling.frequency_penalty = fields.number("frequency_penalty", -2, 2);
  sampling.presence_penalty = fields.number("presence_penalty", -2, 2);
  sampling.seed = fields.integer("seed", kInt64Min, kInt64Max);
  sampling.stop = parse_stop(fields);
  parse_logit_bias(fields, sampling);
  sampling.banned_strings = parse_banned_strings(fields);
  parse_tuned_sampling(fields, sampling);
  sampling.repetition_penalty = fields.number("repetition_penalty", 0, 10);
  if (sampling.repetition_penalty && *sampling.repetition_penalty <= 0) {
    fail("repetition_penalty must be greater than 0 (1: off).", "repetition_penalty");
  }
  return sampling;
}

void parse_streaming(const Fields& fields, bool& stream, bool& include_usage) {
  stream = fields.boolean("stream");
  if (const json* options = fields.find("stream_options")) {
    if (!options->is_object()) {
      fail("stream_options must be an object, not " + std::string(kind_of(*options)) + ".",
           "stream_options");
    }
    include_usage = Fields(*options).boolean("include_usage");
  }
}

std::optional<engine::ContextPolicy> parse_context_overflow(const Fields& fields) {
  const json* value = fields.find("context_overflow");
  if (!value) return std::nullopt;
  const std::optional<engine::ContextPolicy> policy =
      value->is_string() ? engine::parse_context_policy(value->get<std::string>()) : std::nullopt;
  if (!policy) {
    fail("context_overflow must be " + std::string(engine::kContextPolicyChoices) + "; it is " +
             (value->is_string() ? "\"" + value->get<std::string>() + "\""
                                 : std::string(kind_of(*value))) +
             ".",
         "context_overflow");
  }
  return policy;
}

void parse_prompt(const Fields& fields, CompletionRequest& request) {
  const json* prompt = fields.find("prompt");
  if (!prompt) fail("Missing required parameter: 'prompt'.", "prompt");
  if (prompt->is_string()) {
    request.prompt = prompt->get<std::string>();
    return;
  }
  if (!prompt->is_array()) {
    fail("prompt must be a string, an array of one string or an array of token ids, not " +
             std::string(kind_of(*prompt)) + ".",
         "prompt");
  }
  const json* list = prompt;
  // [[1, 2, 3]]: one prompt of token ids.
  if (list->size() == 1 && (*list)[0].is_array()) list = &(*list)[0];
  if (list->size() == 1 && (*list)[0].is_string()) {
    request.prompt = (*list)[0].get<std::string>();
    return;
  }
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    if (item.is_string() || item.is_array()) {
      fail("prompt holds more than one prompt; this server completes one prompt per request.",
           "prompt");
    }
    ids.push_back(
        Fields::integer_value(item, "prompt[" + std::to_string(i) + "]", 0, kInt32Max, "prompt"));
  }
  request.prompt_ids = std::move(ids);
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    int length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the second byte's range
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // overlong
      if (lead == 0xED) high = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // overlong
      if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + static_cast<std::size_t>(length) > size) return i;
    if (bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (int k = 2; k < length; ++k) {
      if (bytes[i + static_cast<std::size_t>(k)] < 0x80 ||
          bytes[i + static_cast<std::size_t>(k)] > 0xBF) {
        return i;
      }
    }
    i += static_cast<std::size_t>(length);
  }
  return std::nullopt;
}

bool ChatCompletionRequest::uses_tools() const {
  return tools.offered() || std::ranges::any_of(messages, [](const ChatMessage& message) {
           return message.role == "tool" || !message.tool_calls.empty();
         });
}

ChatCompletionRequest parse_chat_completion_request(std::string_view body) {
  const json value = parse_body(body);
  const Fields fields(value);
  ChatCompletionRequest request;
  request.model = fields.string("model");
  request.n = parse_choices(fields);
  request.tools = parse_tools_request(fields, body);
  request.response_format = parse_response_format(fields.find("response_format"), body);
  if (fields.boolean("logprobs")) fail("logprobs are not supported by this server.", "logprobs");
  if (fields.find("top_logprobs")) {
    fail("top_logprobs are not supported by this server.", "top_logprobs");
  }
  std::vector<std::size_t> positions;
  request.messages = parse_chat_messages(fields, positions);
  if (request.uses_tools()) {
    check_tool_messages(request.messages, positions);
  } else {
    request.turns = plain_turns(request.messages, positions);
  }
  parse_streaming(fields, request.stream, request.include_usage);
  request.sampling = parse_sampling(fields);
  request.context_overflow = parse_context_overflow(fields);
  request.preset = fields.string("preset");
  return request;
}

CompletionRequest parse_completion_request(std::string_view body) {
  const json value = parse_body(body);
  const Fields fields(value);
  CompletionRequest request;
  request.model = fields.string("model");
  request.n = parse_choices(fields);
  refuse_unsupported(fields);
  if (fields.find("logprobs")) fail("logprobs are not supported by this server.", "logprobs");
  if (fields.boolean("echo")) fail("echo is not supported by this server.", "echo");
  if (!fields.string("suffix").empty()) {
    fail("suffix is not supported by this server.", "suffix");
  }
  // best_of equal to n returns every candidate, which is what n alone does;
  // more would need a ranking by log probability, which the engine keeps none of.
  if (const auto best_of = fields.integer("best_of", 1, kInt32Max);
      best_of && *best_of != 1 && *best_of != request.n) {
    fail("best_of must be 1 or equal to n (" + std::to_string(request.n) +
             "): this server returns every completion it makes and picks none.",
         "best_of");
  }
  parse_prompt(fields, request);
  parse_streaming(fields, request.stream, request.include_usage);
  request.sampling = parse_sampling(fields);
  request.preset = fields.string("preset");
  return request;
}

}  // namespace quire::server
