#include "io_test_helpers.h"

#include <QFile>

#include "quire/engine/model_error.h"

namespace quire::test::io {

std::filesystem::path path_of(const QTemporaryDir& dir) {
  return std::filesystem::path(dir.path().toStdString());
}

std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
  QFile file(QString::fromStdString(path.string()));
  if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", path.c_str());
  const QByteArray content = file.readAll();
  const auto* begin = reinterpret_cast<const std::byte*>(content.constData());
  return {begin, begin + content.size()};
}

void write_bytes(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  QFile file(QString::fromStdString(path.string()));
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
    qFatal("cannot write %s", path.c_str());
  const auto written =
      file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<qint64>(bytes.size()));
  if (written != static_cast<qint64>(bytes.size())) qFatal("short write to %s", path.c_str());
}

RawSafetensors split_safetensors(std::span<const std::byte> bytes) {
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < 8; ++i)
    length |= std::to_integer<std::uint64_t>(bytes[i]) << (8 * i);
  const auto header = bytes.subspan(8, static_cast<std::size_t>(length));
  const auto data = bytes.subspan(8 + static_cast<std::size_t>(length));
  return {std::string(reinterpret_cast<const char*>(header.data()), header.size()),
          std::vector<std::byte>(data.begin(), data.end())};
}

std::vector<std::byte> join_safetensors(const std::string& header, std::span<const std::byte> data,
                                        std::optional<std::uint64_t> length) {
  const std::uint64_t field = length.value_or(header.size());
  std::vector<std::byte> bytes;
  for (std::size_t i = 0; i < 8; ++i)
    bytes.push_back(static_cast<std::byte>((field >> (8 * i)) & 0xff));
  for (const char c : header)
    bytes.push_back(static_cast<std::byte>(c));
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::optional<std::string> model_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const quire::engine::ModelError& error) {
    return std::string(error.what());
  }
  return std::nullopt;
}

}  // namespace quire::test::io
