#include "safetensors_header.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "io_errors.h"
#include "json_header.h"

namespace quire::engine::io::detail {
namespace {

using kernels::DType;
using nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";

// A non-negative JSON integer ("-0" included); nothing for anything else.
std::optional<std::uint64_t> as_unsigned(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  }
  return std::nullopt;
}

// Everything about one header entry that can be wrong names the file and the tensor.
class EntryParser {
 public:
  EntryParser(const std::filesystem::path& file, const std::string& name)
      : file_(file), name_(name) {}

  [[noreturn]] void fail_entry(const std::string& what) const {
    fail(file_, "tensor " + quote_text(name_) + " " + what + "; " + std::string(kDamagedAdvice));
  }

  const json& field(const json& entry, const char* key) const {
    const auto it = entry.find(key);
    if (it == entry.end()) fail_entry("has no \"" + std::string(key) + "\" in the header");
    return *it;
  }

  DType dtype(const json& value) const {
    if (!value.is_string()) {
      fail_entry("has a \"dtype\" that is " + json_kind(value) + " where a string such as " +
                 "\"F16\" is expected");
    }
    const auto& text = value.get_ref<const std::string&>();
    const std::optional<DType> type = kernels::parse_dtype(text);
    if (!type) {
      fail(file_, "tensor " + quote_text(name_) + " has unsupported dtype " + quote_text(text) +
                      " (Quire reads F16, BF16, F32, F8_E4M3, I64, I32, I16, I8 and U8); "
                      "convert the model to F16 or BF16, or use a quantized version of it");
    }
    return *type;
  }

  std::vector<std::int64_t> shape(const json& value) const {
    if (!value.is_array()) {
      fail_entry("has a \"shape\" that is " + json_kind(value) +
                 " where an array of dimensions is expected");
    }
    std::vector<std::int64_t> dims;
    dims.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
      const json& dim = value[i];
      const std::string where = "dimension " + std::to_string(i) + " of its shape ";
      if (dim.is_number_integer() && !dim.is_number_unsigned() && dim.get<std::int64_t>() < 0) {
        fail_entry("has a negative " + where + "(" + std::to_string(dim.get<std::int64_t>()) + ")");
      }
      const std::optional<std::uint64_t> size = as_unsigned(dim);
      if (!size) fail_entry("has " + where + json_brief(dim) + ", which is not a whole number");
      if (*size > static_cast<std::uint64_t>(INT64_MAX)) {
        fail_entry("has " + where + std::to_string(*size) + ", which is too large");
      }
      dims.push_back(static_cast<std::int64_t>(*size));
    }
    return dims;
  }

  // Bytes the dtype and shape need; nothing when that does not fit in 64 bits.
  static std::optional<std::uint64_t> needed_bytes(DType dtype,
                                                   const std::vector<std::int64_t>& shape) {
    // A zero dimension makes the tensor empty however large the others are.
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
    std::optional<std::uint64_t> bytes = kernels::dtype_size(dtype);
    for (const std::int64_t dim : shape) {
      bytes = checked_mul(*bytes, static_cast<std::uint64_t>(dim));
      if (!bytes) return std::nullopt;
    }
    return bytes;
  }

  std::pair<std::uint64_t, std::uint64_t> offsets(const json& value,
                                                  std::uint64_t data_size) const {
    const bool pair = value.is_array() && value.size() == 2;
    const std::optional<std::uint64_t> first = pair ? as_unsigned(value[0]) : std::nullopt;
    const std::optional<std::uint64_t> second = pair ? as_unsigned(value[1]) : std::nullopt;
    if (!first || !second) {
      fail_entry("has \"data_offsets\" " + json_brief(value) +
                 " where two byte offsets [begin, end] are expected");
    }
    const std::uint64_t begin = *first;
    const std::uint64_t end = *second;
    if (begin > end) {
      fail_entry("has \"data_offsets\" [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] whose begin lies after its end");
    }
    if (end > data_size) {
      fail(file_, "tensor " + quote_text(name_) + " has \"data_offsets\" [" +
                      std::to_string(begin) + ", " + std::to_string(end) +
                      "] that run past the end of the " + std::to_string(data_size) +
                      "-byte data area; " + std::string(kTruncatedAdvice));
    }
    return {begin, end};
  }

