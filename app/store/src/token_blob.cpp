#include "quire/app/store/token_blob.h"

#include <QtEndian>

namespace quire::store {

QByteArray encode_tokens(std::span<const std::int32_t> tokens) {
  QByteArray blob(static_cast<qsizetype>(tokens.size() * sizeof(std::int32_t)), Qt::Uninitialized);
  uchar* out = reinterpret_cast<uchar*>(blob.data());
  for (std::int32_t token : tokens) {
    qToLittleEndian<std::int32_t>(token, out);
    out += sizeof(std::int32_t);
  }
  return blob;
}

std::optional<std::vector<std::int32_t>> decode_tokens(const QByteArray& blob) {
  if (blob.size() % qsizetype(sizeof(std::int32_t)) != 0) return std::nullopt;
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(blob.size()) / sizeof(std::int32_t));
  const uchar* in = reinterpret_cast<const uchar*>(blob.constData());
  for (std::int32_t& token : tokens) {
    token = qFromLittleEndian<std::int32_t>(in);
    in += sizeof(std::int32_t);
  }
  return tokens;
}

}  // namespace quire::store
