#include "quire/server/completion_job.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "quire/engine/generator/chat_template.h"
#include "quire/engine/generator/conversation.h"
#include "quire/engine/generator/rendered_images.h"
#include "quire/engine/generator/text_bias.h"
#include "quire/engine/grammar/grammar.h"
#include "quire/engine/tools/tool_call_grammar.h"
#include "quire/server/api_error.h"

namespace quire::server {
namespace {

// Room for the reply: what the request asks for, else all the context leaves.
// A refusal says how many of the prompt's tokens are image positions, which
// grow with an image's size for some models (Mistral Small 3).
int reply_budget(std::int64_t prompt_tokens, const SamplingFields& fields, const ServedModel& model,
                 const char* prompt_param, std::int64_t image_positions = 0) {
  const std::int64_t left = model.context_tokens - prompt_tokens;
  if (left <= 0 || (fields.max_tokens && *fields.max_tokens > left)) {
    const std::string asked =
        fields.max_tokens
            ? std::to_string(prompt_tokens + *fields.max_tokens) + " tokens (" +
                  std::to_string(prompt_tokens) + " in the prompt, " +
                  std::to_string(*fields.max_tokens) + " for the completion)"
            : std::to_string(prompt_tokens) + " tokens in the prompt and no room for a completion";
    const std::string images = image_positions > 0 ? " The images in the messages take " +
                                                         std::to_string(image_positions) +
                                                         " of the prompt's tokens."
                                                   : "";
    const std::string policies =
        std::string_view(prompt_param) == "messages"
            ? " Or send \"context_overflow\": \"drop_oldest\" or \"truncate_middle\" to "
              "drop earlier turns."
            : "";
    throw ApiException(invalid_request(
        "This model's maximum context length is " + std::to_string(model.context_tokens) +
            " tokens. However, you requested " + asked + ". Please reduce the length of the " +
            prompt_param + " or the completion." + policies + images,
        prompt_param, "context_length_exceeded"));
  }
  return static_cast<int>(fields.max_tokens ? *fields.max_tokens : left);
}

// How many of a job's prompt positions are its images'.
std::int64_t image_positions(const engine::JobRequest& job) {
  std::int64_t positions = 0;
  for (const engine::PromptImagePlacement& placement : job.images)
    positions += placement.image->positions;
  return positions;
}

// The grammar that constrains the reply; a schema keyword the grammar cannot
// enforce is refused by name (GrammarError says which, and where).
std::shared_ptr<const engine::grammar::Grammar> response_grammar(const ResponseFormat& format) {
  switch (format.type) {
    case ResponseFormat::Type::Text:
      break;
    case ResponseFormat::Type::JsonObject:
      return engine::grammar::any_json_object_grammar();
    case ResponseFormat::Type::JsonSchema:
      try {
        return engine::grammar::compile_json_schema_text(format.schema);
      } catch (const engine::grammar::GrammarError& error) {
        throw ApiException(invalid_request(
            "response_format.json_schema.schema cannot be enforced: " + std::string(error.what()),
            "response_format"));
      }
  }
  return nullptr;
}

// A user message's images as its prompt holds them (check_images_seen has
// refused them where the model cannot see).
std::shared_ptr<const engine::PreparedImage> prepared_image(const MessageImage& image,
                                                            const ServedModel& model) {
  try {
    return model.prepare_image(image);
  } catch (const std::exception& error) {
    throw ApiException(invalid_request(
        "The image in " + image.where + " cannot be read: " + error.what(), "messages"));
  }
}

std::vector<std::shared_ptr<const engine::PreparedImage>> prepared_images(
    const std::vector<MessageImage>& images, const ServedModel& model) {
  std::vector<std::shared_ptr<const engine::PreparedImage>> prepared;
  for (const MessageImage& image : images)
    prepared.push_back(prepared_image(image, model));
  return prepared;
}

void add_stop_strings(engine::JobRequest& job, const SamplingFields& fields) {
  for (const std::string& stop : fields.stop)
    job.stop_strings.push_back(stop);
}

// The request's messages as the chat template takes them.
std::vector<engine::TemplateMessage> template_messages(const ChatCompletionRequest& request,
                                                       const engine::ChatFormat& format) {
  std::vector<engine::TemplateMessage> messages;
  std::string system_prefix;
  for (const ChatMessage& message : request.messages) {
    if (message.role == "system" && format.system_in_first_user()) {
      // The template refuses system messages: the prompt opens the first
      // user message instead, as Conversation does for such templates.
      system_prefix = message.content + "\n\n";
      continue;
    }
    engine::TemplateMessage converted(message.role, message.content);
    if (message.role == "user" && !system_prefix.empty()) {
      converted.content = system_prefix + converted.content;
      system_prefix.clear();
    }
    // Images go before the text, as a chat without tools places them.
    converted.images = static_cast<int>(
        std::count_if(message.parts.begin(), message.parts.end(),
                      [](const ContentPart& part) { return part.image.has_value(); }));
    converted.null_content = message.null_content;
    for (const FunctionCall& call : message.tool_calls)
      converted.tool_calls.push_back({call.id, call.name, call.arguments});
    converted.tool_call_id = message.tool_call_id;
    converted.name = message.name;
    messages.push_back(std::move(converted));
  }
  return messages;
}

// The grammar of a reply that must call a tool; a format or a schema the
// grammar cannot enforce is refused by name.
std::shared_ptr<const engine::grammar::Grammar> required_call(
    const ToolsRequest& tools, engine::tools::ToolCallFormat format) {
  try {
    return engine::tools::required_call_grammar(format, nlohmann::json::parse(tools.json),
                                                tools.named);
  } catch (const engine::tools::ToolGrammarError& error) {
    throw ApiException(invalid_request(
        std::string("tool_choice cannot be enforced: ") + error.what(), "tool_choice"));
  }
}

// tool_choice "auto" with strict tools: a lazy grammar that holds a call, once
// begun, to its tool's schema (the others' arguments to any object); null
// when no tool is strict.
std::shared_ptr<const engine::grammar::Grammar> strict_calls(const ToolsRequest& tools,
                                                             engine::tools::ToolCallFormat format) {
  if (std::ranges::none_of(tools.functions, [](const FunctionTool& tool) { return tool.strict; }))
    return nullptr;
  nlohmann::json list = nlohmann::json::parse(tools.json);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!tools.functions[i].strict) {
      list[i]["function"]["parameters"] = {{"type", "object"}};
    }
  }
  try {
    return engine::tools::required_call_grammar(format, list);
  } catch (const engine::tools::ToolGrammarError& error) {
    throw ApiException(
        invalid_request(std::string("A strict tool cannot be enforced: ") + error.what() +
                            ". Leave \"strict\" out for this tool, or change its parameters.",
                        "tools"));
  }
}

