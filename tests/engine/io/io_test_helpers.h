#pragma once

#include <QTemporaryDir>
#include <QTest>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

// Helpers shared by the safetensors tests: files as byte vectors, a safetensors
// file taken apart into header text and data (to damage one and put it back
// together), and the message of the ModelError an action throws.
namespace quire::test::io {

template <class T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::filesystem::path path_of(const QTemporaryDir& dir);

std::vector<std::byte> read_bytes(const std::filesystem::path& path);
void write_bytes(const std::filesystem::path& path, std::span<const std::byte> bytes);

struct RawSafetensors {
  std::string header;  // the JSON text, padding included
  std::vector<std::byte> data;
};
// `bytes` must be a well-formed safetensors file.
RawSafetensors split_safetensors(std::span<const std::byte> bytes);
// Length field (the header's size unless `length` says otherwise), header, data.
std::vector<std::byte> join_safetensors(const std::string& header, std::span<const std::byte> data,
                                        std::optional<std::uint64_t> length = std::nullopt);

// The what() of the quire::engine::ModelError `action` throws; nothing when it
// returns normally. Other exceptions pass through and fail the test.
std::optional<std::string> model_error_of(const std::function<void()>& action);

}  // namespace quire::test::io

// Fails the test unless `statement` throws ModelError whose message contains
// every one of the following strings.
#define QUIRE_EXPECT_MODEL_ERROR(statement, ...)                                                   \
  do {                                                                                             \
    const std::optional<std::string> quire_message =                                               \
        quire::test::io::model_error_of([&] { statement; });                                       \
    QVERIFY2(quire_message.has_value(), "no ModelError from " #statement);                         \
    for (const std::string& quire_part : std::vector<std::string>{__VA_ARGS__}) {                  \
      QVERIFY2(                                                                                    \
          quire_message->find(quire_part) != std::string::npos,                                    \
          qPrintable(QString::fromStdString("\"" + quire_part + "\" not in: " + *quire_message))); \
    }                                                                                              \
  } while (false)
