#include "quire/engine/runtime/forward_pass.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include "forward_inputs.h"
#include "gated_activation.h"
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

// Before any work, so that a bad request leaves the step undone.
void check_candidate_request(const ForwardPass::Sequence& sequence, std::int64_t vocab) {
  const ForwardPass::CandidateRequest& request = sequence.candidates;
  if (request.k <= 0) return;
  if (sequence.all_logits) {
    throw std::invalid_argument("a sequence asks for every row and for candidates");
  }
  if (request.k > kernels::kMaxTopLogits) {
    throw std::invalid_argument("a sequence asks for " + std::to_string(request.k) +
                                " candidates; at most " + std::to_string(kernels::kMaxTopLogits) +
                                " are returned");
  }
  for (const std::int32_t id : request.gather) {
    if (id < 0 || id >= vocab) {
      throw std::invalid_argument("token " + std::to_string(id) +
                                  " to gather lies outside the vocabulary of " +
                                  std::to_string(vocab));
    }
  }
}

}  // namespace

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
  // A cache fixed on a device of its own runs attention there.
  for (std::size_t layer = 0; layer < storage.layers(); ++layer) {
    if (storage.placed(layer)) devices.insert(storage.device(layer));
  }
  devices_.assign(devices.begin(), devices.end());
  for (int device : devices_)
    scratch(device);

  const std::int64_t rows = limits_.max_logit_rows;
  gathered_ = floats(backend_, loaded.head_device, rows * model.config.hidden_size);
  normed_ = floats(backend_, loaded.head_device, rows * model.config.hidden_size);
  logits_ = floats(backend_, loaded.head_device, rows * model.config.vocab_size);
  const std::int64_t top =
      rows * std::min<std::int64_t>(kernels::kMaxTopLogits, model.config.vocab_size);
  top_values_ = floats(backend_, loaded.head_device, top);
  top_ids_ = floats(backend_, loaded.head_device, top);
  top_stats_ = backend_.allocate(loaded.head_device,
                                 static_cast<std::size_t>(rows) * sizeof(kernels::TopLogitsStats),
                                 "activations");
  inv_temperatures_ = floats(backend_, loaded.head_device, rows);
  masked_from_ = model.config.vocab_size;
  prepare_rope(1);
}

