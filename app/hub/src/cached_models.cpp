#include "quire/hub/cached_models.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "quire/hub/hub_cache.h"

namespace quire::hub {
namespace fs = std::filesystem;
namespace {

// How far below a snapshot (or Quire's models folder) model folders are
// looked for: "4.0bpw/config.json", "exl3/4.0bpw/config.json".
constexpr int kModelDepth = 2;
// How deep a model folder's own files are summed; deeper trees are no model's.
constexpr int kFileDepth = 16;

// How links are treated while walking: in the Hub cache they must stay
// inside it and folders that are links are not entered; in a folder of the
// user's own, links are followed wherever they lead.
struct WalkRules {
  const HubCache* cache = nullptr;  // links must stay inside this cache
  bool enter_linked_folders = false;
};

// What an entry is once its links are followed, or nullopt when it is to be
// left alone (a link out of the cache, a broken link, an unreadable entry).
std::optional<fs::file_status> followed_status(const fs::directory_entry& entry,
                                               const WalkRules& rules) {
  std::error_code error;
  const fs::file_status own = entry.symlink_status(error);
  if (error) return std::nullopt;
  if (!fs::is_symlink(own)) return own;
  if (rules.cache != nullptr && !rules.cache->stays_inside(entry.path())) return std::nullopt;
  const fs::file_status target = fs::status(entry.path(), error);
  if (error || !fs::exists(target)) return std::nullopt;
  if (fs::is_directory(target) && !rules.enter_linked_folders) return std::nullopt;
  return target;
}

bool holds_config(const fs::path& folder, const WalkRules& rules) {
  std::error_code error;
  const fs::directory_entry config(folder / "config.json", error);
  if (error) return false;
  const std::optional<fs::file_status> status = followed_status(config, rules);
  return status && fs::is_regular_file(*status);
}

std::string relative_name(const fs::path& folder, const fs::path& top) {
  return folder.lexically_relative(top).generic_string();
}

// The model folders at `top` and up to kModelDepth levels below it. Hidden
// folders (.git, .cache) hold no models.
void find_model_folders(const fs::path& folder, int depth, const WalkRules& rules,
                        std::vector<fs::path>& found) {
  if (holds_config(folder, rules)) found.push_back(folder);
  if (depth == kModelDepth) return;
  std::error_code error;
  std::vector<fs::path> children;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    if (it->path().filename().string().starts_with('.')) continue;
    const std::optional<fs::file_status> status = followed_status(*it, rules);
    if (status && fs::is_directory(*status)) children.push_back(it->path());
  }
  std::sort(children.begin(), children.end());
  for (const fs::path& child : children)
    find_model_folders(child, depth + 1, rules, found);
}

// Sums one model folder's files into `model`: each file (a blob, for links
// into the cache's blobs) once, however many names lead to it, and not the
// files of `skip`, the model folders below it that are listed on their own.
class FolderTotal {
 public:
  FolderTotal(const WalkRules& rules, const std::set<fs::path>& skip)
      : rules_(rules), skip_(skip) {}

  // The newest file's time, nullopt before any file.
  std::optional<fs::file_time_type> newest() const { return newest_; }

  void add(const fs::path& folder, int depth, CachedModel& model) {
    std::error_code error;
    const fs::path real = fs::canonical(folder, error);
    if (error || !seen_folders_.insert(real).second) return;  // a loop of links
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
      const std::optional<fs::file_status> status = followed_status(*it, rules_);
      if (!status) continue;
      if (fs::is_directory(*status)) {
        if (depth < kFileDepth && !skip_.contains(it->path())) add(it->path(), depth + 1, model);
        continue;
      }
      if (!fs::is_regular_file(*status)) continue;
      std::error_code file_error;
      const fs::path file = fs::canonical(it->path(), file_error);
      if (file_error || !seen_files_.insert(file).second) continue;
      const std::uintmax_t size = fs::file_size(file, file_error);
      if (file_error) continue;
      model.bytes += static_cast<std::int64_t>(size);
      const fs::file_time_type time = fs::last_write_time(file, file_error);
      // file_time_type{} is no "never" to compare with: libstdc++'s file
      // clock counts from 2174.
      if (!file_error) newest_ = newest_ ? std::max(*newest_, time) : time;
    }
  }

 private:
  const WalkRules& rules_;
  const std::set<fs::path>& skip_;
  std::optional<fs::file_time_type> newest_;
  std::set<fs::path> seen_files_;
  std::set<fs::path> seen_folders_;
};

