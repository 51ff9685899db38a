#pragma once

// The OpenAI-compatible HTTP server: routes, authentication, limits, errors
// as OpenAI error objects, streaming, one log line per request on stderr.
// HTTP comes from cpp-httplib, which stays inside the implementation.
//
//   GET  /health                  {"status": "ok", ...}, no key needed
//   GET  /v1/models               the served model
//   GET  /v1/models/{id}
//   POST /v1/chat/completions     messages in the model's prompt format
//   POST /v1/completions          a raw prompt
//   GET  /v1/quire/stats          jobs running and waiting, cache pages, drafted and
//                                 accepted tokens (speculative decoding), the disk
//                                 cache's folder, use and pages (with a disk tier)

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "quire/engine/generator/chat_format.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/server/completion_job.h"
#include "quire/server/job_host.h"
#include "quire/server/request_preset.h"

namespace quire::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8642;          // 0: a free port, which bind() returns
  std::string api_key;      // empty: no key asked for
  std::string cors_origin;  // empty: no CORS headers
  std::size_t max_body_bytes = std::size_t{8} << 20;
  int read_timeout_seconds = 30;  // a request's headers and body must come in this time
  int keep_alive_seconds = 5;     // an idle connection closes after this
  int write_timeout_seconds = 30;
  // Connections served at once; each streaming reply holds one.
  std::size_t threads = 72;
  // What raises the number of replies the server holds at once, said when a
  // request asks for more choices than that (empty: nothing to say).
  std::string capacity_advice;
  // The presets a request may name ("preset"); empty: none.
  PresetCatalog presets;
};

// 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(std::string_view host);

// Throws std::invalid_argument, saying what to do, for a server that would
// answer other machines without an API key.
void check_exposure(const ServerOptions& options);

// The key a request must carry, compared in time that does not depend on
// where the given key differs. `authorization` is the header's value.
bool authorized(std::string_view authorization, std::string_view api_key);

class OpenAiServer {
 public:
  // The tokenizer and the engine must outlive the server.
  OpenAiServer(ServerOptions options, ServedModel model, engine::ChatFormat format,
               const engine::Tokenizer& tokenizer, JobHost& engine);
  ~OpenAiServer();
  OpenAiServer(const OpenAiServer&) = delete;
  OpenAiServer& operator=(const OpenAiServer&) = delete;

  // Binds the address; returns the port. Throws std::runtime_error naming the
  // address when it cannot be bound.
  int bind();
  // Serves until stop(); then the connections close.
  void run();
  // Whether run() serves yet: a stop() that comes before has nothing to stop,
  // so a caller that may stop soon after starting waits for this first.
  bool running() const;
  // From any thread.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace quire::server
