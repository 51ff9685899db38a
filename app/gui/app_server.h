#pragma once

// The OpenAI-compatible server inside the application (Settings → Server):
// quire-cli serve's OpenAiServer on 127.0.0.1, whose jobs go to the engine
// worker's generator beside the chats' (GeneratorJobs), so that API requests
// and chats share its batches and its prefix cache. Made, fed and destroyed
// on the engine thread; HTTP is served on threads of its own.

#include <QString>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>

#include "quire/engine/generator/chat_format.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/server/completion_job.h"
#include "quire/server/generator_jobs.h"
#include "quire/server/openai_server.h"

namespace quire::gui {

struct AppServerSetup {
  int port = 0;  // 0: a free port (tests)
  server::ServedModel model;
  engine::ChatFormat format = engine::PromptFormatId::Plain;
  // Must outlive the server; used by HTTP threads to render and tokenize
  // prompts while the engine thread generates.
  const engine::Tokenizer* tokenizer = nullptr;
  std::size_t max_jobs = 64;
  // Called from HTTP threads when a request or a cancellation waits for the
  // engine thread to take it (GeneratorJobs::take).
  std::function<void()> wake;
  // The presets requests may name ("preset"): the app's library.
  server::PresetCatalog presets;
};

class AppServer {
 public:
  // Listens and serves. Throws std::runtime_error with a sentence for the
  // user when the address cannot be had (the port is in use).
  explicit AppServer(AppServerSetup setup);
  // Stops listening and waits for the HTTP threads: call it once the
  // generator holds none of jobs()' jobs, or requests would wait forever.
  ~AppServer();
  AppServer(const AppServer&) = delete;
  AppServer& operator=(const AppServer&) = delete;

  server::GeneratorJobs& jobs() { return jobs_; }
  int port() const { return port_; }
  // "http://127.0.0.1:PORT/v1"
  QString url() const;

 private:
  server::GeneratorJobs jobs_;
  server::OpenAiServer http_;
  int port_ = 0;
  std::atomic<bool> served_ = false;  // run() returned
  std::thread thread_;
};

}  // namespace quire::gui
