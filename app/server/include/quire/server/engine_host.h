#pragma once

// The engine thread of the server. The Generator is single-threaded, so one
// thread owns it (and through it the runtime and the cache): it takes the
// jobs and cancellations that HTTP handler threads hand over through a
// mutex-protected queue, steps while there is work and sleeps on a condition
// variable while there is none. Each job answers through its own
// ReplyChannel, which the handler thread waits on. Plain C++, no Qt.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "quire/engine/generator/generator.h"

namespace quire::server {

// One request's answer, from the engine thread to the handler thread that
// waits for it: for each of its choices (one job each), text as it is
// decided, then the result.
class ReplyChannel {
 public:
  explicit ReplyChannel(int choices = 1);

  struct Update {
    // Indexed by choice; both sized choices().
    std::vector<std::string> text;                       // new text since the last wait
    std::vector<std::optional<engine::JobResult>> done;  // set once, with the last text
  };

  int choices() const { return static_cast<int>(slots_.size()); }

  // Engine side.
  void push_text(int choice, std::string_view text);
  // A choice ends once; a second report is dropped.
  void finish(int choice, engine::JobResult result);

  // Handler side: waits until text or a result arrives, or `timeout` passes
  // (then the update holds nothing).
  Update wait(std::chrono::milliseconds timeout);
  // Waits for every choice's result, in the order of the choices; the text
  // each holds is everything it streamed.
  std::vector<engine::JobResult> wait_results();

 private:
  struct Slot {
    std::string text;
    std::optional<engine::JobResult> done;
    bool ended = false;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Slot> slots_;
};

// What GET /v1/quire/stats reports, as the engine thread last published it.
struct EngineStats {
  std::size_t running = 0;    // jobs in the batch
  std::size_t waiting = 0;    // jobs handed over and not running yet
  std::int64_t requests = 0;  // requests whose every job finished, since the start
  cache::CacheStats cache;
  std::int64_t sampled_tokens = 0;
};

struct EngineHostConfig {
  // Jobs handed over and not finished (running and waiting) beyond which
  // submit() refuses at once.
  std::size_t max_jobs = 64;
};

class EngineHost {
 public:
  // The generator (and the runtime and tokenizer it uses) must outlive the
  // host; from now on only the host's thread touches them.
  EngineHost(engine::Generator& generator, EngineHostConfig config);
  ~EngineHost();
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;

  // Hands over `choices` replies to the request's prompt, `choices` jobs
  // (Generator::submit_alternatives: the prompt is computed once); their
  // on_text and on_done are replaced by the channel's. nullptr when they do
  // not all fit under max_jobs: a request is taken whole or not at all.
  std::shared_ptr<ReplyChannel> submit(engine::JobRequest request, int choices = 1);
  // Ends every job that answers through `channel` (the client went away);
  // their pages are released at the next step. Harmless after they ended.
  void cancel(const std::shared_ptr<ReplyChannel>& channel);

  // Jobs that may be in flight at once: a request for more choices can never
  // be taken.
  std::size_t max_jobs() const { return config_.max_jobs; }

  EngineStats stats() const;
  // Ends every job (each channel gets StopReason::Cancelled) and the thread.
  void stop();

 private:
  struct Submission {
    engine::JobRequest request;
    std::shared_ptr<ReplyChannel> channel;
  };
  // The jobs of one channel, by choice, and how many have not ended.
  struct HostedRequest {
    std::vector<engine::JobId> jobs;
    std::size_t unfinished = 0;
  };
  void run();
  void take_work(std::vector<Submission>& incoming,
                 std::vector<std::shared_ptr<ReplyChannel>>& cancels);
  void publish();
  void fail_everything(const std::string& why);

  engine::Generator& generator_;
  EngineHostConfig config_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Submission> incoming_;
  std::vector<std::shared_ptr<ReplyChannel>> cancels_;
  std::size_t in_flight_ = 0;
  bool stopping_ = false;
  EngineStats stats_;

  // Engine thread only.
  std::map<ReplyChannel*, HostedRequest> jobs_;
  std::thread thread_;
};

}  // namespace quire::server
