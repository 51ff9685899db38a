// What the generator does when a step runs out of device memory: the step
// runs again after the backend frees what it caches, then with fewer jobs,
// then with the cache's pages in host memory, and a job that cannot run even
// so ends with its reason while the others go on.
//
// Running fewer jobs comes before offloading: it is cheap and passes (the
// batch grows back after steps that run well), while offloading lasts for
// the runtime's life and makes every later step copy pages over the bus.
// Offloading comes before ending a job: a slower reply beats a lost one.
//
// Storage work outside the pass recovers too. Admitting a job may save
// evicted pages to host memory, restore cached ones and copy a partial
// page's tokens; if that fails the admission is undone, its pages and host
// slots forgetting what they may half hold, and the job waits in the queue
// to be admitted again. A failed save while pages are taken for a step only
// loses the evicted page. A row fetched for sampling is fetched again once.
//
// Running a step again is exact. Its K/V writes go to positions the cache
// does not count as written yet, into pages that only this sequence holds,
// and each layer writes before it reads, so a layer the failed pass reached
// is simply written again with the same values. FP16 and the integer formats
// encode every token on its own. FP8 keeps one scale per page and head that
// only grows: writing one token again, or a chunk from a page's first slot
// (which starts the page afresh), gives the same bytes. One case can differ
// in the last bit: a chunk of several tokens starting inside a page (after a
// partial-page copy), where the failed pass grew the scale and the retry
// encodes the chunk's first tokens at the grown scale directly rather than
// re-encoding them from the smaller one; the values stay within FP8's error.

#include <algorithm>
#include <exception>
#include <string>

#include "generator_job.h"
#include "quire/engine/generator/generator.h"
#include "quire/kernels/backend.h"

