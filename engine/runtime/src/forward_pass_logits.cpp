// The logits a step hands back: each sequence's rows (or its candidates),
// copied from the head device, and the rows a caller reads from them.

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "quire/engine/runtime/forward_pass.h"

namespace quire::engine {

std::span<const float> ForwardPass::Result::row(std::size_t sequence, int index) const {
  const int count = rows.at(sequence);
  if (index < 0) index += count;
  if (index < 0 || index >= count) throw std::out_of_range("no such logits row");
  if (host_row.at(sequence) < 0) {
    throw std::out_of_range("the sequence asked for candidates instead of its row");
  }
  const std::size_t start = static_cast<std::size_t>(host_row[sequence] + index) * vocab;
  return std::span<const float>(logits).subspan(start, static_cast<std::size_t>(vocab));
}

void ForwardPass::deliver_logits(std::span<const Sequence> sequences, int rows, Result& result) {
  const int head = loaded_.head_device;
  const std::int64_t vocab = result.vocab;
  const auto row_bytes = static_cast<std::size_t>(vocab) * sizeof(float);
  int k = 0;
  std::size_t gathers = 0;
  for (const Sequence& seq : sequences) {
    if (seq.candidates.k <= 0) continue;
    k = std::max(k, seq.candidates.k);
    gathers += seq.candidates.gather.size();
  }
  result.host_row.assign(sequences.size(), -1);
  result.candidates.assign(sequences.size(), {});
  if (k == 0) {
    // Every row goes to the host, in one copy.
    for (std::size_t s = 0; s < sequences.size(); ++s)
      result.host_row[s] = result.first_row[s];
    result.logits.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(vocab));
    backend_.copy(result.logits.data(), -1, logits_.data(), head, result.logits.size() * 4);
    return;
  }

  int host_rows = 0;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    if (sequences[s].candidates.k > 0) continue;
    result.host_row[s] = host_rows;
    host_rows += result.rows[s];
  }
  result.logits.resize(static_cast<std::size_t>(host_rows) * static_cast<std::size_t>(vocab));
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    if (result.host_row[s] < 0) continue;
    backend_.copy(result.logits.data() + static_cast<std::size_t>(result.host_row[s]) * vocab, -1,
                  logits_.as<float>() + std::int64_t{result.first_row[s]} * vocab, head,
                  static_cast<std::size_t>(result.rows[s]) * row_bytes);
  }

  // Candidates of every row (the full-row ones are few and cheap), with the
  // largest k asked for; the temperatures and gathered ids go up first.
  k = std::min<int>(k, static_cast<int>(std::min<std::int64_t>(vocab, kernels::kMaxTopLogits)));
  std::vector<float> inv_temperatures(static_cast<std::size_t>(rows), 1.0f);
  std::vector<std::int32_t> gather_rows, gather_ids;
  gather_rows.reserve(gathers);
  gather_ids.reserve(gathers);
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const CandidateRequest& request = sequences[s].candidates;
    if (request.k <= 0) continue;
    inv_temperatures[static_cast<std::size_t>(result.first_row[s])] = request.inv_temperature;
    for (const std::int32_t id : request.gather) {
      gather_rows.push_back(result.first_row[s]);
      gather_ids.push_back(id);
    }
  }
  backend_.copy(inv_temperatures_.data(), head, inv_temperatures.data(), -1,
                inv_temperatures.size() * sizeof(float));
  backend_.top_logits(head, logits_.as<float>(), rows, vocab, k, inv_temperatures_.as<float>(),
                      top_values_.as<float>(), top_ids_.as<std::int32_t>(),
                      top_stats_.as<kernels::TopLogitsStats>());
  if (gathers > gather_capacity_) {
    // The old buffers go first, and the capacity counts only once all three
    // are there: an allocation that fails leaves a state a retry can grow from.
    const std::size_t capacity = std::max(gathers, 2 * gather_capacity_);
    gather_capacity_ = 0;
    gather_rows_ = {};
    gather_ids_ = {};
    gather_out_ = {};
    gather_rows_ = backend_.allocate(head, capacity * 4, "sampling");
    gather_ids_ = backend_.allocate(head, capacity * 4, "sampling");
    gather_out_ = backend_.allocate(head, capacity * 4, "sampling");
    gather_capacity_ = capacity;
  }
  std::vector<float> gathered(gathers);
  if (gathers > 0) {
    backend_.copy(gather_rows_.data(), head, gather_rows.data(), -1, gathers * 4);
    backend_.copy(gather_ids_.data(), head, gather_ids.data(), -1, gathers * 4);
    backend_.gather_logits(head, logits_.as<float>(), rows, vocab, gather_rows_.as<std::int32_t>(),
                           gather_ids_.as<std::int32_t>(), static_cast<std::int64_t>(gathers),
                           gather_out_.as<float>());
    backend_.copy(gathered.data(), -1, gather_out_.data(), head, gathers * 4);
  }
  const auto outputs = static_cast<std::size_t>(rows) * static_cast<std::size_t>(k);
  std::vector<float> values(outputs);
  std::vector<std::int32_t> ids(outputs);
  std::vector<kernels::TopLogitsStats> stats(static_cast<std::size_t>(rows));
  backend_.copy(values.data(), -1, top_values_.data(), head, outputs * sizeof(float));
  backend_.copy(ids.data(), -1, top_ids_.data(), head, outputs * sizeof(std::int32_t));
  backend_.copy(stats.data(), -1, top_stats_.data(), head, stats.size() * sizeof(stats[0]));

  std::size_t next_gathered = 0;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const CandidateRequest& request = sequences[s].candidates;
    if (request.k <= 0) continue;
    const auto row = static_cast<std::size_t>(result.first_row[s]);
    const auto begin = static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(k));
    RowCandidates& out = result.candidates[s];
    out.values.assign(values.begin() + begin, values.begin() + begin + k);
    out.ids.assign(ids.begin() + begin, ids.begin() + begin + k);
    out.stats = stats[row];
    const auto first = static_cast<std::ptrdiff_t>(next_gathered);
    next_gathered += request.gather.size();
    out.gathered.assign(gathered.begin() + first,
                        gathered.begin() + static_cast<std::ptrdiff_t>(next_gathered));
  }
}

void ForwardPass::fetch_row(const Result& result, std::size_t sequence, std::vector<float>& out) {
  const int row = result.first_row.at(sequence) + result.rows.at(sequence) - 1;
  out.resize(static_cast<std::size_t>(result.vocab));
  backend_.copy(out.data(), -1, logits_.as<float>() + std::int64_t{row} * result.vocab,
                loaded_.head_device, out.size() * sizeof(float));
}

}  // namespace quire::engine
