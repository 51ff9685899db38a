// How a step's rows become tokens: from the whole row on the host, or from
// the candidates computed where the logits are (Sampler's candidate path),
// fetching the row only when they do not decide.

#include <stdexcept>
#include <string>

#include "generator_job.h"
#include "quire/engine/generator/generator.h"
#include "quire/kernels/backend.h"
#include "quire/kernels/top_logits.h"

namespace quire::engine {

bool Generator::use_candidates() const {
  switch (config_.logits) {
    case GeneratorConfig::Logits::WholeRows:
      return false;
    case GeneratorConfig::Logits::Candidates:
      return true;
    case GeneratorConfig::Logits::Automatic:
      break;
  }
  return !runtime_.backend().shares_host_memory();
}

cache::TokenId Generator::sample(Job& job, const ForwardPass::Result& result, std::size_t index) {
  // The grammar's mask is applied where the draw happens, on the host, to the
  // candidates or the row: the device only ranks the raw logits, which the
  // mask does not change, and the candidates decide a masked row only when
  // they prove it (else the row comes over, below).
  // A job with banned strings has no grammar (Generator::submit).
  const TokenMask allowed = job.constraint ? job.constraint->mask() : ban_mask(job, result.vocab);
  if (result.host_row.at(index) >= 0) {
    return job.sampler.sample(result.row(index), job.tokens, allowed);
  }
  const ForwardPass::RowCandidates& row = result.candidates.at(index);
  LogitCandidates candidates;
  candidates.vocab = result.vocab;
  candidates.values = row.values;
  candidates.ids = row.ids;
  candidates.tail_sum = row.stats.tail_sum;
  const SamplingSettings& settings = job.sampler.settings();
  candidates.inv_temperature = settings.greedy() ? 1.0f : 1.0f / settings.temperature;
  candidates.tail_sum_tolerance = kernels::kTopLogitsTailSumTolerance;
  candidates.finite = row.stats.finite;
  candidates.nans = row.stats.nans;
  candidates.adjusted_ids = job.adjusted;
  candidates.adjusted_logits = row.gathered;
  if (const std::optional<std::int32_t> token =
          job.sampler.sample_from_candidates(candidates, job.tokens, allowed)) {
    ++sampling_counters_.from_candidates;
    return *token;
  }
  ++sampling_counters_.row_fetches;
  fetch_row(result, index);
  return job.sampler.sample(fetched_row_, job.tokens, allowed);
}

std::optional<cache::TokenId> Generator::sample_or_end(Job& job, const ForwardPass::Result& result,
                                                       std::size_t index) {
  try {
    return sample(job, result, index);
  } catch (const std::invalid_argument& error) {
    finish(job, StopReason::Error, std::string("sampling failed: ") + error.what());
  } catch (const kernels::DeviceOutOfMemory& error) {
    finish(job, StopReason::Error, row_fetch_failed(error));
  }
  return std::nullopt;
}

}  // namespace quire::engine
