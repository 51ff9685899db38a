// Taking back a step's cache writes past a sequence's first tokens
// (ForwardPass::rewind): what a verification step needs when drafts are
// given back on a cache whose writes recode pages.
//
// An FP8 page has one scale per head that only grows: a token whose largest
// value needs a larger scale encodes the page's earlier tokens again at it.
// A rejected draft can so leave the kept tokens of its page at another
// scale, and with other bytes, than a run without drafts gives them, and
// every later step that reads the page (once it is no longer mirrored) and
// every later turn that shares it would see the difference. The step keeps
// the bytes of the pages it writes for such sequences, and their tokens'
// keys and values; rewinding puts the pages back and writes the kept tokens
// again in order, which is exactly what their decode steps would have done
// one at a time (write_kv walks a page's tokens in order).

#include <algorithm>
#include <stdexcept>
#include <string>

#include "quire/engine/runtime/forward_pass.h"

namespace quire::engine {
namespace {

// The page-table entries of positions [first, first + count), each once.
std::vector<cache::PageIndex> rewound_pages(std::span<const cache::PageIndex> table, int page_size,
                                            std::int32_t first, int count) {
  std::vector<cache::PageIndex> pages;
  for (std::int32_t index = first / page_size; index <= (first + count - 1) / page_size; ++index)
    pages.push_back(table[static_cast<std::size_t>(index)]);
  return pages;
}

}  // namespace

bool ForwardPass::can_rewind() const {
  if (!storage_.writes_recode_pages()) return true;
  for (std::size_t layer = 0; layer < storage_.layers(); ++layer) {
    if (storage_.placed(layer) && storage_.home(layer) == PageHome::Host) return false;
  }
  return true;
}

void ForwardPass::plan_rewinds(std::span<const Sequence> sequences) {
  rewinds_.clear();
  for (auto& [layer, kept] : layer_rewinds_) {
    kept.regions.clear();
    kept.kv_offsets.clear();
  }
  if (!storage_.writes_recode_pages()) return;
  std::int64_t row = 0;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const Sequence& seq = sequences[s];
    if (seq.rewindable && seq.tokens.size() > 1) {
      if (!can_rewind()) {
        throw std::invalid_argument(
            "a step cannot keep what taking back its drafts needs: FP8 pages with per-page "
            "scales in host memory");
      }
      rewinds_.push_back(RewindSequence{s,
                                        seq.first_position,
                                        static_cast<int>(seq.tokens.size()),
                                        row,
                                        {seq.pages.begin(), seq.pages.end()},
                                        {seq.window_pages.begin(), seq.window_pages.end()}});
    }
    row += static_cast<std::int64_t>(seq.tokens.size());
  }
}

