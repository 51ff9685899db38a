#include "quire/engine/io/safetensors_file.h"

#include <stdexcept>
#include <utility>

#include "io_errors.h"
#include "safetensors_header.h"

namespace quire::engine::io {
namespace {

constexpr std::uint64_t kLengthFieldBytes = 8;

std::uint64_t read_le64(std::span<const std::byte> bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    value |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(bytes[i])) << (8 * i);
  }
  return value;
}

}  // namespace

std::int64_t TensorInfo::elements() const {
  std::int64_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim == 0) return 0;  // checked first: the other dimensions may be huge
  }
  for (const std::int64_t dim : shape)
    count *= dim;
  return count;
}

std::string format_shape(std::span<const std::int64_t> shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return text + "]";
}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  using detail::fail;
  const std::string advice(detail::kTruncatedAdvice);

  SafetensorsFile result;
  result.file_ = MappedFile::open(path);
  const std::span<const std::byte> bytes = result.file_.bytes();
  const std::uint64_t size = bytes.size();

  if (size < kLengthFieldBytes) {
    fail(path, "the file is " + std::to_string(size) +
                   " bytes long, too short for the 8-byte header length that starts a "
                   "safetensors file; " +
                   advice);
  }
  const std::uint64_t header_length = read_le64(bytes);
  // Compared against the room left, so a huge length cannot overflow the sum.
  if (header_length > size - kLengthFieldBytes) {
    fail(path, "header length " + std::to_string(header_length) + " runs past the end of the " +
                   std::to_string(size) + "-byte file; " + advice);
  }
  if (header_length == 0) fail(path, "header length is 0, so the file has no header; " + advice);
  if (header_length > kMaxHeaderBytes) {
    fail(path, "header length " + std::to_string(header_length) + " is larger than the " +
                   std::to_string(kMaxHeaderBytes) + "-byte limit for a safetensors header; " +
                   advice);
  }

  result.data_start_ = kLengthFieldBytes + header_length;
  const auto header = bytes.subspan(kLengthFieldBytes, static_cast<std::size_t>(header_length));
  const std::string_view text(reinterpret_cast<const char*>(header.data()), header.size());
  detail::ParsedHeader parsed =
      detail::parse_safetensors_header(path, text, size - result.data_start_);

  result.tensors_ = std::move(parsed.tensors);
  result.metadata_ = std::move(parsed.metadata);
  for (std::size_t i = 0; i < result.tensors_.size(); ++i) {
    result.tensors_[i].offset += result.data_start_;  // cannot overflow: checked against size
    result.by_name_.emplace(result.tensors_[i].name, i);
  }
  return result;
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

std::span<const std::byte> SafetensorsFile::data(const TensorInfo& info) const {
  const std::uint64_t size = file_.size();
  if (info.offset > size || info.bytes > size - info.offset) {
    throw std::out_of_range(path().string() + ": tensor " + info.name + " at byte " +
                            std::to_string(info.offset) + " (" + std::to_string(info.bytes) +
                            " bytes) does not lie within this file");
  }
  return file_.bytes().subspan(static_cast<std::size_t>(info.offset),
                               static_cast<std::size_t>(info.bytes));
}

}  // namespace quire::engine::io
