#include <QTemporaryDir>
#include <QTest>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"
#include "test_main.h"
#include "tokenizer_test_support.h"

using quire::engine::PieceKind;
using quire::engine::Tokenizer;

class TokenizerTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    tokenizer_.emplace(Tokenizer::load(quire::test::write_model_dir(dir_.path())));
  }

  void roundTrips_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("sentence") << QByteArray("Hello, how are you today?");
    QTest::newRow("numbers") << QByteArray("Order #40391 costs $47.85 (incl. 3.99 delivery).");
    QTest::newRow("accents") << QByteArray("A naïve café owner in Zürich charges €3.20.");
    QTest::newRow("emoji") << QByteArray("Good luck! 🍀🎉 See you 👋");
    QTest::newRow("cjk") << QByteArray("東京 and 서울 and Ελληνικά");
    QTest::newRow("whitespace") << QByteArray("two  spaces,\ttab,\nnew line\n\n  indented");
    QTest::newRow("leading space") << QByteArray(" starts with a space");
    QTest::newRow("control lookalike") << QByteArray("<s> is plain text here </s>");
  }

  // Identity normalization and byte fallback: every text survives.
  void roundTrips() {
    QFETCH(QByteArray, text);
    const std::vector<std::int32_t> ids = tokenizer_->encode(text.toStdString(), false);
    QCOMPARE(QByteArray::fromStdString(tokenizer_->decode(ids)), text);
    for (const std::int32_t id : ids)
      QVERIFY(tokenizer_->kind(id) != PieceKind::Unknown);
  }

  // What a grammar matches: each token's bytes, joined, spell the text, with
  // the space SentencePiece puts in front of it ("▁" of the dummy prefix)
  // that decode() drops; control pieces have no bytes.
  void tokenBytesSpellTheText_data() { roundTrips_data(); }
  void tokenBytesSpellTheText() {
    QFETCH(QByteArray, text);
    std::string joined;
    for (const std::int32_t id : tokenizer_->encode(text.toStdString(), false))
      joined += tokenizer_->token_bytes(id);
    QCOMPARE(QByteArray::fromStdString(joined), text.isEmpty() ? text : " " + text);
    QVERIFY(tokenizer_->token_bytes(tokenizer_->bos().value()).empty());
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, tokenizer_->token_bytes(-1));
  }

  void unseenCharactersBecomeBytePieces() {
    const std::string emoji = "🍀";  // F0 9F 8D 80, not in the corpus
    const std::vector<std::int32_t> ids = tokenizer_->encode(emoji, false);
    std::string bytes;
    for (const std::int32_t id : ids) {
      if (const auto byte = tokenizer_->byte_value(id)) bytes.push_back(static_cast<char>(*byte));
    }
    QCOMPARE(QByteArray::fromStdString(bytes), QByteArray::fromStdString(emoji));
    QCOMPARE(tokenizer_->piece(tokenizer_->find_piece("<0xF0>").value()), std::string("<0xF0>"));
  }

  void addsBosOnlyWhenAsked() {
    const std::vector<std::int32_t> plain = tokenizer_->encode("Hello", false);
    const std::vector<std::int32_t> with_bos = tokenizer_->encode("Hello", true);
    QCOMPARE(with_bos.size(), plain.size() + 1);
    QCOMPARE(with_bos.front(), 1);
    QVERIFY(std::equal(plain.begin(), plain.end(), with_bos.begin() + 1));
    QCOMPARE(tokenizer_->decode(with_bos), std::string("Hello"));  // control pieces are invisible
  }

  void describesTheVocabulary() {
    const Tokenizer& tokenizer = *tokenizer_;
    QCOMPARE(tokenizer.vocab_size(), quire::test::kTestVocabSize);
    QCOMPARE(tokenizer.bos(), std::optional<std::int32_t>(1));
    QCOMPARE(tokenizer.eos(), std::vector<std::int32_t>{2});
    QVERIFY(tokenizer.adds_bos());
    QVERIFY(tokenizer.is_eos(2));
    QVERIFY(!tokenizer.is_eos(1));
    QCOMPARE(tokenizer.piece(0), std::string("<unk>"));
    QCOMPARE(tokenizer.piece(1), std::string("<s>"));
    QCOMPARE(tokenizer.piece(2), std::string("</s>"));
    QCOMPARE(tokenizer.kind(0), PieceKind::Unknown);
    QVERIFY(tokenizer.is_control(1));
    QVERIFY(tokenizer.is_control(2));
    QVERIFY(!tokenizer.is_control(0));
    const std::int32_t newline = tokenizer.find_piece("<0x0A>").value();
    QCOMPARE(tokenizer.kind(newline), PieceKind::Byte);
    QCOMPARE(tokenizer.byte_value(newline), std::optional<std::uint8_t>(0x0A));
    const std::int32_t the = tokenizer.find_piece("▁the").value();
    QCOMPARE(tokenizer.kind(the), PieceKind::Normal);
    QCOMPARE(tokenizer.byte_value(the), std::optional<std::uint8_t>());
    QCOMPARE(tokenizer.find_piece("no such piece"), std::optional<std::int32_t>());
    QCOMPARE(tokenizer.find_piece("<unk>"), std::optional<std::int32_t>(0));
  }

  void rejectsIdsOutsideTheVocabulary() {
    const int size = tokenizer_->vocab_size();
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, tokenizer_->piece(size));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, tokenizer_->kind(-1));
    const std::vector<std::int32_t> ids{5, size};
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, tokenizer_->decode(ids));
  }

  void movesWithItsState() {
    Tokenizer moved = Tokenizer::load(dir_.path().toStdString());
    const std::vector<std::int32_t> ids = moved.encode("café", true);
    Tokenizer target = std::move(moved);
    QCOMPARE(target.decode(ids), std::string("café"));
    Tokenizer assigned = Tokenizer::load(dir_.path().toStdString());
    assigned = std::move(target);
    QCOMPARE(assigned.encode("café", true), ids);
  }

 private:
  QTemporaryDir dir_;
  std::optional<Tokenizer> tokenizer_;
};

QUIRE_TEST(TokenizerTest)
#include "test_tokenizer.moc"