void ForwardPass::keep_for_rewind(std::size_t layer, int device, const kernels::KvLayerView& view,
                                  const float* key, const float* value) {
  if (rewinds_.empty()) return;
  LayerRewind& kept = layer_rewinds_[layer];
  const kernels::KvLayerLayout& layout = view.layout;
  // The planes whose bytes a later token's write can change.
  struct Plane {
    void* data;
    std::int64_t page_bytes;
  };
  std::vector<Plane> planes;
  if (layout.key_coding == kernels::KvCoding::Fp8 && view.calibrated.key == nullptr) {
    planes.push_back({view.planes.key_data, layout.key_data_page_bytes});
    planes.push_back({view.planes.key_scales, layout.key_scale_page_bytes});
  }
  if (layout.value_coding == kernels::KvCoding::Fp8 && view.calibrated.value == nullptr) {
    planes.push_back({view.planes.value_data, layout.value_data_page_bytes});
    planes.push_back({view.planes.value_scales, layout.value_scale_page_bytes});
  }
  const std::size_t row_floats =
      static_cast<std::size_t>(layout.kv_heads) * static_cast<std::size_t>(layout.head_dim);
  std::size_t size = 0;
  for (std::size_t r = 0; r < rewinds_.size(); ++r) {
    const RewindSequence& rewind = rewinds_[r];
    const std::span<const cache::PageIndex> table =
        storage_.windowed(layer) ? std::span(rewind.window_pages) : std::span(rewind.pages);
    for (const cache::PageIndex page :
         rewound_pages(table, layout.page_size, rewind.first_position, rewind.count)) {
      for (const Plane& plane : planes) {
        kept.regions.push_back(
            PageRegion{static_cast<std::uint8_t*>(plane.data) + page * plane.page_bytes,
                       static_cast<std::size_t>(plane.page_bytes), size, r});
        size += static_cast<std::size_t>(plane.page_bytes);
      }
    }
  }
  // Whole floats from here on.
  size = (size + sizeof(float) - 1) / sizeof(float) * sizeof(float);
  for (const RewindSequence& rewind : rewinds_) {
    kept.kv_offsets.push_back(size);
    size += 2 * static_cast<std::size_t>(rewind.count) * row_floats * sizeof(float);
  }
  if (kept.buffer.bytes() < size || kept.buffer.device() != device) {
    kept.buffer.reset();
    kept.buffer = backend_.allocate(device, size, "speculative decoding rewind");
  }
  auto* base = static_cast<std::uint8_t*>(kept.buffer.data());
  for (const PageRegion& region : kept.regions)
    backend_.copy(base + region.offset, device, region.at, device, region.bytes);
  for (std::size_t r = 0; r < rewinds_.size(); ++r) {
    const RewindSequence& rewind = rewinds_[r];
    const std::size_t rows = static_cast<std::size_t>(rewind.count) * row_floats;
    const std::size_t first = static_cast<std::size_t>(rewind.first_token) * row_floats;
    backend_.copy(base + kept.kv_offsets[r], device, key + first, device, rows * sizeof(float));
    backend_.copy(base + kept.kv_offsets[r] + rows * sizeof(float), device, value + first, device,
                  rows * sizeof(float));
  }
}

void ForwardPass::rewind(std::size_t sequence, int kept) {
  if (!storage_.writes_recode_pages()) return;
  const auto found = std::find_if(rewinds_.begin(), rewinds_.end(),
                                  [&](const RewindSequence& r) { return r.sequence == sequence; });
  if (found == rewinds_.end()) {
    throw std::logic_error("sequence " + std::to_string(sequence) +
                           " of the latest step was not run as rewindable");
  }
  const RewindSequence& rewind = *found;
  if (kept < 1 || kept > rewind.count) {
    throw std::invalid_argument("a rewind keeps between 1 and " + std::to_string(rewind.count) +
                                " tokens (asked " + std::to_string(kept) + ")");
  }
  if (kept == rewind.count) return;
  const auto index = static_cast<std::size_t>(found - rewinds_.begin());
  std::vector<std::int32_t> positions(static_cast<std::size_t>(kept));
  for (int t = 0; t < kept; ++t)
    positions[std::size_t(t)] = rewind.first_position + t;
  const std::vector<std::int32_t> zeros(static_cast<std::size_t>(kept), 0);

  for (auto& [layer, saved] : layer_rewinds_) {
    if (saved.kv_offsets.empty()) continue;
    const int device = saved.buffer.device();
    const kernels::KvLayerView& view = storage_.view(layer);
    auto* base = static_cast<std::uint8_t*>(saved.buffer.data());
    for (const PageRegion& region : saved.regions) {
      if (region.rewind == index)
        backend_.copy(region.at, device, base + region.offset, device, region.bytes);
    }
    const std::span<const cache::PageIndex> table =
        storage_.windowed(layer) ? std::span(rewind.window_pages) : std::span(rewind.pages);
    // The kept tokens written again, into the pages alone (batch.mirrored
    // null: the mirror already holds them).
    upload_metadata(device, zeros, positions, zeros, table, {}, {}, {});
    Scratch& s = scratch(device);
    const kernels::TokenBatch batch{
        s.sequence_ids.as<std::int32_t>(), s.positions.as<std::int32_t>(),
        s.block_tables.as<std::int32_t>(), kept, static_cast<int>(table.size())};
    const std::size_t rows = static_cast<std::size_t>(rewind.count) *
                             static_cast<std::size_t>(view.layout.kv_heads) *
                             static_cast<std::size_t>(view.layout.head_dim);
    const auto* keys = reinterpret_cast<const float*>(base + saved.kv_offsets[index]);
    backend_.write_kv(device, view, batch, keys, keys + rows);
  }
}

}  // namespace quire::engine
