#include "speculative_test_support.h"

#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::test {

std::vector<cache::TokenId> repeating_prompt(int block, int times, std::uint32_t seed) {
  const std::vector<cache::TokenId> random = prompt_of(block + 1, seed);
  std::vector<cache::TokenId> prompt{1};
  for (int i = 0; i < times; ++i)
    prompt.insert(prompt.end(), random.begin() + 1, random.end());
  return prompt;
}

std::vector<engine::JobResult> run_all(engine::Generator& generator,
                                       std::vector<engine::JobRequest> requests) {
  std::vector<engine::JobResult> results(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    requests[i].on_done = [&results, i](const engine::JobResult& done) { results[i] = done; };
    generator.submit(std::move(requests[i]));
  }
  generator.run_until_idle();
  return results;
}

std::vector<engine::JobResult> run_each(const SmallModel& model,
                                        const engine::RuntimeOptions& options,
                                        std::vector<engine::JobRequest> requests) {
  std::vector<engine::JobResult> results;
  kernels::CpuBackend backend;
  for (engine::JobRequest& request : requests) {
    engine::ModelRuntime runtime(model.description, backend, options);
    engine::Generator generator(runtime, *model.tokenizer);
    results.push_back(run_all(generator, {std::move(request)}).front());
  }
  return results;
}

std::map<cache::PageIndex, cache::PageHash> sealed_pages(const cache::PageCache& cache) {
  std::map<cache::PageIndex, cache::PageHash> sealed;
  for (const cache::PageInfo& info : cache.pages()) {
    if (info.hashed) sealed[info.index] = info.hash;
  }
  return sealed;
}

}  // namespace quire::test
