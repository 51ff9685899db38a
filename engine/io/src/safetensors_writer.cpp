#include "quire/engine/io/safetensors_writer.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "atomic_file.h"
#include "io_errors.h"
#include "quire/engine/io/safetensors_file.h"

namespace quire::engine::io {
namespace {

using kernels::DType;
using nlohmann::ordered_json;

constexpr std::size_t kHeaderAlignment = 8;
constexpr int kMaxShards = 99999;  // the five digits of "model-00001-of-00002"

bool valid_utf8(const std::string& text) {
  try {
    (void)ordered_json(text).dump();
    return true;
  } catch (const ordered_json::type_error&) {
    return false;
  }
}

std::span<const std::byte> as_bytes(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::string shard_name(int shard, int shards) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", shard, shards);
  return name;
}

}  // namespace

void SafetensorsWriter::check_new(const std::string& name, DType dtype,
                                  const std::vector<std::int64_t>& shape, std::size_t bytes) const {
  const std::string what = "SafetensorsWriter: tensor \"" + name + "\"";
  if (name == "__metadata__") throw std::invalid_argument(what + ": the name is reserved");
  if (!valid_utf8(name)) throw std::invalid_argument(what + ": the name is not valid UTF-8");
  if (names_.contains(name)) throw std::invalid_argument(what + " was added twice");
  std::optional<std::uint64_t> needed = kernels::dtype_size(dtype);
  for (const std::int64_t dim : shape) {
    if (dim < 0) throw std::invalid_argument(what + " has a negative dimension");
    needed = needed ? detail::checked_mul(*needed, static_cast<std::uint64_t>(dim)) : needed;
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) needed = 0;
  if (!needed || *needed != bytes) {
    throw std::invalid_argument(what + " is " + std::string(kernels::dtype_name(dtype)) + " " +
                                format_shape(shape) + " but comes with " + std::to_string(bytes) +
                                " bytes");
  }
}

std::vector<SafetensorsWriter::Listing> SafetensorsWriter::listing() const {
  std::vector<Listing> out;
  out.reserve(entries_.size());
  for (const Entry& entry : entries_)
    out.push_back({entry.name, entry.dtype, entry.shape, entry.data.size()});
  return out;
}

void SafetensorsWriter::add(std::string name, DType dtype, std::vector<std::int64_t> shape,
                            std::span<const std::byte> data) {
  add(std::move(name), dtype, std::move(shape), std::vector<std::byte>(data.begin(), data.end()));
}

void SafetensorsWriter::add(std::string name, DType dtype, std::vector<std::int64_t> shape,
                            std::vector<std::byte>&& data) {
  check_new(name, dtype, shape, data.size());
  names_.insert(name);
  data_bytes_ += data.size();
  entries_.push_back(Entry{std::move(name), dtype, std::move(shape), std::move(data)});
}

void SafetensorsWriter::set_metadata(std::string key, std::string value) {
  if (!valid_utf8(key) || !valid_utf8(value)) {
    throw std::invalid_argument("SafetensorsWriter: metadata \"" + key + "\" is not valid UTF-8");
  }
  metadata_[std::move(key)] = std::move(value);
}

void SafetensorsWriter::write(const std::filesystem::path& path) const {
  std::vector<const Entry*> all;
  all.reserve(entries_.size());
  for (const Entry& entry : entries_)
    all.push_back(&entry);
  write_entries(path, all);
}

void SafetensorsWriter::write_entries(const std::filesystem::path& path,
                                      std::span<const Entry* const> entries) const {
  // Largest elements first keeps every tensor aligned to its element size with
  // no gaps; the sort is stable, so equal sizes keep their insertion order.
  std::vector<const Entry*> layout(entries.begin(), entries.end());
  std::stable_sort(layout.begin(), layout.end(), [](const Entry* a, const Entry* b) {
    return kernels::dtype_size(a->dtype) > kernels::dtype_size(b->dtype);
  });

  ordered_json header = ordered_json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  std::uint64_t offset = 0;
  for (const Entry* entry : layout) {
    const std::uint64_t end = offset + entry->data.size();
    header[entry->name] = {{"dtype", kernels::dtype_name(entry->dtype)},
                           {"shape", entry->shape},
                           {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  // Spaces are what the format allows as padding; they keep the data 8-aligned.
  text.resize((text.size() + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment, ' ');

  std::array<std::byte, 8> length{};
  for (std::size_t i = 0; i < length.size(); ++i)
    length[i] = static_cast<std::byte>((static_cast<std::uint64_t>(text.size()) >> (8 * i)) & 0xff);

  detail::AtomicFile file(path);
  file.write(length);
  file.write(as_bytes(text));
  for (const Entry* entry : layout)
    file.write(entry->data);
  file.commit();
}

std::vector<std::filesystem::path> SafetensorsWriter::write_sharded(
    const std::filesystem::path& dir, int shards) const {
  if (shards < 1 || shards > kMaxShards || static_cast<std::size_t>(shards) > entries_.size()) {
    throw std::invalid_argument("SafetensorsWriter: cannot split " +
                                std::to_string(entries_.size()) + " tensors over " +
                                std::to_string(shards) + " files");
  }
  // Contiguous runs in insertion order; a shard ends once the running total
  // reaches its share of the bytes, or when the rest of the tensors are just
  // enough to give every later shard one.
  const auto count = static_cast<int>(entries_.size());
  std::vector<std::vector<const Entry*>> groups(static_cast<std::size_t>(shards));
  std::uint64_t so_far = 0;
  int shard = 0;
  for (int i = 0; i < count; ++i) {
    const Entry& entry = entries_[static_cast<std::size_t>(i)];
    groups[static_cast<std::size_t>(shard)].push_back(&entry);
    so_far += entry.data.size();
    const int shards_left = shards - shard - 1;
    if (shards_left == 0) continue;
    const double share = static_cast<double>(data_bytes_) * (shard + 1) / shards;
    if (count - i - 1 == shards_left || static_cast<double>(so_far) >= share) ++shard;
  }

  std::vector<std::filesystem::path> paths;
  ordered_json weight_map = ordered_json::object();
  for (int s = 0; s < shards; ++s) {
    const std::string name = shard_name(s + 1, shards);
    paths.push_back(dir / name);
    write_entries(paths.back(), groups[static_cast<std::size_t>(s)]);
    for (const Entry* entry : groups[static_cast<std::size_t>(s)])
      weight_map[entry->name] = name;
  }
  const ordered_json index = {{"metadata", {{"total_size", data_bytes_}}},
                              {"weight_map", std::move(weight_map)}};
  detail::AtomicFile file(dir / "model.safetensors.index.json");
  file.write(as_bytes(index.dump(2) + "\n"));
  file.commit();
  return paths;
}

}  // namespace quire::engine::io
