// Feeds arbitrary bytes to the readers of what the Hugging Face Hub answers:
// model lists, repository info, refs and trees (JSON), the Link, ETag,
// Retry-After and Content-Range headers, the cache layout's checks of the
// names the Hub gives, the quantizations a file list holds, and the byte
// ranges a safetensors header asks the header probe to fetch. HubProtocolError (a message naming
// the problem) is the expected answer to bad input; a crash, a hang, another exception, a path
// accepted with "..", or a sanitizer report is a bug.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "quire/hub/described_ranges.h"
#include "quire/hub/hub_cache.h"
#include "quire/hub/hub_error.h"
#include "quire/hub/hub_headers.h"
#include "quire/hub/hub_models.h"
#include "quire/hub/repo_quantizations.h"

namespace {

template <typename Read>
void expect_answer_or_error(Read read) {
  try {
    read();
  } catch (const quire::hub::HubProtocolError& error) {
    if (std::string_view(error.what()).empty()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quire::hub;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  expect_answer_or_error([&] { parse_model_list(bytes); });
  expect_answer_or_error([&] {
    const ModelInfo info = parse_model_info(bytes);
    const HubCache cache("/cache");
    for (const RepoFile& file : info.files) {
      // Whatever the cache accepts stays below the snapshot folder.
      expect_answer_or_error([&] {
        const auto path = checked_repo_path(file.path);
        for (const auto& part : path)
          if (part == ".." || part == "." || part.empty()) __builtin_trap();
        if (path.is_absolute()) __builtin_trap();
      });
      expect_answer_or_error([&] { cache.blob_path("org/model", file.etag()); });
    }
    // Every file belongs to at most one quantization, inside its folder.
    std::size_t owned = 0;
    for (const Quantization& quantization : quantizations_in("main", info)) {
      owned += quantization.files.size();
      for (const RepoFile& file : quantization.files)
        if (!quantization.subfolder.empty() && !file.path.starts_with(quantization.subfolder + "/"))
          __builtin_trap();
    }
    if (owned > info.files.size()) __builtin_trap();
  });
  expect_answer_or_error([&] {
    // Sorted, apart and inside the data area.
    std::int64_t previous = -1;
    for (const ByteRange& range : described_data_ranges(bytes, 1000)) {
      if (range.first < 1000 || range.last < range.first || range.first <= previous)
        __builtin_trap();
      previous = range.last;
    }
  });
  expect_answer_or_error([&] { parse_refs(bytes); });
  expect_answer_or_error([&] { parse_tree(bytes); });
  error_message_of(bytes);

  const std::string text(bytes);
  next_page_url(text);
  normalize_etag(text);
  retry_after_seconds(text, 1'700'000'000);
  if (const auto range = parse_content_range(text))
    if (range->last < range->first || (range->total >= 0 && range->total <= range->last))
      __builtin_trap();
  if (is_valid_repo_id(text) && text.find("..") != std::string::npos) __builtin_trap();
  return 0;
}
