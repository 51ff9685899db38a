#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace quire::engine {

// Trains a small SentencePiece BPE tokenizer, for the tools and tests that
// build test models. Laid out like Llama's: <unk> 0, <s> 1, </s> 2, no
// padding piece, byte fallback (any text encodes, nothing becomes <unk>), no
// normalization (decode(encode(text)) == text), digits split one by one.
// The same corpus, vocab_size and seed give a byte-identical file: training
// runs on one thread without sampling. Lines of the corpus are the training
// sentences. Rare characters are left to byte fallback; vocab_size must leave
// room for the 256 byte pieces, the three control pieces and the characters
// of 98% of the text (320 and up for default_training_corpus()). Throws
// std::invalid_argument for an unusable vocab_size or corpus and
// std::runtime_error when SentencePiece or writing the file fails.
void train_tokenizer(const std::string& corpus_text, int vocab_size,
                     const std::filesystem::path& output_model_file, std::uint64_t seed);

// About 30 KB of varied English (dialogue, instructions, facts, numbers, a
// few accented words and symbols), built into the library.
std::string_view default_training_corpus();

}  // namespace quire::engine
