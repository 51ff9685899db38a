#pragma once

// The answer to one completion request once its job is handed to the engine:
// whole, or streamed as server-sent events while the job runs.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "quire/server/completion_job.h"
#include "quire/server/job_host.h"
#include "quire/server/openai_response.h"

namespace httplib {
struct Response;
}

namespace quire::server::detail {

enum class Endpoint { Chat, Completion };

struct ReplyContext {
  Endpoint endpoint = Endpoint::Chat;
  ResponseHeader header;
  int choices = 1;  // the request's n; the channel holds as many
  bool stream = false;
  bool include_usage = false;
  // A chat request with tools: each reply is read for reasoning and calls.
  std::optional<ReplyShape> shape;
  // What the request's context_overflow policy dropped; goes into usage.
  std::optional<ContextDropUsage> context_drop;
  // Called with each choice that ends without an error, on the handler's
  // thread, before its end is sent.
  std::function<void(const engine::JobResult&)> on_result;
  // Whether the client has gone away, asked while a whole reply is awaited
  // (a stream learns it from its writes); unset: never asked.
  std::function<bool()> client_gone;
};

// What the log line of a request says beyond its method, path and status.
struct RequestNote {
  std::chrono::steady_clock::time_point start;
  bool has_usage = false;
  Usage usage;
  bool client_left = false;
};

// Fills `response` with the reply. Either way the jobs are cancelled when
// the client goes away: streaming, the provider writes as text arrives and
// finds out from a write; whole, the wait asks context.client_gone. `note` must stay
// valid until the response is written (it lives on the handler's thread).
void answer(httplib::Response& response, JobHost& engine, std::shared_ptr<ReplyChannel> channel,
            ReplyContext context, RequestNote& note);

}  // namespace quire::server::detail
