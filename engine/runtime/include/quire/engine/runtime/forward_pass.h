#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "quire/cache/types.h"
#include "quire/engine/runtime/kv_storage.h"
#include "quire/engine/runtime/loaded_model.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/engine/runtime/row_segments.h"
#include "quire/engine/runtime/step_graphs.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

// One step of the model over a batch of sequences: new tokens are embedded,
// run through every layer (their K/V written into the sequences' pages,
// attention reading all earlier positions from the pages) and, for the rows
// asked for, turned into logits. The hidden state moves between devices where
// consecutive layers live on different ones.
//
// On a backend that can record work (Backend::begin_capture), a step where no
// sequence brings more than a few tokens and none asks for every row of
// logits (decode) is recorded per StepShape and replayed (StepGraphs): only
// the metadata uploads before it and the logits' download after it are
// issued one by one. Models over several devices run every step directly.
class ForwardPass {
 public:
  struct Limits {
    int max_tokens = 256;  // per step, all sequences together
    int max_sequences = 16;
    int max_logit_rows = 256;
  };

  // Instead of its last row of logits, a sequence may ask for what a
  // sampler needs to decide without it (Sampler's candidate path): the k
  // highest logits, the row's statistics and the logits of chosen tokens,
  // computed where the logits are. A few KiB instead of the vocabulary.
  struct CandidateRequest {
    int k = 0;                             // 0: the whole row; at most kernels::kMaxTopLogits
    float inv_temperature = 1;             // scales the tail sum
    std::span<const std::int32_t> gather;  // token ids inside the vocabulary
  };

  // Rows of a sequence whose input is given instead of read from the
  // embedding table: tokens [first, first + count) of Sequence::tokens take
  // `values`, count x hidden_size floats in host memory (an image's
  // positions, from its vision tower).
  struct EmbeddedRows {
    std::int32_t first = 0;
    std::int32_t count = 0;
    const float* values = nullptr;
  };

  struct Sequence {
    std::span<const cache::PageIndex> pages;  // the sequence's page table
    std::span<const cache::TokenId> tokens;   // the tokens to compute now
    std::int32_t first_position = 0;          // position of tokens[0]
    bool all_logits = false;                  // else only the last token's
    CandidateRequest candidates = {};         // only without all_logits
    // Its table in the window pool (cache::PageCache::window_page_table),
    // which the window pool's layers read and write; unused without one.
    std::span<const cache::PageIndex> window_pages = {};
    // Each of its tokens is multiplied as a decode step's token is (where
    // the backend's products tell the two apart: Backend::
    // invariant_decode_rows), so that every row gets the bits it gets in a
    // decode step of its own: a speculative step verifying drafts. A
    // sequence of one token always is.
    bool decode_rows = false;
    // The step keeps what rewind() needs to take back the cache writes of
    // all but the sequence's first tokens (drafts given back after a
    // verification step). Not recorded as a graph.
    bool rewindable = false;
    // Rows given as embeddings (an image's positions), placed after the
    // model's embedding scale: transformers replaces the scaled text
    // embeddings with the unscaled image features. A token id outside the
    // vocabulary (a content-keyed image position) must lie in one of them.
    std::span<const EmbeddedRows> embedded = {};
    // Position ranges [begin, end) whose positions attend to each other in
    // both directions (Gemma 3's image positions at prefill): this step's
    // rows in a range see through its last position, whose key this step
    // (or an earlier one) writes, so a range may not end past the step.
    std::span<const cache::TokenRange> both_ways = {};
    // Rotary positions apart from cache slots, for a model with M-RoPE
    // (Qwen2-VL, Qwen2.5-VL, Qwen3-VL: ModelConfig's rope_scaling.
    // mrope_section): three ids per token, tokens[i]'s (temporal, height,
    // width) at [3i, 3i + 3), as mrope_positions() gives a prompt's. An
    // image's tokens differ in h and w and the text after it continues from
    // its largest id, so these drift from first_position + i. Empty: every
    // axis takes the slot, first_position + i (text with no image before it).
    std::span<const std::int32_t> rope_positions = {};
  };

  struct RowCandidates {
    std::vector<float> values;  // ranked, highest first (k of the largest request)
    std::vector<std::int32_t> ids;
    kernels::TopLogitsStats stats;
    std::vector<float> gathered;  // the logits of CandidateRequest::gather, in its order
  };

  struct Result {
    int vocab = 0;
    std::vector<float> logits;   // the rows of the sequences without candidates, x vocab
    std::vector<int> first_row;  // per sequence, counting every sequence's rows
    std::vector<int> rows;       // per sequence
    std::vector<int> host_row;   // per sequence: its first row in logits; -1 for candidates
    std::vector<RowCandidates> candidates;  // per sequence; empty values without a request

