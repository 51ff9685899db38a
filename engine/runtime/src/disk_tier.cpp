#include "quire/engine/runtime/disk_tier.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <system_error>
#include <unordered_set>

#include "quire/engine/disk_cache/disk_cache_usage.h"
#include "quire/engine/disk_cache/model_identity.h"
#include "quire/engine/disk_cache/page_file.h"

namespace quire::engine {
namespace {

namespace fs = std::filesystem;

// A restore reads at most this much at once: a long chat of a large model
// is gigabytes, read and put in place a slice at a time.
constexpr std::uint64_t kRestoreSliceBytes = std::uint64_t{64} << 20;

disk_cache::PageCoding coding_of(const cache::CacheConfig& cache) {
  std::vector<cache::LayerShape> shapes;
  shapes.reserve(cache.layers.size());
  for (const cache::CacheLayer& layer : cache.layers)
    shapes.push_back(layer.shape);
  return disk_cache::PageCoding::of(cache.format, cache.page_size, shapes);
}

bool is_model_folder(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.size() == 32 && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

struct ModelFolder {
  fs::path path;
  std::uint64_t bytes = 0;
  fs::file_time_type newest = fs::file_time_type::min();
};

// Bytes of the model folder's page files, and the newest one's time (a page
// file's time is its recency: DiskPageStore stamps it on every read).
ModelFolder measure(const fs::path& folder) {
  ModelFolder measured{folder};
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() != ".page") continue;
    std::error_code stat_error;
    const std::uint64_t size = it->file_size(stat_error);
    const fs::file_time_type time = it->last_write_time(stat_error);
    if (stat_error) continue;  // removed meanwhile
    measured.bytes += size;
    measured.newest = std::max(measured.newest, time);
  }
  return measured;
}

}  // namespace

std::uint64_t trim_other_models(const fs::path& root, const disk_cache::ModelIdentity& keep,
                                std::uint64_t others_budget) {
  std::error_code error;
  if (!fs::is_directory(root, error)) return 0;
  std::vector<ModelFolder> others;
  for (fs::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    if (!it->is_directory() || !is_model_folder(it->path())) continue;
    if (it->path().filename() == keep.hex()) continue;
    others.push_back(measure(it->path()));
  }
  std::sort(others.begin(), others.end(),
            [](const ModelFolder& a, const ModelFolder& b) { return a.newest < b.newest; });
  std::uint64_t total = 0;
  for (const ModelFolder& folder : others)
    total += folder.bytes;
  for (const ModelFolder& folder : others) {
    if (total <= others_budget) break;
    std::error_code removal;
    fs::remove_all(folder.path, removal);
    if (!removal) total -= folder.bytes;
  }
  return total;
}

DiskTier::DiskTier(const fs::path& model_directory, KvStorage& storage,
                   const cache::CacheConfig& cache, DiskTierOptions options)
    : storage_(storage) {
  if (cache.has_window_pool()) {
    throw std::invalid_argument(
        "the disk tier does not keep the pages of sliding-window layers mixed with global ones "
        "(Gemma 2 and 3): run this model without it");
  }
  disk_cache::PageCoding coding = coding_of(cache);
  if (coding.page_bytes() != storage.block_bytes()) {
    throw std::logic_error("disk tier: the cache coding gives pages of " +
                           std::to_string(coding.page_bytes()) + " bytes, the storage holds " +
                           std::to_string(storage.block_bytes()));
  }
  const disk_cache::ModelIdentity model =
      disk_cache::model_identity(model_directory, options.identity_extra);
  root_ = options.root;
  disk_cache::DiskPageStoreOptions store_options;
  store_options.limit_bytes = own_share(model, options.limit_bytes);
  store_options.file_ops = options.file_ops;
  const fs::path folder = disk_cache::store_folder(options.root, model, coding);
  const auto page_bytes = static_cast<std::uint64_t>(coding.page_bytes());
  store_ = std::make_unique<disk_cache::DiskPageStore>(folder, model, std::move(coding),
                                                       std::move(store_options));
  const std::size_t queue_pages =
      static_cast<std::size_t>(std::max<std::uint64_t>(1, options.queue_bytes / page_bytes));
  writer_ = std::make_unique<disk_cache::DiskPageWriter>(*store_, queue_pages);
}

DiskTier::~DiskTier() = default;  // the writer finishes its queue first

bool DiskTier::holds(const cache::PageHash& hash) const {
  if (refused_.contains(hash)) return false;
  return writer_->pending(hash) || store_->contains(hash);
}

void DiskTier::save(std::span<const cache::DiskSave> saves) {
  const auto bytes = static_cast<std::size_t>(storage_.block_bytes());
  for (const cache::DiskSave& save : saves) {
    disk_cache::PageToWrite page;
    page.hash = save.hash;
    page.parent = save.parent;
    page.token_count = static_cast<std::uint32_t>(coding().page_size);
    page.payload.resize(bytes);
    storage_.read_page(save.page, page.payload);
    writer_->write(std::move(page));  // dropped, and counted, when the queue is full
  }
}

