#include "decoders.h"

#include <charconv>

#include "byte_level.h"
#include "pattern.h"
#include "utf8.h"

namespace quire::engine::detail {
namespace {

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts)
      : parts_(std::move(parts)) {}
  void decode_chain(DecodedPieces& pieces) const override {
    for (const auto& part : parts_)
      part->decode_chain(pieces);
  }
  void token_bytes(std::string& text, bool added) const override {
    for (const auto& part : parts_)
      part->token_bytes(text, added);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

// Byte-level characters back to bytes. Each run of ordinary tokens is one
// byte string (a character may span tokens), decoded with U+FFFD for what is
// not UTF-8; added tokens stand between the runs as the text they are.
class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(DecodedPieces& pieces) const override {
    const ByteAlphabet& alphabet = ByteAlphabet::get();
    DecodedPieces out;
    std::string bytes;
    bool open = false;
    auto close_run = [&] {
      if (open) out.push_back({to_valid_utf8(bytes), false});
      bytes.clear();
      open = false;
    };
    for (DecodedPiece& piece : pieces) {
      if (piece.added) {
        close_run();
        out.push_back(std::move(piece));
        continue;
      }
      open = true;
      std::string token_bytes;
      bool mapped = true;
      for (std::size_t position = 0; position < piece.text.size() && mapped;) {
        const CodePoint c = code_point_at(piece.text, position);
        const auto byte = alphabet.byte_of(c.value);
        if (byte) {
          token_bytes += static_cast<char>(*byte);
        } else {
          mapped = false;
        }
        position += c.length;
      }
      // A token outside the alphabet stands for its own UTF-8 bytes.
      bytes += mapped ? token_bytes : piece.text;
    }
    close_run();
    pieces = std::move(out);
  }
  void token_bytes(std::string& text, bool added) const override {
    if (added) return;  // added tokens pass through as the text they are
    const ByteAlphabet& alphabet = ByteAlphabet::get();
    std::string bytes;
    for (std::size_t position = 0; position < text.size();) {
      const CodePoint c = code_point_at(text, position);
      const auto byte = alphabet.byte_of(c.value);
      if (!byte) return;  // outside the alphabet: the token is its own UTF-8
      bytes += static_cast<char>(*byte);
      position += c.length;
    }
    text = std::move(bytes);
  }
};

// Runs of "<0xAB>" pieces back to the characters they spell, U+FFFD for
// each maximal ill-formed part. (Hugging Face's Rust decoder turns a run with
// any ill-formed part into one U+FFFD per byte; the reference implementation
// and a streaming decoder need the local rule, which differs only for byte
// sequences a model should never produce.)
class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(DecodedPieces& pieces) const override {
    DecodedPieces out;
    std::string bytes;
    std::size_t count = 0;
    auto close_run = [&] {
      if (count == 0) return;
      out.push_back({to_valid_utf8(bytes), false});
      bytes.clear();
      count = 0;
    };
    for (DecodedPiece& piece : pieces) {
      if (const auto byte = byte_piece_value(piece.text)) {
        bytes += static_cast<char>(*byte);
        ++count;
        continue;
      }
      close_run();
      out.push_back(std::move(piece));
    }
    close_run();
    pieces = std::move(out);
  }
  void token_bytes(std::string& text, bool) const override {
    if (const auto byte = byte_piece_value(text)) text.assign(1, static_cast<char>(*byte));
  }

  static std::optional<std::uint8_t> byte_piece_value(const std::string& text) {
    if (text.size() != 6 || !text.starts_with("<0x") || text[5] != '>') return std::nullopt;
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text.data() + 3, text.data() + 5, value, 16);
    if (error != std::errc() || end != text.data() + 5) return std::nullopt;
    return static_cast<std::uint8_t>(value);
  }
};

