#include "reply_route.h"

#include <httplib.h>

#include "quire/server/api_error.h"

namespace quire::server::detail {
namespace {

constexpr auto kHeartbeat = std::chrono::milliseconds(1000);

FinishReason finish_of(engine::StopReason reason) {
  return reason == engine::StopReason::MaxNewTokens ? FinishReason::Length : FinishReason::Stop;
}

ApiError engine_error(const engine::JobResult& result) {
  return ApiError{500,
                  result.error.empty() ? "The engine could not finish the reply." : result.error,
                  "server_error", "", "engine_error"};
}

std::string content_chunk(const ReplyContext& context, std::string_view text) {
  return context.endpoint == Endpoint::Chat
             ? chat_content_chunk(context.header, text, context.include_usage)
             : completion_chunk(context.header, text, std::nullopt, context.include_usage);
}

// The events that end a stream: the finish chunk, the usage chunk when asked
// for, and [DONE]; or an error object when the job failed.
std::string closing_events(const ReplyContext& context, const engine::JobResult& result) {
  if (result.stop_reason == engine::StopReason::Error) {
    return sse_event(error_body(engine_error(result))) + sse_done();
  }
  const FinishReason finish = finish_of(result.stop_reason);
  std::string events =
      sse_event(context.endpoint == Endpoint::Chat
                    ? chat_finish_chunk(context.header, finish, context.include_usage)
                    : completion_chunk(context.header, "", finish, context.include_usage));
  if (context.include_usage) {
    const Usage usage = usage_of(result);
    events += sse_event(context.endpoint == Endpoint::Chat
                            ? chat_usage_chunk(context.header, usage)
                            : completion_usage_chunk(context.header, usage));
  }
  return events + sse_done();
}

void answer_whole(httplib::Response& response, ReplyChannel& channel, const ReplyContext& context,
                  RequestNote& note) {
  const engine::JobResult result = channel.wait_result();
  if (result.stop_reason == engine::StopReason::Error) {
    const ApiError error = engine_error(result);
    response.status = error.status;
    response.set_content(error_body(error), "application/json");
    return;
  }
  const Usage usage = usage_of(result);
  note.has_usage = true;
  note.usage = usage;
  const FinishReason finish = finish_of(result.stop_reason);
  response.set_content(context.endpoint == Endpoint::Chat
                           ? chat_completion_json(context.header, result.text, finish, usage)
                           : completion_json(context.header, result.text, finish, usage),
                       "application/json");
}

// State shared by the stream's provider calls and its releaser.
struct StreamState {
  EngineHost* engine = nullptr;
  std::shared_ptr<ReplyChannel> channel;
  ReplyContext context;
  RequestNote* note = nullptr;
  bool started = false;
  bool finished = false;
};

bool provide(StreamState& state, httplib::DataSink& sink) {
  const auto write = [&](const std::string& data) {
    if (sink.write(data.data(), data.size())) return true;
    state.note->client_left = true;
    return false;
  };
  if (!state.started) {
    state.started = true;
    // The chat stream opens with the assistant's role; completions with text.
    if (state.context.endpoint == Endpoint::Chat) {
      return write(sse_event(chat_role_chunk(state.context.header, state.context.include_usage)));
    }
    return true;
  }
  ReplyChannel::Update update = state.channel->wait(kHeartbeat);
  if (!update.text.empty() && !write(sse_event(content_chunk(state.context, update.text)))) {
    return false;
  }
  if (update.done) {
    state.finished = true;
    if (update.done->stop_reason != engine::StopReason::Error) {
      state.note->has_usage = true;
      state.note->usage = usage_of(*update.done);
    }
    if (!write(closing_events(state.context, *update.done))) return false;
    sink.done();
    return true;
  }
  // Nothing new for a while (the job waits for room): a comment line, which
  // clients ignore, finds out whether the client is still there.
  if (update.text.empty()) return write(": waiting\n\n");
  return true;
}

}  // namespace

Usage usage_of(const engine::JobResult& result) {
  return Usage{result.statistics.prompt_tokens, result.statistics.generated_tokens,
               result.statistics.cached_tokens};
}

void answer(httplib::Response& response, EngineHost& engine, std::shared_ptr<ReplyChannel> channel,
            ReplyContext context, RequestNote& note) {
  if (!context.stream) {
    answer_whole(response, *channel, context, note);
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
        // The client went away (or the write failed) before the end: the
        // job stops and its pages go back to the cache.
        if (!state->finished) state->engine->cancel(state->channel);
      });
}

}  // namespace quire::server::detail
