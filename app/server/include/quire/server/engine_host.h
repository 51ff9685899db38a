#pragma once

// The engine thread of quire-cli serve. The Generator is single-threaded, so
// one thread owns it (and through it the runtime and the cache): it takes the
// jobs and cancellations that HTTP handler threads hand over (GeneratorJobs),
// steps while there is work and sleeps on a condition variable while there is
// none. Each job answers through its own ReplyChannel, which the handler
// thread waits on. Plain C++, no Qt.

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>

#include "quire/engine/generator/generator.h"
#include "quire/server/generator_jobs.h"
#include "quire/server/job_host.h"

namespace quire::server {

struct EngineHostConfig {
  // Jobs handed over and not finished (running and waiting) beyond which
  // submit() refuses at once.
  std::size_t max_jobs = 64;
  // Speculative decoding for every request's jobs (GeneratorJobs::set_draft).
  engine::DraftSettings draft;
};

class EngineHost final : public JobHost {
 public:
  // The generator (and the runtime and tokenizer it uses) must outlive the
  // host; from now on only the host's thread touches them.
  EngineHost(engine::Generator& generator, EngineHostConfig config);
  ~EngineHost() override;
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;

  std::shared_ptr<ReplyChannel> submit(engine::JobRequest request, int choices = 1) override;
  void cancel(const std::shared_ptr<ReplyChannel>& channel) override;
  std::size_t max_jobs() const override { return jobs_.max_jobs(); }
  EngineStats stats() const override { return jobs_.stats(); }

  // Ends every job (each channel gets StopReason::Cancelled) and the thread.
  void stop();

 private:
  void run();
  // Returns whether the host is stopping.
  bool wait_for_work();
  void wake();

  engine::Generator& generator_;
  GeneratorJobs jobs_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace quire::server
