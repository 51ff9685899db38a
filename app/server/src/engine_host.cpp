#include "quire/server/engine_host.h"

#include <iostream>
#include <string>
#include <utility>

namespace quire::server {

EngineHost::EngineHost(engine::Generator& generator, EngineHostConfig config)
    : generator_(generator), jobs_(config.max_jobs, [this] { wake(); }) {
  jobs_.set_draft(config.draft);
  jobs_.publish(generator_);
  thread_ = std::thread([this] { run(); });
}

EngineHost::~EngineHost() {
  stop();
}

std::shared_ptr<ReplyChannel> EngineHost::submit(engine::JobRequest request, int choices) {
  return jobs_.submit(std::move(request), choices);
}

void EngineHost::cancel(const std::shared_ptr<ReplyChannel>& channel) {
  jobs_.cancel(channel);
}

void EngineHost::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  jobs_.close();
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void EngineHost::wake() {
  // Taken, if only for a moment, so that the engine thread is either before
  // its check for work (and sees this) or waiting (and is woken).
  { const std::lock_guard lock(mutex_); }
  wake_.notify_one();
}

bool EngineHost::wait_for_work() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return stopping_ || jobs_.pending() || !generator_.idle(); });
  return stopping_;
}

void EngineHost::run() {
  while (true) {
    const bool stopping = wait_for_work();
    jobs_.take(generator_);
    if (stopping) jobs_.cancel_all(generator_);
    try {
      // Cancelled jobs end at the start of a step, so stopping needs one.
      if (!generator_.idle()) generator_.step();
    } catch (const std::exception& error) {
      std::cerr << "quire-cli serve: the engine failed a step: " << error.what() << '\n';
      jobs_.fail_all(generator_, std::string("The engine failed: ") + error.what());
    }
    jobs_.publish(generator_);
    if (stopping) {
      if (jobs_.holding())
        jobs_.fail_all(generator_, "The engine failed: the server is shutting down");
      return;
    }
  }
}

}  // namespace quire::server
