#include "reply_route.h"

#include <httplib.h>

#include <algorithm>

#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"
#include "reply_shaper.h"

namespace quire::server::detail {
namespace {

constexpr auto kHeartbeat = std::chrono::milliseconds(1000);
// How often a whole reply's wait asks whether its client is still there.
constexpr auto kClientCheck = std::chrono::milliseconds(100);

FinishReason finish_of(engine::StopReason reason) {
  return reason == engine::StopReason::MaxNewTokens ? FinishReason::Length : FinishReason::Stop;
}

ApiError engine_error(const engine::JobResult& result) {
  return ApiError{500,
                  result.error.empty() ? "The engine could not finish the reply." : result.error,
                  "server_error", "", "engine_error"};
}

bool failed(const engine::JobResult& result) {
  return result.stop_reason == engine::StopReason::Error;
}

std::string content_chunk(const ReplyContext& context, int index, std::string_view text) {
  return context.endpoint == Endpoint::Chat
             ? chat_content_chunk(context.header, index, text, context.include_usage)
             : completion_chunk(context.header, index, text, std::nullopt, context.include_usage);
}

std::string finish_chunk(const ReplyContext& context, int index, FinishReason finish) {
  return context.endpoint == Endpoint::Chat
             ? chat_finish_chunk(context.header, index, finish, context.include_usage)
             : completion_chunk(context.header, index, "", finish, context.include_usage);
}

// The events that end a stream once every choice has finished: the usage
// chunk when asked for, and [DONE].
std::string closing_events(const ReplyContext& context, const Usage& usage) {
  std::string events;
  if (context.include_usage) {
    events += sse_event(context.endpoint == Endpoint::Chat
                            ? chat_usage_chunk(context.header, usage)
                            : completion_usage_chunk(context.header, usage));
  }
  return events + sse_done();
}

void answer_whole(httplib::Response& response, JobHost& engine,
                  const std::shared_ptr<ReplyChannel>& channel, const ReplyContext& context,
                  RequestNote& note) {
  // A client that leaves while it waits stops its jobs, as a stream's does;
  // the reply that follows is written to nobody.
  while (!channel->wait_ended(kClientCheck)) {
    if (context.client_gone && context.client_gone()) {
      note.client_left = true;
      engine.cancel(channel);
      break;
    }
  }
  const std::vector<engine::JobResult> results = channel->wait_results();
  if (const auto bad = std::ranges::find_if(results, failed); bad != results.end()) {
    const ApiError error = engine_error(*bad);
    response.status = error.status;
    response.set_content(error_body(error), "application/json");
    return;
  }
  Usage usage = request_usage(results);
  usage.context_drop = context.context_drop;
  note.has_usage = true;
  note.usage = usage;
  std::vector<Choice> choices;
  for (const engine::JobResult& result : results) {
    if (context.on_result) context.on_result(result);
    const FinishReason finish = finish_of(result.stop_reason);
    choices.push_back(context.shape ? ReplyShaper::choice_of(*context.shape, result.text, finish)
                                    : Choice{result.text, finish});
  }
  response.set_content(context.endpoint == Endpoint::Chat
                           ? chat_completion_json(context.header, choices, usage)
                           : completion_json(context.header, choices, usage),
                       "application/json");
}

// State shared by the stream's provider calls and its releaser.
struct StreamState {
  JobHost* engine = nullptr;
  std::shared_ptr<ReplyChannel> channel;
  ReplyContext context;
  RequestNote* note = nullptr;
  bool started = false;
  bool finished = false;
  // The finished choices' results, by choice; the usage waits for all.
  std::vector<std::optional<engine::JobResult>> results;
  // With ReplyContext::shape, one per choice.
  std::vector<ReplyShaper> shapers;
};

// A chat choice's new text as the chunk that carries it; empty when nothing
// is to be sent yet (a shaper may hold text back).
std::string text_event(StreamState& state, std::size_t index, std::string_view text) {
  const ReplyContext& context = state.context;
  if (state.shapers.empty())
    return sse_event(content_chunk(context, static_cast<int>(index), text));
  const ChatDelta delta = state.shapers[index].feed(text);
  if (delta.empty()) return {};
  return sse_event(
      chat_delta_chunk(context.header, static_cast<int>(index), delta, context.include_usage));
}

// The events that end a choice: what its shaper held back, and the finish.
std::string finish_events(StreamState& state, std::size_t index, const engine::JobResult& result) {
  const ReplyContext& context = state.context;
  const int choice = static_cast<int>(index);
  FinishReason finish = finish_of(result.stop_reason);
  if (state.shapers.empty()) return sse_event(finish_chunk(context, choice, finish));
  ReplyShaper& shaper = state.shapers[index];
  const ChatDelta rest = shaper.finish();
  std::string events;
  if (!rest.empty()) {
    events += sse_event(chat_delta_chunk(context.header, choice, rest, context.include_usage));
  }
  if (!shaper.calls().empty()) finish = FinishReason::ToolCalls;
  return events + sse_event(chat_finish_chunk(context.header, choice, finish, context.include_usage,
                                              shaper.broken_reason()));
}

bool provide(StreamState& state, httplib::DataSink& sink) {
  const auto write = [&](const std::string& data) {
    if (sink.write(data.data(), data.size())) return true;
    state.note->client_left = true;
    return false;
  };
  const ReplyContext& context = state.context;
  if (!state.started) {
    state.started = true;
    state.results.resize(static_cast<std::size_t>(context.choices));
    if (context.shape) {
      for (int i = 0; i < context.choices; ++i)
        state.shapers.emplace_back(*context.shape);
    }
    // The chat stream opens each choice with the assistant's role;
    // completions start with text.
    if (context.endpoint == Endpoint::Chat) {
      std::string events;
      for (int i = 0; i < context.choices; ++i) {
        events += sse_event(chat_role_chunk(context.header, i, context.include_usage));
      }
      return write(events);
    }
    return true;
  }
  ReplyChannel::Update update = state.channel->wait(kHeartbeat);
  bool anything = false;
  for (std::size_t i = 0; i < update.text.size(); ++i) {
    if (!update.text[i].empty()) {
      anything = true;
      const std::string event = text_event(state, i, update.text[i]);
      if (!event.empty() && !write(event)) return false;
    }
    if (!update.done[i]) continue;
    anything = true;
    if (failed(*update.done[i])) {
      // One failed choice ends the stream with the error; the others stop.
      state.finished = true;
      state.engine->cancel(state.channel);
      if (!write(sse_event(error_body(engine_error(*update.done[i]))) + sse_done())) {
        return false;
      }
      sink.done();
      return true;
    }
    if (context.on_result) context.on_result(*update.done[i]);
    if (!write(finish_events(state, i, *update.done[i]))) return false;
    state.results[i] = std::move(update.done[i]);
  }
  if (std::ranges::all_of(state.results, [](const auto& result) { return result.has_value(); })) {
    state.finished = true;
    std::vector<engine::JobResult> results;
    for (auto& result : state.results)
      results.push_back(std::move(*result));
    Usage usage = request_usage(results);
    usage.context_drop = context.context_drop;
    state.note->has_usage = true;
    state.note->usage = usage;
    if (!write(closing_events(context, usage))) return false;
    sink.done();
    return true;
  }
  // Nothing new for a while (the jobs wait for room): a comment line, which
  // clients ignore, finds out whether the client is still there.
  if (!anything) return write(": waiting\n\n");
  return true;
}

}  // namespace

void answer(httplib::Response& response, JobHost& engine, std::shared_ptr<ReplyChannel> channel,
            ReplyContext context, RequestNote& note) {
  if (!context.stream) {
    answer_whole(response, engine, channel, context, note);
    return;
  }
  auto state = std::make_shared<StreamState>();
  state->engine = &engine;
  state->channel = std::move(channel);
  state->context = std::move(context);
  state->note = &note;
  response.set_header("Cache-Control", "no-cache");
  response.set_chunked_content_provider(
      "text/event-stream",
      [state](std::size_t, httplib::DataSink& sink) { return provide(*state, sink); },
      [state](bool) {
        // The client went away (or the write failed) before the end: every
        // job of the request stops and its pages go back to the cache.
        if (!state->finished) state->engine->cancel(state->channel);
      });
}

}  // namespace quire::server::detail
