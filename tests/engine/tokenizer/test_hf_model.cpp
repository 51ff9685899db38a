// tokenizer.json's BPE model and added tokens, on small files written here.
// Expected ids are those of Hugging Face's tokenizers (the Rust library,
// 0.23.2 through its Node.js binding) on the same files; where
// @huggingface/tokenizers (JavaScript) differs, a comment says so.

#include <QTest>

#include "test_main.h"
#include "tokenizer_json_support.h"

using quire::engine::EncodeOptions;
using quire::engine::TextRange;
using quire::test::Json;

namespace {

// <unk> 0, a 1, b 2, c 3, ab 4, bc 5, abc 6, d 7, then `extra`.
Json abc_model(const QByteArray& merges, const QByteArrayList& extra = {}) {
  Json model =
      quire::test::bpe_model(QByteArrayList{"a", "b", "c", "ab", "bc", "abc", "d"} + extra);
  model["merges"] = Json::parse(merges.toStdString());
  return model;
}

// <unk> 0, then one token per character: a 1 ... z 26, " " 27, < 28, > 29,
// | 30, ! 31, . 32, , 33, ▁ 34. Added tokens take 35 and on.
Json letters_model() {
  QByteArrayList characters;
  for (const char32_t c : QStringLiteral("abcdefghijklmnopqrstuvwxyz <>|!.,▁").toUcs4())
    characters << QString::fromUcs4(&c, 1).toUtf8();
  return quire::test::bpe_model(characters);
}

QByteArray added_token(int id, const QByteArray& content, bool special,
                       const QByteArray& options = {}) {
  Json token = {{"id", id}, {"content", content.toStdString()}, {"special", special}};
  if (!options.isEmpty()) token.update(Json::parse("{" + options.mid(1).toStdString() + "}"));
  return QByteArray::fromStdString(token.dump());
}

}  // namespace

class HfModelTest : public QObject {
  Q_OBJECT

 private slots:
  void bpe_data() {
    QTest::addColumn<QByteArray>("model");  // JSON
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QList<int>>("ids");

    const QByteArray strings = R"(["a b", "b c", "ab c"])";
    const QByteArray pairs = R"([["a", "b"], ["b", "c"], ["ab", "c"]])";
    for (const auto& [name, merges] : {std::pair{"strings", strings}, std::pair{"pairs", pairs}}) {
      const QByteArray model = QByteArray::fromStdString(abc_model(merges).dump());
      QTest::addRow("merges as %s: abc", name) << model << QByteArray("abc") << QList<int>{6};
      QTest::addRow("merges as %s: abcab", name)
          << model << QByteArray("abcab") << QList<int>{6, 4};
      QTest::addRow("merges as %s: bca", name) << model << QByteArray("bca") << QList<int>{5, 1};
      QTest::addRow("merges as %s: cab", name) << model << QByteArray("cab") << QList<int>{3, 4};
    }
    // "b c" ranks first, so "ab" never forms in "abc".
    const QByteArray ranked =
        QByteArray::fromStdString(abc_model(R"(["b c", "a b", "ab c"])").dump());
    QTest::newRow("lower rank merges first") << ranked << QByteArray("abc") << QList<int>{1, 5};
    QTest::newRow("lower rank merges first, twice")
        << ranked << QByteArray("abcab") << QList<int>{1, 5, 4};

    // "ca" (8) is in the vocabulary but no merge makes it.
    Json ignoring = abc_model(R"(["a b"])", {"ca"});
    QTest::newRow("merges only") << QByteArray::fromStdString(ignoring.dump()) << QByteArray("ca")
                                 << QList<int>{3, 1};
    ignoring["ignore_merges"] = true;
    const QByteArray ignore = QByteArray::fromStdString(ignoring.dump());
    QTest::newRow("ignore_merges: a word in the vocabulary")
        << ignore << QByteArray("ca") << QList<int>{8};
    QTest::newRow("ignore_merges: a word that is not")
        << ignore << QByteArray("cab") << QList<int>{3, 4};

    const QByteArray plain = QByteArray::fromStdString(abc_model(strings).dump());
    QTest::newRow("unknown character") << plain << QByteArray("axb") << QList<int>{1, 0, 2};
    QTest::newRow("unknown characters, not fused") << plain << QByteArray("xy") << QList<int>{0, 0};
    Json fused = abc_model(strings);
    fused["fuse_unk"] = true;
    const QByteArray fuse = QByteArray::fromStdString(fused.dump());
    QTest::newRow("fuse_unk") << fuse << QByteArray("axyb") << QList<int>{1, 0, 2};
    QTest::newRow("fuse_unk, only runs") << fuse << QByteArray("xaz") << QList<int>{0, 1, 0};
    // A pair listed twice takes the rank of its last entry (tokenizers.js too).
    QTest::newRow("repeated merge")
        << QByteArray::fromStdString(abc_model(R"(["a b", "b c", "ab c", "a b"])").dump())
        << QByteArray("abc") << QList<int>{1, 5};

    // Without an unknown token the character is dropped and its neighbours
    // merge (tokenizers.js keeps them apart: 1, 2).
    Json no_unknown = abc_model(strings);
    no_unknown.erase("unk_token");
    QTest::newRow("no unk_token") << QByteArray::fromStdString(no_unknown.dump())
                                  << QByteArray("axb") << QList<int>{4};

    // <0xC3> 8, <0xA9> 9, <0x41> 10: "é" is C3 A9, "è" is C3 A8.
    Json bytes = abc_model(strings, {"<0xC3>", "<0xA9>", "<0x41>"});
    bytes["byte_fallback"] = true;
    const QByteArray fallback = QByteArray::fromStdString(bytes.dump());
    QTest::newRow("byte_fallback") << fallback << QByteArray("a\u00e9b") << QList<int>{1, 8, 9, 2};
    QTest::newRow("byte_fallback, no byte piece") << fallback << QByteArray("z") << QList<int>{0};
    QTest::newRow("byte_fallback, some byte pieces")
        << fallback << QByteArray("\u00e8a") << QList<int>{0, 1};
  }

