#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/io/safetensors_file.h"

namespace quire::engine::io::detail {

struct ParsedHeader {
  std::vector<TensorInfo> tensors;  // sorted by offset; offsets relative to the data area
  std::map<std::string, std::string> metadata;
};

// Parses and validates a safetensors header (the JSON text) against a data area
// of `data_size` bytes: every entry's dtype, shape and data_offsets, their
// agreement, the bounds, no overlaps, and "__metadata__". Throws ModelError
// naming `file` and the tensor.
ParsedHeader parse_safetensors_header(const std::filesystem::path& file, std::string_view text,
                                      std::uint64_t data_size);

}  // namespace quire::engine::io::detail
