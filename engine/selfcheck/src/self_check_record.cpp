#include "quire/engine/selfcheck/self_check_record.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace quire::engine::selfcheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Raised when the file's layout changes; a file of another format is
// ignored (and replaced), like a damaged one.
constexpr int kFormat = 1;

std::string device_entry(const kernels::DeviceInfo& device) {
  return device.architecture.empty() ? device.name : device.name + " (" + device.architecture + ")";
}

Json to_json(const SelfCheckRecord& record) {
  return Json{{"quire_version", record.key.quire_version},
              {"backend", record.key.backend},
              {"backend_version", record.key.backend_version},
              {"library", record.key.library},
              {"devices", record.key.devices},
              {"passed", record.passed},
              {"checked_at", record.checked_at},
              {"summary", record.summary}};
}

// Throws nlohmann's exceptions for a missing key or a value of another type.
SelfCheckRecord from_json(const Json& entry) {
  SelfCheckRecord record;
  record.key.quire_version = entry.at("quire_version").get<std::string>();
  record.key.backend = entry.at("backend").get<std::string>();
  record.key.backend_version = entry.at("backend_version").get<std::string>();
  record.key.library = entry.at("library").get<std::string>();
  record.key.devices = entry.at("devices").get<std::vector<std::string>>();
  record.passed = entry.at("passed").get<bool>();
  record.checked_at = entry.at("checked_at").get<std::string>();
  record.summary = entry.at("summary").get<std::string>();
  return record;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Written beside the target and renamed over it, so that a reader (another
// Quire starting at the same moment) sees the old file or the new one, never
// half of one.
void replace_file(const fs::path& path, const std::string& text) {
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  if (error) {
    throw std::runtime_error("cannot create " + path.parent_path().string() + ": " +
                             error.message());
  }
  const fs::path temporary = path.string() + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      fs::remove(temporary, error);
      throw std::runtime_error("cannot write " + temporary.string());
    }
  }
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    throw std::runtime_error("cannot replace " + path.string() + ": " + error.message());
  }
}

}  // namespace

SelfCheckKey key_for(const kernels::Backend& backend, std::string quire_version,
                     const fs::path& library) {
  SelfCheckKey key;
  key.quire_version = std::move(quire_version);
  key.backend = backend.name();
  key.backend_version = backend.version();
  key.library = library_identity(library);
  for (const kernels::DeviceInfo& device : backend.devices())
    key.devices.push_back(device_entry(device));
  return key;
}

std::string library_identity(const fs::path& library) {
  if (library.empty()) return {};
  std::error_code error;
  const fs::path absolute = fs::absolute(library, error);
  const std::string name = error ? library.string() : absolute.lexically_normal().string();
  const std::uintmax_t size = fs::file_size(library, error);
  if (error) return name;
  const fs::file_time_type modified = fs::last_write_time(library, error);
  if (error) return name;
  const auto ticks =
      std::chrono::duration_cast<std::chrono::nanoseconds>(modified.time_since_epoch()).count();
  return name + ", " + std::to_string(size) + " bytes, modified " + std::to_string(ticks);
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

SelfCheckStore::SelfCheckStore(fs::path folder, std::string backend)
    : folder_(std::move(folder)),
      record_file_(folder_ / (backend + "-self-check.json")),
      log_file_(folder_ / (backend + "-self-check.log")) {}

fs::path SelfCheckStore::default_folder() {
  // The XDG base directory rule: a relative XDG_CACHE_HOME is invalid and
  // ignored.
  if (const char* cache = std::getenv("XDG_CACHE_HOME");
      cache && *cache && fs::path(cache).is_absolute()) {
    return fs::path(cache) / "Quire";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return fs::path(home) / ".cache" / "Quire";
  }
  return fs::temp_directory_path() / "Quire";
}

std::vector<SelfCheckRecord> SelfCheckStore::read_all() const {
  std::vector<SelfCheckRecord> records;
  try {
    const Json document = Json::parse(read_text(record_file_));
    if (document.at("format").get<int>() != kFormat) return {};
    for (const Json& entry : document.at("checks"))
      records.push_back(from_json(entry));
  } catch (const Json::exception&) {
    return {};
  }
  return records;
}

std::optional<SelfCheckRecord> SelfCheckStore::find(const SelfCheckKey& key) const {
  for (SelfCheckRecord& record : read_all()) {
    if (record.key == key) return std::move(record);
  }
  return std::nullopt;
}

void SelfCheckStore::remember(const SelfCheckRecord& record) {
  Json checks = Json::array({to_json(record)});
  for (const SelfCheckRecord& older : read_all()) {
    if (checks.size() >= kKeptRecords) break;
    if (!(older.key == record.key)) checks.push_back(to_json(older));
  }
  replace_file(record_file_, Json{{"format", kFormat}, {"checks", checks}}.dump(2) + '\n');
}

void SelfCheckStore::append_log(const std::string& details) {
  std::string text = read_text(log_file_);
  if (!text.empty()) text += '\n';
  text += "== " + utc_now() + '\n' + details;
  if (text.size() > kLogLimitBytes) {
    // Whole entries only, newest kept.
    const std::size_t cut = text.find("\n== ", text.size() - kLogLimitBytes);
    text =
        cut == std::string::npos ? text.substr(text.size() - kLogLimitBytes) : text.substr(cut + 1);
  }
  replace_file(log_file_, text);
}

}  // namespace quire::engine::selfcheck
