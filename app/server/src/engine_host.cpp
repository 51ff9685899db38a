#include "quire/server/engine_host.h"

#include <algorithm>
#include <iostream>
#include <utility>

namespace quire::server {

ReplyChannel::ReplyChannel(int choices) : slots_(static_cast<std::size_t>(std::max(choices, 1))) {}

void ReplyChannel::push_text(int choice, std::string_view text) {
  {
    const std::lock_guard lock(mutex_);
    slots_.at(static_cast<std::size_t>(choice)).text += text;
  }
  changed_.notify_all();
}

void ReplyChannel::finish(int choice, engine::JobResult result) {
  {
    const std::lock_guard lock(mutex_);
    Slot& slot = slots_.at(static_cast<std::size_t>(choice));
    if (slot.ended) return;
    slot.ended = true;
    slot.done = std::move(result);
  }
  changed_.notify_all();
}

ReplyChannel::Update ReplyChannel::wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    return std::ranges::any_of(slots_,
                               [](const Slot& slot) { return !slot.text.empty() || slot.done; });
  });
  Update update;
  update.text.resize(slots_.size());
  update.done.resize(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    update.text[i] = std::exchange(slots_[i].text, {});
    update.done[i] = std::exchange(slots_[i].done, std::nullopt);
  }
  return update;
}

std::vector<engine::JobResult> ReplyChannel::wait_results() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return std::ranges::all_of(slots_, &Slot::ended); });
  std::vector<engine::JobResult> results;
  for (Slot& slot : slots_) {
    // A result taken by wait() before is not here again; the slot ended.
    results.push_back(slot.done ? std::move(*slot.done) : engine::JobResult{});
    slot.done.reset();
    slot.text.clear();
  }
  return results;
}

EngineHost::EngineHost(engine::Generator& generator, EngineHostConfig config)
    : generator_(generator), config_(config) {
  publish();
  thread_ = std::thread([this] { run(); });
}

EngineHost::~EngineHost() {
  stop();
}

std::shared_ptr<ReplyChannel> EngineHost::submit(engine::JobRequest request, int choices) {
  if (choices < 1) return nullptr;
  auto channel = std::make_shared<ReplyChannel>(choices);
  const auto jobs = static_cast<std::size_t>(choices);
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ || in_flight_ + jobs > config_.max_jobs) return nullptr;
    in_flight_ += jobs;
    stats_.waiting += jobs;
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
      // The callbacks run on this thread, after the jobs are recorded below.
      request.on_text = [this, channel](engine::JobId id, std::string_view text) {
        const auto hosted = jobs_.find(channel);
        if (hosted == jobs_.end()) return;
        const std::vector<engine::JobId>& jobs = hosted->second.jobs;
        if (const auto job = std::ranges::find(jobs, id); job != jobs.end()) {
          channel->push_text(static_cast<int>(job - jobs.begin()), text);
        }
      };
      // The channel stays alive while the generator holds a job of it.
      request.on_done = [this, keep = submission.channel](const engine::JobResult& result) {
        keep->finish(result.alternative, result);
        bool request_ended = false;
        if (const auto hosted = jobs_.find(keep.get());
            hosted != jobs_.end() && --hosted->second.unfinished == 0) {
          jobs_.erase(hosted);
          request_ended = true;
        }
        const std::lock_guard lock(mutex_);
        --in_flight_;
        if (request_ended) ++stats_.requests;
      };
      const int choices = channel->choices();
      HostedRequest& hosted = jobs_[channel];
      hosted.unfinished = static_cast<std::size_t>(choices);
      if (choices == 1) {
        hosted.jobs = {generator_.submit(std::move(request))};
      } else {
        hosted.jobs = generator_.submit_alternatives(std::move(request), choices);
      }
    }
    if (stopping) {
      for (const auto& [channel, hosted] : jobs_) {
        for (const engine::JobId id : hosted.jobs)
          generator_.cancel(id);
      }
    } else {
      for (const std::shared_ptr<ReplyChannel>& channel : cancels) {
        if (const auto hosted = jobs_.find(channel.get()); hosted != jobs_.end()) {
          for (const engine::JobId id : hosted->second.jobs)
            generator_.cancel(id);
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
  for (const auto& [channel, hosted] : jobs_) {
    for (std::size_t choice = 0; choice < hosted.jobs.size(); ++choice) {
      generator_.cancel(hosted.jobs[choice]);
      engine::JobResult result;
      result.id = hosted.jobs[choice];
      result.alternative = static_cast<int>(choice);
      result.stop_reason = engine::StopReason::Error;
      result.error = "The engine failed: " + why;
      channel->finish(static_cast<int>(choice), std::move(result));
    }
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
