// What a step hands the devices besides activations: its metadata (token
// ids, positions, page tables, mirror slots, both-ways blocks, M-RoPE ids)
// and the residual window's mirror slots of its sequences.

#include <algorithm>

#include "quire/engine/runtime/forward_pass.h"

namespace quire::engine {

void ForwardPass::upload_metadata(
    int device, std::span<const std::int32_t> tokens, std::span<const std::int32_t> positions,
    std::span<const std::int32_t> sequence_ids, std::span<const std::int32_t> block_tables,
    std::span<const std::int32_t> mirrored, std::span<const std::int32_t> visible_from,
    std::span<const std::int32_t> visible_through, std::span<const std::int32_t> rope_positions) {
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
    // Nothing held while the allocation may fail: a retried step grows it again.
    s.block_table_entries = 0;
    s.block_tables = backend_.allocate(device, entries * 4, "page tables");
    s.block_table_entries = entries;
  }
  backend_.copy(s.tokens.data(), device, tokens.data(), -1, tokens.size_bytes());
  backend_.copy(s.positions.data(), device, positions.data(), -1, positions.size_bytes());
  backend_.copy(s.sequence_ids.data(), device, sequence_ids.data(), -1, sequence_ids.size_bytes());
  backend_.copy(s.block_tables.data(), device, block_tables.data(), -1, block_tables.size_bytes());
  if (!mirrored.empty())
    backend_.copy(s.mirrored.data(), device, mirrored.data(), -1, mirrored.size_bytes());
  if (!visible_through.empty()) {
    backend_.copy(s.visible_from.data(), device, visible_from.data(), -1,
                  visible_from.size_bytes());
    backend_.copy(s.visible_through.data(), device, visible_through.data(), -1,
                  visible_through.size_bytes());
  }
  if (!rope_positions.empty()) {
    backend_.copy(s.rope_positions.data(), device, rope_positions.data(), -1,
                  rope_positions.size_bytes());
  }
}

std::vector<std::int32_t> ForwardPass::assign_mirrors(std::span<const Sequence> sequences) {
  if (storage_.mirror_slots() == 0) return {};
  const int page_size = storage_.config().page_size;
  std::vector<MirrorSlots::Want> wants;
  for (const Sequence& seq : sequences) {
    // The page of the step's last position: the one open after it.
    const std::int32_t end = seq.first_position + static_cast<std::int32_t>(seq.tokens.size());
    const int index = (end - 1) / page_size;
    const std::int32_t start = index * page_size;
    wants.push_back(MirrorSlots::Want{index, seq.pages[static_cast<std::size_t>(index)],
                                      std::max(seq.first_position - start, 0), end - start});
  }
  const std::vector<MirrorSlots::Assignment> slots = storage_.mirrors().assign(wants, page_size);
  std::vector<std::int32_t> mirrored;
  for (std::size_t s = 0; s < wants.size(); ++s) {
    if (slots[s].slot >= 0) storage_.fill_mirror(slots[s].slot, wants[s].page, slots[s].fill);
    mirrored.push_back(slots[s].slot >= 0 ? wants[s].index : -1);
    mirrored.push_back(slots[s].slot);
  }
  return mirrored;
}

}  // namespace quire::engine
