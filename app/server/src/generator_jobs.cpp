#include "quire/server/generator_jobs.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace quire::server {

GeneratorJobs::GeneratorJobs(std::size_t max_jobs, std::function<void()> wake)
    : max_jobs_(max_jobs), wake_(std::move(wake)) {}

GeneratorJobs::~GeneratorJobs() = default;

std::shared_ptr<ReplyChannel> GeneratorJobs::submit(engine::JobRequest request, int choices) {
  if (choices < 1) return nullptr;
  auto channel = std::make_shared<ReplyChannel>(choices);
  const auto jobs = static_cast<std::size_t>(choices);
  {
    const std::lock_guard lock(mutex_);
    if (closed_ || in_flight_ + jobs > max_jobs_) return nullptr;
    in_flight_ += jobs;
    stats_.waiting += jobs;
    request.draft = draft_;
    incoming_.push_back({std::move(request), channel});
  }
  if (wake_) wake_();
  return channel;
}

void GeneratorJobs::cancel(const std::shared_ptr<ReplyChannel>& channel) {
  {
    const std::lock_guard lock(mutex_);
    cancels_.push_back(channel);
  }
  if (wake_) wake_();
}

EngineStats GeneratorJobs::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

void GeneratorJobs::close() {
  const std::lock_guard lock(mutex_);
  closed_ = true;
}

void GeneratorJobs::set_draft(const engine::DraftSettings& draft) {
  engine::validate(draft);
  const std::lock_guard lock(mutex_);
  draft_ = draft;
}

bool GeneratorJobs::pending() const {
  const std::lock_guard lock(mutex_);
  return !incoming_.empty() || !cancels_.empty();
}

void GeneratorJobs::take(engine::Generator& generator) {
  std::vector<Submission> incoming;
  std::vector<std::shared_ptr<ReplyChannel>> cancels;
  {
    const std::lock_guard lock(mutex_);
    incoming.swap(incoming_);
    cancels.swap(cancels_);
  }
  for (Submission& submission : incoming)
    start(std::move(submission), generator);
  for (const std::shared_ptr<ReplyChannel>& channel : cancels) {
    if (const auto hosted = jobs_.find(channel.get()); hosted != jobs_.end()) {
      for (const engine::JobId id : hosted->second.jobs)
        generator.cancel(id);
    }
  }
}

void GeneratorJobs::start(Submission submission, engine::Generator& generator) {
  ReplyChannel* channel = submission.channel.get();
  engine::JobRequest& request = submission.request;
  // The callbacks run on the owning thread, after the jobs are recorded below.
  request.on_text = [this, channel](engine::JobId id, std::string_view text) {
    const auto hosted = jobs_.find(channel);
    if (hosted == jobs_.end()) return;
    const std::vector<engine::JobId>& jobs = hosted->second.jobs;
    if (const auto job = std::ranges::find(jobs, id); job != jobs.end()) {
      channel->push_text(static_cast<int>(job - jobs.begin()), text);
    }
  };
  // The channel stays alive while the generator holds a job of it.
  // The statistics leave the job out before its reader hears the end: a client
  // that asks right after its reply ends must not see it still running.
  request.on_done = [this, keep = submission.channel](const engine::JobResult& result) {
    const auto hosted = jobs_.find(keep.get());
    // Abandoned: counted out already.
    if (hosted != jobs_.end()) {
      bool request_ended = false;
      if (--hosted->second.unfinished == 0) {
        jobs_.erase(hosted);
        request_ended = true;
      }
      const std::lock_guard lock(mutex_);
      --in_flight_;
      if (request_ended) ++stats_.requests;
      stats_.drafted_tokens += result.statistics.drafted_tokens;
      stats_.accepted_tokens += result.statistics.accepted_tokens;
      // The last snapshot counted the job as running, or as waiting when it
      // was cancelled before it started.
      if (stats_.running > 0) {
        --stats_.running;
      } else if (stats_.waiting > 0) {
        --stats_.waiting;
      }
    }
    keep->finish(result.alternative, result);
  };
  const int choices = channel->choices();
  HostedRequest& hosted = jobs_[channel];
  hosted.unfinished = static_cast<std::size_t>(choices);
  if (choices == 1) {
    hosted.jobs = {generator.submit(std::move(request))};
  } else {
    hosted.jobs = generator.submit_alternatives(std::move(request), choices);
  }
}

