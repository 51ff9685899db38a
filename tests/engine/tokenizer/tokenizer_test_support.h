#pragma once

// A tokenizer trained on the default corpus, shared by the tokenizer suites,
// and helpers that lay out model directories around it.

#include <QByteArray>
#include <QMap>
#include <QString>
#include <cstdint>
#include <filesystem>

namespace quire::test {

inline constexpr int kTestVocabSize = 512;
inline constexpr std::uint64_t kTestSeed = 7;

// The bytes of a tokenizer.model trained once per process with
// kTestVocabSize pieces and kTestSeed.
const QByteArray& trained_tokenizer_model();

void write_file(const QString& path, const QByteArray& bytes);

// Writes tokenizer.model and the given extra files (name -> contents) into
// `dir` and returns it as a path for Tokenizer::load.
std::filesystem::path write_model_dir(const QString& dir,
                                      const QMap<QString, QByteArray>& files = {});

}  // namespace quire::test