// Drops whole turns as the request's context_overflow says, so that the
// prompt leaves max_tokens (else a quarter of the context) for the reply.
// Stop (the default) leaves the prompt to reply_budget(), which refuses it.
std::optional<ContextDropUsage> fit_context(engine::Conversation& conversation,
                                            const ChatCompletionRequest& request,
                                            const ServedModel& model) {
  const engine::ContextPolicy policy =
      request.context_overflow.value_or(engine::ContextPolicy::Stop);
  if (policy == engine::ContextPolicy::Stop) return std::nullopt;
  const std::int64_t reserve = request.sampling.max_tokens.value_or(model.context_tokens / 4);
  if (reserve >= model.context_tokens) return std::nullopt;  // reply_budget says why
  std::optional<engine::Trimmed> trimmed;
  try {
    trimmed = conversation.fit(model.context_tokens, reserve, policy);
  } catch (const engine::ContextOverflow& overflow) {
    throw ApiException(invalid_request(
        "This model's maximum context length is " + std::to_string(model.context_tokens) +
            " tokens and context_overflow \"" + std::string(engine::to_string(policy)) +
            "\" cannot make the messages fit: " + overflow.what() + ".",
        "messages", "context_length_exceeded"));
  }
  if (!trimmed) return std::nullopt;
  ContextDropUsage drop;
  drop.policy = engine::to_string(policy);
  drop.first_dropped_turn = trimmed->first_turn + 1;
  drop.dropped_turns = trimmed->turns;
  drop.dropped_tokens = trimmed->tokens;
  drop.recomputed_tokens = trimmed->recomputed;
  return drop;
}

