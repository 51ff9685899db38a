#include "quire/server/openai_request.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "quire/server/api_error.h"
#include "response_format_parser.h"

namespace quire::server {
namespace {

using nlohmann::json;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
// Deeper nesting than any request needs; refused before parsing so that no
// recursive step (parsing, destruction) meets an adversarial depth.
constexpr int kMaxNesting = 64;

[[noreturn]] void fail(std::string message, std::string param = {}) {
  throw ApiException(invalid_request(std::move(message), std::move(param)));
}

std::string_view kind_of(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_float:
      return "a number with a fraction";
    default:
      return "an integer";
  }
}

std::string format_number(double value) {
  std::string text = json(value).dump();
  if (text.ends_with(".0")) text.resize(text.size() - 2);
  return text;
}

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

// The fields of one JSON object, each read with its type and range checked.
// A field that is null counts as absent, as in OpenAI's API.
class Fields {
 public:
  explicit Fields(const json& object) : object_(object) {}

  const json* find(const char* name) const {
    const auto it = object_.find(name);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

  std::optional<double> number(const char* name, double low, double high) const {
    const json* value = find(name);
    if (!value) return std::nullopt;
    if (!value->is_number()) {
      fail(std::string(name) + " must be a number, not " + std::string(kind_of(*value)) + ".",
           name);
    }
    const double number = value->get<double>();
    if (!(number >= low && number <= high)) {
      fail(std::string(name) + " must be between " + format_number(low) + " and " +
               format_number(high) + "; it is " + format_number(number) + ".",
           name);
    }
    return number;
  }

  std::optional<std::int64_t> integer(const char* name, std::int64_t low, std::int64_t high) const {
    const json* value = find(name);
    if (!value) return std::nullopt;
    return integer_value(*value, name, low, high);
  }

  bool boolean(const char* name) const {
    const json* value = find(name);
    if (!value) return false;
    if (!value->is_boolean()) {
      fail(std::string(name) + " must be a boolean, not " + std::string(kind_of(*value)) + ".",
           name);
    }
    return value->get<bool>();
  }

  std::string string(const char* name) const {
    const json* value = find(name);
    if (!value) return {};
    if (!value->is_string()) {
      fail(std::string(name) + " must be a string, not " + std::string(kind_of(*value)) + ".",
           name);
    }
    return value->get<std::string>();
  }

  // `param`: the field an error names, when `name` is an item inside it.
  static std::int64_t integer_value(const json& value, const std::string& name, std::int64_t low,
                                    std::int64_t high, std::string param = {}) {
    if (param.empty()) param = name;
    if (!value.is_number_integer()) {
      fail(name + " must be an integer, not " + std::string(kind_of(value)) + ".", param);
    }
    const bool too_large = value.is_number_unsigned() &&
                           value.get<std::uint64_t>() > static_cast<std::uint64_t>(kInt64Max);
    const std::int64_t number = too_large ? kInt64Max : value.get<std::int64_t>();
    if (too_large || number < low || number > high) {
      fail(name + " must be an integer from " + std::to_string(low) + " to " +
               std::to_string(high) + "; it is " + value.dump() + ".",
           param);
    }
    return number;
  }

 private:
  const json& object_;
};

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

std::map<std::int64_t, double> parse_logit_bias(const Fields& fields) {
  const json* bias = fields.find("logit_bias");
  if (!bias) return {};
  if (!bias->is_object()) {
    fail("logit_bias must be an object mapping token ids to biases, not " +
             std::string(kind_of(*bias)) + ".",
         "logit_bias");
  }
  if (bias->size() > kMaxLogitBias) {
    fail("logit_bias may hold at most " + std::to_string(kMaxLogitBias) + " tokens; it holds " +
             std::to_string(bias->size()) + ".",
         "logit_bias");
  }
  std::map<std::int64_t, double> biases;
  for (const auto& [key, value] : bias->items()) {
    std::int64_t id = 0;
    const bool digits = !key.empty() && key.size() <= 10 &&
                        key.find_first_not_of("0123456789") == std::string::npos;
    if (digits) id = std::stoll(key);
    if (!digits || id > kInt32Max) {
      fail("logit_bias keys must be token ids (decimal integers); \"" + key + "\" is not one.",
           "logit_bias");
    }
    if (!value.is_number()) {
      fail("logit_bias[\"" + key + "\"] must be a number, not " + std::string(kind_of(value)) + ".",
           "logit_bias");
    }
    const double number = value.get<double>();
    if (!(number >= -100 && number <= 100)) {
      fail("logit_bias[\"" + key + "\"] must be between -100 and 100; it is " +
               format_number(number) + ".",
           "logit_bias");
    }
    biases[id] = number;
  }
  return biases;
}

int parse_choices(const Fields& fields) {
  return static_cast<int>(fields.integer("n", 1, kMaxChoices).value_or(1));
}

void refuse_tools(const Fields& fields) {
  for (const char* name : {"tools", "functions"}) {
    const json* list = fields.find(name);
    if (list && !(list->is_array() && list->empty())) {
      fail(std::string(name) + " are not supported by this server.", name);
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
  sampling.logit_bias = parse_logit_bias(fields);
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

// A message's text: a string, or a list of text parts joined by newlines.
std::string message_text(const json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    fail(where + " must be a string or an array of text parts, not " +
             std::string(kind_of(content)) + ".",
         "messages");
  }
  std::string text;
  for (std::size_t i = 0; i < content.size(); ++i) {
    const std::string part_name = where + "[" + std::to_string(i) + "]";
    const json& part = content[i];
    const json* type = part.is_object() ? Fields(part).find("type") : nullptr;
    if (!type || !type->is_string()) {
      fail(part_name + " must be an object with a string \"type\".", "messages");
    }
    if (type->get<std::string>() != "text") {
      fail(part_name + " is of type \"" + type->get<std::string>() +
               "\": this server takes text parts only.",
           "messages");
    }
    const json* part_text = Fields(part).find("text");
    if (!part_text || !part_text->is_string()) {
      fail(part_name + ".text must be a string.", "messages");
    }
    if (i > 0) text += '\n';
    text += part_text->get<std::string>();
  }
  return text;
}

ChatTurns parse_messages(const Fields& fields) {
  const json* messages = fields.find("messages");
  if (!messages) fail("Missing required parameter: 'messages'.", "messages");
  if (!messages->is_array()) {
    fail("messages must be an array of message objects, not " + std::string(kind_of(*messages)) +
             ".",
         "messages");
  }
  if (messages->empty()) fail("messages must hold at least one message.", "messages");
  ChatTurns turns;
  std::optional<std::string> pending_user;
  bool begun = false;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const std::string name = "messages[" + std::to_string(i) + "]";
    const json& message = (*messages)[i];
    if (!message.is_object()) {
      fail(name + " must be an object, not " + std::string(kind_of(message)) + ".", "messages");
    }
    const Fields message_fields(message);
    const json* role_value = message_fields.find("role");
    if (!role_value || !role_value->is_string()) {
      fail(name + ".role must be a string: system, developer, user or assistant.", "messages");
    }
    const std::string role = role_value->get<std::string>();
    const json* content = message_fields.find("content");
    if (role == "tool" || role == "function") {
      fail(name + " has role \"" + role + "\": tool calls are not supported by this server.",
           "messages");
    }
    if (role != "system" && role != "developer" && role != "user" && role != "assistant") {
      fail(name + ".role \"" + role + "\" is not system, developer, user or assistant.",
           "messages");
    }
    if (!content && role != "assistant") fail(name + ".content is missing.", "messages");
    const std::string text = content ? message_text(*content, name + ".content") : std::string();
    if (role == "system" || role == "developer") {
      if (begun) {
        fail(name + " is a " + role +
                 " message after the conversation began; this server takes system messages "
                 "only before the first user message.",
             "messages");
      }
      if (!turns.system.empty()) turns.system += "\n\n";
      turns.system += text;
      continue;
    }
    begun = true;
    if (role == "user") {
      if (pending_user) {
        fail(name +
                 " is a user message after a user message: user and assistant messages must "
                 "take turns.",
             "messages");
      }
      pending_user = text;
    } else {
      if (!pending_user) {
        fail(name +
                 " is an assistant message without a user message before it: user and "
                 "assistant messages must take turns, starting with the user.",
             "messages");
      }
      turns.history.push_back({std::move(*pending_user), text});
      pending_user.reset();
    }
  }
  if (!pending_user) {
    fail("The last message must be a user message: the reply answers it.", "messages");
  }
  turns.user = std::move(*pending_user);
  return turns;
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

ChatCompletionRequest parse_chat_completion_request(std::string_view body) {
  const json value = parse_body(body);
  const Fields fields(value);
  ChatCompletionRequest request;
  request.model = fields.string("model");
  request.n = parse_choices(fields);
  refuse_tools(fields);
  request.response_format = parse_response_format(fields.find("response_format"), body);
  if (fields.boolean("logprobs")) fail("logprobs are not supported by this server.", "logprobs");
  if (fields.find("top_logprobs")) {
    fail("top_logprobs are not supported by this server.", "top_logprobs");
  }
  request.turns = parse_messages(fields);
  parse_streaming(fields, request.stream, request.include_usage);
  request.sampling = parse_sampling(fields);
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
  return request;
}

}  // namespace quire::server