// One CachedModel per model folder under `top`, with its subfolder name,
// size and time filled in.
std::vector<CachedModel> models_under(const fs::path& top, const WalkRules& rules) {
  std::vector<fs::path> folders;
  find_model_folders(top, 0, rules, folders);
  const std::set<fs::path> listed(folders.begin(), folders.end());
  std::vector<CachedModel> models;
  for (const fs::path& folder : folders) {
    CachedModel model;
    model.folder = folder;
    model.subfolder = folder == top ? std::string() : relative_name(folder, top);
    std::set<fs::path> skip = listed;
    skip.erase(folder);
    FolderTotal total(rules, skip);
    total.add(folder, 0, model);
    std::error_code error;
    model.modified = total.newest().value_or(fs::last_write_time(folder, error));
    models.push_back(std::move(model));
  }
  return models;
}

// "models--org--name" -> "org/name"; "" for anything else (datasets--,
// spaces--, the Hub's old single-name models).
std::string repo_of_folder(const std::string& name) {
  constexpr std::string_view prefix = "models--";
  if (!name.starts_with(prefix)) return {};
  const std::string rest = name.substr(prefix.size());
  const std::size_t separator = rest.find("--");
  if (separator == std::string::npos) return {};
  std::string repo = rest.substr(0, separator) + "/" + rest.substr(separator + 2);
  return is_valid_repo_id(repo) ? repo : std::string();
}

bool is_real_folder(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(fs::symlink_status(path, error));
}

// refs/<name> (refs/refs/pr/1 for pull requests) by the commit each names.
std::map<std::string, std::vector<std::string>> refs_by_commit(const fs::path& refs) {
  std::map<std::string, std::vector<std::string>> found;
  if (!is_real_folder(refs)) return found;
  std::error_code error;
  for (fs::recursive_directory_iterator it(refs, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code status_error;
    if (!fs::is_regular_file(it->symlink_status(status_error))) continue;
    std::ifstream file(it->path(), std::ios::binary);
    std::ostringstream text;
    text << file.rdbuf();
    std::string commit = text.str();
    while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back())))
      commit.pop_back();
    if (is_commit_hash(commit)) found[commit].push_back(relative_name(it->path(), refs));
  }
  for (auto& [commit, names] : found)
    std::sort(names.begin(), names.end());
  return found;
}

void list_repo(const fs::path& repo_folder, const std::string& repo, const HubCache& cache,
               std::vector<CachedModel>& models) {
  const fs::path snapshots = repo_folder / "snapshots";
  if (!is_real_folder(snapshots)) return;
  const auto refs = refs_by_commit(repo_folder / "refs");
  const WalkRules rules{&cache, false};
  std::error_code error;
  for (fs::directory_iterator it(snapshots, error), end; !error && it != end; it.increment(error)) {
    const std::string commit = it->path().filename().string();
    if (!is_commit_hash(commit) || !is_real_folder(it->path())) continue;
    for (CachedModel& model : models_under(it->path(), rules)) {
      model.repo = repo;
      model.commit = commit;
      if (const auto named = refs.find(commit); named != refs.end()) model.refs = named->second;
      models.push_back(std::move(model));
    }
  }
}

}  // namespace

std::vector<CachedModel> list_cached_models(const fs::path& cache_root) {
  std::vector<CachedModel> models;
  const HubCache cache(cache_root);
  std::error_code error;
  for (fs::directory_iterator it(cache_root, error), end; !error && it != end;
       it.increment(error)) {
    const std::string repo = repo_of_folder(it->path().filename().string());
    if (!repo.empty() && is_real_folder(it->path())) list_repo(it->path(), repo, cache, models);
  }
  // Named snapshots first, by their refs; then the rest by commit; the
  // subfolders of one snapshot together, in name order.
  std::sort(models.begin(), models.end(), [](const CachedModel& a, const CachedModel& b) {
    if (a.repo != b.repo) return a.repo < b.repo;
    if (a.refs.empty() != b.refs.empty()) return !a.refs.empty();
    if (a.refs != b.refs) return a.refs < b.refs;
    if (a.commit != b.commit) return a.commit < b.commit;
    return a.subfolder < b.subfolder;
  });
  return models;
}

std::vector<CachedModel> list_model_folders(const fs::path& root) {
  std::error_code error;
  if (!fs::is_directory(root, error)) return {};
  std::vector<CachedModel> models = models_under(root, WalkRules{nullptr, true});
  std::sort(models.begin(), models.end(),
            [](const CachedModel& a, const CachedModel& b) { return a.folder < b.folder; });
  return models;
}

}  // namespace quire::hub