// Whether the rendered prompt leaves the reply inside a think block.
bool ends_inside_think(std::string_view prompt) {
  while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' '))
    prompt.remove_suffix(1);
  return prompt.ends_with("<think>");
}

}  // namespace

void check_model(const std::string& requested, const ServedModel& model) {
  if (requested.empty() || requested == model.id) return;
  throw ApiException(ApiError{
      404,
      "The model '" + requested + "' does not exist here; this server runs '" + model.id + "'.",
      "invalid_request_error", "model", "model_not_found"});
}

void apply_tuned_fields(engine::SamplingSettings& settings, const SamplingFields& fields) {
  if (fields.dry_multiplier) settings.dry_multiplier = static_cast<float>(*fields.dry_multiplier);
  if (fields.dry_base) settings.dry_base = static_cast<float>(*fields.dry_base);
  if (fields.dry_allowed_length)
    settings.dry_allowed_length = static_cast<int>(*fields.dry_allowed_length);
  if (fields.dry_range) settings.dry_range = static_cast<int>(*fields.dry_range);
  if (fields.dry_sequence_breakers) settings.dry_sequence_breakers = *fields.dry_sequence_breakers;
  if (fields.xtc_threshold) settings.xtc_threshold = static_cast<float>(*fields.xtc_threshold);
  if (fields.xtc_probability)
    settings.xtc_probability = static_cast<float>(*fields.xtc_probability);
  if (fields.top_n_sigma) settings.top_n_sigma = static_cast<float>(*fields.top_n_sigma);
  if (fields.mirostat) settings.mirostat = static_cast<int>(*fields.mirostat);
  if (fields.mirostat_tau) settings.mirostat_tau = static_cast<float>(*fields.mirostat_tau);
  if (fields.mirostat_eta) settings.mirostat_eta = static_cast<float>(*fields.mirostat_eta);
}

engine::SamplingSettings openai_sampling(const SamplingFields& fields, const ServedModel& model) {
  engine::SamplingSettings settings;
  settings.temperature = static_cast<float>(fields.temperature.value_or(1.0));
  settings.top_p = static_cast<float>(fields.top_p.value_or(1.0));
  settings.top_k = static_cast<int>(std::max<std::int64_t>(fields.top_k.value_or(0), 0));
  settings.min_p = static_cast<float>(fields.min_p.value_or(0.0));
  settings.typical = 1.0f;
  settings.repetition_penalty = static_cast<float>(fields.repetition_penalty.value_or(1.0));
  settings.frequency_penalty = static_cast<float>(fields.frequency_penalty.value_or(0.0));
  settings.presence_penalty = static_cast<float>(fields.presence_penalty.value_or(0.0));
  if (fields.seed) settings.seed = static_cast<std::uint64_t>(*fields.seed);
  apply_tuned_fields(settings, fields);
  for (const auto& [id, bias] : fields.logit_bias) {
    if (id >= model.vocab_size) {
      throw ApiException(invalid_request("logit_bias names token " + std::to_string(id) +
                                             ", outside the vocabulary (0 to " +
                                             std::to_string(model.vocab_size - 1) + ").",
                                         "logit_bias"));
    }
    settings.token_bias[static_cast<std::int32_t>(id)] = static_cast<float>(bias);
  }
  return settings;
}

void apply_text_fields(engine::JobRequest& job, const SamplingFields& fields,
                       const engine::Tokenizer& tokenizer) {
  for (const auto& [text, bias] : fields.logit_bias_text) {
    if (!engine::add_text_bias(job.sampling, tokenizer, text, static_cast<float>(bias))) {
      throw ApiException(invalid_request(
          "logit_bias names the text \"" + text + "\", which has no tokens.", "logit_bias"));
    }
  }
  job.banned_strings = fields.banned_strings;
  const bool banning = std::any_of(fields.banned_strings.begin(), fields.banned_strings.end(),
                                   [](const std::string& text) { return !text.empty(); });
  if (banning && job.grammar) {
    throw ApiException(invalid_request(
        "banned_strings cannot be combined with a reply shaped by a grammar (response_format "
        "json_object or json_schema, or tools the reply must call): leave one of them out.",
        "banned_strings"));
  }
}

