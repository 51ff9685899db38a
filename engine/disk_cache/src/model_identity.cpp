#include "quire/engine/disk_cache/model_identity.h"

#include <blake2.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "quire/engine/model_error.h"

namespace quire::engine::disk_cache {
namespace {

// The reference implementation's limit for a safetensors header.
constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

constexpr const char* kTokenizerFiles[] = {"tokenizer.json",
                                           "tokenizer.model",
                                           "tokenizer_config.json",
                                           "special_tokens_map.json",
                                           "added_tokens.json",
                                           "vocab.json",
                                           "merges.txt"};

[[noreturn]] void fail_io(const std::filesystem::path& path, const char* what, int err) {
  throw ModelError(path.string() + ": " + what + ": " + std::strerror(err) +
                   " — check that the model folder is complete and readable");
}

class IdentityDigest {
 public:
  IdentityDigest() {
    if (blake2b_init(&state_, 16) != 0) throw std::runtime_error("blake2b_init failed");
  }

  void add(std::string_view tag, const void* data, std::size_t size) {
    add_raw(tag.data(), tag.size());
    add_raw(data, size);
  }
  void add(std::string_view tag, std::string_view text) { add(tag, text.data(), text.size()); }
  void add_number(std::string_view tag, std::uint64_t value) {
    std::uint8_t le[8];
    for (int i = 0; i < 8; ++i)
      le[i] = static_cast<std::uint8_t>(value >> (8 * i));
    add(tag, le, sizeof le);
  }

  ModelIdentity finish() {
    ModelIdentity identity;
    if (blake2b_final(&state_, identity.bytes.data(), identity.bytes.size()) != 0)
      throw std::runtime_error("blake2b_final failed");
    return identity;
  }

 private:
  // Every piece is length-prefixed, so no two different inputs digest alike.
  void add_raw(const void* data, std::size_t size) {
    std::uint8_t le[8];
    for (int i = 0; i < 8; ++i)
      le[i] = static_cast<std::uint8_t>(std::uint64_t{size} >> (8 * i));
    blake2b_update(&state_, le, sizeof le);
    if (size > 0) blake2b_update(&state_, static_cast<const std::uint8_t*>(data), size);
  }

  blake2b_state state_{};
};

class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::filesystem::path& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail_io(path, "cannot open the file", errno);
    if (::fstat(fd_, &stat_) != 0) fail_io(path, "cannot read the file's size", errno);
  }
  ~ReadOnlyFile() { ::close(fd_); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  const struct stat& status() const { return stat_; }

  // `size` bytes from `offset`, all of them, or ModelError.
  std::vector<std::uint8_t> read(std::uint64_t offset, std::uint64_t size) const {
    std::vector<std::uint8_t> bytes(size);
    std::uint64_t done = 0;
    while (done < size) {
      const ssize_t got =
          ::pread(fd_, bytes.data() + done, size - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail_io(path_, "cannot read the file", errno);
      if (got == 0)
        throw ModelError(path_.string() +
                         ": the file ends early — it is truncated; download it again");
      done += static_cast<std::uint64_t>(got);
    }
    return bytes;
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  struct stat stat_ {};
};

void add_whole_file(IdentityDigest& digest, const std::filesystem::path& path) {
  const ReadOnlyFile file(path);
  const auto bytes = file.read(0, static_cast<std::uint64_t>(file.status().st_size));
  digest.add(path.filename().string(), bytes.data(), bytes.size());
}

void add_weight_file(IdentityDigest& digest, const std::filesystem::path& path) {
  const ReadOnlyFile file(path);
  const struct stat& st = file.status();
  digest.add("weights", path.filename().string());
  digest.add_number("size", static_cast<std::uint64_t>(st.st_size));
  digest.add_number("mtime", static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000u +
                                 static_cast<std::uint64_t>(st.st_mtim.tv_nsec));
  const auto length_bytes = file.read(0, 8);
  std::uint64_t header = 0;
  for (int i = 0; i < 8; ++i)
    header |= std::uint64_t{length_bytes[i]} << (8 * i);
  if (header > kMaxSafetensorsHeader || header + 8 > static_cast<std::uint64_t>(st.st_size))
    throw ModelError(path.string() + ": the safetensors header claims " + std::to_string(header) +
                     " bytes, more than the file holds — the file is damaged; download it again");
  const auto json = file.read(8, header);
  digest.add("header", json.data(), json.size());
}

}  // namespace

std::string ModelIdentity::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    text.push_back(kDigits[b >> 4]);
    text.push_back(kDigits[b & 15]);
  }
  return text;
}

ModelIdentity model_identity(const std::filesystem::path& directory, std::string_view extra) {
  IdentityDigest digest;
  digest.add("quire model identity", "1");
  add_whole_file(digest, directory / "config.json");

  std::vector<std::filesystem::path> weights;
  std::error_code error;
  for (std::filesystem::directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    const std::filesystem::path& path = it->path();
    if (path.extension() == ".safetensors") weights.push_back(path);
  }
  if (error) fail_io(directory, "cannot list the model folder", error.value());
  std::sort(weights.begin(), weights.end());
  if (weights.empty())
    throw ModelError(directory.string() +
                     ": no *.safetensors files — this is not a model folder Quire can load");
  for (const auto& path : weights)
    add_weight_file(digest, path);
  const std::filesystem::path index = directory / "model.safetensors.index.json";
  if (std::filesystem::exists(index)) add_whole_file(digest, index);

  for (const char* name : kTokenizerFiles) {
    const std::filesystem::path path = directory / name;
    if (std::filesystem::exists(path)) add_whole_file(digest, path);
  }
  digest.add("extra", extra);
  return digest.finish();
}

}  // namespace quire::engine::disk_cache