// The replacement character back to spaces; the very first token loses
// one leading space (the one the pre-tokenizer put there).
class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first)
      : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void decode_chain(DecodedPieces& pieces) const override {
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      std::string text;
      const std::string& source = pieces[i].text;
      for (std::size_t position = 0; position < source.size();) {
        if (source.compare(position, replacement_.size(), replacement_) == 0) {
          text += ' ';
          position += replacement_.size();
        } else {
          text += source[position++];
        }
      }
      if (i == 0 && strip_first_ && text.starts_with(' ')) text.erase(0, 1);
      pieces[i].text = std::move(text);
    }
  }
  void token_bytes(std::string& text, bool) const override {
    std::string out;
    for (std::size_t position = 0; position < text.size();) {
      if (text.compare(position, replacement_.size(), replacement_) == 0) {
        out += ' ';
        position += replacement_.size();
      } else {
        out += text[position++];
      }
    }
    text = std::move(out);
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(Regex pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(DecodedPieces& pieces) const override {
    for (DecodedPiece& piece : pieces)
      piece.text = pattern_.replace_all(piece.text, content_);
  }
  void token_bytes(std::string& text, bool) const override {
    text = pattern_.replace_all(text, content_);
  }

 private:
  Regex pattern_;
  std::string content_;
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(DecodedPieces& pieces) const override {
    std::string text;
    for (const DecodedPiece& piece : pieces)
      text += piece.text;
    pieces.assign(1, {std::move(text), false});
  }
};

// Removes up to `start` copies of `content` from the front of each token and
// up to `stop` from its back.
class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, std::size_t start, std::size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(DecodedPieces& pieces) const override {
    for (DecodedPiece& piece : pieces) {
      std::string_view text = piece.text;
      for (std::size_t i = 0; i < start_ && text.starts_with(content_); ++i)
        text.remove_prefix(content_.size());
      for (std::size_t i = 0; i < stop_ && text.ends_with(content_); ++i)
        text.remove_suffix(content_.size());
      piece.text = std::string(text);
    }
  }

 private:
  std::string content_;
  std::size_t start_;
  std::size_t stop_;
};

// The end-of-word suffix becomes a space, except after the last token.
class BpeSuffixDecoder final : public Decoder {
 public:
  explicit BpeSuffixDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void decode_chain(DecodedPieces& pieces) const override {
    if (suffix_.empty()) return;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const Regex literal = Regex::literal(suffix_);
      pieces[i].text = literal.replace_all(pieces[i].text, i + 1 == pieces.size() ? "" : " ");
    }
  }
  void token_bytes(std::string& text, bool) const override {
    if (!suffix_.empty()) text = Regex::literal(suffix_).replace_all(text, " ");
  }

 private:
  std::string suffix_;
};

}  // namespace

std::unique_ptr<Decoder> read_decoder(const JsonField& config) {
  if (config.is_null()) return nullptr;
  const std::string type = config.type();
  if (type == "Sequence") {
    const JsonField list = config.at("decoders");
    std::vector<std::unique_ptr<Decoder>> parts;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (auto part = read_decoder(list.at(i))) parts.push_back(std::move(part));
    }
    return std::make_unique<SequenceDecoder>(std::move(parts));
  }
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Metaspace") {
    std::string scheme = config.string_or("prepend_scheme", "always");
    if (const auto field = config.find("prepend_scheme");
        field && scheme != "always" && scheme != "first" && scheme != "never") {
      field->fail("is \"" + scheme + "\", not always, first or never");
    }
    if (!config.find("prepend_scheme") && !config.boolean_or("add_prefix_space", true)) {
      scheme = "never";
    }
    const auto replacement = config.find("replacement");
    return std::make_unique<MetaspaceDecoder>(
        replacement ? replacement->character() : "\xE2\x96\x81", scheme != "never");
  }
  if (type == "Replace") {
    return std::make_unique<ReplaceDecoder>(read_pattern(config.at("pattern")),
                                            config.at("content").string());
  }
  if (type == "Strip") {
    const std::string content = config.at("content").string();
    if (content.empty()) config.at("content").fail("is empty");
    return std::make_unique<StripDecoder>(
        content, static_cast<std::size_t>(config.at("start").integer(0, 1'000'000)),
        static_cast<std::size_t>(config.at("stop").integer(0, 1'000'000)));
  }
  if (type == "BPEDecoder")
    return std::make_unique<BpeSuffixDecoder>(config.string_or("suffix", ""));
  config.fail_unsupported("is a decoder of type \"" + type +
                          "\", which Quire does not read (it reads Sequence, ByteLevel, "
                          "ByteFallback, Fuse, Metaspace, Replace, Strip and BPEDecoder)");
}

}  // namespace quire::engine::detail