    // Throws std::out_of_range for a sequence that asked for candidates.
    std::span<const float> row(std::size_t sequence, int index = -1) const;
  };

  // Allocates the scratch of every device the model uses (DeviceOutOfMemory).
  ForwardPass(const ModelDescription& model, const LoadedModel& loaded, KvStorage& storage,
              kernels::Backend& backend, Limits limits);

  Result run(std::span<const Sequence> sequences);
  // The last row of `sequence` in the latest run(), for a request whose
  // candidates did not decide; the device keeps it until the next run().
  void fetch_row(const Result& result, std::size_t sequence, std::vector<float>& out);

  const Limits& limits() const { return limits_; }

  // After run(), before the next: the pages that rewindable sequence
  // `sequence` of that step wrote hold again exactly what they would hold
  // had the step brought only its first `kept` tokens. Where a token's
  // write can change its page's earlier tokens (KvStorage::
  // writes_recode_pages: an FP8 page's scale grown by a later token), the
  // pages are put back as they were before the step and the kept tokens'
  // keys and values written again, in order; otherwise the tokens past
  // `kept` left nothing a later step reads, and nothing is done. Mirrors
  // are left alone: the kept tokens' FP16 copies are already right.
  void rewind(std::size_t sequence, int kept);
  // Whether rewind() can restore every layer's pages: not where some layer's
  // pages live in host memory and writes recode pages.
  bool can_rewind() const;

  // Called with each layer's keys and values [tokens, kv_heads, head_dim]
  // (after RoPE, as the cache stores them) on `device`, just before they are
  // written into the pages: what K/V calibration observes. Steps that are
  // recorded and replayed (decode with step graphs) do not call it.
  using KvObserver = std::function<void(std::size_t layer, int device, const float* key,
                                        const float* value, std::int64_t tokens)>;
  void set_kv_observer(KvObserver observer) { kv_observer_ = std::move(observer); }

  // Called with the input [rows, in_features] of each product on `device`
  // just before it runs (once per weight where several share an input):
  // what calibration for weight quantization observes. Steps that are
  // recorded and replayed do not call it.
  using LinearObserver = std::function<void(const kernels::LinearWeight& weight, int device,
                                            const float* input, std::int64_t rows)>;
  void set_linear_observer(LinearObserver observer) { linear_observer_ = std::move(observer); }

  // Logits of ids from `first` on come out as -inf, so that no sampler can
  // choose them: the rows a model's embedding pads beyond its tokenizer
  // (Qwen2.5-7B has 152064 rows for 151665 tokens). `first` at or beyond
  // the vocabulary, the default, masks nothing and costs nothing.
  void mask_logits_from(std::int64_t first);
  std::int64_t masked_logits_from() const { return masked_from_; }

  // On by default; off for debugging, or to compare against. Counters and
  // failures in graphs().statistics(). Models with a mixture of experts run
  // every step directly: the routing decides on the host which experts run.
  StepGraphs& graphs() { return graphs_; }
  const StepGraphs& graphs() const { return graphs_; }

