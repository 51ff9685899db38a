#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace quire::cli {

struct PageHashesOptions {
  int page_size = 256;
};

// Reads whitespace-separated token ids from `in` and writes, for every full
// page, "<page index> <32 hex digits>". Returns the process exit code; errors
// go to `err`.
int run_page_hashes(const PageHashesOptions& options, std::istream& in, std::ostream& out,
                    std::ostream& err);

void add_page_hashes_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
