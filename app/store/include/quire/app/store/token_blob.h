#pragma once

// Token ids are stored as a compact BLOB: each id as a little-endian int32,
// nothing else. 4 bytes per token, readable on any machine and by any tool.

#include <QByteArray>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace quire::store {

QByteArray encode_tokens(std::span<const std::int32_t> tokens);

// nullopt when the blob's length is not a multiple of 4.
std::optional<std::vector<std::int32_t>> decode_tokens(const QByteArray& blob);

}  // namespace quire::store
