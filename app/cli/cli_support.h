#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace quire::cli {

// Input the user got wrong: reported on one line, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "1,2,3" (commas and/or spaces) -> ids; throws UsageError naming the bad item.
std::vector<std::int32_t> parse_token_list(std::string_view text);

// 1536 -> "1.5 KiB", 3 << 20 -> "3.0 MiB"; bytes below 1 KiB as "812 B".
std::string human_bytes(std::int64_t bytes);

// The whole file at `path`, as bytes; a UsageError naming `option` (the
// command-line option that gave it) when it cannot be read.
std::string read_text_file(const std::string& path, std::string_view option);

}  // namespace quire::cli
