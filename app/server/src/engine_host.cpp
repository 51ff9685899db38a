#include "quire/server/engine_host.h"

#include <iostream>

namespace quire::server {

void ReplyChannel::push_text(std::string_view text) {
  {
    const std::lock_guard lock(mutex_);
    text_ += text;
  }
  changed_.notify_all();
}

void ReplyChannel::finish(engine::JobResult result) {
  {
    const std::lock_guard lock(mutex_);
    if (done_ || taken_) return;  // a job ends once; a second report is dropped
    done_ = std::move(result);
  }
  changed_.notify_all();
}

ReplyChannel::Update ReplyChannel::wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return !text_.empty() || done_.has_value(); });
  Update update;
  update.text = std::move(text_);
  text_.clear();
  if (done_) {
    update.done = std::move(done_);
    done_.reset();
    taken_ = true;
  }
  return update;
}

engine::JobResult ReplyChannel::wait_result() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return done_.has_value(); });
  engine::JobResult result = std::move(*done_);
  done_.reset();
  taken_ = true;
  text_.clear();
  return result;
}

EngineHost::EngineHost(engine::Generator& generator, EngineHostConfig config)
    : generator_(generator), config_(config) {
  publish();
  thread_ = std::thread([this] { run(); });
}

EngineHost::~EngineHost() {
  stop();
}

std::shared_ptr<ReplyChannel> EngineHost::submit(engine::JobRequest request) {
  auto channel = std::make_shared<ReplyChannel>();
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ || in_flight_ >= config_.max_jobs) return nullptr;
    ++in_flight_;
    ++stats_.waiting;
    incoming_.push_back({std::move(request), channel});
  }
  wake_.notify_one();
  return channel;
}

void EngineHost::cancel(const std::shared_ptr<ReplyChannel>& channel) {
  {
    const std::lock_guard lock(mutex_);
    cancels_.push_back(channel);
  }
  wake_.notify_one();
}

EngineStats EngineHost::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

void EngineHost::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void EngineHost::take_work(std::vector<Submission>& incoming,
                           std::vector<std::shared_ptr<ReplyChannel>>& cancels) {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] {
    return stopping_ || !incoming_.empty() || !cancels_.empty() || !generator_.idle();
  });
  incoming.swap(incoming_);
  cancels.swap(cancels_);
}

void EngineHost::run() {
  std::vector<Submission> incoming;
  std::vector<std::shared_ptr<ReplyChannel>> cancels;
  while (true) {
    incoming.clear();
    cancels.clear();
    take_work(incoming, cancels);
    bool stopping = false;
    {
      const std::lock_guard lock(mutex_);
      stopping = stopping_;
    }
    for (Submission& submission : incoming) {
      ReplyChannel* channel = submission.channel.get();
      engine::JobRequest& request = submission.request;
      request.on_text = [channel](engine::JobId, std::string_view text) {
        channel->push_text(text);
      };
      // The channel stays alive while the generator holds the job.
      request.on_done = [this, keep = submission.channel](const engine::JobResult& result) {
        jobs_.erase(keep.get());
        keep->finish(result);
        const std::lock_guard lock(mutex_);
        --in_flight_;
        ++stats_.requests;
      };
      jobs_[channel] = generator_.submit(std::move(request));
    }
    if (stopping) {
      for (const auto& [channel, id] : jobs_)
        generator_.cancel(id);
    } else {
      for (const std::shared_ptr<ReplyChannel>& channel : cancels) {
        if (const auto job = jobs_.find(channel.get()); job != jobs_.end()) {
          generator_.cancel(job->second);
        }
      }
    }
    try {
      // Cancelled jobs end at the start of a step, so stopping needs one.
      if (!generator_.idle()) generator_.step();
    } catch (const std::exception& error) {
      fail_everything(error.what());
    }
    publish();
    if (stopping) {
      if (!jobs_.empty()) fail_everything("the server is shutting down");
      return;
    }
  }
}

void EngineHost::fail_everything(const std::string& why) {
  std::cerr << "quire-cli serve: the engine failed a step: " << why << '\n';
  for (const auto& [channel, id] : jobs_) {
    generator_.cancel(id);
    engine::JobResult result;
    result.id = id;
    result.stop_reason = engine::StopReason::Error;
    result.error = "The engine failed: " + why;
    channel->finish(std::move(result));
  }
  // Their on_done, when the generator gets to it, finds the channel already
  // finished; the count of jobs in flight waits for it.
}

void EngineHost::publish() {
  EngineStats stats;
  stats.running = generator_.running();
  stats.cache = generator_.runtime().cache().stats();
  stats.sampled_tokens = generator_.sampled_tokens();
  const std::lock_guard lock(mutex_);
  stats.waiting = in_flight_ >= stats.running ? in_flight_ - stats.running : 0;
  stats.requests = stats_.requests;
  stats_ = std::move(stats);
}

}  // namespace quire::server
