#include "quire/hub/described_ranges.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "quire/hub/hub_error.h"

namespace quire::hub {
namespace {

bool is_integer_dtype(const std::string& dtype) {
  return dtype == "I8" || dtype == "I16" || dtype == "I32" || dtype == "I64" || dtype == "U8" ||
         dtype == "U16" || dtype == "U32" || dtype == "U64" || dtype == "BOOL";
}

// Calibrated K/V scales (compressed-tensors' kv_cache_scheme) are read at
// describe time whatever their dtype.
bool is_kv_scale(const std::string& name) {
  return name.ends_with("k_scale") || name.ends_with("v_scale") || name.ends_with(".output_scale");
}

}  // namespace

std::vector<ByteRange> described_data_ranges(std::string_view header_json,
                                             std::int64_t data_start) {
  const nlohmann::json header = nlohmann::json::parse(header_json, nullptr, false);
  if (header.is_discarded() || !header.is_object())
    throw HubProtocolError("a safetensors header is not a JSON object");
  std::vector<ByteRange> ranges;
  for (const auto& [name, tensor] : header.items()) {
    if (name == "__metadata__" || !tensor.is_object()) continue;
    const auto dtype = tensor.find("dtype");
    const auto offsets = tensor.find("data_offsets");
    if (dtype == tensor.end() || !dtype->is_string() || offsets == tensor.end() ||
        !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
      throw HubProtocolError("the safetensors header's entry " + name +
                             " has no dtype or data_offsets");
    const auto begin = (*offsets)[0].get<std::uint64_t>();
    const auto end = (*offsets)[1].get<std::uint64_t>();
    if (end < begin || end > (std::uint64_t(1) << 50))
      throw HubProtocolError("the safetensors header's entry " + name +
                             " has impossible data_offsets");
    const std::int64_t bytes = static_cast<std::int64_t>(end - begin);
    if (bytes == 0 || bytes > kMaxDescribedTensorBytes) continue;
    if (!is_integer_dtype(dtype->get<std::string>()) && !is_kv_scale(name)) continue;
    ranges.push_back({data_start + static_cast<std::int64_t>(begin),
                      data_start + static_cast<std::int64_t>(end) - 1});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.first < b.first; });
  std::vector<ByteRange> merged;
  for (const ByteRange& range : ranges) {
    if (!merged.empty() && range.first - merged.back().last <= kRangeMergeGap &&
        range.last - merged.back().first < 4 * kMaxDescribedTensorBytes)
      merged.back().last = std::max(merged.back().last, range.last);
    else
      merged.push_back(range);
  }
  return merged;
}

}  // namespace quire::hub
