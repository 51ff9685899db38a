#include "forward_inputs.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace quire::engine::detail {

void append_table_ids(const ForwardPass::Sequence& seq, std::int64_t vocab,
                      std::vector<std::int32_t>& ids) {
  const std::size_t start = ids.size();
  ids.insert(ids.end(), seq.tokens.begin(), seq.tokens.end());
  const auto count = static_cast<std::int64_t>(seq.tokens.size());
  std::vector<bool> given(seq.tokens.size(), false);
  for (const ForwardPass::EmbeddedRows& rows : seq.embedded) {
    if (rows.count <= 0 || rows.first < 0 || std::int64_t{rows.first} + rows.count > count) {
      throw std::invalid_argument("given embedding rows " + std::to_string(rows.first) + ".." +
                                  std::to_string(std::int64_t{rows.first} + rows.count) +
                                  " lie outside the step's " + std::to_string(count) +
                                  " tokens of the sequence");
    }
    if (rows.values == nullptr) throw std::invalid_argument("given embedding rows have no values");
    for (std::int32_t i = rows.first; i < rows.first + rows.count; ++i) {
      if (given[std::size_t(i)]) {
        throw std::invalid_argument("two sets of given embedding rows cover token " +
                                    std::to_string(i));
      }
      given[std::size_t(i)] = true;
      ids[start + std::size_t(i)] = 0;
    }
  }
  for (std::size_t i = 0; i < seq.tokens.size(); ++i) {
    const std::int32_t id = seq.tokens[i];
    if (!given[i] && (id < 0 || id >= vocab)) {
      throw std::invalid_argument("token id " + std::to_string(id) + " at position " +
                                  std::to_string(seq.first_position + std::int64_t(i)) +
                                  " lies outside the vocabulary of " + std::to_string(vocab) +
                                  " and no embedding is given for it");
    }
  }
}

void append_visibility(const ForwardPass::Sequence& seq, std::vector<std::int32_t>& from,
                       std::vector<std::int32_t>& through) {
  const std::int32_t begin = seq.first_position;
  const auto end = static_cast<std::int32_t>(begin + std::int64_t(seq.tokens.size()));
  const std::size_t start = through.size();
  for (std::int32_t p = begin; p < end; ++p) {
    from.push_back(p);
    through.push_back(p);
  }
  std::int32_t previous_end = -1;
  std::vector<cache::TokenRange> ranges(seq.both_ways.begin(), seq.both_ways.end());
  std::sort(
      ranges.begin(), ranges.end(),
      [](const cache::TokenRange& a, const cache::TokenRange& b) { return a.begin < b.begin; });
  for (const cache::TokenRange& range : ranges) {
    const std::string name =
        "positions " + std::to_string(range.begin) + ".." + std::to_string(range.end);
    if (range.begin < 0 || range.end <= range.begin) {
      throw std::invalid_argument("the both-ways range " + name + " is empty");
    }
    if (range.begin < previous_end) {
      throw std::invalid_argument("both-ways ranges overlap at " + name);
    }
    previous_end = range.end;
    if (range.end <= begin || range.begin >= end) continue;  // no row of this step
    if (range.end > end) {
      throw std::invalid_argument("the both-ways range " + name +
                                  " ends past the step, which computes positions up to " +
                                  std::to_string(end) + ": its keys would not be written yet");
    }
    for (std::int32_t p = std::max(range.begin, begin); p < range.end; ++p) {
      from[start + std::size_t(p - begin)] = range.begin;
      through[start + std::size_t(p - begin)] = range.end - 1;
    }
  }
}

void append_rope_positions(const ForwardPass::Sequence& seq, bool multimodal_rope,
                           std::vector<std::int32_t>& rope_positions) {
  if (!seq.rope_positions.empty() &&
      (!multimodal_rope || seq.rope_positions.size() != 3 * seq.tokens.size())) {
    throw std::invalid_argument(
        multimodal_rope ? "a sequence brings " + std::to_string(seq.rope_positions.size()) +
                              " rotary positions for " + std::to_string(seq.tokens.size()) +
                              " tokens; M-RoPE takes three per token (t, h, w)"
                        : std::string("a sequence brings rotary positions, but the model has "
                                      "no M-RoPE (rope_scaling.mrope_section)"));
  }
  for (std::size_t i = 0; i < seq.tokens.size(); ++i) {
    const auto slot = static_cast<std::int32_t>(seq.first_position + std::int64_t(i));
    for (std::size_t axis = 0; axis < 3; ++axis) {
      rope_positions.push_back(seq.rope_positions.empty() ? slot
                                                          : seq.rope_positions[3 * i + axis]);
    }
  }
}

bool has_given_inputs(std::span<const ForwardPass::Sequence> sequences) {
  return std::any_of(sequences.begin(), sequences.end(), [](const ForwardPass::Sequence& seq) {
    return !seq.embedded.empty() || !seq.both_ways.empty();
  });
}

}  // namespace quire::engine::detail