PreparedJob prepare_chat_job(const ChatCompletionRequest& request, const engine::ChatFormat& format,
                             const engine::Tokenizer& tokenizer, const ServedModel& model,
                             ReplyMemory* replies) {
  if (request.uses_tools()) return prepare_tool_chat_job(request, format, tokenizer, model);
  PreparedJob prepared;
  engine::JobRequest& job = prepared.request;
  job.sampling = openai_sampling(request.sampling, model);
  job.grammar = response_grammar(request.response_format);
  const bool images = std::any_of(request.messages.begin(), request.messages.end(),
                                  [](const ChatMessage& message) { return message.has_images(); });
  if (images && !format.is_template()) {
    throw ApiException(invalid_request(
        "This model is served with " + format.title() +
            ", one of Quire's built-in prompt formats, which do not say where images go: serve "
            "it with its own chat template (--format template).",
        "messages"));
  }
  try {
    // Earlier replies take the ids they were generated as where the server
    // remembers them, else their text's tokens; each turn's prompt then
    // extends the previous one, so the cache finds the earlier turns' pages.
    engine::Conversation conversation(format, tokenizer, request.turns.system);
    for (const ChatExchange& exchange : request.turns.history) {
      conversation.begin_turn(exchange.user, prepared_images(exchange.user_images, model));
      std::optional<std::vector<std::int32_t>> ids;
      if (replies != nullptr) ids = replies->recall(exchange.assistant);
      if (!ids) ids = tokenizer.encode(exchange.assistant, false);
      conversation.end_turn(*ids, false, exchange.assistant);
    }
    job.prompt = conversation.begin_turn(request.turns.user,
                                         prepared_images(request.turns.user_images, model));
    prepared.context_drop = fit_context(conversation, request, model);
    job.prompt = conversation.ids();
    job.images = conversation.image_placements();
    job.stop_tokens = conversation.stops().tokens;
    job.stop_strings = conversation.stops().strings;
  } catch (const engine::ChatTemplateError& error) {
    throw ApiException(invalid_request(
        std::string("The model's chat template refused these messages: ") + error.what(),
        "messages"));
  }
  add_stop_strings(job, request.sampling);
  // gpt-oss answers in Harmony's channels even without tools: the reply is
  // read for its final channel, the analysis being reasoning.
  if (format.is_template() &&
      engine::tools::detect_tool_call_format(format.chat_template()->source().text) ==
          engine::tools::ToolCallFormat::Harmony) {
    job.special_tokens_in_text = true;
    prepared.shape = ReplyShape{engine::tools::ToolCallFormat::Harmony};
  }
  apply_text_fields(job, request.sampling, tokenizer);
  prepared.prompt_tokens = static_cast<std::int64_t>(job.prompt.size());
  job.max_new_tokens = reply_budget(prepared.prompt_tokens, request.sampling, model, "messages",
                                    image_positions(job));
  return prepared;
}

