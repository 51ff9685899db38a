#pragma once

// Which bytes of a safetensors file the engine reads when it describes a
// model before loading it, beyond the header: the small index-like tensors
// its layout checks look into (EXL2's q_groups and q_invperm, GPTQ's g_idx
// and qzeros, compressed-tensors' weight_shape, EXL3's codebook markers)
// and calibrated K/V scales. The header probe fetches these ranges so that a
// quantization is priced exactly as its download would be, without its
// weights.

#include <cstdint>
#include <string_view>
#include <vector>

namespace quire::hub {

struct ByteRange {
  std::int64_t first = 0;  // absolute offsets in the file, both included
  std::int64_t last = 0;

  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// Integer tensors of at most this many bytes are read (a permutation of a
// 32k-wide input is 128 KiB); larger ones are weights.
inline constexpr std::int64_t kMaxDescribedTensorBytes = 1 << 20;
// Ranges closer than this are fetched as one.
inline constexpr std::int64_t kRangeMergeGap = 64 * 1024;

// The ranges of the file whose header (the JSON after the 8-byte length) is
// `header_json` and whose data starts at `data_start`, merged and sorted.
// Throws HubProtocolError for a header that is not a safetensors header.
std::vector<ByteRange> described_data_ranges(std::string_view header_json, std::int64_t data_start);

}  // namespace quire::hub
