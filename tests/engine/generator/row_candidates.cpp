#include "row_candidates.h"

#include <algorithm>

namespace quire::test {

void make_row_candidates(const std::vector<float>& row, int k, engine::Sampler& sampler,
                         const std::vector<std::int32_t>& context, RowCandidates& out,
                         double tail_error) {
  const auto vocab = static_cast<std::int64_t>(row.size());
  k = std::clamp<int>(k, 1, static_cast<int>(std::min<std::int64_t>(vocab, 1024)));
  const engine::SamplingSettings& settings = sampler.settings();
  const float inv_temperature = settings.greedy() ? 1.0f : 1.0f / settings.temperature;
  out.values.resize(std::size_t(k));
  out.ids.resize(std::size_t(k));
  kernels::top_logits_host(row.data(), 1, vocab, k, &inv_temperature, out.values.data(),
                           out.ids.data(), &out.stats);
  sampler.adjusted_tokens(context, vocab, out.adjusted);
  out.gathered.resize(out.adjusted.size());
  const std::vector<std::int32_t> rows(out.adjusted.size(), 0);
  kernels::gather_logits_host(row.data(), 1, vocab, rows.data(), out.adjusted.data(),
                              static_cast<std::int64_t>(out.adjusted.size()), out.gathered.data());
  engine::LogitCandidates& c = out.view;
  c.vocab = vocab;
  c.values = out.values;
  c.ids = out.ids;
  c.tail_sum = static_cast<float>(out.stats.tail_sum * (1 + tail_error));
  c.inv_temperature = inv_temperature;
  c.tail_sum_tolerance = kernels::kTopLogitsTailSumTolerance;
  c.finite = out.stats.finite;
  c.nans = out.stats.nans;
  c.adjusted_ids = out.adjusted;
  c.adjusted_logits = out.gathered;
}

}  // namespace quire::test