void ForwardPass::mask_logits_from(std::int64_t first) {
  const std::int64_t vocab = model_.config.vocab_size;
  if (first < 1) throw std::invalid_argument("at least one logit must stay unmasked");
  first = std::min(first, vocab);
  if (first == masked_from_) return;
  masked_from_ = first;
  padding_ = {};
  if (first < vocab) {
    const std::vector<float> minus_infinity(static_cast<std::size_t>(vocab - first),
                                            -std::numeric_limits<float>::infinity());
    padding_ = floats(backend_, loaded_.head_device, vocab - first);
    backend_.copy(padding_.data(), loaded_.head_device, minus_infinity.data(), -1,
                  minus_infinity.size() * sizeof(float));
  }
  // Recorded steps hold the masking copies, or lack them.
  graphs_.invalidate();
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
  const std::int64_t inner = std::max(c.intermediate_size, c.moe.intermediate_size);
  s.gate = floats(backend_, device, t * inner);
  s.up = floats(backend_, device, t * inner);
  s.tokens = floats(backend_, device, t);
  s.positions = floats(backend_, device, t);
  s.sequence_ids = floats(backend_, device, t);
  s.mirrored = floats(backend_, device, 2 * t);
  s.visible_from = floats(backend_, device, t);
  s.visible_through = floats(backend_, device, t);
  s.inv_freq = floats(backend_, device, c.rotary_dim() / 2);
  if (!c.rope_scaling.mrope_section.empty()) s.rope_positions = floats(backend_, device, 3 * t);
  if (c.rope_local_theta) {
    s.inv_freq_local = floats(backend_, device, c.rotary_dim() / 2);
    const std::vector<float> local = local_rope_frequencies(c).inv_freq;
    backend_.copy(s.inv_freq_local.data(), device, local.data(), -1, local.size() * 4);
  }
  if (const std::int64_t width = model_.fused_width(); width > 0) {
    s.fused = floats(backend_, device, t * width);
  }
  if (c.moe.experts > 0) {
    const std::int64_t routes = t * c.moe.experts_per_token;
    s.router = floats(backend_, device, t * c.moe.experts);
    s.expert_in = floats(backend_, device, t * c.hidden_size);
    s.expert_out = floats(backend_, device, t * c.hidden_size);
    s.route_rows = floats(backend_, device, routes);
    s.route_weights = floats(backend_, device, routes);
  }
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

std::optional<StepShape> ForwardPass::step_shape(std::span<const Sequence> sequences) const {
  // Host cache layers' copies cannot be recorded.
  // Nor can given embedding rows (host copies of their own) or both-ways
  // ranges (a prefill's image).
  if (devices_.size() != 1 || !graphs_.enabled() || model_.config.moe.experts > 0 ||
      storage_.any_on_host() || detail::has_given_inputs(sequences)) {
    return std::nullopt;
  }
  StepShape shape;
  std::size_t pages = 1;
  std::size_t window_pages = 1;
  for (const Sequence& seq : sequences) {
    if (seq.all_logits || seq.rewindable || (seq.decode_rows && seq.tokens.size() > 1) ||
        seq.tokens.size() > kRecordedTokensPerSequence) {
      return std::nullopt;
    }
    shape.tokens.push_back(static_cast<int>(seq.tokens.size()));
    pages = std::max(pages, seq.pages.size());
    window_pages = std::max(window_pages, seq.window_pages.size());
  }
  shape.max_pages = page_bucket(static_cast<int>(pages));
  if (storage_.has_window_pool()) shape.max_window_pages = page_bucket(int(window_pages));
  return shape;
}

ForwardPass::Result ForwardPass::run(std::span<const Sequence> sequences) {
  try {
    return run_step(sequences);
  } catch (...) {
    // The step may have stopped between layers: what the mirrors hold is
    // no longer known. The coded pages are written as ever.
    storage_.mirrors().forget_all();
    rewinds_.clear();
    throw;
  }
}

ForwardPass::Result ForwardPass::run_step(std::span<const Sequence> sequences) {
  const ModelConfig& c = model_.config;
  Result result;
  result.vocab = static_cast<int>(c.vocab_size);
  if (sequences.empty()) return result;
  if (static_cast<int>(sequences.size()) > limits_.max_sequences) {
    throw std::invalid_argument("a step holds at most " + std::to_string(limits_.max_sequences) +
                                " sequences");
  }

  // Flatten the batch: one entry per token, and one page-table row per
  // attention sequence; with a window pool, its tables follow the main
  // pool's. A sequence of decode rows attends as one attention sequence per
  // token over copies of its page-table row (and its mirror), so that each
  // token's attention is computed as a decode step's: the kernels group a
  // sequence's tokens (the CPU's several query rows at once), which can
  // change a row's last bits. The products still see the step's sequences
  // (sequence_ids).
  std::vector<std::int32_t> tokens, positions, sequence_ids, attention_ids, block_tables;
  // Where any sequence attends both ways: every token's block.
  std::vector<std::int32_t> visible_from, visible_through;
  const bool both_ways = std::any_of(sequences.begin(), sequences.end(),
                                     [](const Sequence& seq) { return !seq.both_ways.empty(); });
  std::vector<std::int32_t> rope_positions;  // M-RoPE: (t, h, w) per token
  const bool multimodal_rope = !c.rope_scaling.mrope_section.empty();
  std::vector<std::size_t> attention_owner;  // per attention sequence: its sequence
  const bool pooled = storage_.has_window_pool();
  std::size_t max_pages = 1;
  std::size_t max_window_pages = 0;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const Sequence& seq = sequences[s];
    max_pages = std::max(max_pages, seq.pages.size());
    if (pooled)
      max_window_pages = std::max({max_window_pages, seq.window_pages.size(), std::size_t{1}});
    const std::size_t rows = seq.decode_rows ? std::max<std::size_t>(seq.tokens.size(), 1) : 1;
    attention_owner.insert(attention_owner.end(), rows, s);
  }
  // A recorded step's page tables are padded with -1 to its shape's width.
  const std::optional<StepShape> shape = step_shape(sequences);
  if (shape) {
    max_pages = static_cast<std::size_t>(shape->max_pages);
    max_window_pages = static_cast<std::size_t>(shape->max_window_pages);
  }
  const std::size_t window_tables = attention_owner.size() * max_pages;
  block_tables.assign(window_tables + attention_owner.size() * max_window_pages, -1);
  int rows = 0;
  std::int32_t longest = 0;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const Sequence& seq = sequences[s];
    if (seq.tokens.empty()) throw std::invalid_argument("a sequence in a step has no tokens");
    check_candidate_request(seq, c.vocab_size);
    const std::int64_t end = seq.first_position + static_cast<std::int64_t>(seq.tokens.size());
    if (seq.first_position < 0 ||
        end > static_cast<std::int64_t>(seq.pages.size()) * storage_.config().page_size) {
      throw std::invalid_argument("a sequence's tokens run past its pages");
    }
    if (pooled &&
        end > static_cast<std::int64_t>(seq.window_pages.size()) * storage_.config().page_size) {
      throw std::invalid_argument("a sequence's tokens run past its window pool pages");
    }
    detail::append_table_ids(seq, c.vocab_size, tokens);
    if (both_ways) detail::append_visibility(seq, visible_from, visible_through);
    if (multimodal_rope || !seq.rope_positions.empty()) {
      detail::append_rope_positions(seq, multimodal_rope, rope_positions);
    }
    for (std::size_t i = 0; i < seq.tokens.size(); ++i) {
      positions.push_back(seq.first_position + static_cast<std::int32_t>(i));
      sequence_ids.push_back(static_cast<std::int32_t>(s));
      if (i == 0 || seq.decode_rows) {
        const std::size_t row = attention_ids.empty() ? 0 : std::size_t(attention_ids.back()) + 1;
        std::copy(seq.pages.begin(), seq.pages.end(),
                  block_tables.begin() + std::ptrdiff_t(row * max_pages));
        if (pooled) {
          std::copy(seq.window_pages.begin(), seq.window_pages.end(),
                    block_tables.begin() + std::ptrdiff_t(window_tables + row * max_window_pages));
        }
        attention_ids.push_back(static_cast<std::int32_t>(row));
      } else {
        attention_ids.push_back(attention_ids.back());
      }
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
  segment_rows(sequences, sequence_ids, result.rows);
  plan_rewinds(sequences);
  prepare_rope(longest);
  // Per attention sequence, the mirror of the sequence it belongs to.
  const std::vector<std::int32_t> mirrors = assign_mirrors(sequences);
  std::vector<std::int32_t> mirrored;
  if (!mirrors.empty()) {
    for (const std::size_t s : attention_owner) {
      mirrored.push_back(mirrors[2 * s]);
      mirrored.push_back(mirrors[2 * s + 1]);
    }
  }
  for (int device : devices_)
    upload_metadata(device, tokens, positions, attention_ids, block_tables, mirrored, visible_from,
                    visible_through, rope_positions);
  if (storage_.any_on_host()) {
    std::vector<StepPages> step_pages;
    for (const Sequence& seq : sequences) {
      step_pages.push_back(
          StepPages{seq.pages, seq.first_position,
                    seq.first_position + static_cast<std::int32_t>(seq.tokens.size())});
    }
    storage_.begin_step(step_pages, c.sliding_windows);
  }

  // What a recording holds, so the same ops on the same buffers whenever the
  // shape is the same; what changes between steps is in the metadata above.
  const auto enqueue = [&] {
    const std::int64_t hidden = c.hidden_size;
    int current = loaded_.embedding_device;
    float* x = scratch(current).x.as<float>();
    backend_.embedding(current, loaded_.embedding, c.vocab_size, hidden,
                       scratch(current).tokens.as<std::int32_t>(), count, x);

    if (model_.embedding_scale != 1.0f)
      backend_.scale(current, x, count * hidden, model_.embedding_scale);
    // Given rows replace the scaled table rows (an image's embeddings).
    std::int64_t sequence_row = 0;
    for (const Sequence& seq : sequences) {
      for (const EmbeddedRows& given : seq.embedded) {
        backend_.copy(x + (sequence_row + given.first) * hidden, current, given.values, -1,
                      static_cast<std::size_t>(std::int64_t{given.count} * hidden) * 4);
      }
      sequence_row += static_cast<std::int64_t>(seq.tokens.size());
    }

    for (std::size_t i = 0; i < loaded_.layers.size(); ++i) {
      const int d = loaded_.layers[i].device;
      Scratch& s = scratch(d);
      if (d != current) {
        backend_.copy(s.x.data(), d, x, current, static_cast<std::size_t>(count * hidden) * 4);
        current = d;
        x = s.x.as<float>();
      }
      const bool windowed = storage_.windowed(i);
      kernels::TokenBatch batch{s.sequence_ids.as<std::int32_t>(), s.positions.as<std::int32_t>(),
                                s.block_tables.as<std::int32_t>() + (windowed ? window_tables : 0),
                                count, static_cast<int>(windowed ? max_window_pages : max_pages)};
      // The window pool's tables are other pages; it has no mirrors.
      if (!mirrored.empty() && !windowed) batch.mirrored = s.mirrored.as<std::int32_t>();
      if (both_ways) {
        batch.visible_from = s.visible_from.as<std::int32_t>();
        batch.visible_through = s.visible_through.as<std::int32_t>();
      }
      attention_block(i, count, batch, x);
      mlp_block(i, count, x);
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
    linear(head, normed_.as<float>(), logit_segments_, loaded_.head, logits_.as<float>());
    if (c.final_softcap > 0.0) {
      backend_.soft_cap(head, logits_.as<float>(), rows * c.vocab_size,
                        static_cast<float>(c.final_softcap));
    }
    if (masked_from_ < c.vocab_size) {
      const auto tail_bytes = static_cast<std::size_t>(c.vocab_size - masked_from_) * 4;
      for (int row = 0; row < rows; ++row) {
        backend_.copy(logits_.as<float>() + row * c.vocab_size + masked_from_, head,
                      padding_.data(), head, tail_bytes);
      }
    }
  };
  if (shape) {
    graphs_.run(*shape, enqueue);
  } else {
    enqueue();
  }
  deliver_logits(sequences, rows, result);
  return result;
}

void ForwardPass::attention_block(std::size_t index, std::int64_t count,
                                  const kernels::TokenBatch& batch, float* x) {
  const ModelConfig& c = model_.config;
  const LoadedLayer& layer = loaded_.layers[index];
  const int d = layer.device;
  Scratch& s = scratch(d);
  const std::int64_t hidden = c.hidden_size;
  const auto eps = static_cast<float>(c.rms_norm_eps);
  float* h = s.h.as<float>();
  float* q = s.q.as<float>();
  float* k = s.k.as<float>();
  float* v = s.v.as<float>();
  backend_.rms_norm(d, x, layer.attention_norm, eps, count, hidden, h);
  if (layer.qkv) {
    // One product, then its columns apart: q, k, v.
    const std::int64_t q_width = std::int64_t{c.num_heads} * c.head_dim;
    const std::int64_t kv_width = std::int64_t{c.num_kv_heads} * c.head_dim;
    const std::int64_t width = q_width + 2 * kv_width;
    linear(d, h, token_segments_, *layer.qkv, s.fused.as<float>());
    backend_.copy_columns(d, s.fused.as<float>(), count, width, 0, q_width, q);
    backend_.copy_columns(d, s.fused.as<float>(), count, width, q_width, kv_width, k);
    backend_.copy_columns(d, s.fused.as<float>(), count, width, q_width + kv_width, kv_width, v);
  } else {
    const kernels::LinearWeight* qkv[] = {&layer.q, &layer.k, &layer.v};
    float* const qkv_out[] = {q, k, v};
    linear_many(d, h, token_segments_, qkv, qkv_out);
  }
  if (c.qk_norm) {
    // Each head normalized on its own, in place: rows of head_dim.
    backend_.rms_norm(d, q, layer.q_norm, eps, count * c.num_heads, c.head_dim, q);
    backend_.rms_norm(d, k, layer.k_norm, eps, count * c.num_kv_heads, c.head_dim, k);
  }
  const kernels::DeviceBuffer& inv_freq = c.local_rope(index) ? s.inv_freq_local : s.inv_freq;
  // Local layers rotate unscaled: no attention factor.
  const float factor = c.local_rope(index) ? 1.0f : attention_factor_;
  kernels::RopeParams rope{inv_freq.as<float>(), c.rotary_dim(), factor};
  // M-RoPE turns each frequency by one of the token's three ids, uploaded
  // with the step's metadata, so a recorded decode step replays with new ones.
  const std::int32_t* positions = s.positions.as<std::int32_t>();
  if (const std::vector<int>& section = c.rope_scaling.mrope_section; !section.empty()) {
    rope.mrope_section = {section[0], section[1], section[2]};
    rope.mrope_interleaved = c.rope_scaling.mrope_interleaved;
    positions = s.rope_positions.as<std::int32_t>();
  }
  backend_.rope(d, q, count, c.num_heads, c.head_dim, positions, rope);
  backend_.rope(d, k, count, c.num_kv_heads, c.head_dim, positions, rope);
  attend(index, count, batch, s);
  float* projection = s.projection.as<float>();
  linear(d, s.attention.as<float>(), token_segments_, layer.o, projection);
  if (layer.attention_output_norm.data != nullptr) {
    backend_.rms_norm(d, projection, layer.attention_output_norm, eps, count, hidden, projection);
  }
  backend_.add(d, x, projection, count * hidden);
}

void ForwardPass::attend(std::size_t index, std::int64_t count, const kernels::TokenBatch& batch,
                         Scratch& s) {
  const ModelConfig& c = model_.config;
  const int d = loaded_.layers[index].device;
  // Where the layer's pages are (RuntimeOptions::cache_device may put them
  // on another device than its weights): q, k and v go there, and the
  // attention comes back. The same kernels on the same values, so the
  // result does not depend on where the cache is.
  const int cache_device = storage_.placed(index) ? storage_.device(index) : d;
  Scratch& there = cache_device == d ? s : scratch(cache_device);
  kernels::TokenBatch there_batch = batch;
  if (cache_device != d) {
    const auto send = [&](kernels::DeviceBuffer& to, const kernels::DeviceBuffer& from,
                          std::int64_t width) {
      backend_.copy(to.data(), cache_device, from.data(), d,
                    static_cast<std::size_t>(count * width) * sizeof(float));
    };
    send(there.q, s.q, std::int64_t{c.num_heads} * c.head_dim);
    send(there.k, s.k, std::int64_t{c.num_kv_heads} * c.head_dim);
    send(there.v, s.v, std::int64_t{c.num_kv_heads} * c.head_dim);
    there_batch.token_sequence = there.sequence_ids.as<std::int32_t>();
    there_batch.positions = there.positions.as<std::int32_t>();
    // The same table (a window pool's follows the main pool's) over there.
    there_batch.block_tables = there.block_tables.as<std::int32_t>() +
                               (batch.block_tables - s.block_tables.as<std::int32_t>());
    if (batch.mirrored != nullptr) there_batch.mirrored = there.mirrored.as<std::int32_t>();
    if (batch.visible_through != nullptr) {
      there_batch.visible_from = there.visible_from.as<std::int32_t>();
      there_batch.visible_through = there.visible_through.as<std::int32_t>();
    }
  }
  // A layer whose pages live in host memory attends over a staging slot.
  const kernels::KvLayerView& pages = storage_.attend(index);
  if (kv_observer_) {
    kv_observer_(index, cache_device, there.k.as<float>(), there.v.as<float>(), count);
  }
  keep_for_rewind(index, cache_device, pages, there.k.as<float>(), there.v.as<float>());
  backend_.write_kv(cache_device, pages, there_batch, there.k.as<float>(), there.v.as<float>());
  kernels::AttentionParams attention{c.num_heads, static_cast<float>(c.attention_scale()),
                                     c.sliding_windows[index]};
  attention.softcap = static_cast<float>(c.attention_softcap);
  backend_.paged_attention(cache_device, pages, there_batch, there.q.as<float>(), attention,
                           there.attention.as<float>());
  storage_.attended(index);
  if (cache_device != d) {
    backend_.copy(s.attention.data(), d, there.attention.data(), cache_device,
                  static_cast<std::size_t>(count * c.num_heads * c.head_dim) * sizeof(float));
  }
}

void ForwardPass::mlp_block(std::size_t index, std::int64_t count, float* x) {
  const ModelConfig& c = model_.config;
  const LoadedLayer& layer = loaded_.layers[index];
  const int d = layer.device;
  Scratch& s = scratch(d);
  const std::int64_t hidden = c.hidden_size;
  const auto eps = static_cast<float>(c.rms_norm_eps);
  float* h = s.h.as<float>();
  float* projection = s.projection.as<float>();
  backend_.rms_norm(d, x, layer.mlp_norm, eps, count, hidden, h);
  const bool output_norm = layer.mlp_output_norm.data != nullptr;
  if (layer.router) {
    // The experts' weighted outputs go straight onto the residual, or onto
    // a zeroed buffer first where the output is normalized.
    if (output_norm)
      backend_.fill_zero(d, projection, static_cast<std::size_t>(count * hidden) * 4);
    run_experts(layer, s, count, output_norm ? projection : x);
    if (!output_norm) return;
  } else {
    const std::int64_t inner = c.intermediate_size;
    float* gate = s.gate.as<float>();
    float* up = s.up.as<float>();
    if (layer.gate_up) {
      linear(d, h, token_segments_, *layer.gate_up, s.fused.as<float>());
      backend_.copy_columns(d, s.fused.as<float>(), count, 2 * inner, 0, inner, gate);
      backend_.copy_columns(d, s.fused.as<float>(), count, 2 * inner, inner, inner, up);
    } else {
      const kernels::LinearWeight* gate_up[] = {&layer.gate, &layer.up};
      float* const gate_up_out[] = {gate, up};
      linear_many(d, h, token_segments_, gate_up, gate_up_out);
    }
    backend_.gated_activation(d, detail::gated_activation_of(c.activation), gate, up, count * inner,
                              gate);
    linear(d, gate, token_segments_, layer.down, projection);
  }
  if (output_norm)
    backend_.rms_norm(d, projection, layer.mlp_output_norm, eps, count, hidden, projection);
  backend_.add(d, x, projection, count * hidden);
}

}  // namespace quire::engine