PreparedJob prepare_tool_chat_job(const ChatCompletionRequest& request,
                                  const engine::ChatFormat& format,
                                  const engine::Tokenizer& tokenizer, const ServedModel& model) {
  using engine::tools::ToolCallFormat;
  const engine::ChatTemplate* chat_template = format.chat_template();
  if (chat_template == nullptr) {
    throw ApiException(invalid_request(
        "This model is served with " + format.title() +
            ", one of Quire's built-in prompt formats, which know no tools: tools and tool "
            "messages need the model's own chat template (serve it with --format template, "
            "from a model directory that has one).",
        request.tools.offered() ? "tools" : "messages"));
  }
  const std::string& source = chat_template->source().text;
  const ToolCallFormat calls = engine::tools::detect_tool_call_format(source);
  if (request.tools.offered() && calls == ToolCallFormat::None) {
    throw ApiException(invalid_request(
        "The model's chat template (" + chat_template->origin() +
            ") does not say how the model writes tool calls, so its replies cannot be read "
            "for them. Use a model whose template knows tools, or send tool_choice \"none\".",
        "tools"));
  }
  if (request.tools.offered() && request.response_format.type != ResponseFormat::Type::Text) {
    throw ApiException(invalid_request(
        "response_format and tools cannot both shape one reply: send tool_choice \"none\" to "
        "have the reply follow response_format, or leave response_format out.",
        "response_format"));
  }
  PreparedJob prepared;
  engine::JobRequest& job = prepared.request;
  job.sampling = openai_sampling(request.sampling, model);
  engine::TemplateTools tools;
  if (request.tools.offered()) tools.tools = nlohmann::ordered_json::parse(request.tools.json);
  tools.arguments = engine::tools::template_arguments_form(calls);
  tools.keep_null_content = engine::tools::template_keeps_null_content(calls);
  // The images of every message, in order: the template writes a marker for
  // each, which becomes the image's positions as in a chat without tools.
  std::vector<std::shared_ptr<const engine::PreparedImage>> images;
  for (const ChatMessage& message : request.messages) {
    for (const ContentPart& part : message.parts) {
      if (part.image) images.push_back(prepared_image(*part.image, model));
    }
  }
  engine::jinja::Rendered rendered;
  try {
    rendered = chat_template->render(template_messages(request, format), true, tools);
    job.prompt = engine::encode_rendered_with_images(tokenizer, rendered, 0, images);
  } catch (const engine::ChatTemplateError& error) {
    throw ApiException(invalid_request(
        std::string("The model's chat template refused these messages: ") + error.what(),
        "messages"));
  }
  job.images = engine::place_prompt_images(job.prompt, images);
  const engine::StopSet stops = engine::resolve_stops(format, tokenizer);
  job.stop_tokens = stops.tokens;
  job.stop_strings = stops.strings;
  add_stop_strings(job, request.sampling);
  if (request.tools.choice == ToolsRequest::Choice::Required ||
      request.tools.choice == ToolsRequest::Choice::Named) {
    job.grammar = required_call(request.tools, calls);
  } else if (request.tools.offered()) {
    job.grammar = strict_calls(request.tools, calls);
    if (job.grammar) job.grammar_triggers = engine::tools::call_triggers(calls);
  } else {
    job.grammar = response_grammar(request.response_format);
  }
  job.special_tokens_in_text = calls != ToolCallFormat::None;
  ReplyShape shape;
  shape.format = calls;
  shape.think_tags =
      source.find("<think>") != std::string::npos && source.find("</think>") != std::string::npos;
  shape.starts_in_reasoning = shape.think_tags && ends_inside_think(rendered.text);
  shape.parallel = request.tools.parallel;
  prepared.shape = shape;
  apply_text_fields(job, request.sampling, tokenizer);
  prepared.prompt_tokens = static_cast<std::int64_t>(job.prompt.size());
  job.max_new_tokens = reply_budget(prepared.prompt_tokens, request.sampling, model, "messages",
                                    image_positions(job));
  return prepared;
}

PreparedJob prepare_completion_job(const CompletionRequest& request,
                                   const engine::Tokenizer& tokenizer, const ServedModel& model) {
  PreparedJob prepared;
  engine::JobRequest& job = prepared.request;
  job.sampling = openai_sampling(request.sampling, model);
  if (request.prompt_ids) {
    for (std::size_t i = 0; i < request.prompt_ids->size(); ++i) {
      const std::int64_t id = (*request.prompt_ids)[i];
      if (id >= model.vocab_size) {
        throw ApiException(invalid_request(
            "prompt[" + std::to_string(i) + "] is token " + std::to_string(id) +
                ", outside the vocabulary (0 to " + std::to_string(model.vocab_size - 1) + ").",
            "prompt"));
      }
      job.prompt.push_back(static_cast<std::int32_t>(id));
    }
  } else {
    job.prompt = tokenizer.encode(request.prompt, tokenizer.adds_bos());
  }
  if (job.prompt.empty()) {
    throw ApiException(invalid_request(
        "The prompt is empty and this model's tokenizer adds no BOS token to start from.",
        "prompt"));
  }
  add_stop_strings(job, request.sampling);
  apply_text_fields(job, request.sampling, tokenizer);
  prepared.prompt_tokens = static_cast<std::int64_t>(job.prompt.size());
  job.max_new_tokens = reply_budget(prepared.prompt_tokens, request.sampling, model, "prompt");
  return prepared;
}

Usage request_usage(std::span<const engine::JobResult> results) {
  Usage usage;
  if (results.empty()) return usage;
  usage.prompt_tokens = results.front().statistics.prompt_tokens;
  usage.cached_tokens = results.front().statistics.cached_tokens;
  for (const engine::JobResult& result : results)
    usage.completion_tokens += result.statistics.generated_tokens;
  return usage;
}

}  // namespace quire::server
