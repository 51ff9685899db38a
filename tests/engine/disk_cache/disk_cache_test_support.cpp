#include "disk_cache_test_support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <stdexcept>

namespace quire::test::disk_cache {

std::filesystem::path path_of(const QTemporaryDir& dir) {
  return std::filesystem::path(dir.path().toStdString());
}

PageCoding small_coding(cache::CacheFormat format, int layers) {
  const std::vector<cache::LayerShape> shapes(static_cast<std::size_t>(layers),
                                              cache::LayerShape{2, 32});
  return PageCoding::of(format, 16, shapes);
}

ModelIdentity model_number(std::uint8_t n) {
  ModelIdentity identity;
  for (std::size_t i = 0; i < identity.bytes.size(); ++i)
    identity.bytes[i] = static_cast<std::uint8_t>(n * 31 + i);
  return identity;
}

std::vector<std::byte> random_payload(const PageCoding& coding, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::byte> bytes(static_cast<std::size_t>(coding.page_bytes()));
  for (std::byte& b : bytes)
    b = static_cast<std::byte>(random());
  return bytes;
}

std::vector<cache::PageHash> chain(int pages, std::int64_t first_token) {
  std::vector<cache::PageHash> hashes;
  for (int i = 0; i < pages; ++i) {
    const std::vector<cache::TokenId> tokens(16, static_cast<cache::TokenId>(first_token + i));
    hashes.push_back(cache::hash_page(hashes.empty() ? nullptr : &hashes.back(), tokens));
  }
  return hashes;
}

std::function<std::int64_t()> ticking_clock() {
  auto now =
      std::make_shared<std::atomic<std::int64_t>>(std::int64_t{1'700'000'000} * 1'000'000'000);
  return [now] { return now->fetch_add(1000) + 1000; };
}

std::vector<std::byte> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::transform(chars.begin(), chars.end(), bytes.begin(), [](char c) { return std::byte(c); });
  return bytes;
}

void write_file(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::vector<std::string> folder_names(const std::filesystem::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().filename() != ".lock") names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

int mode_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

int FailingOps::write_all(int fd, std::span<const std::byte> bytes) {
  if (step_ != Step::Write) return PageFileOps::write_all(fd, bytes);
  const std::size_t part = std::min(bytes.size(), bytes_before_failure_.load());
  if (const int err = PageFileOps::write_all(fd, bytes.first(part)); err != 0) return err;
  return error_;
}

int FailingOps::sync(int fd) {
  return step_ == Step::Sync ? error_.load() : PageFileOps::sync(fd);
}

int FailingOps::rename(const char* from, const char* to) {
  return step_ == Step::Rename ? error_.load() : PageFileOps::rename(from, to);
}

int GateOps::write_all(int fd, std::span<const std::byte> bytes) {
  {
    std::unique_lock lock(mutex_);
    entered_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return released_; });
  }
  return PageFileOps::write_all(fd, bytes);
}

void GateOps::wait_until_entered() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return entered_; });
}

void GateOps::release() {
  const std::lock_guard lock(mutex_);
  released_ = true;
  changed_.notify_all();
}

}  // namespace quire::test::disk_cache