 private:
  const std::filesystem::path& file_;
  const std::string& name_;
};

TensorInfo parse_entry(const std::filesystem::path& file, const std::string& name,
                       const json& entry, std::uint64_t data_size) {
  const EntryParser parser(file, name);
  if (!entry.is_object()) {
    parser.fail_entry("is " + json_kind(entry) +
                      " in the header where an object with dtype, shape and data_offsets is "
                      "expected");
  }
  TensorInfo info;
  info.name = name;
  info.dtype = parser.dtype(parser.field(entry, "dtype"));
  info.shape = parser.shape(parser.field(entry, "shape"));
  const auto [begin, end] = parser.offsets(parser.field(entry, "data_offsets"), data_size);
  const std::optional<std::uint64_t> needed = EntryParser::needed_bytes(info.dtype, info.shape);
  if (!needed || *needed != end - begin) {
    const std::string need =
        needed ? "needs " + std::to_string(*needed) + " bytes" : "needs more than 2^64 bytes";
    parser.fail_entry("is " + std::string(kernels::dtype_name(info.dtype)) + " " +
                      format_shape(info.shape) + ", which " + need + ", but its data_offsets [" +
                      std::to_string(begin) + ", " + std::to_string(end) + "] hold " +
                      std::to_string(end - begin) + " bytes");
  }
  info.offset = begin;
  info.bytes = end - begin;
  return info;
}

std::map<std::string, std::string> parse_metadata(const std::filesystem::path& file,
                                                  const json& value) {
  const std::string advice(kDamagedAdvice);
  if (!value.is_object()) {
    fail(file, "\"__metadata__\" is " + json_kind(value) +
                   " where an object of strings is expected; " + advice);
  }
  std::map<std::string, std::string> metadata;
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) {
      fail(file, "\"__metadata__\" entry " + quote_text(key) + " is " + json_kind(item) +
                     " where a string is expected; " + advice);
    }
    metadata.emplace(key, item.get<std::string>());
  }
  return metadata;
}

// Tensors must not share bytes: a file built to alias one tensor's data as
// another's would otherwise pass every per-tensor check.
void check_no_overlap(const std::filesystem::path& file, const std::vector<TensorInfo>& sorted) {
  const TensorInfo* reach = nullptr;  // the non-empty tensor ending furthest so far
  for (const TensorInfo& info : sorted) {
    if (info.bytes == 0) continue;
    if (reach != nullptr && info.offset < reach->offset + reach->bytes) {
      const auto range = [](const TensorInfo& t) {
        return "[" + std::to_string(t.offset) + ", " + std::to_string(t.offset + t.bytes) + ")";
      };
      fail(file, "tensors " + quote_text(reach->name) + " (bytes " + range(*reach) + ") and " +
                     quote_text(info.name) + " (bytes " + range(info) +
                     ") overlap in the data area; " + std::string(kDamagedAdvice));
    }
    if (reach == nullptr || info.offset + info.bytes > reach->offset + reach->bytes) {
      reach = &info;
    }
  }
}

}  // namespace

ParsedHeader parse_safetensors_header(const std::filesystem::path& file, std::string_view text,
                                      std::uint64_t data_size) {
  const json root = parse_untrusted_json(file, text, "the header", kTruncatedAdvice);
  if (!root.is_object()) {
    fail(file, "the header is " + json_kind(root) + " where a JSON object is expected; " +
                   std::string(kTruncatedAdvice));
  }
  ParsedHeader parsed;
  parsed.tensors.reserve(root.size());
  for (const auto& [name, entry] : root.items()) {
    if (name == kMetadataKey) {
      parsed.metadata = parse_metadata(file, entry);
    } else {
      parsed.tensors.push_back(parse_entry(file, name, entry, data_size));
    }
  }
  std::sort(parsed.tensors.begin(), parsed.tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) {
              // Full order, so equal offsets (empty tensors) sort the same every time.
              return std::tie(a.offset, a.bytes, a.name) < std::tie(b.offset, b.bytes, b.name);
            });
  check_no_overlap(file, parsed.tensors);
  return parsed;
}

}  // namespace quire::engine::io::detail
