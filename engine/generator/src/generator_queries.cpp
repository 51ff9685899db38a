// What the generator can say about its jobs to the code that submitted them.

#include <algorithm>

#include "generator_job.h"

namespace quire::engine {

bool Generator::is_running(JobId id) const {
  return std::ranges::any_of(running_,
                             [id](const std::unique_ptr<Job>& job) { return job->id == id; });
}

}  // namespace quire::engine
