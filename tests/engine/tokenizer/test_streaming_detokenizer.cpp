#include <QElapsedTimer>
#include <QString>
#include <QTemporaryDir>
#include <QTest>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "quire/engine/tokenizer/streaming_detokenizer.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/engine/tokenizer/training.h"
#include "test_main.h"
#include "tokenizer_test_support.h"

using quire::engine::PieceKind;
using quire::engine::StreamingDetokenizer;
using quire::engine::Tokenizer;

namespace {

using Ids = std::vector<std::int32_t>;

bool is_whole_utf8(const std::string& text) {
  const QByteArray bytes = QByteArray::fromStdString(text);
  return QString::fromUtf8(bytes).toUtf8() == bytes;
}

std::string utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

}  // namespace

class StreamingDetokenizerTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    tokenizer_.emplace(Tokenizer::load(quire::test::write_model_dir(dir_.path())));
    for (std::int32_t id = 0; id < tokenizer_->vocab_size(); ++id) {
      if (tokenizer_->kind(id) == PieceKind::Normal) normal_.push_back(id);
    }
    QVERIFY(normal_.size() > 100);
  }

  // The property the chat relies on: what streams out is what decode() says.
  void matchesDecodeOnRandomSequences() {
    std::mt19937 random(20240611);
    const std::string_view corpus = quire::engine::default_training_corpus();
    StreamingDetokenizer stream(*tokenizer_);
    for (int round = 0; round < 3000; ++round) {
      const Ids ids = random_sequence(random, corpus);
      std::string streamed;
      for (const std::int32_t id : ids) {
        const std::string piece = stream.push(id);
        QVERIFY2(is_whole_utf8(piece), qPrintable(describe(ids)));
        streamed += piece;
      }
      streamed += stream.flush();
      QVERIFY2(streamed == tokenizer_->decode(ids), qPrintable(describe(ids)));
    }
  }

  // Replies read for tool calls keep the special tokens that mark them: the
  // stream then matches decode(ids, false), control tokens spelled out.
  void keepsSpecialTokensWhenAsked() {
    std::vector<std::int32_t> control;
    for (std::int32_t id = 0; id < tokenizer_->vocab_size(); ++id) {
      if (tokenizer_->kind(id) == PieceKind::Control) control.push_back(id);
    }
    QVERIFY(!control.empty());
    std::mt19937 random(20261129);
    const std::string_view corpus = quire::engine::default_training_corpus();
    StreamingDetokenizer stream(*tokenizer_, /*skip_special=*/false);
    for (int round = 0; round < 500; ++round) {
      Ids ids = random_sequence(random, corpus);
      ids.insert(ids.begin() + static_cast<std::ptrdiff_t>(random() % (ids.size() + 1)),
                 control[random() % control.size()]);
      std::string streamed;
      for (const std::int32_t id : ids)
        streamed += stream.push(id);
      streamed += stream.flush();
      QVERIFY2(streamed == tokenizer_->decode(ids, false), qPrintable(describe(ids)));
      QVERIFY(streamed != tokenizer_->decode(ids));
    }
  }

  void streamsALongReplyQuickly() {
    const Ids ids = tokenizer_->encode(quire::engine::default_training_corpus(), true);
    QVERIFY(ids.size() > 5000);
    StreamingDetokenizer stream(*tokenizer_);
    QElapsedTimer timer;
    timer.start();
    std::string streamed;
    for (const std::int32_t id : ids)
      streamed += stream.push(id);
    streamed += stream.flush();
    // Whole-history re-decoding would take minutes here; a window takes milliseconds.
    QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(streamed, std::string(quire::engine::default_training_corpus()));
  }

  void holdsACharacterUntilItsLastByte_data() {
    QTest::addColumn<QString>("character");
    QTest::newRow("two bytes") << QStringLiteral("é");
    QTest::newRow("three bytes") << QStringLiteral("€");
    QTest::newRow("four bytes") << QStringLiteral("🍀");
  }

  void holdsACharacterUntilItsLastByte() {
    QFETCH(QString, character);
    const QByteArray bytes = character.toUtf8();
    StreamingDetokenizer stream(*tokenizer_);
    QCOMPARE(stream.push(1), std::string());  // <s>
    QCOMPARE(stream.push(id("▁the")), std::string("the"));
    for (qsizetype i = 0; i < bytes.size(); ++i) {
      const std::string expected = i + 1 < bytes.size() ? std::string() : bytes.toStdString();
      QCOMPARE(stream.push(byte_piece(static_cast<std::uint8_t>(bytes[i]))), expected);
    }
    QCOMPARE(stream.push(id("▁the")), std::string(" the"));
    QCOMPARE(stream.flush(), std::string());
  }

  void unfinishedBytesEndAsDecodeShowsThem_data() {
    QTest::addColumn<Ids>("ids");
    const std::int32_t e2 = byte_piece(0xE2);
    const std::int32_t x82 = byte_piece(0x82);
    QTest::newRow("cut off by a word") << Ids{id("▁the"), e2, x82, id("▁the")};
    QTest::newRow("cut off by a control token") << Ids{e2, x82, 2, byte_piece(0xAC)};
    QTest::newRow("cut off by the end") << Ids{id("▁the"), e2, x82};
    QTest::newRow("lead byte after a lead byte") << Ids{e2, e2, x82, byte_piece(0xAC)};
    QTest::newRow("continuation byte alone") << Ids{x82, id("▁the")};
    QTest::newRow("surrogate") << Ids{byte_piece(0xED), byte_piece(0xA0), byte_piece(0x80)};
    QTest::newRow("overlong") << Ids{byte_piece(0xC0), byte_piece(0xAF), id("▁the")};
    QTest::newRow("replacement character itself")
        << Ids{byte_piece(0xEF), byte_piece(0xBF), byte_piece(0xBD)};
  }

  void unfinishedBytesEndAsDecodeShowsThem() {
    QFETCH(Ids, ids);
    StreamingDetokenizer stream(*tokenizer_);
    std::string streamed;
    for (const std::int32_t token : ids)
      streamed += stream.push(token);
    streamed += stream.flush();
    QCOMPARE(streamed, tokenizer_->decode(ids));
    QVERIFY(streamed.find("\xEF\xBF\xBD") != std::string::npos);
  }

  void dropsTheFirstWordsSpaceLikeDecode() {
    StreamingDetokenizer stream(*tokenizer_);
    QCOMPARE(stream.push(1), std::string());
    QCOMPARE(stream.push(2), std::string());
    QCOMPARE(stream.push(id("▁the")), std::string("the"));
    QCOMPARE(stream.push(id("▁the")), std::string(" the"));
    QCOMPARE(stream.push(2), std::string());
    // flush() starts a new sequence, whose first word again loses its space.
    QCOMPARE(stream.flush(), std::string());
    QCOMPARE(stream.push(id("▁the")), std::string("the"));
    stream.reset();
    QCOMPARE(stream.push(id("▁the")), std::string("the"));
  }

  void rejectsAnIdOutsideTheVocabularyWithoutLosingItsPlace() {
    StreamingDetokenizer stream(*tokenizer_);
    QCOMPARE(stream.push(byte_piece(0xE2)), std::string());
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, stream.push(tokenizer_->vocab_size()));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, stream.push(-1));
    QCOMPARE(stream.push(byte_piece(0x82)), std::string());
    QCOMPARE(stream.push(byte_piece(0xAC)), std::string("€"));
  }

 private:
  std::int32_t id(const char* piece) const {
    const auto found = tokenizer_->find_piece(piece);
    if (!found) throw std::runtime_error(std::string("no piece ") + piece);
    return *found;
  }

  std::int32_t byte_piece(std::uint8_t byte) const {
    static const char* hex = "0123456789ABCDEF";
    const std::string name = std::string("<0x") + hex[byte >> 4] + hex[byte & 15] + ">";
    return id(name.c_str());
  }

  Ids random_sequence(std::mt19937& random, std::string_view corpus) const {
    Ids ids;
    const int parts = std::uniform_int_distribution<int>(0, 12)(random);
    for (int part = 0; part < parts; ++part) {
      switch (std::uniform_int_distribution<int>(0, 9)(random)) {
        case 0:  // a span of real text, as a model would produce it
        case 1: {
          const auto begin =
              std::uniform_int_distribution<std::size_t>(0, corpus.size() - 40)(random);
          const std::string text(corpus.substr(begin, 1 + random() % 39));
          const Ids encoded = tokenizer_->encode(text, false);
          ids.insert(ids.end(), encoded.begin(), encoded.end());
          break;
        }
        case 2:
        case 3:
          ids.push_back(normal_[random() % normal_.size()]);
          break;
        case 4:  // any byte, often breaking characters apart
          ids.push_back(byte_piece(static_cast<std::uint8_t>(random() % 256)));
          break;
        case 5:
        case 6: {  // a whole character spelled in bytes
          static const char32_t ranges[][2] = {{0x80, 0x7FF},
                                               {0x800, 0xD7FF},
                                               {0xE000, 0xFFFF},
                                               {0x10000, 0x10FFFF},
                                               {0x1F300, 0x1F64F}};
          const auto& range = ranges[random() % 5];
          const auto c = std::uniform_int_distribution<char32_t>(range[0], range[1])(random);
          for (const char byte : utf8(c))
            ids.push_back(byte_piece(static_cast<std::uint8_t>(byte)));
          break;
        }
        case 7:
          ids.push_back(static_cast<std::int32_t>(random() % 3));  // <unk>, <s>, </s>
          break;
        case 8:
          ids.push_back(id("▁"));
          break;
        default:
          ids.push_back(id("▁the"));
          break;
      }
    }
    return ids;
  }

  QString describe(const Ids& ids) const {
    QStringList pieces;
    for (const std::int32_t token : ids)
      pieces << QString::fromStdString(tokenizer_->piece(token));
    return pieces.join(u' ');
  }

  QTemporaryDir dir_;
  std::optional<Tokenizer> tokenizer_;
  Ids normal_;
};

QUIRE_TEST(StreamingDetokenizerTest)
#include "test_streaming_detokenizer.moc"
