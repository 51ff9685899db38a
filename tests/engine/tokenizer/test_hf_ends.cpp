// tokenizer.json's post-processors (what add_special adds) and decoders, on
// small files written here. Expected values are those of Hugging Face's
// tokenizers (the Rust library, 0.23.2 through its Node.js binding) on the
// same files; where @huggingface/tokenizers (JavaScript) or Quire differs, a
// comment says so.

#include <QTest>

#include "test_main.h"
#include "tokenizer_json_support.h"

using quire::test::Json;

namespace {

// <unk> 0, <s> 1, </s> 2, h 3, i 4; <s> and </s> are special added tokens.
const QByteArray kSpecialTokens =
    R"([{"id": 1, "content": "<s>", "special": true}, {"id": 2, "content": "</s>", "special": true}])";

const QByteArray kTemplate = R"({"type": "TemplateProcessing",
  "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
             {"SpecialToken": {"id": "</s>", "type_id": 0}}],
  "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
  "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]},
                     "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}})";

const QByteArray kBosTemplate = R"({"type": "TemplateProcessing",
  "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
  "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
  "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}})";

const QByteArray kByteLevel =
    R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true})";

}  // namespace

class HfEndsTest : public QObject {
  Q_OBJECT

 private slots:
  void postProcessors_data() {
    QTest::addColumn<QByteArray>("post_processor");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QList<int>>("ids");  // with add_special

    QTest::newRow("TemplateProcessing") << kTemplate << QByteArray("hi") << QList<int>{1, 3, 4, 2};
    QTest::newRow("TemplateProcessing, empty text")
        << kTemplate << QByteArray() << QList<int>{1, 2};
    QTest::newRow("TemplateProcessing, BOS only")
        << kBosTemplate << QByteArray("hi") << QList<int>{1, 3, 4};
    QTest::newRow("ByteLevel adds nothing") << kByteLevel << QByteArray("hi") << QList<int>{3, 4};
    QTest::newRow("Sequence") << R"({"type": "Sequence", "processors": [)" + kByteLevel + ", " +
                                     kBosTemplate + "]}"
                              << QByteArray("hi") << QList<int>{1, 3, 4};
    QTest::newRow("RobertaProcessing")
        << QByteArray(R"({"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1],
                          "trim_offsets": true, "add_prefix_space": true})")
        << QByteArray("hi") << QList<int>{1, 3, 4, 2};
    QTest::newRow("BertProcessing")
        << QByteArray(R"({"type": "BertProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1]})")
        << QByteArray("hi") << QList<int>{1, 3, 4, 2};
    QTest::newRow("none") << QByteArray() << QByteArray("hi") << QList<int>{3, 4};
  }

  void postProcessors() {
    QFETCH(QByteArray, post_processor);
    QFETCH(QByteArray, text);
    QFETCH(QList<int>, ids);
    const auto tokenizer = quire::test::load_json(
        quire::test::tokenizer_json(quire::test::bpe_model({"<s>", "</s>", "h", "i"}), {}, {},
                                    post_processor, {}, kSpecialTokens));
    QCOMPARE(quire::test::to_list(tokenizer.encode(text.toStdString(), true)), ids);
    // Nothing is added unless asked for.
    QCOMPARE(tokenizer.encode(text.toStdString(), false).size(), std::size_t(text.size()));
  }

  void decoders_data() {
    QTest::addColumn<QByteArray>("decoder");
    QTest::addColumn<QByteArrayList>("tokens");   // the vocabulary in order, decoded in this order
    QTest::addColumn<QByteArrayList>("special");  // those of the tokens that are special
    QTest::addColumn<QByteArray>("kept");         // special tokens kept
    QTest::addColumn<QByteArray>("skipped");      // special tokens skipped

    const QByteArray byte_level = kByteLevel;
    QTest::newRow("ByteLevel") << byte_level
                               << QByteArrayList{"Hello",        "\u0120wor", "ld",    "\u0120",
                                                 "\u00f0\u0141", "\u013a",    "\u0122"}
                               << QByteArrayList{} << QByteArray("Hello world \U0001F600")
                               << QByteArray("Hello world \U0001F600");
    QTest::newRow("ByteLevel, part of a character")
        << byte_level << QByteArrayList{"a", "\u00f0\u0141"} << QByteArrayList{}
        << QByteArray("a\uFFFD") << QByteArray("a\uFFFD");
    QTest::newRow("ByteLevel around a special token")
        << byte_level << QByteArrayList{"Hi", "<|end|>", "\u0120there"} << QByteArrayList{"<|end|>"}
        << QByteArray("Hi<|end|> there") << QByteArray("Hi there");
    QTest::newRow("ByteFallback") << QByteArray(R"({"type": "ByteFallback"})")
                                  << QByteArrayList{"<0xE2>", "<0x82>", "<0xAC>", "a", "<0x41>"}
                                  << QByteArrayList{} << QByteArray("\u20ACaA")
                                  << QByteArray("\u20ACaA");
    // One U+FFFD for E2 82, as tokenizers.js and SentencePiece decode it; the
    // Rust library writes one per byte.
    QTest::newRow("ByteFallback, broken character")
        << QByteArray(R"({"type": "ByteFallback"})")
        << QByteArrayList{"<0xE2>", "<0x82>", "a", "<0xFF>"} << QByteArrayList{}
        << QByteArray("\uFFFDa\uFFFD") << QByteArray("\uFFFDa\uFFFD");
    const QByteArray metaspace =
        R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true})";
    QTest::newRow("Metaspace") << metaspace << QByteArrayList{"▁Hello", "▁world", "▁", "!"}
                               << QByteArrayList{} << QByteArray("Hello world !")
                               << QByteArray("Hello world !");
    // tokenizers.js drops the first space whatever prepend_scheme says.
    QTest::newRow("Metaspace, prepend_scheme never")
        << QByteArray(
               R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": true})")
        << QByteArrayList{"▁Hello", "▁world"} << QByteArrayList{} << QByteArray(" Hello world")
        << QByteArray(" Hello world");
    QTest::newRow("Fuse") << QByteArray(R"({"type": "Fuse"})") << QByteArrayList{"a", "b ", "c"}
                          << QByteArrayList{} << QByteArray("ab c") << QByteArray("ab c");
    QTest::newRow("Strip") << QByteArray(
                                  R"({"type": "Strip", "content": " ", "start": 1, "stop": 0})")
                           << QByteArrayList{"  a", "  b "} << QByteArrayList{}
                           << QByteArray(" a b ") << QByteArray(" a b ");
    QTest::newRow("Strip at the end")
        << QByteArray(R"({"type": "Strip", "content": "x", "start": 0, "stop": 2})")
        << QByteArrayList{"axxx", "bx"} << QByteArrayList{} << QByteArray("axb")
        << QByteArray("axb");
    QTest::newRow("Replace")
        << QByteArray(R"({"type": "Replace", "pattern": {"String": "▁"}, "content": " "})")
        << QByteArrayList{"▁a▁", "b"} << QByteArrayList{} << QByteArray(" a b")
        << QByteArray(" a b");
    QTest::newRow("Replace regex")
        << QByteArray(R"({"type": "Replace", "pattern": {"Regex": "[0-9]+"}, "content": "*"})")
        << QByteArrayList{"a12b3", "4"} << QByteArrayList{} << QByteArray("a*b**")
        << QByteArray("a*b**");
    QTest::newRow("Sequence, as Mistral's")
        << QByteArray(R"({"type": "Sequence", "decoders": [
             {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
             {"type": "ByteFallback"}, {"type": "Fuse"},
             {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})")
        << QByteArrayList{"▁Hi", "▁there", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "▁", "<s>"}
        << QByteArrayList{"<s>"} << QByteArray("Hi there\U0001F600 <s>")
        << QByteArray("Hi there\U0001F600 ");
    QTest::newRow("none: pieces joined with spaces")
        << QByteArray() << QByteArrayList{"a", "b"} << QByteArrayList{} << QByteArray("a b")
        << QByteArray("a b");
  }

  void decoders() {
    QFETCH(QByteArray, decoder);
    QFETCH(QByteArrayList, tokens);
    QFETCH(QByteArrayList, special);
    QFETCH(QByteArray, kept);
    QFETCH(QByteArray, skipped);
    Json model = quire::test::bpe_model(tokens, Json::array(), false);
    model["byte_fallback"] = true;
    Json added = Json::array();
    for (const QByteArray& token : special) {
      added.push_back(
          {{"id", tokens.indexOf(token)}, {"content", token.toStdString()}, {"special", true}});
    }
    const auto tokenizer = quire::test::load_json(quire::test::tokenizer_json(
        model, {}, {}, {}, decoder,
        added.empty() ? QByteArray() : QByteArray::fromStdString(added.dump())));
    std::vector<std::int32_t> ids;
    for (const QByteArray& token : tokens)
      ids.push_back(tokenizer.find_piece(token.toStdString()).value());
    QCOMPARE(QByteArray::fromStdString(tokenizer.decode(ids, false)), kept);
    QCOMPARE(QByteArray::fromStdString(tokenizer.decode(ids, true)), skipped);
  }
};

QUIRE_TEST(HfEndsTest)
#include "test_hf_ends.moc"
