#pragma once

// quire-cli download and search: the Hugging Face Hub from the command line,
// into the cache Python's and JavaScript's tools share (app/hub).

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace quire::cli {

struct DownloadCommandRequest {
  std::string repo;                  // org/name
  std::string revision = "main";     // branch, tag or commit
  std::vector<std::string> include;  // globs; empty: every file
  std::vector<std::string> exclude;
  std::string cache_dir;  // empty: HF_HUB_CACHE, else $HF_HOME/hub
};

// Downloads the revision's files into the cache, progress and notes on
// `err`, the snapshot folder as the last line of `out`. Throws UsageError
// (one line) on any failure.
void run_download(const DownloadCommandRequest& request, std::ostream& out, std::ostream& err);

struct SearchCommandRequest {
  std::string query;
  int limit = 20;
  std::string sort = "downloads";
  std::vector<std::string> filters;
  bool json = false;
};

void run_search(const SearchCommandRequest& request, std::ostream& out);

void add_hub_commands(CLI::App& app, int& exit_code);

}  // namespace quire::cli
