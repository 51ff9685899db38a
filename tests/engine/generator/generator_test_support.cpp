#include "generator_test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <stdexcept>

#include "quire/engine/tokenizer/training.h"

namespace quire::test {
namespace {

void append_varint(QByteArray& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.append(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.append(static_cast<char>(value));
}

// One ModelProto.pieces entry: {piece = 1 (string), score = 2 (float), type = 3 (enum)}.
QByteArray piece_entry(const std::string& piece, PieceType type) {
  QByteArray inner;
  inner.append('\x0A');
  append_varint(inner, piece.size());
  inner.append(piece.data(), static_cast<qsizetype>(piece.size()));
  inner.append('\x15');
  inner.append(4, '\0');  // score 0.0f
  inner.append('\x18');
  append_varint(inner, static_cast<std::uint64_t>(type));
  QByteArray entry;
  entry.append('\x0A');
  append_varint(entry, static_cast<std::uint64_t>(inner.size()));
  entry.append(inner);
  return entry;
}

engine::Tokenizer load_model(const QByteArray& model) {
  QTemporaryDir dir;
  if (!dir.isValid()) throw std::runtime_error("no temporary directory");
  write_file(dir.filePath(QStringLiteral("tokenizer.model")), model);
  return engine::Tokenizer::load(dir.path().toStdString());
}

}  // namespace

const std::vector<std::string>& chat_markers() {
  static const std::vector<std::string> markers{
      "<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
      "<|end_header_id|>", "<|eot_id|>",      "<|im_start|>",
      "<|im_end|>",        "<|endoftext|>",   "[INST]",
      "[/INST]",           "<start_of_turn>", "<end_of_turn>"};
  return markers;
}

QByteArray with_extra_pieces(const QByteArray& model, std::span<const std::string> pieces,
                             PieceType type) {
  // Protocol buffers append repeated fields that come later in the stream, so
  // the new pieces take the ids after the trained ones.
  QByteArray out = model;
  for (const std::string& piece : pieces)
    out.append(piece_entry(piece, type));
  return out;
}

const QByteArray& trained_model() {
  static const QByteArray model = [] {
    QTemporaryDir dir;
    if (!dir.isValid()) throw std::runtime_error("no temporary directory");
    const QString path = dir.filePath(QStringLiteral("tokenizer.model"));
    engine::train_tokenizer(std::string(engine::default_training_corpus()), 512, path.toStdString(),
                            7);
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read the trained model");
    return file.readAll();
  }();
  return model;
}

const engine::Tokenizer& plain_tokenizer() {
  static const engine::Tokenizer tokenizer = load_model(trained_model());
  return tokenizer;
}

const engine::Tokenizer& marker_tokenizer() {
  static const engine::Tokenizer tokenizer =
      load_model(with_extra_pieces(trained_model(), chat_markers(), PieceType::Control));
  return tokenizer;
}

void write_file(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size()) {
    throw std::runtime_error("cannot write " + path.toStdString());
  }
}

std::string readable(const engine::Tokenizer& tokenizer, std::span<const std::int32_t> ids) {
  std::string text;
  std::vector<std::int32_t> run;
  auto flush = [&] {
    text += tokenizer.decode(run);
    run.clear();
  };
  for (const std::int32_t id : ids) {
    if (tokenizer.is_control(id)) {
      flush();
      text += tokenizer.piece(id);
    } else {
      run.push_back(id);
    }
  }
  flush();
  return text;
}

}  // namespace quire::test
