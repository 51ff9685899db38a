// quire-cli serve: the engine behind an OpenAI-compatible HTTP API on this
// machine, for editors, scripts and agents that speak OpenAI's protocol.

#include "serve_command.h"

#include <pthread.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "cli_support.h"
#include "conversation_runner.h"
#include "disk_cache_option.h"
#include "draft_option.h"
#include "generation_options.h"
#include "hub_model_option.h"
#include "quire/app/images/prompt_images.h"
#include "quire/server/engine_host.h"
#include "quire/server/openai_server.h"

namespace quire::cli {
namespace {

// ", n-gram drafts of up to 4 tokens" for the line that says what is served.
std::string drafting_note(const engine::DraftSettings& draft, const std::string& draft_model) {
  const std::string longest = " of up to " + std::to_string(draft.max_tokens) + " tokens";
  switch (draft.method) {
    case engine::DraftSettings::Method::Ngram:
      return ", n-gram drafts" + longest;
    case engine::DraftSettings::Method::Model:
      return ", drafts" + longest + " by " + draft_model;
    case engine::DraftSettings::Method::Off:
      break;
  }
  return {};
}

struct ServeOptions {
  std::string directory;
  std::string format = "auto";
  std::string model_name;
  int parallel = 4;
  int max_queue = 32;
  int max_body_mib = 8;
  int timeout = 30;
  server::ServerOptions server;
  EngineOptions engine;
  DraftOptions draft;
  DiskCacheOptions disk;
  PresetOption presets;
};

std::string directory_name(const std::string& directory) {
  std::filesystem::path path = std::filesystem::path(directory).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  const std::string name = path.filename().string();
  return name.empty() || name == "." ? std::string("model") : name;
}

int run_serve(ServeOptions options) {
  options.server.max_body_bytes = static_cast<std::size_t>(options.max_body_mib) << 20;
  options.server.read_timeout_seconds = options.timeout;
  options.server.write_timeout_seconds = options.timeout;
  // A connection per request running or waiting, and some for the rest
  // (model lists, statistics, requests refused at once).
  options.server.threads = static_cast<std::size_t>(options.parallel + options.max_queue + 8);
  options.server.capacity_advice = "quire-cli serve's --parallel plus --max-queue";
  const engine::DraftSettings draft = options.draft.settings();
  const std::optional<engine::DiskTierOptions> disk = options.disk.tier_options();
  try {
    server::check_exposure(options.server);
  } catch (const std::invalid_argument& error) {
    throw UsageError(error.what());
  }

  // SIGINT and SIGTERM wait for one thread that stops the server; every
  // thread made from here on (the backend's too) inherits the blocked mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  LoadedSession session = load_session(options.directory, options.engine, 4096, options.parallel,
                                       options.draft.model_directory(), disk);
  const engine::ChatFormat format = choose_format(options.directory, options.format);
  server::ServedModel model;
  model.id = options.model_name.empty() ? directory_name(options.directory) : options.model_name;
  model.context_tokens = static_cast<std::int64_t>(session.runtime->cache().num_pages()) *
                         session.runtime->cache().page_size();
  if (const std::int64_t positions = session.model->config.max_position_embeddings; positions > 0) {
    model.context_tokens = std::min(model.context_tokens, positions);
  }
  model.vocab_size = session.tokenizer->vocab_size();
  // A tower the plan finds no host memory for is none: images are refused.
  const std::optional<engine::VisionTowerPlacement>& tower = session.runtime->plan().vision_tower;
  model.vision_tower = session.model->vision.tower.has_value() && (!tower || tower->fits);
  if (model.vision_tower) {
    std::string why;
    if (auto preparer = images::open_image_preparer(options.directory, why)) {
      model.prepare_image = [preparer](const server::MessageImage& image) {
        const QByteArray bytes(reinterpret_cast<const char*>(image.bytes.data()),
                               static_cast<qsizetype>(image.bytes.size()));
        return images::prepare_image_file(*preparer, bytes);
      };
    } else {
      std::cerr << "quire-cli serve: images are refused: " << why << std::endl;
    }
  }

  server::EngineHost engine(
      *session.generator, {static_cast<std::size_t>(options.parallel + options.max_queue), draft});
  server::OpenAiServer http(options.server, model, format, *session.tokenizer, engine);
  const int port = http.bind();
  std::cerr << "quire-cli serve: " << model.id << " (" << format.title() << ", "
            << model.context_tokens << " tokens of context, " << options.parallel
            << " replies at once" << drafting_note(draft, options.draft.model_directory())
            << ") on http://" << options.server.host << ':' << port << "/v1; Ctrl+C stops"
            << std::endl;
  if (const engine::DiskTier* tier = session.runtime->disk_tier()) {
    std::cerr << "quire-cli serve: disk cache in " << tier->folder().string() << std::endl;
  }
  std::atomic<bool> signalled = false;
  std::thread signal_waiter([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    signalled = true;
    std::cerr << "quire-cli serve: stopping\n";
    // Replies in progress end first, so that no connection waits for them.
    engine.stop();
    http.stop();
  });
  http.run();
  // The server stopped by itself: the waiter still waits for a signal.
  if (!signalled) pthread_kill(signal_waiter.native_handle(), SIGTERM);
  signal_waiter.join();
  engine.stop();
  // The engine thread has ended: the runtime is this thread's again. What the
  // clients' chats hold goes to disk, so that a restarted server finds it.
  archive_disk_cache(*session.runtime, std::cerr);
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand(
      "serve", "Serve a model over an OpenAI-compatible HTTP API (/v1/chat/completions, ...)");
  command->add_option("directory", options->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  command
      ->add_option("--host", options->server.host,
                   "Address to listen on; another than 127.0.0.1 needs --api-key")
      ->capture_default_str();
  command->add_option("--port", options->server.port, "Port (0: any free one, printed at start)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  command->add_option("--api-key", options->server.api_key,
                      "Key that clients must send as \"Authorization: Bearer KEY\"");
  command->add_option("--cors", options->server.cors_origin,
                      "Origin that browsers may call from (CORS headers); none by default");
  command->add_option("--model-name", options->model_name,
                      "Model id that /v1/models lists (default: the directory's name)");
  CLI::Option* format =
      command->add_option("--format", options->format, kFormatHelp)->capture_default_str();
  command->add_option("--parallel", options->parallel, "Replies generated at once (one batch)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  command
      ->add_option("--max-queue", options->max_queue,
                   "Requests that may wait beyond those running; more are refused with 503")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  command
      ->add_option("--max-body-mib", options->max_body_mib,
                   "Largest request body in MiB; larger ones are refused with 413")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  command
      ->add_option("--timeout", options->timeout,
                   "Seconds a client may take to send a request, or to take the answer")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  options->draft.add_to(*command);
  options->disk.add_to(*command);
  options->engine.add_to(*command, true);
  // --presets: the library requests name with "preset"; --preset: the one
  // for requests that name none.
  options->presets.add_to(*command);
  command->callback([options, format, &exit_code] {
    options->server.presets = options->presets.catalog();
    if (const std::optional<PresetValues> preset = options->presets.load()) {
      options->server.presets.fallback = preset->values;
      if (!given(format) && preset->prompt_format) options->format = *preset->prompt_format;
    }
    exit_code = run_serve(*options);
  });
}

}  // namespace quire::cli
