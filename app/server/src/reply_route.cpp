#include "reply_route.h"

#include <httplib.h>

#include <algorithm>

#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"

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
  const Usage usage = request_usage(results);
  note.has_usage = true;
  note.usage = usage;
  std::vector<Choice> choices;
  for (const engine::JobResult& result : results) {
    if (context.on_result) context.on_result(result);
    choices.push_back({result.text, finish_of(result.stop_reason)});
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
};

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
    const int index = static_cast<int>(i);
    if (!update.text[i].empty()) {
      anything = true;
      if (!write(sse_event(content_chunk(context, index, update.text[i])))) return false;
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
    if (!write(sse_event(finish_chunk(context, index, finish_of(update.done[i]->stop_reason))))) {
      return false;
    }
    state.results[i] = std::move(update.done[i]);
  }
  if (std::ranges::all_of(state.results, [](const auto& result) { return result.has_value(); })) {
    state.finished = true;
    std::vector<engine::JobResult> results;
    for (auto& result : state.results)
      results.push_back(std::move(*result));
    const Usage usage = request_usage(results);
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
