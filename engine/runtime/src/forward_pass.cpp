#include "quire/engine/runtime/forward_pass.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "quire/engine/model/rope_frequencies.h"

namespace quire::engine {
namespace {

// Steps where no sequence brings more than this many tokens are recorded:
// decode steps (one token each) and the short tails of prompts.
constexpr std::size_t kRecordedTokensPerSequence = 4;

kernels::DeviceBuffer floats(kernels::Backend& backend, int device, std::int64_t count) {
  return backend.allocate(device, static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * 4,
                          "activations");
}

}  // namespace

std::span<const float> ForwardPass::Result::row(std::size_t sequence, int index) const {
  const int count = rows.at(sequence);
  if (index < 0) index += count;
  if (index < 0 || index >= count) throw std::out_of_range("no such logits row");
  const std::size_t start = static_cast<std::size_t>(first_row[sequence] + index) * vocab;
  return std::span<const float>(logits).subspan(start, static_cast<std::size_t>(vocab));
}

ForwardPass::ForwardPass(const ModelDescription& model, const LoadedModel& loaded,
                         KvStorage& storage, kernels::Backend& backend, Limits limits)
    : model_(model),
      loaded_(loaded),
      storage_(storage),
      backend_(backend),
      limits_(limits),
      graphs_(backend, loaded.head_device),
      storage_generation_(storage.generation()) {
  std::set<int> devices{loaded.embedding_device, loaded.head_device};
  for (const LoadedLayer& layer : loaded.layers)
    devices.insert(layer.device);
  devices_.assign(devices.begin(), devices.end());
  for (int device : devices_)
    scratch(device);

  const std::int64_t rows = limits_.max_logit_rows;
  gathered_ = floats(backend_, loaded.head_device, rows * model.config.hidden_size);
  normed_ = floats(backend_, loaded.head_device, rows * model.config.hidden_size);
  logits_ = floats(backend_, loaded.head_device, rows * model.config.vocab_size);
  prepare_rope(1);
}

ForwardPass::Scratch& ForwardPass::scratch(int device) {
  auto found = scratch_.find(device);
  if (found != scratch_.end()) return found->second;
  const ModelConfig& c = model_.config;
  const std::int64_t t = limits_.max_tokens;
  Scratch s;
  s.x = floats(backend_, device, t * c.hidden_size);
  s.h = floats(backend_, device, t * c.hidden_size);
  s.projection = floats(backend_, device, t * c.hidden_size);
  s.q = floats(backend_, device, t * c.num_heads * c.head_dim);
  s.attention = floats(backend_, device, t * c.num_heads * c.head_dim);
  s.k = floats(backend_, device, t * c.num_kv_heads * c.head_dim);
  s.v = floats(backend_, device, t * c.num_kv_heads * c.head_dim);
  s.gate = floats(backend_, device, t * c.intermediate_size);
  s.up = floats(backend_, device, t * c.intermediate_size);
  s.tokens = floats(backend_, device, t);
  s.positions = floats(backend_, device, t);
  s.sequence_ids = floats(backend_, device, t);
  s.inv_freq = floats(backend_, device, c.rotary_dim() / 2);
  return scratch_.emplace(device, std::move(s)).first->second;
}

void ForwardPass::prepare_rope(std::int64_t sequence_length) {
  // Frequencies are fixed unless dynamic scaling follows the sequence length.
  if (rope_length_ >= 0 && !rope_depends_on_length(model_.config)) return;
  if (rope_length_ == sequence_length) return;
  const RopeFrequencies rope = rope_frequencies(model_.config, sequence_length);
  // The factor is a launch argument that recordings hold; the frequencies
  // are read from device memory, which the copy below refreshes.
  if (rope.attention_factor != attention_factor_) graphs_.invalidate();
  inv_freq_ = rope.inv_freq;
  attention_factor_ = rope.attention_factor;
  rope_length_ = sequence_length;
  for (auto& [device, s] : scratch_) {
    backend_.copy(s.inv_freq.data(), device, inv_freq_.data(), -1, inv_freq_.size() * 4);
  }
}

void ForwardPass::upload_metadata(int device, std::span<const std::int32_t> tokens,
                                  std::span<const std::int32_t> positions,
                                  std::span<const std::int32_t> sequence_ids,
                                  std::span<const std::int32_t> block_tables) {
  Scratch& s = scratch(device);
  if (block_tables.size() > s.block_table_entries) {
    graphs_.invalidate();  // they read the old buffer
    // Room for a full batch at this width rounded up as recorded steps pad
    // it, so that batches growing or shrinking keep their recordings.
    const std::size_t sequences = std::size_t(sequence_ids.back()) + 1;
    const std::size_t entries =
        std::max(block_tables.size(),
                 std::size_t(limits_.max_sequences) *
                     std::size_t(page_bucket(static_cast<int>(block_tables.size() / sequences))));
    s.block_tables.reset();
    s.block_tables = backend_.allocate(device, entries * 4, "page tables");
    s.block_table_entries = entries;
  }
  backend_.copy(s.tokens.data(), device, tokens.data(), -1, tokens.size_bytes());
  backend_.copy(s.positions.data(), device, positions.data(), -1, positions.size_bytes());
  backend_.copy(s.sequence_ids.data(), device, sequence_ids.data(), -1, sequence_ids.size_bytes());
  backend_.copy(s.block_tables.data(), device, block_tables.data(), -1, block_tables.size_bytes());
}

std::optional<StepShape> ForwardPass::step_shape(std::span<const Sequence> sequences) const {
  if (devices_.size() != 1 || !graphs_.enabled()) return std::nullopt;
  StepShape shape;
  std::size_t pages = 1;
  for (const Sequence& seq : sequences) {
    if (seq.all_logits || seq.tokens.size() > kRecordedTokensPerSequence) return std::nullopt;
    shape.tokens.push_back(static_cast<int>(seq.tokens.size()));
    pages = std::max(pages, seq.pages.size());
  }
  shape.max_pages = page_bucket(static_cast<int>(pages));
  return shape;
}

ForwardPass::Result ForwardPass::run(std::span<const Sequence> sequences) {
  const ModelConfig& c = model_.config;
  Result result;
  result.vocab = static_cast<int>(c.vocab_size);
  if (sequences.empty()) return result;
  if (static_cast<int>(sequences.size()) > limits_.max_sequences) {
    throw std::invalid_argument("a step holds at most " + std::to_string(limits_.max_sequences) +
                                " sequences");
  }

  // Flatten the batch: one entry per token, and one page-table row per sequence.
  std::vector<std::int32_t> tokens, positions, sequence_ids, block_tables;
  std::size_t max_pages = 1;
  for (const Sequence& seq : sequences)
    max_pages = std::max(max_pages, seq.pages.size());
  // A recorded step's page tables are padded with -1 to its shape's width.
  const std::optional<StepShape> shape = step_shape(sequences);
  if (shape) max_pages = static_cast<std::size_t>(shape->max_pages);
  block_tables.assign(sequences.size() * max_pages, -1);
  int rows = 0;
  std::int32_t longest = 0;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const Sequence& seq = sequences[s];
    if (seq.tokens.empty()) throw std::invalid_argument("a sequence in a step has no tokens");
    const std::int64_t end = seq.first_position + static_cast<std::int64_t>(seq.tokens.size());
    if (seq.first_position < 0 ||
        end > static_cast<std::int64_t>(seq.pages.size()) * storage_.config().page_size) {
      throw std::invalid_argument("a sequence's tokens run past its pages");
    }
    std::copy(seq.pages.begin(), seq.pages.end(),
              block_tables.begin() + std::ptrdiff_t(s * max_pages));
    for (std::size_t i = 0; i < seq.tokens.size(); ++i) {
      tokens.push_back(seq.tokens[i]);
      positions.push_back(seq.first_position + static_cast<std::int32_t>(i));
      sequence_ids.push_back(static_cast<std::int32_t>(s));
    }
    longest = std::max(longest, static_cast<std::int32_t>(end));
    result.first_row.push_back(rows);
    result.rows.push_back(seq.all_logits ? static_cast<int>(seq.tokens.size()) : 1);
    rows += result.rows.back();
  }
  const auto count = static_cast<std::int64_t>(tokens.size());
  if (count > limits_.max_tokens) {
    throw std::invalid_argument("a step holds at most " + std::to_string(limits_.max_tokens) +
                                " tokens");
  }
  if (rows > limits_.max_logit_rows) {
    throw std::invalid_argument("a step returns at most " + std::to_string(limits_.max_logit_rows) +
                                " rows of logits");
  }
  if (storage_.generation() != storage_generation_) {
    graphs_.invalidate();
    storage_generation_ = storage_.generation();
  }
  prepare_rope(longest);
  for (int device : devices_)
    upload_metadata(device, tokens, positions, sequence_ids, block_tables);

