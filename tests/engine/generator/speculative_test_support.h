#pragma once

// What the speculative decoding suites share: prompts a reply may copy from,
// running requests to the end, and the hashes of sealed pages.

#include <QMetaType>
#include <map>
#include <vector>

#include "quire/cache/page_cache.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/runtime/model_runtime.h"
#include "small_model.h"

// The suites' data rows name cache codings.
Q_DECLARE_METATYPE(quire::cache::CacheFormat)

namespace quire::test {

// A block of `block` random tokens said `times` times after BOS: input a
// reply may copy from, where prompt lookup has something to find.
std::vector<cache::TokenId> repeating_prompt(int block, int times, std::uint32_t seed);

// Runs the requests together on one generator; results in submission order.
std::vector<engine::JobResult> run_all(engine::Generator& generator,
                                       std::vector<engine::JobRequest> requests);

// Each request on a fresh runtime of its own.
std::vector<engine::JobResult> run_each(const SmallModel& model,
                                        const engine::RuntimeOptions& options,
                                        std::vector<engine::JobRequest> requests);

// Hashes of the sealed pages, by page.
std::map<cache::PageIndex, cache::PageHash> sealed_pages(const cache::PageCache& cache);

}  // namespace quire::test
