#include "quire/engine/tokenizer/training.h"

#include <sentencepiece_trainer.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iomanip>
#include <locale>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace quire::engine {
namespace {

// Hands the corpus to the trainer line by line, without a temporary file.
class LineIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(std::vector<std::string> lines) : lines_(std::move(lines)) {}
  bool done() const override { return index_ >= lines_.size(); }
  void Next() override { ++index_; }
  const std::string& value() const override { return lines_[index_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  std::vector<std::string> lines_;
  std::size_t index_ = 0;
};

std::vector<std::string> non_empty_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
    begin = end + 1;
  }
  return lines;
}

// Code points of one line as the trainer counts them: the identity
// normalizer turns spaces into U+2581 and puts one in front of every line.
void count_characters(const std::string& line, std::unordered_map<char32_t, std::int64_t>& counts) {
  ++counts[0x2581];
  for (std::size_t i = 0; i < line.size();) {
    const auto lead = static_cast<unsigned char>(line[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    char32_t c = length == 1 ? lead : lead & (0x7Fu >> length);
    for (std::size_t j = 1; j < length && i + j < line.size(); ++j) {
      c = (c << 6) | (static_cast<unsigned char>(line[i + j]) & 0x3Fu);
    }
    ++counts[c == ' ' ? 0x2581 : c];
    i += length;
  }
}

// SentencePiece keeps the most frequent characters until they cover
// `character_coverage` of the text and leaves the rest to byte fallback.
// Characters seen only a handful of times go that way at the usual 0.9995,
// so test models meet byte pieces. A small vocabulary cannot hold even the
// remaining alphabet next to its 259 byte and control pieces; then the
// coverage is lowered until the alphabet leaves a quarter of the free room
// for merged pieces.
double character_coverage(const std::vector<std::string>& lines, int vocab_size) {
  constexpr double kUsual = 0.9995;
  constexpr double kLowest = 0.98;  // the trainer refuses less
  std::unordered_map<char32_t, std::int64_t> by_character;
  for (const std::string& line : lines)
    count_characters(line, by_character);
  std::vector<std::int64_t> counts;
  std::int64_t total = 0;
  for (const auto& [character, count] : by_character) {
    counts.push_back(count);
    total += count;
  }
  std::sort(counts.begin(), counts.end(), std::greater<>());
  const int room = vocab_size - 259;
  const auto alphabet = static_cast<std::size_t>(room - room / 4);
  if (alphabet >= counts.size()) return kUsual;
  // Halfway between the coverage of the first alphabet - 1 characters and of
  // the first alphabet ones, the trainer stops after exactly `alphabet`.
  std::int64_t before = 0;
  for (std::size_t i = 0; i + 1 < alphabet; ++i)
    before += counts[i];
  const double halfway =
      (static_cast<double>(before) + static_cast<double>(counts[alphabet - 1]) / 2) /
      static_cast<double>(total);
  if (halfway < kLowest) {
    throw std::invalid_argument("vocab_size " + std::to_string(vocab_size) +
                                " leaves room for only " + std::to_string(alphabet) +
                                " characters, too few to cover 98% of the corpus");
  }
  return std::min(kUsual, halfway);
}

// Independent of the process's locale, which a Qt application sets from the
// environment and which could turn the decimal point into a comma.
std::string decimal(double value) {
  std::ostringstream text;
  text.imbue(std::locale::classic());
  text << std::setprecision(9) << value;
  return text.str();
}

}  // namespace

void train_tokenizer(const std::string& corpus_text, int vocab_size,
                     const std::filesystem::path& output_model_file, std::uint64_t seed) {
  if (vocab_size < 260 || vocab_size > 1'000'000) {
    throw std::invalid_argument("vocab_size " + std::to_string(vocab_size) +
                                " must leave room for 256 byte pieces and 3 control pieces");
  }
  std::vector<std::string> lines = non_empty_lines(corpus_text);
  if (lines.empty()) throw std::invalid_argument("the training corpus has no text");

  const std::unordered_map<std::string, std::string> options{
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(vocab_size)},
      {"byte_fallback", "true"},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "-1"},
      {"character_coverage", decimal(character_coverage(lines, vocab_size))},
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "true"},
      {"split_digits", "true"},
      {"num_threads", "1"},
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      // Applies to the whole process: the library has nothing to tell a user.
      {"minloglevel", "2"},
  };
  // The trainer has no randomness with these options; the seed still pins the
  // library's generator for anything that might draw from it.
  const auto folded = static_cast<unsigned int>(seed ^ (seed >> 32));
  sentencepiece::SetRandomGeneratorSeed(folded == ~0u ? 0u : folded);

  LineIterator iterator(std::move(lines));
  std::string model;
  if (const auto status = sentencepiece::SentencePieceTrainer::Train(options, &iterator, &model);
      !status.ok()) {
    throw std::runtime_error("training a tokenizer with " + std::to_string(vocab_size) +
                             " pieces failed: " + status.ToString());
  }
  std::ofstream file(output_model_file, std::ios::binary | std::ios::trunc);
  file.write(model.data(), static_cast<std::streamsize>(model.size()));
  file.close();
  if (!file) throw std::runtime_error("cannot write " + output_model_file.string());
}

}  // namespace quire::engine