namespace quire::engine {
namespace {

// A job whose admission ran short this many times in a row with no other
// job running (holding memory that might be given back) ends.
constexpr int kAdmissionTries = 3;

// After memory ran short the batch limit grows back by one job per this many
// steps that ran well: often enough that a passing shortage is soon
// forgotten, rarely enough that a lasting one costs few failed passes.
constexpr int kCalmStepsPerJob = 64;

std::string replies(std::size_t count) {
  return std::to_string(count) + (count == 1 ? " reply" : " replies");
}

}  // namespace

int Generator::batch_limit() const {
  if (memory_batch_limit_ <= 0) return config_.max_batch_size;
  return std::min(config_.max_batch_size, memory_batch_limit_);
}

void Generator::calm_step() {
  if (memory_batch_limit_ <= 0 || ++calm_steps_ < kCalmStepsPerJob) return;
  calm_steps_ = 0;
  if (++memory_batch_limit_ >= config_.max_batch_size) memory_batch_limit_ = 0;
}

std::string Generator::device_name(int device) const {
  if (device < 0) return "host memory";
  std::string name;
  try {
    const std::vector<kernels::DeviceInfo> devices = runtime_.backend().devices();
    if (device < static_cast<int>(devices.size())) name = devices[std::size_t(device)].name;
  } catch (const std::exception&) {
    // The name only decorates the message; the index still says which.
  }
  const std::string index = "device " + std::to_string(device);
  return name.empty() ? index : name + " (" + index + ")";
}

bool Generator::free_more_memory(const kernels::DeviceOutOfMemory& error) {
  KvStorage& storage = runtime_.storage();
  // Worth it only where the pages leave more room than the staging ring
  // takes, and that room covers what was asked for.
  const std::int64_t gain = storage.offload_gain(error.device());
  if (gain <= 0 || error.requested() > error.available() + gain) return false;
  try {
    runtime_.offload_cache();
  } catch (const kernels::DeviceOutOfMemory&) {
    // The pages that moved stay moved, each layer whole; a ring still
    // missing is asked for again as the step begins, and if it fails there
    // the step ends its job as any other shortage would.
  }
  memory_.cache_offloaded = true;
  return true;
}

void Generator::run_fewer(StepBatch& step, std::size_t keep) {
  // The most recently admitted jobs go first, members of this step or not,
  // so that the batch stays the oldest jobs'. Each goes to the front of the
  // queue: sent back youngest first, the oldest of them ends up in front.
  while (step.members.size() > keep && !running_.empty()) {
    Job& job = *running_.back();
    const auto member = std::find(step.members.begin(), step.members.end(), &job);
    if (member != step.members.end()) {
      const auto index = static_cast<std::size_t>(member - step.members.begin());
      const std::size_t begin = step.first[index];
      const std::size_t count = step.end(index) - begin;
      step.sequences.erase(step.sequences.begin() + std::ptrdiff_t(begin),
                           step.sequences.begin() + std::ptrdiff_t(begin + count));
      step.first.erase(step.first.begin() + std::ptrdiff_t(index));
      for (std::size_t later = index; later < step.first.size(); ++later)
        step.first[later] -= count;
      step.members.erase(member);
      step.chunks.erase(step.chunks.begin() + std::ptrdiff_t(index));
    }
    const cache::SequenceId sequence = *job.sequence;
    runtime_.cache().release(sequence);
    preempted(sequence);
    ++memory_.preempted_jobs;
  }
  // Page tables of the jobs left are the same, but their spans are read anew.
  for (std::size_t i = 0; i < step.members.size(); ++i) {
    const cache::SequenceId sequence = *step.members[i]->sequence;
    for (std::size_t s = step.first[i]; s < step.end(i); ++s) {
      step.sequences[s].pages = runtime_.cache().page_table(sequence);
      step.sequences[s].window_pages = runtime_.cache().window_page_table(sequence);
    }
  }
  memory_batch_limit_ = std::max(1, static_cast<int>(running_.size()));
  calm_steps_ = 0;
}

std::optional<ForwardPass::Result> Generator::run_pass(StepBatch& step) {
  ForwardPass& forward = runtime_.forward();
  MemoryRecoveries::Action action = MemoryRecoveries::Action::None;
  std::string what;
  int device = -1;
  std::size_t sent_back = 0;
  const std::size_t started_with = step.members.size();
  while (!step.members.empty()) {
    try {
      ForwardPass::Result result = forward.run(step.sequences);
      if (action == MemoryRecoveries::Action::None) {
        calm_step();
      } else {
        std::string done;
        if (sent_back > 0) {
          done = replies(sent_back) + " went back to the queue and " +
                 replies(step.members.size()) + " of " + replies(started_with) + " ran";
        }
        if (action == MemoryRecoveries::Action::OffloadedCache) {
          done += (done.empty() ? "" : ", and ") +
                  std::string("the cache moved to host memory and replies continue, slower");
        }
        if (done.empty()) done = "its workspaces were freed and the step ran again";
        memory_.last = device_name(device) + " ran short of memory (" + what + "); " + done;
      }
      return result;
    } catch (const kernels::DeviceOutOfMemory& error) {
      if (action == MemoryRecoveries::Action::None) ++memory_.steps;
      what = error.what();
      device = error.device();
      memory_.device = device;
      memory_.device_name = device_name(device);
      // The pass may have written some layers' K/V of its positions.
      for (std::size_t i = 0; i < step.members.size(); ++i) {
        runtime_.cache().mark_overwritten(*step.members[i]->sequence, step.chunks[i].begin,
                                          step.chunks[i].end);
      }
      // Recordings hold the workspaces' addresses; the backend's cached
      // memory is the cheapest to give back.
      forward.graphs().invalidate();
      runtime_.backend().release_cached_memory();
      if (action == MemoryRecoveries::Action::None) {
        action = MemoryRecoveries::Action::Retried;
      } else if (step.members.size() > 1) {
        action = std::max(action, MemoryRecoveries::Action::RanFewer);
        const std::size_t before = running_.size();
        run_fewer(step, (step.members.size() + 1) / 2);
        sent_back += before - running_.size();
      } else if (action < MemoryRecoveries::Action::OffloadedCache && free_more_memory(error)) {
        action = MemoryRecoveries::Action::OffloadedCache;
      } else {
        Job& job = *step.members.front();
        step.members.clear();
        step.sequences.clear();
        step.chunks.clear();
        step.first.clear();
        action = MemoryRecoveries::Action::EndedJob;
        ++memory_.ended_jobs;
        const std::string device_text = device_name(device);
        memory_.last = device_text + " ran short of memory (" + what +
                       "); a reply that did not fit even alone ended" +
                       (sent_back > 0 ? ", and " + replies(sent_back) + " went back to the queue"
                                      : std::string());
        finish(job, StopReason::Error,
               device_text +
                   " ran out of memory for this reply even with no other reply "
                   "running (" +
                   what +
                   "); close other programs that use it, or load the model with a smaller "
                   "cache or a shorter context, then try again");
      }
      memory_.last_action = action;
      if (!step.members.empty()) ++memory_.retries;
    }
  }
  memory_.last_action = action;
  return std::nullopt;
}

void Generator::ran_short(const kernels::DeviceOutOfMemory& error) {
  ++memory_.steps;
  memory_.device = error.device();
  memory_.device_name = device_name(error.device());
  memory_.last_action = MemoryRecoveries::Action::Retried;
  // Recordings hold the workspaces' addresses, which are given back here.
  runtime_.forward().graphs().invalidate();
  runtime_.backend().release_cached_memory();
}

bool Generator::admission_failed(Job& job, const kernels::DeviceOutOfMemory& error) {
  ran_short(error);
  ++job.failed_admissions;
  if (job.failed_admissions < kAdmissionTries || !running_.empty()) {
    memory_.last = memory_.device_name + " ran short of memory (" + error.what() +
                   ") while a reply's cached pages were put in place; its workspaces were freed "
                   "and the reply waits to start again";
    return false;
  }
  memory_.last_action = MemoryRecoveries::Action::EndedJob;
  ++memory_.ended_jobs;
  memory_.last = memory_.device_name + " ran out of memory for this reply's cached pages (" +
                 error.what() +
                 ") even with no other reply running; close other programs that use it, or "
                 "load the model with a smaller cache, then try again";
  return true;
}

void Generator::save_evicted(const cache::AppendResult& taken) {
  const std::span<const cache::HostSave> saves = taken.saves;
  try {
    runtime_.save_evicted(saves, taken.disk_saves);
  } catch (const kernels::DeviceOutOfMemory&) {
    // Only a copy of pages about to be reused is lost: they are computed
    // again if ever needed. Slots that may hold part of a page are emptied.
    runtime_.cache().drop_host_saves(saves);
  } catch (...) {
    // Whatever else failed ends the step, but the slots must not stay
    // indexed under hashes whose bytes they may not hold.
    runtime_.cache().drop_host_saves(saves);
    throw;
  }
}

void Generator::fetch_row(const ForwardPass::Result& result, std::size_t index) {
  try {
    runtime_.forward().fetch_row(result, index, fetched_row_);
    return;
  } catch (const kernels::DeviceOutOfMemory& error) {
    ran_short(error);
    ++memory_.retries;
    memory_.last = memory_.device_name + " ran short of memory (" + error.what() +
                   ") while a reply's logits were read; its workspaces were freed and the "
                   "row was read again";
  }
  runtime_.forward().fetch_row(result, index, fetched_row_);
}

std::string Generator::row_fetch_failed(const kernels::DeviceOutOfMemory& error) {
  memory_.last_action = MemoryRecoveries::Action::EndedJob;
  ++memory_.ended_jobs;
  memory_.last = memory_.device_name + " ran short of memory (" + error.what() +
                 "); a reply whose logits could not be read ended";
  return device_name(error.device()) + " ran out of memory for this reply's logits (" +
         error.what() +
         "); close other programs that use it, or load the model with a smaller cache, then "
         "try again";
}

}  // namespace quire::engine
