#pragma once

// The one way quire-cli bench's workloads generate: greedy, the end-of-text
// token not stopping it, the job run to its end on the session's generator.

#include <cstdint>
#include <vector>

#include "generation_options.h"

namespace quire::cli {

// Up to max_new tokens after `prompt` (its time to first token is the
// prompt's when max_new is 1). Throws UsageError when the job fails.
engine::JobResult bench_generate(LoadedSession& session, std::vector<std::int32_t> prompt,
                                 int max_new, const engine::DraftSettings& draft = {});

}  // namespace quire::cli
