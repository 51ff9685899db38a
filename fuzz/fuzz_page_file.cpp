// A page file of the disk cache as a disk could hold it: any bytes. The
// parser must refuse it with one problem or accept it; a file it accepts
// must be exactly what encode_page_file writes for the values it read, so
// no two byte strings pass for the same page.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "quire/engine/disk_cache/page_file.h"

using namespace quire::engine::disk_cache;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
  PageFileHeader header;
  const PageFileCheck parsed = parse_page_header(file, size, header);
  if (!parsed) {
    if (parsed.detail.empty()) std::abort();
    return 0;
  }
  // Expect what the header says, so the checksum and the payload are reached.
  const PageFileHeader said = header;
  const PageExpectation expected{said.model, &said.coding, said.hash};
  std::span<const std::byte> payload;
  const PageFileCheck decoded = decode_page_file(file, expected, header, payload);
  if (!decoded) {
    if (decoded.problem != PageFileProblem::ChecksumMismatch) std::abort();
    return 0;
  }
  if (payload.size() != said.payload_bytes()) std::abort();
  const std::vector<std::byte> again =
      encode_page_file(said.model, said.coding, said.hash, said.parent, said.token_count, payload);
  if (again.size() != size || !std::equal(again.begin(), again.end(), file.begin())) std::abort();
  return 0;
}
