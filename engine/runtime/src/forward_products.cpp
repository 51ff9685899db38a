// The forward pass's products, cut into the step's row segments
// (quire/engine/runtime/row_segments.h).

#include <cstddef>

#include "quire/engine/runtime/forward_pass.h"

namespace quire::engine {

void ForwardPass::segment_rows(std::span<const Sequence> sequences,
                               std::span<const std::int32_t> token_sequence,
                               std::span<const int> logit_rows) {
  sequence_kind_.clear();
  token_sequence_.assign(token_sequence.begin(), token_sequence.end());
  std::vector<std::int32_t> logit_sequence;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const bool decode = sequences[s].tokens.size() == 1 || sequences[s].decode_rows;
    sequence_kind_.push_back(decode ? kernels::ProductRows::decode : kernels::ProductRows::prompt);
    logit_sequence.insert(logit_sequence.end(), static_cast<std::size_t>(logit_rows[s]),
                          static_cast<std::int32_t>(s));
  }
  const std::int64_t invariant = backend_.invariant_decode_rows();
  token_segments_ = row_segments(token_sequence_, sequence_kind_, invariant);
  logit_segments_ = row_segments(logit_sequence, sequence_kind_, invariant);
}

void ForwardPass::linear(int device, const float* x, std::span<const RowSegment> segments,
                         const kernels::LinearWeight& weight, float* out) {
  for (const RowSegment& segment : segments) {
    if (linear_observer_) {
      linear_observer_(weight, device, x + segment.first * weight.in_features, segment.rows);
    }
    backend_.linear(device, x + segment.first * weight.in_features, segment.rows, weight,
                    out + segment.first * weight.out_features, segment.kind);
  }
}

void ForwardPass::linear_many(int device, const float* x, std::span<const RowSegment> segments,
                              std::span<const kernels::LinearWeight* const> weights,
                              std::span<float* const> outs) {
  std::vector<float*> shifted(outs.size());
  for (const RowSegment& segment : segments) {
    for (std::size_t i = 0; i < outs.size(); ++i) {
      shifted[i] = outs[i] + segment.first * weights[i]->out_features;
      if (linear_observer_) {
        linear_observer_(*weights[i], device, x + segment.first * weights[i]->in_features,
                         segment.rows);
      }
    }
    backend_.linear_many(device, x + segment.first * weights.front()->in_features, segment.rows,
                         weights, shifted, segment.kind);
  }
}

}  // namespace quire::engine
