#include "quire/server/openai_server.h"

#include <arpa/inet.h>
#include <httplib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

#include "client_connection.h"
#include "quire/server/api_error.h"
#include "quire/server/openai_request.h"
#include "quire/server/vision_support.h"
#include "reply_route.h"

namespace quire::server {
namespace {

using Clock = std::chrono::steady_clock;

// httplib's Request has no room for a handler's own data, and a request is
// read, handled, written and logged on one thread: the log line's details
// wait here between the handler and the logger.
thread_local detail::RequestNote current_note;

std::int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void send_error(httplib::Response& response, const ApiError& error) {
  response.status = error.status;
  response.set_content(error_body(error), "application/json");
}

ApiError status_error(int status, const httplib::Request& request, std::size_t max_body) {
  switch (status) {
    case 404:
      return {404, "Invalid URL (" + request.method + " " + request.path + ").",
              "invalid_request_error", "", "unknown_url"};
    case 413:
      return {413,
              "The request body is larger than this server takes (" +
                  std::to_string(max_body >> 20) + " MiB).",
              "invalid_request_error", "", "request_too_large"};
    default:
      return {status,
              "The request could not be handled (HTTP status " + std::to_string(status) + ").",
              status >= 500 ? "server_error" : "invalid_request_error", "", ""};
  }
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr address{};
  const std::string text(host);
  return inet_pton(AF_INET, text.c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127;
}

void check_exposure(const ServerOptions& options) {
  if (!is_loopback_host(options.host) && options.api_key.empty()) {
    throw std::invalid_argument(
        "--host " + options.host +
        " lets other machines reach the server, and without --api-key anyone there could use "
        "it; give --api-key KEY (clients send it as \"Authorization: Bearer KEY\"), or leave "
        "--host at 127.0.0.1");
  }
}

bool authorized(std::string_view authorization, std::string_view api_key) {
  constexpr std::string_view kScheme = "Bearer ";
  std::string_view given;
  if (authorization.starts_with(kScheme)) given = authorization.substr(kScheme.size());
  // Every byte of the expected key is compared whatever the given key holds,
  // so the time taken says nothing about how much of it was right.
  unsigned difference = given.size() == api_key.size() ? 0u : 1u;
  for (std::size_t i = 0; i < api_key.size(); ++i) {
    const unsigned char expected = static_cast<unsigned char>(api_key[i]);
    const unsigned char actual =
        i < given.size() ? static_cast<unsigned char>(given[i]) : static_cast<unsigned char>(0);
    difference |= static_cast<unsigned>(expected ^ actual);
  }
  return difference == 0 && !api_key.empty();
}

struct OpenAiServer::Impl {
  ServerOptions options;
  ServedModel model;
  engine::ChatFormat format;
  const engine::Tokenizer& tokenizer;
  JobHost& engine;
  std::int64_t created = unix_seconds();
  httplib::Server http;
  // The listening socket, from httplib's socket options; bind() lengthens its
  // queue.
  socket_t listening = INVALID_SOCKET;
  std::mutex ids_mutex;
  std::mt19937_64 ids{std::random_device{}()};
  // The generated ids of the replies sent, for the requests that send them
  // back as text.
  ReplyMemory replies;

  Impl(ServerOptions options_in, ServedModel model_in, engine::ChatFormat format_in,
       const engine::Tokenizer& tokenizer_in, JobHost& engine_in)
      : options(std::move(options_in)),
        model(std::move(model_in)),
        format(std::move(format_in)),
        tokenizer(tokenizer_in),
        engine(engine_in) {}

  std::string new_id(std::string_view prefix) {
    std::uint64_t a = 0, b = 0;
    {
      const std::lock_guard lock(ids_mutex);
      a = ids();
      b = ids();
    }
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string id(prefix);
    for (std::uint64_t word : {a, b}) {
      for (int i = 0; i < 12; ++i, word >>= 4)
        id += kDigits[word & 15];
    }
    return id;
  }

  // The key check of every /v1 route; false when the answer is already written.
  bool admit(const httplib::Request& request, httplib::Response& response) const {
    if (options.api_key.empty()) return true;
    if (!request.has_header("Authorization")) {
      send_error(response, {401,
                            "You didn't provide an API key. Send it in the Authorization header "
                            "as \"Bearer KEY\".",
                            "invalid_request_error", "", "invalid_api_key"});
      return false;
    }
    if (!authorized(request.get_header_value("Authorization"), options.api_key)) {
      send_error(response, {401, "Incorrect API key provided.", "invalid_request_error", "",
                            "invalid_api_key"});
      return false;
    }
    return true;
  }

  // Each of n choices is a job: a request for more than the server ever
  // holds at once would wait for room that never comes.
  void check_choices(int choices) const {
    if (static_cast<std::size_t>(choices) <= engine.max_jobs()) return;
    const std::string& advice = options.capacity_advice;
    throw ApiException(invalid_request(
        "n is " + std::to_string(choices) + ", but this server runs and queues at most " +
            std::to_string(engine.max_jobs()) + " replies at once" +
            (advice.empty() ? std::string(".") : " (" + advice + ")."),
        "n"));
  }

  void completion(const httplib::Request& request, httplib::Response& response,
                  detail::Endpoint endpoint) {
    if (!admit(request, response)) return;
    try {
      PreparedJob job;
      detail::ReplyContext context;
      context.endpoint = endpoint;
      context.header.created = unix_seconds();
      context.header.model = model.id;
      if (endpoint == detail::Endpoint::Chat) {
        ChatCompletionRequest parsed = parse_chat_completion_request(request.body);
        check_model(parsed.model, model);
        check_images_seen(parsed, model);
        apply_requested_preset(parsed, options.presets);
        job = prepare_chat_job(parsed, format, tokenizer, model, &replies);
        context.shape = job.shape;
        context.context_drop = job.context_drop;
        // A reply read for tool calls goes back as messages of another
        // shape, rendered whole by the template: nothing to remember.
        if (!job.shape) {
          context.on_result = [this](const engine::JobResult& result) {
            replies.remember(result.text, result.tokens, tokenizer);
          };
        }
        context.choices = parsed.n;
        context.stream = parsed.stream;
        context.include_usage = parsed.include_usage;
        context.header.id = new_id("chatcmpl-");
      } else {
        CompletionRequest parsed = parse_completion_request(request.body);
        check_model(parsed.model, model);
        apply_requested_preset(parsed, options.presets);
        job = prepare_completion_job(parsed, tokenizer, model);
        context.choices = parsed.n;
        context.stream = parsed.stream;
        context.include_usage = parsed.include_usage;
        context.header.id = new_id("cmpl-");
      }
      job.request.label = context.header.id;
      context.client_gone = [connection = std::make_shared<detail::ClientConnection>(
                                 request.local_addr, request.local_port, request.remote_addr,
                                 request.remote_port)] { return connection->closed(); };
      check_choices(context.choices);
      std::shared_ptr<ReplyChannel> channel =
          engine.submit(std::move(job.request), context.choices);
      if (!channel) {
        response.set_header("Retry-After", "1");
        send_error(response,
                   {503,
                    context.choices == 1
                        ? "The server is busy: as many requests as it queues are "
                          "running or waiting. Try again shortly."
                        : "The server is busy: it cannot queue " + std::to_string(context.choices) +
                              " more replies now (each choice of n is one). Try again "
                              "shortly.",
                    "server_error", "", "server_busy"});
        return;
      }
      detail::answer(response, engine, std::move(channel), std::move(context), current_note);
    } catch (const ApiException& error) {
      send_error(response, error.error());
    }
  }

  std::string stats_json() const {
    const EngineStats stats = engine.stats();
    const cache::CacheStats& cache = stats.cache;
    nlohmann::ordered_json out{{"model", model.id},
                               {"running", stats.running},
                               {"waiting", stats.waiting},
                               {"finished_requests", stats.requests},
                               {"sampled_tokens", stats.sampled_tokens},
                               {"drafted_tokens", stats.drafted_tokens},
                               {"accepted_tokens", stats.accepted_tokens},
                               {"cache",
                                {{"page_size", cache.page_size},
                                 {"total_pages", cache.total_pages},
                                 {"free_pages", cache.free_pages},
                                 {"referenced_pages", cache.referenced_pages},
                                 {"cached_pages", cache.cached_pages},
                                 {"shared_pages", cache.shared_pages},
                                 {"sequences", cache.sequences},
                                 {"branches", cache.branches},
                                 {"prompt_tokens", cache.prompt_tokens},
                                 {"reused_tokens", cache.served_tokens()},
                                 {"computed_tokens", cache.computed_tokens},
                                 {"hit_rate", cache.hit_rate()}}}};
    if (const std::optional<DiskCacheStats>& disk = stats.disk_cache) {
      out["disk_cache"] = {{"folder", disk->folder},
                           {"limit_bytes", disk->limit_bytes},
                           {"used_bytes", disk->used_bytes},
                           {"pages", disk->pages},
                           {"restored_pages", disk->restored_pages},
                           {"written_pages", disk->written_pages},
                           {"dropped_pages", disk->dropped_pages},
                           {"disk_full", disk->disk_full},
                           {"notice", disk->notice}};
    }
    return out.dump();
  }

  void routes() {
    const auto method_not_allowed = [](const httplib::Request& request,
                                       httplib::Response& response) {
      send_error(response,
                 {405, "Method " + request.method + " is not allowed on " + request.path + ".",
                  "invalid_request_error", "", "method_not_allowed"});
    };
    const auto get_only = [&](const std::string& pattern, httplib::Server::Handler handler) {
      http.Get(pattern, std::move(handler));
      http.Post(pattern, method_not_allowed);
      http.Put(pattern, method_not_allowed);
      http.Delete(pattern, method_not_allowed);
      http.Patch(pattern, method_not_allowed);
      if (options.cors_origin.empty()) http.Options(pattern, method_not_allowed);
    };
    const auto post_only = [&](const std::string& pattern, httplib::Server::Handler handler) {
      http.Post(pattern, std::move(handler));
      http.Get(pattern, method_not_allowed);
      http.Put(pattern, method_not_allowed);
      http.Delete(pattern, method_not_allowed);
      http.Patch(pattern, method_not_allowed);
      if (options.cors_origin.empty()) http.Options(pattern, method_not_allowed);
    };

    get_only("/health", [this](const httplib::Request&, httplib::Response& response) {
      response.set_content(nlohmann::json{{"status", "ok"}, {"model", model.id}}.dump(),
                           "application/json");
    });
    get_only("/v1/models", [this](const httplib::Request& request, httplib::Response& response) {
      if (!admit(request, response)) return;
      response.set_content(models_json(model.id, created, model.context_tokens),
                           "application/json");
    });
    get_only(R"(/v1/models/(.+))",
             [this](const httplib::Request& request, httplib::Response& response) {
               if (!admit(request, response)) return;
               try {
                 check_model(request.matches[1].str(), model);
                 response.set_content(model_json(model.id, created, model.context_tokens),
                                      "application/json");
               } catch (const ApiException& error) {
                 send_error(response, error.error());
               }
             });
    get_only("/v1/quire/stats",
             [this](const httplib::Request& request, httplib::Response& response) {
               if (!admit(request, response)) return;
               response.set_content(stats_json(), "application/json");
             });
    post_only("/v1/chat/completions",
              [this](const httplib::Request& request, httplib::Response& response) {
                completion(request, response, detail::Endpoint::Chat);
              });
    post_only("/v1/completions",
              [this](const httplib::Request& request, httplib::Response& response) {
                completion(request, response, detail::Endpoint::Completion);
              });
    if (!options.cors_origin.empty()) {
      http.Options(R"(.*)", [](const httplib::Request&, httplib::Response& response) {
        response.status = 204;
      });
    }
  }

  void hooks() {
    http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
      current_note = detail::RequestNote{};
      current_note.start = Clock::now();
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // Answers that httplib makes itself (an unknown path, a body too large,
    // a request it cannot parse) get an OpenAI error object too.
    http.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request& request, httplib::Response& response) {
          if (!response.body.empty() || response.has_header("Content-Type")) {
            return httplib::Server::HandlerResponse::Unhandled;
          }
          send_error(response, status_error(response.status, request, options.max_body_bytes));
          return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& response, std::exception_ptr thrown) {
          std::string what = "unknown error";
          try {
            std::rethrow_exception(thrown);
          } catch (const std::exception& error) {
            what = error.what();
          } catch (...) {
          }
          send_error(response, {500, "The server failed: " + what, "server_error", "", ""});
        });
    if (!options.cors_origin.empty()) {
      http.set_post_routing_handler([this](const httplib::Request&, httplib::Response& response) {
        response.set_header("Access-Control-Allow-Origin", options.cors_origin);
        response.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
        response.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        response.set_header("Vary", "Origin");
      });
    }
    http.set_logger([](const httplib::Request& request, const httplib::Response& response) {
      const detail::RequestNote& note = current_note;
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - note.start);
      std::string line =
          request.method + " " + request.path + " " + std::to_string(response.status);
      if (note.has_usage) {
        line += " " + std::to_string(note.usage.prompt_tokens) + "+" +
                std::to_string(note.usage.completion_tokens) + " tokens (" +
                std::to_string(note.usage.cached_tokens) + " cached)";
      }
      if (note.client_left) line += " client left";
      line += " " + std::to_string(ms.count()) + " ms\n";
      std::cerr << line << std::flush;
    });
  }
};