  void bpe() {
    QFETCH(QByteArray, model);
    QFETCH(QByteArray, text);
    QFETCH(QList<int>, ids);
    const auto tokenizer =
        quire::test::load_json(quire::test::tokenizer_json(Json::parse(model.toStdString())));
    QCOMPARE(quire::test::to_list(tokenizer.encode(text.toStdString(), false)), ids);
  }

  void addedTokens_data() {
    QTest::addColumn<QByteArray>("added");  // JSON list
    QTest::addColumn<QByteArray>("normalizer");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QList<int>>("ids");

    const QByteArray special = "[" + added_token(35, "<x>", true) + "]";
    QTest::newRow("special") << special << QByteArray() << QByteArray("a<x>b")
                             << QList<int>{1, 35, 2};
    QTest::newRow("special twice")
        << special << QByteArray() << QByteArray("<x><x>") << QList<int>{35, 35};
    QTest::newRow("special, incomplete")
        << special << QByteArray() << QByteArray("<x") << QList<int>{28, 24};
    QTest::newRow("not special") << "[" + added_token(35, "<x>", false) + "]" << QByteArray()
                                 << QByteArray("a<x>b") << QList<int>{1, 35, 2};
    QTest::newRow("longest first")
        << "[" + added_token(35, "<x>", true) + ", " + added_token(36, "<x>>", true) + "]"
        << QByteArray() << QByteArray("<x>>>") << QList<int>{36, 29};

    const QByteArray lstrip = "[" + added_token(35, "<x>", true, R"(, "lstrip": true)") + "]";
    QTest::newRow("lstrip") << lstrip << QByteArray() << QByteArray("a  <x> b")
                            << QList<int>{1, 35, 27, 2};
    QTest::newRow("lstrip at the start")
        << lstrip << QByteArray() << QByteArray("  <x>") << QList<int>{35};
    const QByteArray rstrip = "[" + added_token(35, "<x>", true, R"(, "rstrip": true)") + "]";
    QTest::newRow("rstrip") << rstrip << QByteArray() << QByteArray("a  <x>  b")
                            << QList<int>{1, 27, 27, 35, 2};
    QTest::newRow("rstrip at the end")
        << rstrip << QByteArray() << QByteArray("<x> ") << QList<int>{35};
    QTest::newRow("lstrip and rstrip")
        << "[" + added_token(35, "<x>", true, R"(, "lstrip": true, "rstrip": true)") + "]"
        << QByteArray() << QByteArray("a <x> b") << QList<int>{1, 35, 2};

    // tokenizers.js ignores single_word and matches "ab" inside words too.
    QTest::newRow("single_word") << "[" + added_token(35, "ab", false, R"(, "single_word": true)") +
                                        "]"
                                 << QByteArray() << QByteArray("ab cab abc ab!")
                                 << QList<int>{35, 27, 3, 1, 2, 27, 1, 2, 3, 27, 35, 31};
    QTest::newRow("not single_word")
        << "[" + added_token(35, "ab", false) + "]" << QByteArray() << QByteArray("ab cab abc")
        << QList<int>{35, 27, 3, 35, 27, 35, 3};

    const QByteArray lowercase = R"({"type": "Lowercase"})";
    QTest::newRow("normalized: found in the normalized text")
        << "[" + added_token(35, "<x>", false, R"(, "normalized": true)") + "]" << lowercase
        << QByteArray("A<X>B") << QList<int>{1, 35, 2};
    const QByteArray raw = "[" + added_token(35, "<x>", false, R"(, "normalized": false)") + "]";
    QTest::newRow("not normalized: found in the text as it is")
        << raw << lowercase << QByteArray("A<X>B") << QList<int>{1, 28, 24, 29, 2};
    QTest::newRow("not normalized: exact spelling")
        << raw << lowercase << QByteArray("a<x>b") << QList<int>{1, 35, 2};
    QTest::newRow("special and normalized")
        << "[" + added_token(35, "<X>", true, R"(, "normalized": true)") + "]" << lowercase
        << QByteArray("a<X>b") << QList<int>{1, 35, 2};
    // Each stretch between added tokens is normalized on its own.
    const QByteArray prepend = R"({"type": "Prepend", "prepend": "▁"})";
    QTest::newRow("normalizer on each stretch")
        << special << prepend << QByteArray("a<x>b") << QList<int>{34, 1, 35, 34, 2};
    QTest::newRow("normalizer after a leading token")
        << special << prepend << QByteArray("<x>b") << QList<int>{35, 34, 2};
  }