void GeneratorJobs::cancel_all(engine::Generator& generator) {
  for (const auto& [channel, hosted] : jobs_) {
    for (const engine::JobId id : hosted.jobs)
      generator.cancel(id);
  }
}

void GeneratorJobs::end_with_error(const std::string& why) {
  for (const auto& [channel, hosted] : jobs_) {
    for (std::size_t choice = 0; choice < hosted.jobs.size(); ++choice) {
      engine::JobResult result;
      result.id = hosted.jobs[choice];
      result.alternative = static_cast<int>(choice);
      result.stop_reason = engine::StopReason::Error;
      result.error = why;
      channel->finish(static_cast<int>(choice), std::move(result));
    }
  }
}

void GeneratorJobs::fail_all(engine::Generator& generator, const std::string& why) {
  cancel_all(generator);
  end_with_error(why);
  // The count of jobs in flight waits for their on_done.
}

void GeneratorJobs::abandon(const std::string& why) {
  end_with_error(why);
  std::size_t unfinished = 0;
  for (const auto& [channel, hosted] : jobs_)
    unfinished += hosted.unfinished;
  jobs_.clear();
  const std::lock_guard lock(mutex_);
  in_flight_ -= std::min(unfinished, in_flight_);
}

namespace {

DiskCacheStats disk_cache_stats(const engine::DiskTier& tier) {
  const engine::DiskTierStatus status = tier.status();
  const engine::disk_cache::DiskWriterStatus& writer = status.writer;
  DiskCacheStats stats;
  stats.folder = status.folder.string();
  stats.limit_bytes = status.limit_bytes;
  stats.used_bytes = status.usage.bytes;
  stats.pages = status.usage.pages;
  stats.restored_pages = status.restored_pages;
  stats.written_pages = writer.written + status.archived_pages;
  stats.dropped_pages =
      writer.dropped_queue_full + writer.dropped_disk_full + writer.too_large + writer.failed;
  stats.disk_full = writer.disk_full;
  stats.notice = writer.notice;
  return stats;
}

}  // namespace

void GeneratorJobs::publish(engine::Generator& generator) {
  EngineStats stats;
  for (const auto& [channel, hosted] : jobs_) {
    stats.running += static_cast<std::size_t>(std::ranges::count_if(
        hosted.jobs, [&](engine::JobId id) { return generator.is_running(id); }));
  }
  stats.cache = generator.runtime().cache().stats();
  stats.sampled_tokens = generator.sampled_tokens();
  const engine::DiskTier* tier = generator.runtime().disk_tier();
  std::int64_t requests = 0;
  bool had_disk = false;
  {
    const std::lock_guard lock(mutex_);
    requests = stats_.requests;
    had_disk = stats_.disk_cache.has_value();
    stats.disk_cache = stats_.disk_cache;
  }
  if (tier == nullptr) {
    stats.disk_cache.reset();
  } else if (!had_disk || requests != disk_read_at_requests_) {
    // Reading lists the folder: while replies run, at most once a second;
    // once the generator is idle, at once.
    const auto now = std::chrono::steady_clock::now();
    if (!had_disk || generator.idle() || now - disk_read_time_ >= std::chrono::seconds(1)) {
      stats.disk_cache = disk_cache_stats(*tier);
      disk_read_at_requests_ = requests;
      disk_read_time_ = now;
    }
  }
  const std::lock_guard lock(mutex_);
  stats.waiting = in_flight_ >= stats.running ? in_flight_ - stats.running : 0;
  stats.requests = stats_.requests;
  stats.drafted_tokens = stats_.drafted_tokens;
  stats.accepted_tokens = stats_.accepted_tokens;
  stats_ = std::move(stats);
}

}  // namespace quire::server
