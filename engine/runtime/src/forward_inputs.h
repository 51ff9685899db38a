#pragma once

// What a step's sequences give besides token ids (ForwardPass::Sequence::
// embedded and both_ways), checked and turned into per-token arrays.

#include <cstdint>
#include <vector>

#include "quire/engine/runtime/forward_pass.h"

namespace quire::engine::detail {

// Appends the ids the embedding table is read at for `seq`'s tokens: their
// own, and 0 for rows given as embeddings (overwritten after the table).
// Throws std::invalid_argument for given rows outside the sequence's tokens,
// overlapping, without values, or a token outside the vocabulary that no
// given row covers.
void append_table_ids(const ForwardPass::Sequence& seq, std::int64_t vocab,
                      std::vector<std::int32_t>& ids);

// Appends, per token of `seq`, the first and last position of the both-ways
// range it lies in (kernels::TokenBatch::visible_from and visible_through),
// or its own position twice. Throws std::invalid_argument for an empty or
// overlapping range, or one that ends past the step.
void append_visibility(const ForwardPass::Sequence& seq, std::vector<std::int32_t>& from,
                       std::vector<std::int32_t>& through);

// Appends `seq`'s M-RoPE ids, (t, h, w) per token: its rope_positions, or
// the slot on every axis where it gives none. Throws std::invalid_argument
// for positions given to a model without M-RoPE (`multimodal_rope` false)
// or other than three per token.
void append_rope_positions(const ForwardPass::Sequence& seq, bool multimodal_rope,
                           std::vector<std::int32_t>& rope_positions);

// Whether any sequence gives rows or both-ways ranges (such a step runs
// directly, never recorded).
bool has_given_inputs(std::span<const ForwardPass::Sequence> sequences);

}  // namespace quire::engine::detail
