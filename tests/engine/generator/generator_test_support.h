#pragma once

// Tokenizers for the generator suites: one trained on the default corpus as
// it comes (chat markers are spelled with several tokens) and one whose
// vocabulary also holds every chat marker as a control piece, the way Llama 3
// or Mistral v3 vocabularies do. Both are trained once per process.

#include <QByteArray>
#include <QMap>
#include <QString>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::test {

// SentencePiece's piece types, as tokenizer.model stores them.
enum class PieceType : int { Normal = 1, Control = 3, UserDefined = 4 };

// The chat markers of every built-in format.
const std::vector<std::string>& chat_markers();

// `model` (a serialized tokenizer.model) with pieces appended after its own.
QByteArray with_extra_pieces(const QByteArray& model, std::span<const std::string> pieces,
                             PieceType type);

const QByteArray& trained_model();
const engine::Tokenizer& plain_tokenizer();
const engine::Tokenizer& marker_tokenizer();

void write_file(const QString& path, const QByteArray& bytes);

// Ids as text, each marker spelled out in brackets-free form: runs of
// ordinary pieces are decoded together and control pieces are written as
// their pieces ("<s>", "<|im_start|>"), so a rendered prompt reads like the
// chat template's text.
std::string readable(const engine::Tokenizer& tokenizer, std::span<const std::int32_t> ids);

}  // namespace quire::test
