#pragma once

// The server's jobs on a Generator that one thread owns and steps. Requests
// and cancellations come in from HTTP handler threads (JobHost); the owning
// thread takes them in between two steps, where they become jobs beside any
// others the generator runs, and their callbacks feed the requests' channels.
// quire-cli serve's EngineHost owns a thread for this; the desktop
// application's engine worker does it between the steps of its chats.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "quire/engine/generator/generator.h"
#include "quire/server/job_host.h"

namespace quire::server {

class GeneratorJobs final : public JobHost {
 public:
  // `wake` is called on the submitting thread after a request or a
  // cancellation was handed over: the owner then calls take() soon.
  GeneratorJobs(std::size_t max_jobs, std::function<void()> wake);
  // The generator must not hold a job of this object any more (see
  // holding()): their callbacks point here.
  ~GeneratorJobs() override;
  GeneratorJobs(const GeneratorJobs&) = delete;
  GeneratorJobs& operator=(const GeneratorJobs&) = delete;

  // JobHost, from any thread.
  std::shared_ptr<ReplyChannel> submit(engine::JobRequest request, int choices) override;
  void cancel(const std::shared_ptr<ReplyChannel>& channel) override;
  std::size_t max_jobs() const override { return max_jobs_; }
  EngineStats stats() const override;
  // Every later submit() is refused.
  void close();
  // Speculative decoding for the jobs of every request handed over from now
  // on (OpenAI's requests have no field for it: the server's setting rules).
  void set_draft(const engine::DraftSettings& draft);
  // Requests or cancellations wait for take().
  bool pending() const;

  // The owning thread only, the one that steps `generator`.
  // Handed-over requests become the generator's jobs; cancellations cancel theirs.
  void take(engine::Generator& generator);
  // Cancels every job held (they end at the next step).
  void cancel_all(engine::Generator& generator);
  // Whether the generator holds jobs of this object that have not ended.
  bool holding() const { return !jobs_.empty(); }
  // Every job held ends at once with StopReason::Error and `why`, which its
  // channel gets; the jobs are cancelled, and their on_done, when the
  // generator gets to it, finds the channel already finished.
  void fail_all(engine::Generator& generator, const std::string& why);
  // The generator that held the jobs is gone without ending them: their
  // channels get StopReason::Error and `why`, and they count no more.
  void abandon(const std::string& why);
  // Counts this object's jobs and the generator's cache for stats(); the
  // disk tier's state is read again when a request finished since the last
  // reading (at most once a second while the generator is busy), or the
  // tier came.
  void publish(engine::Generator& generator);

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
  void start(Submission submission, engine::Generator& generator);
  void end_with_error(const std::string& why);

  const std::size_t max_jobs_;
  const std::function<void()> wake_;

  mutable std::mutex mutex_;
  std::vector<Submission> incoming_;
  std::vector<std::shared_ptr<ReplyChannel>> cancels_;
  std::size_t in_flight_ = 0;
  bool closed_ = false;
  engine::DraftSettings draft_;
  EngineStats stats_;

  // Owning thread only.
  std::map<ReplyChannel*, HostedRequest> jobs_;
  // The finished requests when the disk tier was last read (-1: never), and when.
  std::int64_t disk_read_at_requests_ = -1;
  std::chrono::steady_clock::time_point disk_read_time_;
};

}  // namespace quire::server