  // With parse_special, as Hugging Face encodes.
  void addedTokens() {
    QFETCH(QByteArray, added);
    QFETCH(QByteArray, normalizer);
    QFETCH(QByteArray, text);
    QFETCH(QList<int>, ids);
    const auto tokenizer = quire::test::load_json(
        quire::test::tokenizer_json(letters_model(), normalizer, {}, {}, {}, added));
    QCOMPARE(quire::test::to_list(tokenizer.encode(text.toStdString(), {.parse_special = true})),
             ids);
  }

  // Without parse_special a special token's spelling is text; other added
  // tokens are still found. Literal ranges keep special tokens out.
  void specialTokensOnlyWhenParsed() {
    const QByteArray added = "[" + added_token(35, "<x>", true) + ", " +
                             added_token(36, "||", false) + ", " + added_token(37, "<y>", true) +
                             "]";
    const auto tokenizer = quire::test::load_json(quire::test::tokenizer_json(
        letters_model(), R"({"type": "Lowercase"})", {}, {}, {}, added));
    const std::string text = "a<x>||<y>";
    auto encode = [&](const EncodeOptions& options) {
      return quire::test::to_list(tokenizer.encode(text, options));
    };
    QCOMPARE(encode({.parse_special = true}), (QList<int>{1, 35, 36, 37}));
    QCOMPARE(encode({}), (QList<int>{1, 28, 24, 29, 36, 28, 25, 29}));
    const TextRange first[] = {{1, 4}};
    QCOMPARE(encode({.parse_special = true, .literal = first}),
             (QList<int>{1, 28, 24, 29, 36, 37}));
    const TextRange last[] = {{6, 9}};
    QCOMPARE(encode({.parse_special = true, .literal = last}), (QList<int>{1, 35, 36, 28, 25, 29}));
    // A range that covers part of a token's spelling keeps it out too.
    const TextRange partial[] = {{0, 2}};
    QCOMPARE(encode({.parse_special = true, .literal = partial}),
             (QList<int>{1, 28, 24, 29, 36, 37}));
    // Without a decoder the pieces are joined with spaces.
    const std::vector<std::int32_t> ids{1, 35, 36, 37};
    QCOMPARE(tokenizer.decode(ids), std::string("a ||"));
    QCOMPARE(tokenizer.decode(ids, false), std::string("a <x> || <y>"));
  }
};

QUIRE_TEST(HfModelTest)
#include "test_hf_model.moc"
