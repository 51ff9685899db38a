// quire-cli bench's generation: see bench_generate.h.

#include "bench_generate.h"

#include <utility>

#include "cli_support.h"

namespace quire::cli {

engine::JobResult bench_generate(LoadedSession& session, std::vector<std::int32_t> prompt,
                                 int max_new, const engine::DraftSettings& draft) {
  engine::JobRequest request;
  request.draft = draft;
  request.prompt = std::move(prompt);
  request.sampling = engine::SamplingSettings::greedy_settings();
  request.stop_at_eos = false;
  request.max_new_tokens = max_new;
  engine::JobResult result;
  request.on_done = [&](const engine::JobResult& done) { result = done; };
  session.generator->submit(std::move(request));
  session.generator->run_until_idle();
  if (result.stop_reason == engine::StopReason::Error) throw UsageError(result.error);
  return result;
}

}  // namespace quire::cli
