#include "conversation_runner.h"

#include <iostream>

#include "cli_support.h"
#include "quire/engine/generator/prompt_format.h"

namespace quire::cli {

TurnOutcome run_turn(LoadedSession& session, engine::Conversation& conversation,
                     const std::string& message, const GenerationOptions& generation,
                     const std::function<void(std::string_view)>& on_text,
                     const engine::DraftSettings& draft, engine::ContextPolicy policy) {
  TurnOutcome outcome;
  const std::int64_t context = static_cast<std::int64_t>(session.runtime->cache().num_pages()) *
                               session.runtime->cache().page_size();
  // Room for the new message, then for the reply.
  const std::int64_t message_estimate = static_cast<std::int64_t>(message.size()) + 16;
  outcome.trimmed = conversation.fit(context, generation.max_new, policy, message_estimate);
  engine::JobRequest request;
  request.prompt = conversation.begin_turn(message);
  outcome.recomputed_tokens = conversation.recomputed_tokens();
  request.sampling = generation.sampling();
  request.stop_tokens = conversation.stops().tokens;
  request.stop_strings = conversation.stops().strings;
  for (const std::string& stop : generation.stop)
    request.stop_strings.push_back(stop);
  generation.apply_text_options(request, *session.tokenizer);
  request.max_new_tokens = generation.max_new;
  request.draft = draft;
  if (on_text) request.on_text = [&](engine::JobId, std::string_view text) { on_text(text); };
  request.on_done = [&](const engine::JobResult& done) { outcome.result = done; };
  session.generator->submit(std::move(request));
  session.generator->run_until_idle();
  const engine::StopReason reason = outcome.result.stop_reason;
  if (reason == engine::StopReason::Error) throw UsageError(outcome.result.error);
  conversation.end_turn(
      outcome.result.tokens,
      reason == engine::StopReason::Eos || reason == engine::StopReason::StopToken,
      outcome.result.text);
  return outcome;
}

engine::ChatFormat choose_format(const std::string& directory, const std::string& name) {
  if (!name.empty() && name != "auto" && name != "template" && !engine::parse_prompt_format(name)) {
    throw UsageError("--format \"" + name +
                     "\" is not auto, template, llama2, llama3, chatml, mistral, gemma or plain");
  }
  engine::FormatChoice choice = engine::choose_chat_format(directory, name);
  if (!choice.notice.empty()) std::cerr << "quire-cli: " << choice.notice << '\n';
  return std::move(choice.format);
}

}  // namespace quire::cli
