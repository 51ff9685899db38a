#include "page_hashes_command.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "quire/cache/page_hash.h"

namespace quire::cli {

int run_page_hashes(const PageHashesOptions& options, std::istream& in, std::ostream& out,
                    std::ostream& err) {
  if (options.page_size <= 0) {
    err << "quire-cli page-hashes: --page-size must be positive\n";
    return 2;
  }
  std::vector<cache::TokenId> tokens;
  std::string word;
  while (in >> word) {
    std::int64_t value = 0;
    const char* end = word.data() + word.size();
    const auto [stop, error] = std::from_chars(word.data(), end, value);
    if (error != std::errc() || stop != end || value < 0 ||
        value > std::numeric_limits<cache::TokenId>::max()) {
      err << "quire-cli page-hashes: input word " << tokens.size() + 1 << " (\"" << word
          << "\") is not a token id; expected whitespace-separated integers from 0 to "
          << std::numeric_limits<cache::TokenId>::max() << '\n';
      return 2;
    }
    tokens.push_back(static_cast<cache::TokenId>(value));
  }
  const std::vector<cache::PageHash> hashes = cache::hash_full_pages(tokens, options.page_size);
  for (std::size_t i = 0; i < hashes.size(); ++i)
    out << i << ' ' << hashes[i].hex() << '\n';
  return 0;
}

void add_page_hashes_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<PageHashesOptions>();
  CLI::App* command = app.add_subcommand(
      "page-hashes",
      "Read token ids from standard input and print the chained hash of every full page");
  command->add_option("--page-size", options->page_size, "Tokens per page")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->callback([options, &exit_code] {
    exit_code = run_page_hashes(*options, std::cin, std::cout, std::cerr);
  });
}

}  // namespace quire::cli