std::vector<cache::PageHash> DiskTier::restore(std::span<const cache::DiskRestore> restores) {
  std::vector<cache::PageHash> failed;
  if (restores.empty()) return failed;
  // A page evicted moments ago may still be on its way to the disk.
  if (std::any_of(restores.begin(), restores.end(),
                  [&](const cache::DiskRestore& r) { return writer_->pending(r.hash); })) {
    writer_->flush();
  }
  const auto bytes = static_cast<std::size_t>(storage_.block_bytes());
  const std::size_t slice =
      std::min<std::size_t>(restores.size(), std::max<std::size_t>(1, kRestoreSliceBytes / bytes));
  std::vector<std::byte> buffer(slice * bytes);
  for (std::size_t first = 0; first < restores.size(); first += slice) {
    const std::size_t count = std::min(slice, restores.size() - first);
    std::vector<cache::PageHash> hashes;
    std::vector<std::span<std::byte>> blocks;
    for (std::size_t i = 0; i < count; ++i) {
      hashes.push_back(restores[first + i].hash);
      blocks.emplace_back(buffer.data() + i * bytes, bytes);
    }
    const std::vector<disk_cache::ReadOutcome> outcomes = store_->read_many(hashes, blocks);
    for (std::size_t i = 0; i < count; ++i) {
      const disk_cache::ReadOutcome& outcome = outcomes[i];
      const cache::DiskRestore& restore = restores[first + i];
      if (outcome.status == disk_cache::ReadStatus::Read &&
          outcome.token_count == static_cast<std::uint32_t>(coding().page_size)) {
        storage_.write_page(restore.page, blocks[i]);
        ++restored_pages_;
        continue;
      }
      // A file kept after an I/O error would be offered again: not by us.
      if (outcome.status != disk_cache::ReadStatus::Missing) refused_.insert(restore.hash);
      failed.push_back(restore.hash);
      ++failed_restores_;
    }
  }
  return failed;
}

ArchiveResult DiskTier::archive(const cache::PageCache& cache) {
  writer_->flush();
  struct Candidate {
    std::uint64_t last_access;
    cache::PageIndex page;
  };
  std::vector<Candidate> candidates;
  std::unordered_set<cache::PageHash, cache::PageHashHasher> seen;
  for (cache::PageIndex index = 0; index < cache.num_pages(); ++index) {
    const cache::PageRecord& record = cache.page(index);
    const cache::PageIdentity& identity = record.identity;
    if (!identity.hashed || identity.valid != cache.page_size()) continue;
    if (!seen.insert(identity.hash).second || holds(identity.hash)) continue;
    candidates.push_back(Candidate{record.last_access, index});
  }
  // The most recent pages that fit the limit, written oldest first, so that
  // each file's time (its recency on disk) follows the cache's order.
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.last_access > b.last_access; });
  const auto bytes = static_cast<std::uint64_t>(storage_.block_bytes());
  const std::uint64_t file_bytes = bytes + disk_cache::kPageFileFixedHeader +
                                   disk_cache::kPageFileLayerEntry * coding().layers.size() +
                                   disk_cache::kPageFileChecksum;
  const std::uint64_t room = store_->limit() / file_bytes;
  ArchiveResult result;
  if (candidates.size() > room) {
    result.left_out = candidates.size() - room;
    candidates.resize(static_cast<std::size_t>(room));
  }
  std::reverse(candidates.begin(), candidates.end());
  std::vector<std::byte> block(static_cast<std::size_t>(bytes));
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const cache::PageIdentity& identity = cache.page(candidates[i].page).identity;
    storage_.read_page(candidates[i].page, block);
    std::optional<cache::PageHash> parent;
    if (identity.link == cache::ChainLink::Known) parent = identity.previous;
    const disk_cache::WriteOutcome outcome =
        store_->write(identity.hash, parent, static_cast<std::uint32_t>(cache.page_size()), block);
    switch (outcome.status) {
      case disk_cache::WriteStatus::Written:
        ++result.written;
        ++archived_pages_;
        break;
      case disk_cache::WriteStatus::AlreadyStored:
        ++result.already_stored;
        break;
      case disk_cache::WriteStatus::DiskFull:
        result.error = outcome.message;
        result.left_out += candidates.size() - i;
        return result;
      case disk_cache::WriteStatus::TooLarge:
      case disk_cache::WriteStatus::Failed:
        if (result.error.empty()) result.error = outcome.message;
        ++result.left_out;
        break;
    }
  }
  return result;
}

void DiskTier::flush() {
  writer_->flush();
}

std::uint64_t DiskTier::own_share(const disk_cache::ModelIdentity& model,
                                  std::uint64_t limit) const {
  // The model in use may take what other models' pages leave of the limit,
  // and at least half of it: older models give way first.
  const std::uint64_t others = trim_other_models(root_, model, limit / 2);
  return limit - std::min(others, limit);
}

void DiskTier::set_limit(std::uint64_t bytes) {
  store_->set_limit(own_share(store_->model(), bytes));
}

void DiskTier::clear() {
  writer_->flush();
  store_->clear();
  refused_.clear();
}

DiskTierStatus DiskTier::status() const {
  DiskTierStatus status;
  status.folder = store_->folder();
  status.limit_bytes = store_->limit();
  status.usage = store_->usage();
  status.writer = writer_->status();
  status.restored_pages = restored_pages_;
  status.failed_restores = failed_restores_;
  status.rejected_files = store_->rejected_files();
  status.archived_pages = archived_pages_;
  return status;
}

}  // namespace quire::engine