OpenAiServer::OpenAiServer(ServerOptions options, ServedModel model, engine::ChatFormat format,
                           const engine::Tokenizer& tokenizer, JobHost& engine)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(model), std::move(format),
                                   tokenizer, engine)) {
  httplib::Server& http = impl_->http;
  const ServerOptions& o = impl_->options;
  http.set_payload_max_length(o.max_body_bytes);
  http.set_read_timeout(o.read_timeout_seconds, 0);
  http.set_write_timeout(o.write_timeout_seconds, 0);
  http.set_keep_alive_timeout(o.keep_alive_seconds);
  const std::size_t threads = std::max<std::size_t>(o.threads, 4);
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_socket_options([impl = impl_.get()](socket_t socket) {
    httplib::default_socket_options(socket);
    impl->listening = socket;
  });
  impl_->routes();
  impl_->hooks();
}

OpenAiServer::~OpenAiServer() = default;

int OpenAiServer::bind() {
  const ServerOptions& o = impl_->options;
  const int port = o.port == 0 ? impl_->http.bind_to_any_port(o.host)
                               : (impl_->http.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port <= 0) {
    throw std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                             " (the port is taken, or the address is not this machine's); "
                             "choose another with --host or --port");
  }
  // Debian's cpp-httplib is a compiled library whose listen() asks for a
  // queue of 5 connections (CPPHTTPLIB_LISTEN_BACKLOG, fixed when the library
  // was built: defining it here would change nothing). Beyond that the kernel
  // drops a burst of clients' connections, to be retried a second later or
  // reset. Listening again on a listening socket sets its queue's length, up
  // to the system's limit (net.core.somaxconn).
  if (::listen(impl_->listening, SOMAXCONN) != 0) {
    throw std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(port) + ": " +
                             std::strerror(errno));
  }
  return port;
}

void OpenAiServer::run() {
  impl_->http.listen_after_bind();
}

bool OpenAiServer::running() const {
  return impl_->http.is_running();
}

void OpenAiServer::stop() {
  impl_->http.stop();
}

}  // namespace quire::server