  // What a recording holds, so the same ops on the same buffers whenever the
  // shape is the same; what changes between steps is in the metadata above.
  const auto enqueue = [&] {
    const std::int64_t hidden = c.hidden_size;
    int current = loaded_.embedding_device;
    float* x = scratch(current).x.as<float>();
    backend_.embedding(current, loaded_.embedding, c.vocab_size, hidden,
                       scratch(current).tokens.as<std::int32_t>(), count, x);

    const float attention_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    for (std::size_t i = 0; i < loaded_.layers.size(); ++i) {
      const LoadedLayer& layer = loaded_.layers[i];
      const int d = layer.device;
      Scratch& s = scratch(d);
      if (d != current) {
        backend_.copy(s.x.data(), d, x, current, static_cast<std::size_t>(count * hidden) * 4);
        current = d;
        x = s.x.as<float>();
      }
      const kernels::TokenBatch batch{
          s.sequence_ids.as<std::int32_t>(), s.positions.as<std::int32_t>(),
          s.block_tables.as<std::int32_t>(), count, static_cast<int>(max_pages)};
      const kernels::RopeParams rope{s.inv_freq.as<float>(), c.rotary_dim(), attention_factor_};
      float* h = s.h.as<float>();
      backend_.rms_norm(d, x, layer.input_norm, static_cast<float>(c.rms_norm_eps), count, hidden,
                        h);
      const kernels::LinearWeight* qkv[] = {&layer.q, &layer.k, &layer.v};
      float* const qkv_out[] = {s.q.as<float>(), s.k.as<float>(), s.v.as<float>()};
      backend_.linear_many(d, h, count, qkv, qkv_out);
      backend_.rope(d, s.q.as<float>(), count, c.num_heads, c.head_dim,
                    s.positions.as<std::int32_t>(), rope);
      backend_.rope(d, s.k.as<float>(), count, c.num_kv_heads, c.head_dim,
                    s.positions.as<std::int32_t>(), rope);
      backend_.write_kv(d, storage_.view(i), batch, s.k.as<float>(), s.v.as<float>());
      const kernels::AttentionParams attention{c.num_heads, attention_scale, c.sliding_windows[i]};
      backend_.paged_attention(d, storage_.view(i), batch, s.q.as<float>(), attention,
                               s.attention.as<float>());
      backend_.linear(d, s.attention.as<float>(), count, layer.o, s.projection.as<float>());
      backend_.add(d, x, s.projection.as<float>(), count * hidden);

      backend_.rms_norm(d, x, layer.post_attention_norm, static_cast<float>(c.rms_norm_eps), count,
                        hidden, h);
      const kernels::LinearWeight* gate_up[] = {&layer.gate, &layer.up};
      float* const gate_up_out[] = {s.gate.as<float>(), s.up.as<float>()};
      backend_.linear_many(d, h, count, gate_up, gate_up_out);
      backend_.silu_mul(d, s.gate.as<float>(), s.up.as<float>(), count * c.intermediate_size,
                        s.gate.as<float>());
      backend_.linear(d, s.gate.as<float>(), count, layer.down, s.projection.as<float>());
      backend_.add(d, x, s.projection.as<float>(), count * hidden);
    }

    // Gather the rows that need logits onto the head's device.
    const int head = loaded_.head_device;
    std::int64_t source_row = 0;
    for (std::size_t s = 0; s < sequences.size(); ++s) {
      const auto length = static_cast<std::int64_t>(sequences[s].tokens.size());
      const std::int64_t first = sequences[s].all_logits ? source_row : source_row + length - 1;
      backend_.copy(gathered_.as<float>() + std::int64_t{result.first_row[s]} * hidden, head,
                    x + first * hidden, current,
                    static_cast<std::size_t>(result.rows[s] * hidden) * 4);
      source_row += length;
    }
    backend_.rms_norm(head, gathered_.as<float>(), loaded_.final_norm,
                      static_cast<float>(c.rms_norm_eps), rows, hidden, normed_.as<float>());
    backend_.linear(head, normed_.as<float>(), rows, loaded_.head, logits_.as<float>());
  };
  if (shape) {
    graphs_.run(*shape, enqueue);
  } else {
    enqueue();
  }
  result.logits.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(c.vocab_size));
  backend_.copy(result.logits.data(), -1, logits_.data(), loaded_.head_device,
                result.logits.size() * 4);
  return result;
}

}  // namespace quire::engine
