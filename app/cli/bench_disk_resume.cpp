#include "bench_disk_resume.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "bench_generate.h"
#include "bench_hardware.h"
#include "cli_support.h"
#include "generation_options.h"
#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::int32_t> resume_prompt(int count, int vocab, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(count));
  for (std::int32_t& token : tokens)
    token = static_cast<std::int32_t>(3 + rng() % static_cast<std::uint32_t>(vocab - 3));
  return tokens;
}

double seconds_of(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// A run's own folder under the base, removed however the run ends.
class RunFolder {
 public:
  RunFolder(const fs::path& base, int run)
      : path_(base /
              ("quire-disk-resume-" + std::to_string(::getpid()) + "-" + std::to_string(run))) {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ~RunFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct ResumeRun {
  double cold_s = 0, warm_s = 0, disk_s = 0;
  double archive_s = 0, open_s = 0;
  std::int64_t computed_tokens = 0;     // cold
  std::int64_t warm_cached_tokens = 0;  // warm
  std::int64_t disk_cached_tokens = 0;  // from disk: every cached token
  std::int64_t disk_tokens = 0;         // of those, read from disk
  std::uint64_t archived_pages = 0;
  std::uint64_t restored_pages = 0;
  std::uint64_t page_file_bytes = 0;
  bool same_first_token = false;
};

ResumeRun run_once(const DiskResumeWorkload& workload, const EngineOptions& engine,
                   const std::vector<std::int32_t>& prompt, const fs::path& folder) {
  ResumeRun run;
  engine::DiskTierOptions tier;
  tier.root = folder;
  std::int32_t computed_token = -1;
  {
    LoadedSession first = load_session(workload.directory, engine, engine.context, 1);
    const engine::JobResult cold = bench_generate(first, prompt, 1);
    const engine::JobResult warm = bench_generate(first, prompt, 1);
    run.cold_s = cold.statistics.time_to_first_token;
    run.computed_tokens = cold.statistics.computed_tokens;
    run.warm_s = warm.statistics.time_to_first_token;
    run.warm_cached_tokens = warm.statistics.cached_tokens;
    computed_token = cold.tokens.empty() ? -1 : cold.tokens.front();
    // What a quit does: the cache's pages to disk.
    first.runtime->open_disk_tier(tier);
    const auto start = std::chrono::steady_clock::now();
    run.archived_pages = first.runtime->archive_cache().written;
    run.archive_s = seconds_of(start);
  }  // the first runtime is gone, as after a restart
  LoadedSession second = load_session(workload.directory, engine, engine.context, 1);
  const auto start = std::chrono::steady_clock::now();
  const engine::DiskTier& disk = second.runtime->open_disk_tier(tier);
  run.open_s = seconds_of(start);
  const engine::JobResult resumed = bench_generate(second, prompt, 1);
  run.disk_s = resumed.statistics.time_to_first_token;
  run.disk_cached_tokens = resumed.statistics.cached_tokens;
  run.disk_tokens = resumed.statistics.disk_tokens;
  const engine::DiskTierStatus status = disk.status();
  run.restored_pages = status.restored_pages;
  run.page_file_bytes = status.usage.pages > 0 ? status.usage.bytes / status.usage.pages : 0;
  run.same_first_token = !resumed.tokens.empty() && resumed.tokens.front() == computed_token;
  return run;
}

}  // namespace

nlohmann::ordered_json measure_disk_resume(const DiskResumeWorkload& workload) {
  EngineOptions engine = workload.engine;
  // The prompt and the token after it, in whole pages.
  const std::int64_t page = engine::RuntimeOptions{}.page_size;
  const std::int64_t needed = (std::int64_t{workload.tokens} + page) / page * page;
  if (engine.context == 0) engine.context = needed;
  if (engine.context < needed) {
    throw UsageError("--resume-tokens " + std::to_string(workload.tokens) + " needs --context " +
                     std::to_string(needed) + " or more (or no --context)");
  }
  const engine::ModelDescription model = engine::ModelDescription::open(workload.directory);
  const std::int64_t positions = model.config.max_position_embeddings;
  if (positions > 0 && workload.tokens + 1 > positions) {
    throw UsageError("--resume-tokens " + std::to_string(workload.tokens) + ": the model holds " +
                     std::to_string(positions) + " positions; give at most " +
                     std::to_string(positions - 1));
  }
  const int vocab = static_cast<int>(model.config.vocab_size);
  const fs::path base =
      workload.folder.empty() ? fs::temp_directory_path() : fs::path(workload.folder);

  std::vector<ResumeRun> runs;
  for (int index = 0; index < workload.repeats; ++index) {
    const RunFolder folder(base, index);
    const std::vector<std::int32_t> prompt =
        resume_prompt(workload.tokens, vocab, 4001 + 7919 * static_cast<std::uint32_t>(index));
    runs.push_back(run_once(workload, engine, prompt, folder.path()));
    const ResumeRun& run = runs.back();
    std::fprintf(stderr,
                 "bench: resume %d tokens, run %d: cold %.3f s, warm %.3f s, from disk %.3f s "
                 "(%lld tokens from disk)\n",
                 workload.tokens, index + 1, run.cold_s, run.warm_s, run.disk_s,
                 static_cast<long long>(run.disk_tokens));
  }

  std::vector<double> cold, warm, disk, archive, open;
  bool same = true;
  for (const ResumeRun& run : runs) {
    cold.push_back(run.cold_s);
    warm.push_back(run.warm_s);
    disk.push_back(run.disk_s);
    archive.push_back(run.archive_s);
    open.push_back(run.open_s);
    same = same && run.same_first_token;
  }
  const ResumeRun& last = runs.back();
  nlohmann::ordered_json out;
  out["model"] = workload.directory;
  out["parameters"] = model.parameters;
  out["cache_format"] = engine.cache;
  out["devices"] = engine.devices;
  out["cpu"] = cpu_name();
  out["hardware_threads"] = std::thread::hardware_concurrency();
  out["disk_folder"] = base.string();
  const double cold_s = median_of(cold), warm_s = median_of(warm), disk_s = median_of(disk);
  out["resume"] = {{"prompt_tokens", workload.tokens},
                   {"runs", workload.repeats},
                   {"cold_ttft_s", cold_s},
                   {"warm_ttft_s", warm_s},
                   {"disk_ttft_s", disk_s},
                   {"runs_cold_ttft_s", cold},
                   {"runs_warm_ttft_s", warm},
                   {"runs_disk_ttft_s", disk},
                   {"cold_computed_tokens", last.computed_tokens},
                   {"warm_cached_tokens", last.warm_cached_tokens},
                   {"disk_cached_tokens", last.disk_cached_tokens},
                   {"disk_tokens", last.disk_tokens},
                   {"archived_pages", last.archived_pages},
                   {"restored_pages", last.restored_pages},
                   {"page_file_bytes", last.page_file_bytes},
                   {"disk_bytes_read", last.restored_pages * last.page_file_bytes},
                   {"archive_s", median_of(archive)},
                   {"open_s", median_of(open)},
                   {"disk_vs_warm", warm_s > 0 ? disk_s / warm_s : 0.0},
                   {"cold_vs_disk", disk_s > 0 ? cold_s / disk_s : 0.0},
                   {"same_first_token", same}};
  return out;
}

void print_disk_resume(const nlohmann::ordered_json& result) {
  const nlohmann::ordered_json& r = result["resume"];
  std::printf("%s: reopening a chat of %d tokens after a restart (%s cache on %s, median of %d)\n",
              result["model"].get<std::string>().c_str(), r["prompt_tokens"].get<int>(),
              result["cache_format"].get<std::string>().c_str(),
              result["devices"].get<std::string>().c_str(), r["runs"].get<int>());
  std::printf("computed, cold cache       %8.3f s to the first token (%lld tokens computed)\n",
              r["cold_ttft_s"].get<double>(), r["cold_computed_tokens"].get<long long>());
  std::printf("warm, device cache         %8.3f s (%lld tokens cached)\n",
              r["warm_ttft_s"].get<double>(), r["warm_cached_tokens"].get<long long>());
  std::printf(
      "from disk, new runtime     %8.3f s (%lld tokens from disk, %llu %s, %s read; "
      "%.1fx the warm time, %.1fx faster than computing)\n",
      r["disk_ttft_s"].get<double>(), r["disk_tokens"].get<long long>(),
      r["restored_pages"].get<unsigned long long>(),
      r["restored_pages"].get<unsigned long long>() == 1 ? "page" : "pages",
      human_bytes(r["disk_bytes_read"].get<std::int64_t>()).c_str(),
      r["disk_vs_warm"].get<double>(), r["cold_vs_disk"].get<double>());
  std::printf("archive                    %8.3f s (%llu %s written); opening the tier %.3f s\n",
              r["archive_s"].get<double>(), r["archived_pages"].get<unsigned long long>(),
              r["archived_pages"].get<unsigned long long>() == 1 ? "page" : "pages",
              r["open_s"].get<double>());
  if (!r["same_first_token"].get<bool>())
    std::printf("warning: the first token from disk differs from the computed one\n");
}

}  // namespace quire::cli
