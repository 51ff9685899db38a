#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quire/cache/page_hash.h"
#include "quire/engine/disk_cache/model_identity.h"
#include "quire/engine/disk_cache/page_coding.h"

// One page of K/V on disk. All numbers little-endian; docs/disk-cache.md has
// the same table.
//
//   offset  size  field
//        0     8  magic "QUIREKV\x1a"
//        8     4  version (1)
//       12    16  model identity
//       28    16  page hash
//       44    16  parent page hash (zeros when there is none)
//       60     1  1 when the page has a parent (it is not a sequence's first), else 0
//       61     1  key coding   (cache::ElementCoding)
//       62     1  value coding (cache::ElementCoding)
//       63     1  0 (reserved)
//       64     4  producer (PageCoding::producer)
//       68     4  page size in tokens
//       72     4  tokens in the page (1..page size)
//       76     4  layer count L (1..kMaxLayers)
//       80  32*L  per layer: bytes of key data, key scales, value data, value
//                 scales in one page (u64 each)
//        H     P  per layer, its planes' bytes in that order (absent planes
//                 take no room): H = 80 + 32*L, P = the sum of the sizes
//      H+P    32  blake2b-256 of every byte before it
namespace quire::engine::disk_cache {

inline constexpr std::uint32_t kPageFileVersion = 1;
inline constexpr std::size_t kPageFileFixedHeader = 80;
inline constexpr std::size_t kPageFileLayerEntry = 32;
inline constexpr std::size_t kPageFileChecksum = 32;
inline constexpr std::uint32_t kPageFileMaxLayers = 4096;
// A bound on one plane of one page, so sizes from a hostile file cannot
// overflow or ask for absurd memory (a 256-token FP16 page of a layer with
// 128 KV heads of 512 dims is 32 MiB).
inline constexpr std::uint64_t kPageFileMaxPlane = std::uint64_t{1} << 32;

// Why a page file was refused. Every reader reports exactly one.
enum class PageFileProblem : std::uint8_t {
  Truncated,         // shorter than its header says (or than a header)
  BadMagic,          // not a Quire page file
  OtherVersion,      // written by another version of the format
  Malformed,         // fields that contradict each other, or bytes past the end
  ChecksumMismatch,  // the bytes changed after they were written
  OtherModel,        // intact, but for another model
  OtherCoding,       // intact, but for another cache coding
  OtherPage,         // intact, but holds another page than its name says
};

const char* to_string(PageFileProblem problem);

// What a page file says about itself, taken from its header.
struct PageFileHeader {
  std::uint32_t version = 0;
  ModelIdentity model;
  cache::PageHash hash;
  std::optional<cache::PageHash> parent;
  PageCoding coding;
  std::uint32_t token_count = 0;

  // Header bytes (fixed part and layer table), payload bytes, whole file.
  std::uint64_t header_bytes() const;
  std::uint64_t payload_bytes() const;
  std::uint64_t file_bytes() const;
};

// What a page file should be: read() refuses anything else.
struct PageExpectation {
  ModelIdentity model;
  const PageCoding* coding = nullptr;
  cache::PageHash hash;
};

// The outcome of parsing: a header, or the problem and a sentence about it.
struct PageFileCheck {
  std::optional<PageFileProblem> problem;
  std::string detail;  // empty when there is no problem

  explicit operator bool() const { return !problem.has_value(); }
};

// The bytes of a page file for this page. `payload` holds the page's planes,
// layer by layer, as the header table lists them; its size must be
// coding.page_bytes() (std::invalid_argument otherwise).
std::vector<std::byte> encode_page_file(const ModelIdentity& model, const PageCoding& coding,
                                        const cache::PageHash& hash,
                                        const std::optional<cache::PageHash>& parent,
                                        std::uint32_t token_count,
                                        std::span<const std::byte> payload);

// Parses the header at the start of a file of `file_size` bytes. `prefix`
// holds the file's first bytes (at least kPageFileFixedHeader, or the whole
// file if shorter; then the layer table too, when the fixed part has been
// read: layer_table_bytes() says how much). Checks sizes, magic, version and
// the consistency of the fields, not the checksum.
PageFileCheck parse_page_header(std::span<const std::byte> prefix, std::uint64_t file_size,
                                PageFileHeader& header);

// Bytes of the whole header given the fixed part (0 when the fixed part is
// too short or the layer count is out of range).
std::uint64_t page_header_bytes(std::span<const std::byte> fixed_part);

// Compares an intact file's header with what was asked for: OtherModel,
// OtherCoding or OtherPage, in that order, with both values in the detail.
PageFileCheck compare_with_expectation(const PageFileHeader& header,
                                       const PageExpectation& expected);

// A whole page file in memory, checked in full: header, checksum, then the
// expectation. On success `payload` views the page's bytes inside `file`.
PageFileCheck decode_page_file(std::span<const std::byte> file, const PageExpectation& expected,
                               PageFileHeader& header, std::span<const std::byte>& payload);

// blake2b-256 of `bytes`, the page file's checksum, incrementally.
class PageChecksum {
 public:
  PageChecksum();
  ~PageChecksum();
  PageChecksum(const PageChecksum&) = delete;
  PageChecksum& operator=(const PageChecksum&) = delete;

  void update(std::span<const std::byte> bytes);
  std::array<std::uint8_t, kPageFileChecksum> finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace quire::engine::disk_cache