 private:
  struct Scratch {
    kernels::DeviceBuffer x, h, projection, q, attention, k, v, gate, up;
    // sequence_ids: TokenBatch::token_sequence, each token's attention
    // sequence (a row of block_tables; run_step).
    kernels::DeviceBuffer tokens, positions, sequence_ids, block_tables, inv_freq;
    // M-RoPE: three rotary ids per token (Sequence::rope_positions).
    kernels::DeviceBuffer rope_positions;
    kernels::DeviceBuffer mirrored;                       // TokenBatch::mirrored
    kernels::DeviceBuffer visible_from, visible_through;  // TokenBatch's both-ways blocks
    kernels::DeviceBuffer inv_freq_local;                 // Gemma 3's sliding-window layers
    kernels::DeviceBuffer fused;                          // a fused projection's output
    // Mixtures of experts: router scores, the rows one expert takes and its
    // output, and every routed row's index and weight, expert by expert.
    kernels::DeviceBuffer router, expert_in, expert_out, route_rows, route_weights;
    std::size_t block_table_entries = 0;
  };
  // The attention half and the MLP half of decoder layer `index` over the
  // `count` tokens in the scratch of its device.
  void attention_block(std::size_t index, std::int64_t count, const kernels::TokenBatch& batch,
                       float* x);
  // Writes the layer's k and v (in `s`, its device's scratch) into its pages
  // and leaves the attention over them in s.attention, wherever the pages are.
  void attend(std::size_t index, std::int64_t count, const kernels::TokenBatch& batch, Scratch& s);
  void mlp_block(std::size_t index, std::int64_t count, float* x);
  // A sparse MLP: scores every expert for each token, then runs each chosen
  // expert once over the rows routed to it and adds their weighted outputs
  // to `out` (forward_experts.cpp).
  void run_experts(const LoadedLayer& layer, Scratch& s, std::int64_t count, float* out);
  // backend_.linear and linear_many over the rows of `segments`, each
  // segment a product of its own (row_segments.h; forward_products.cpp).
  void linear(int device, const float* x, std::span<const RowSegment> segments,
              const kernels::LinearWeight& weight, float* out);
  void linear_many(int device, const float* x, std::span<const RowSegment> segments,
                   std::span<const kernels::LinearWeight* const> weights,
                   std::span<float* const> outs);
  // The step's rows as segments, from its sequences, the sequence of each
  // token and the rows of logits of each sequence.
  void segment_rows(std::span<const Sequence> sequences,
                    std::span<const std::int32_t> token_sequence, std::span<const int> logit_rows);
  Scratch& scratch(int device);
  void upload_metadata(int device, std::span<const std::int32_t> tokens,
                       std::span<const std::int32_t> positions,
                       std::span<const std::int32_t> sequence_ids,
                       std::span<const std::int32_t> block_tables,
                       std::span<const std::int32_t> mirrored,
                       std::span<const std::int32_t> visible_from,
                       std::span<const std::int32_t> visible_through,
                       std::span<const std::int32_t> rope_positions = {});
  // What rewind() restores (forward_rewind.cpp): per rewindable sequence of
  // the step, its pages and tokens; per layer, the bytes of those pages'
  // recoded planes before the step and the tokens' keys and values.
  struct RewindSequence {
    std::size_t sequence = 0;
    std::int32_t first_position = 0;
    int count = 0;
    std::int64_t first_token = 0;  // its first token's row in the step
    std::vector<cache::PageIndex> pages, window_pages;
  };
  struct PageRegion {
    std::uint8_t* at = nullptr;  // in the layer's planes
    std::size_t bytes = 0;
    std::size_t offset = 0;  // in the layer's rewind buffer
    std::size_t rewind = 0;  // its RewindSequence
  };
  struct LayerRewind {
    kernels::DeviceBuffer buffer;  // on the cache device: regions, then K and V rows
    std::vector<PageRegion> regions;
    std::vector<std::size_t> kv_offsets;  // per RewindSequence: its keys, then values
  };
  // Called from run_step and attend.
  void plan_rewinds(std::span<const Sequence> sequences);
  void keep_for_rewind(std::size_t layer, int device, const kernels::KvLayerView& view,
                       const float* key, const float* value);
  std::vector<RewindSequence> rewinds_;
  std::map<std::size_t, LayerRewind> layer_rewinds_;
  // The residual window: each sequence's open page gets a mirror slot where
  // one is free (filled first if the slot is new to it). Returns
  // TokenBatch::mirrored's entries; empty without mirrors.
  std::vector<std::int32_t> assign_mirrors(std::span<const Sequence> sequences);
  Result run_step(std::span<const Sequence> sequences);
  void prepare_rope(std::int64_t sequence_length);
  // The shape under which a step of these sequences is recorded, or nothing
  // when it runs directly.
  std::optional<StepShape> step_shape(std::span<const Sequence> sequences) const;
  // Copies the rows of `result` that go to the host whole, and computes and
  // copies the candidates of the sequences that asked for them.
  void deliver_logits(std::span<const Sequence> sequences, int rows, Result& result);

  const ModelDescription& model_;
  const LoadedModel& loaded_;
  KvStorage& storage_;
  kernels::Backend& backend_;
  Limits limits_;
  std::map<int, Scratch> scratch_;
  KvObserver kv_observer_;
  LinearObserver linear_observer_;
  kernels::DeviceBuffer gathered_, normed_, logits_;  // on the head's device
  // The candidates' buffers on the head's device (sized for every row at
  // kMaxTopLogits, so no step allocates them), and the gathered ids' rows,
  // ids and logits, grown when a step gathers more.
  kernels::DeviceBuffer top_values_, top_ids_, top_stats_, inv_temperatures_;
  kernels::DeviceBuffer gather_rows_, gather_ids_, gather_out_;
  std::size_t gather_capacity_ = 0;
  // -inf for ids from masked_from_ to the vocabulary's end, copied over each
  // row's tail after the head.
  kernels::DeviceBuffer padding_;
  std::int64_t masked_from_ = 0;
  // Of the step being run (segment_rows): a sequence is decode when it brings
  // one token.
  std::vector<kernels::ProductRows> sequence_kind_;
  std::vector<std::int32_t> token_sequence_;
  std::vector<RowSegment> token_segments_, logit_segments_;
  std::vector<float> inv_freq_;
  float attention_factor_ = 1.0f;
  std::int64_t rope_length_ = -1;
  std::vector<int> devices_;
  StepGraphs graphs_;
  // KvStorage::generation() the recordings were made under.
  std::uint64_t storage_generation_ = 0;
};

}  // namespace quire::engine
