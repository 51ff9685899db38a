#include "quire/engine/disk_cache/page_file.h"

#include <blake2.h>

#include <cstring>
#include <stdexcept>

namespace quire::engine::disk_cache {
namespace {

constexpr std::uint8_t kMagic[8] = {'Q', 'U', 'I', 'R', 'E', 'K', 'V', 0x1a};

// Field offsets, as the table in page_file.h lists them.
constexpr std::size_t kVersionAt = 8;
constexpr std::size_t kModelAt = 12;
constexpr std::size_t kHashAt = 28;
constexpr std::size_t kParentAt = 44;
constexpr std::size_t kHasParentAt = 60;
constexpr std::size_t kKeyCodingAt = 61;
constexpr std::size_t kValueCodingAt = 62;
constexpr std::size_t kReservedAt = 63;
constexpr std::size_t kProducerAt = 64;
constexpr std::size_t kPageSizeAt = 68;
constexpr std::size_t kTokenCountAt = 72;
constexpr std::size_t kLayerCountAt = 76;

std::uint64_t load_le(const std::byte* at, int size) {
  std::uint64_t value = 0;
  for (int i = 0; i < size; ++i)
    value |= std::uint64_t(std::to_integer<std::uint8_t>(at[i])) << (8 * i);
  return value;
}

void store_le(std::byte* at, std::uint64_t value, int size) {
  for (int i = 0; i < size; ++i)
    at[i] = static_cast<std::byte>(value >> (8 * i));
}

template <std::size_t N>
void load_bytes(const std::byte* at, std::array<std::uint8_t, N>& out) {
  std::memcpy(out.data(), at, N);
}

PageFileCheck problem(PageFileProblem kind, std::string detail) {
  return PageFileCheck{kind, std::move(detail)};
}

std::string hex_of(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (const std::uint8_t b : bytes) {
    text.push_back(kDigits[b >> 4]);
    text.push_back(kDigits[b & 15]);
  }
  return text;
}

bool valid_coding(std::uint8_t value) {
  return value <= static_cast<std::uint8_t>(cache::ElementCoding::Q4);
}

}  // namespace

const char* to_string(PageFileProblem problem) {
  switch (problem) {
    case PageFileProblem::Truncated:
      return "truncated";
    case PageFileProblem::BadMagic:
      return "not a page file";
    case PageFileProblem::OtherVersion:
      return "another format version";
    case PageFileProblem::Malformed:
      return "malformed";
    case PageFileProblem::ChecksumMismatch:
      return "checksum mismatch";
    case PageFileProblem::OtherModel:
      return "another model";
    case PageFileProblem::OtherCoding:
      return "another cache coding";
    case PageFileProblem::OtherPage:
      return "another page";
  }
  return "unknown";
}

std::uint64_t PageFileHeader::header_bytes() const {
  return kPageFileFixedHeader + kPageFileLayerEntry * coding.layers.size();
}

std::uint64_t PageFileHeader::payload_bytes() const {
  return static_cast<std::uint64_t>(coding.page_bytes());
}

std::uint64_t PageFileHeader::file_bytes() const {
  return header_bytes() + payload_bytes() + kPageFileChecksum;
}

struct PageChecksum::State {
  blake2b_state blake{};
};

PageChecksum::PageChecksum() : state_(std::make_unique<State>()) {
  if (blake2b_init(&state_->blake, kPageFileChecksum) != 0)
    throw std::runtime_error("blake2b_init failed");
}

PageChecksum::~PageChecksum() = default;

void PageChecksum::update(std::span<const std::byte> bytes) {
  if (!bytes.empty())
    blake2b_update(&state_->blake, reinterpret_cast<const std::uint8_t*>(bytes.data()),
                   bytes.size());
}

std::array<std::uint8_t, kPageFileChecksum> PageChecksum::finish() {
  std::array<std::uint8_t, kPageFileChecksum> digest{};
  if (blake2b_final(&state_->blake, digest.data(), digest.size()) != 0)
    throw std::runtime_error("blake2b_final failed");
  return digest;
}

std::vector<std::byte> encode_page_file(const ModelIdentity& model, const PageCoding& coding,
                                        const cache::PageHash& hash,
                                        const std::optional<cache::PageHash>& parent,
                                        std::uint32_t token_count,
                                        std::span<const std::byte> payload) {
  coding.check();
  if (payload.size() != static_cast<std::uint64_t>(coding.page_bytes()))
    throw std::invalid_argument("page file: the payload holds " + std::to_string(payload.size()) +
                                " bytes, the coding needs " + std::to_string(coding.page_bytes()));
  if (token_count == 0 || token_count > static_cast<std::uint32_t>(coding.page_size))
    throw std::invalid_argument("page file: " + std::to_string(token_count) +
                                " tokens do not fit a page of " + std::to_string(coding.page_size));
  if (coding.layers.size() > kPageFileMaxLayers)
    throw std::invalid_argument("page file: more than " + std::to_string(kPageFileMaxLayers) +
                                " layers");
  const std::size_t header = kPageFileFixedHeader + kPageFileLayerEntry * coding.layers.size();
  std::vector<std::byte> file(header + payload.size() + kPageFileChecksum);
  std::byte* at = file.data();
  std::memcpy(at, kMagic, sizeof kMagic);
  store_le(at + kVersionAt, kPageFileVersion, 4);
  std::memcpy(at + kModelAt, model.bytes.data(), 16);
  std::memcpy(at + kHashAt, hash.bytes.data(), 16);
  if (parent) std::memcpy(at + kParentAt, parent->bytes.data(), 16);
  store_le(at + kHasParentAt, parent ? 1 : 0, 1);
  store_le(at + kKeyCodingAt, static_cast<std::uint8_t>(coding.format.key), 1);
  store_le(at + kValueCodingAt, static_cast<std::uint8_t>(coding.format.value), 1);
  store_le(at + kProducerAt, coding.producer, 4);
  store_le(at + kPageSizeAt, static_cast<std::uint32_t>(coding.page_size), 4);
  store_le(at + kTokenCountAt, token_count, 4);
  store_le(at + kLayerCountAt, coding.layers.size(), 4);
  std::byte* entry = at + kPageFileFixedHeader;
  for (const cache::PageBytes& layer : coding.layers) {
    store_le(entry, static_cast<std::uint64_t>(layer.key_data), 8);
    store_le(entry + 8, static_cast<std::uint64_t>(layer.key_scales), 8);
    store_le(entry + 16, static_cast<std::uint64_t>(layer.value_data), 8);
    store_le(entry + 24, static_cast<std::uint64_t>(layer.value_scales), 8);
    entry += kPageFileLayerEntry;
  }
  if (!payload.empty()) std::memcpy(at + header, payload.data(), payload.size());
  PageChecksum checksum;
  checksum.update(std::span(file).first(header + payload.size()));
  const auto digest = checksum.finish();
  std::memcpy(at + header + payload.size(), digest.data(), digest.size());
  return file;
}

std::uint64_t page_header_bytes(std::span<const std::byte> fixed_part) {
  if (fixed_part.size() < kPageFileFixedHeader) return 0;
  const std::uint64_t layers = load_le(fixed_part.data() + kLayerCountAt, 4);
  if (layers == 0 || layers > kPageFileMaxLayers) return 0;
  return kPageFileFixedHeader + kPageFileLayerEntry * layers;
}

PageFileCheck parse_page_header(std::span<const std::byte> prefix, std::uint64_t file_size,
                                PageFileHeader& header) {
  const std::string size_text = std::to_string(file_size) + " bytes";
  if (prefix.size() < sizeof kMagic || std::memcmp(prefix.data(), kMagic, sizeof kMagic) != 0) {
    if (file_size < sizeof kMagic)
      return problem(PageFileProblem::Truncated,
                     "the file holds " + size_text + ", less than a page file's header");
    return problem(PageFileProblem::BadMagic, "the file does not start as a Quire page file");
  }
  if (prefix.size() < kVersionAt + 4 || file_size < kPageFileFixedHeader)
    return problem(PageFileProblem::Truncated,
                   "the file holds " + size_text + ", less than a page file's header");
  header.version = static_cast<std::uint32_t>(load_le(prefix.data() + kVersionAt, 4));
  if (header.version != kPageFileVersion)
    return problem(PageFileProblem::OtherVersion,
                   "format version " + std::to_string(header.version) + ", this Quire reads " +
                       std::to_string(kPageFileVersion));
  if (prefix.size() < kPageFileFixedHeader)
    return problem(PageFileProblem::Truncated, "the header was not given in full");
  const std::byte* at = prefix.data();
  const std::uint64_t layers = load_le(at + kLayerCountAt, 4);
  if (layers == 0 || layers > kPageFileMaxLayers)
    return problem(PageFileProblem::Malformed,
                   "the header counts " + std::to_string(layers) + " layers");
  const std::uint64_t header_bytes = kPageFileFixedHeader + kPageFileLayerEntry * layers;
  if (file_size < header_bytes)
    return problem(
        PageFileProblem::Truncated,
        "the file holds " + size_text + ", its header alone needs " + std::to_string(header_bytes));
  if (prefix.size() < header_bytes)
    return problem(PageFileProblem::Truncated, "the layer table was not given in full");

  load_bytes(at + kModelAt, header.model.bytes);
  load_bytes(at + kHashAt, header.hash.bytes);
  const std::uint64_t has_parent = load_le(at + kHasParentAt, 1);
  cache::PageHash parent;
  load_bytes(at + kParentAt, parent.bytes);
  const auto key = static_cast<std::uint8_t>(load_le(at + kKeyCodingAt, 1));
  const auto value = static_cast<std::uint8_t>(load_le(at + kValueCodingAt, 1));
  if (has_parent > 1 || (has_parent == 0 && parent != cache::PageHash{}) || !valid_coding(key) ||
      !valid_coding(value) || load_le(at + kReservedAt, 1) != 0)
    return problem(PageFileProblem::Malformed,
                   "the header's flags or codings hold impossible values");
  header.parent = has_parent == 1 ? std::optional(parent) : std::nullopt;
  header.coding.format = cache::CacheFormat{static_cast<cache::ElementCoding>(key),
                                            static_cast<cache::ElementCoding>(value)};
  header.coding.producer = static_cast<std::uint32_t>(load_le(at + kProducerAt, 4));
  const std::uint64_t page_size = load_le(at + kPageSizeAt, 4);
  header.token_count = static_cast<std::uint32_t>(load_le(at + kTokenCountAt, 4));
  if (page_size == 0 || page_size > (1u << 20) || header.token_count == 0 ||
      header.token_count > page_size)
    return problem(
        PageFileProblem::Malformed,
        std::to_string(header.token_count) + " tokens in a page of " + std::to_string(page_size));
  header.coding.page_size = static_cast<int>(page_size);
  header.coding.layers.assign(layers, cache::PageBytes{});
  std::uint64_t payload = 0;
  for (std::uint64_t i = 0; i < layers; ++i) {
    const std::byte* entry = at + kPageFileFixedHeader + i * kPageFileLayerEntry;
    std::uint64_t planes[4];
    for (int p = 0; p < 4; ++p) {
      planes[p] = load_le(entry + 8 * p, 8);
      if (planes[p] > kPageFileMaxPlane)
        return problem(PageFileProblem::Malformed, "layer " + std::to_string(i) +
                                                       " has a plane of " +
                                                       std::to_string(planes[p]) + " bytes");
      payload += planes[p];  // at most 4096 * 4 * 2^32: cannot overflow
    }
    if (planes[0] == 0 || planes[2] == 0)
      return problem(PageFileProblem::Malformed,
                     "layer " + std::to_string(i) + " has no key or value data");
    header.coding.layers[i] = cache::PageBytes{
        static_cast<std::int64_t>(planes[0]), static_cast<std::int64_t>(planes[1]),
        static_cast<std::int64_t>(planes[2]), static_cast<std::int64_t>(planes[3])};
  }
  const std::uint64_t total = header_bytes + payload + kPageFileChecksum;
  if (file_size < total)
    return problem(PageFileProblem::Truncated,
                   "the file holds " + size_text + ", its header says " + std::to_string(total));
  if (file_size > total)
    return problem(PageFileProblem::Malformed, "the file holds " + size_text + ", more than the " +
                                                   std::to_string(total) + " its header says");
  return {};
}

PageFileCheck compare_with_expectation(const PageFileHeader& header,
                                       const PageExpectation& expected) {
  if (header.model != expected.model)
    return problem(PageFileProblem::OtherModel, "written for model " + header.model.hex() +
                                                    ", this is model " + expected.model.hex());
  if (expected.coding != nullptr && header.coding != *expected.coding)
    return problem(
        PageFileProblem::OtherCoding,
        "written as " + header.coding.describe() + ", the cache is " + expected.coding->describe());
  if (header.hash != expected.hash)
    return problem(PageFileProblem::OtherPage, "holds page " + header.hash.hex() + ", page " +
                                                   expected.hash.hex() + " was asked for");
  return {};
}

PageFileCheck decode_page_file(std::span<const std::byte> file, const PageExpectation& expected,
                               PageFileHeader& header, std::span<const std::byte>& payload) {
  PageFileCheck check = parse_page_header(file, file.size(), header);
  if (!check) return check;
  const std::size_t body = file.size() - kPageFileChecksum;
  PageChecksum checksum;
  checksum.update(file.first(body));
  const auto digest = checksum.finish();
  if (std::memcmp(digest.data(), file.data() + body, digest.size()) != 0)
    return problem(PageFileProblem::ChecksumMismatch,
                   "the checksum is " + hex_of(digest) + ", the file says " +
                       hex_of(std::span(reinterpret_cast<const std::uint8_t*>(file.data() + body),
                                        kPageFileChecksum)));
  check = compare_with_expectation(header, expected);
  if (!check) return check;
  const std::uint64_t start = header.header_bytes();
  payload = file.subspan(start, header.payload_bytes());
  return {};
}

}  // namespace quire::engine::disk_cache
