// tokenizer.json's normalizers and pre-tokenizers, one by one, on small files
// written here. Expected texts are those of Hugging Face's tokenizers (the
// Rust library, 0.23.2 through its Node.js binding) on the same files; where
// @huggingface/tokenizers (JavaScript, the reference of
// test_tokenizer_reference) differs, a comment says so.

#include <QTest>

#include "test_main.h"
#include "tokenizer_json_support.h"

using quire::test::Json;

class HfTextStepsTest : public QObject {
  Q_OBJECT

 private slots:
  void normalizers_data() {
    QTest::addColumn<QByteArray>("normalizer");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("normalized");

    QTest::newRow("NFC") << QByteArray(R"({"type": "NFC"})") << QByteArray("cafe\u0301 \u212b")
                         << QByteArray("caf\u00e9 \u00c5");
    QTest::newRow("NFD") << QByteArray(R"({"type": "NFD"})") << QByteArray("caf\u00e9")
                         << QByteArray("cafe\u0301");
    QTest::newRow("NFKC") << QByteArray(R"({"type": "NFKC"})")
                          << QByteArray("\ufb01ne \u2460 \uff21 cafe\u0301")
                          << QByteArray("fine 1 A caf\u00e9");
    QTest::newRow("NFKD") << QByteArray(R"({"type": "NFKD"})") << QByteArray("\ufb01 caf\u00e9")
                          << QByteArray("fi cafe\u0301");
    QTest::newRow("Prepend") << QByteArray(R"({"type": "Prepend", "prepend": "▁"})")
                             << QByteArray("hi there") << QByteArray("▁hi there");
    QTest::newRow("Replace string")
        << QByteArray(R"({"type": "Replace", "pattern": {"String": " "}, "content": "▁"})")
        << QByteArray(" a  b ") << QByteArray("▁a▁▁b▁");
    QTest::newRow("Replace regex")
        << QByteArray(R"({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})")
        << QByteArray("a  b   c d") << QByteArray("a b c d");
    // \s is Unicode's White_Space, U+0085 included, as in Oniguruma.
    QTest::newRow("Replace regex \\s")
        << QByteArray(R"({"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": "_"})")
        << QByteArray("a\u0085b\t\nc") << QByteArray("a_b_c");
    QTest::newRow("Strip both")
        << QByteArray(R"({"type": "Strip", "strip_left": true, "strip_right": true})")
        << QByteArray(" \t a b \n ") << QByteArray("a b");
    QTest::newRow("Strip left")
        << QByteArray(R"({"type": "Strip", "strip_left": true, "strip_right": false})")
        << QByteArray("  a b  ") << QByteArray("a b  ");
    QTest::newRow("Strip right")
        << QByteArray(R"({"type": "Strip", "strip_left": false, "strip_right": true})")
        << QByteArray("  a b  ") << QByteArray("  a b");
    QTest::newRow("Lowercase") << QByteArray(R"({"type": "Lowercase"})")
                               << QByteArray("HeLLo \u00c9T\u00c9 \u0130")
                               << QByteArray("hello \u00e9t\u00e9 i\u0307");
    QTest::newRow("StripAccents after NFD")
        << QByteArray(
               R"({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]})")
        << QByteArray("caf\u00e9 na\u00efve") << QByteArray("cafe naive");
    QTest::newRow("Sequence of Prepend and Replace")
        << QByteArray(R"({"type": "Sequence", "normalizers": [
             {"type": "Prepend", "prepend": "▁"},
             {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})")
        << QByteArray("Hello world") << QByteArray("▁Hello▁world");
    QTest::newRow("Sequence in its order")
        << QByteArray(R"({"type": "Sequence", "normalizers": [
             {"type": "Replace", "pattern": {"String": " "}, "content": "_"},
             {"type": "Prepend", "prepend": " "}]})")
        << QByteArray("Hello world") << QByteArray(" Hello_world");
    QTest::newRow("Sequence of NFKC, Lowercase and Strip")
        << QByteArray(R"({"type": "Sequence", "normalizers": [{"type": "NFKC"},
             {"type": "Lowercase"}, {"type": "Strip", "strip_left": true, "strip_right": true}]})")
        << QByteArray("  \uff28\uff49 ") << QByteArray("hi");
  }

  // One token per character and no merges: the pieces spell the normalized text.
  void normalizers() {
    QFETCH(QByteArray, normalizer);
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, normalized);
    QByteArrayList characters;
    for (const char32_t c : QString::fromUtf8(normalized).toUcs4())
      characters << QString::fromUcs4(&c, 1).toUtf8();
    const auto tokenizer = quire::test::load_json(
        quire::test::tokenizer_json(quire::test::bpe_model(characters), normalizer));
    const auto ids = tokenizer.encode(text.toStdString(), false);
    QCOMPARE(quire::test::pieces(tokenizer, ids).join(), normalized);
  }

  void preTokenizers_data() {
    QTest::addColumn<QByteArray>("pre_tokenizer");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArrayList>("words");

    // tokenizers.js isolates every match whatever the behavior says.
    const QByteArray dash = R"({"type": "Split", "pattern": {"String": "-"}, "invert": false, )";
    QTest::newRow("Split Removed") << dash + R"("behavior": "Removed"})" << QByteArray("a-b--c-")
                                   << QByteArrayList{"a", "b", "c"};
    QTest::newRow("Split Isolated") << dash + R"("behavior": "Isolated"})" << QByteArray("a-b--c-")
                                    << QByteArrayList{"a", "-", "b", "-", "-", "c", "-"};
    QTest::newRow("Split MergedWithPrevious")
        << dash + R"("behavior": "MergedWithPrevious"})" << QByteArray("a-b--c-")
        << QByteArrayList{"a-", "b-", "-", "c-"};
    QTest::newRow("Split MergedWithNext")
        << dash + R"("behavior": "MergedWithNext"})" << QByteArray("a-b--c-")
        << QByteArrayList{"a", "-b", "-", "-c", "-"};
    QTest::newRow("Split Contiguous")
        << dash + R"("behavior": "Contiguous"})" << QByteArray("a-b--c-")
        << QByteArrayList{"a", "-", "b", "--", "c", "-"};
    const QByteArray letters =
        R"({"type": "Split", "pattern": {"Regex": "[a-z]+"}, "invert": true, )";
    QTest::newRow("Split inverted Removed")
        << letters + R"("behavior": "Removed"})" << QByteArray("ab, cd,,e")
        << QByteArrayList{"ab", "cd", "e"};
    QTest::newRow("Split inverted Isolated")
        << letters + R"("behavior": "Isolated"})" << QByteArray("ab, cd,,e")
        << QByteArrayList{"ab", ", ", "cd", ",,", "e"};
    QTest::newRow("Split inverted MergedWithPrevious")
        << letters + R"("behavior": "MergedWithPrevious"})" << QByteArray("ab, cd,,e")
        << QByteArrayList{"ab, ", "cd,,", "e"};
    QTest::newRow("Split inverted MergedWithNext")
        << letters + R"("behavior": "MergedWithNext"})" << QByteArray("ab, cd,,e")
        << QByteArrayList{"ab", ", cd", ",,e"};
    QTest::newRow("Split inverted Contiguous")
        << letters + R"("behavior": "Contiguous"})" << QByteArray("ab, cd,,e")
        << QByteArrayList{"ab", ", ", "cd", ",,", "e"};
    QTest::newRow("Split regex") << QByteArray(
                                        R"({"type": "Split", "pattern": {"Regex": "\\s+|\\d+"},
                          "behavior": "Isolated", "invert": false})")
                                 << QByteArray("ab  12c d")
                                 << QByteArrayList{"ab", "  ", "12", "c", " ", "d"};

    const QByteArray byte_level = R"({"type": "ByteLevel", "trim_offsets": false, )";
    QTest::newRow("ByteLevel") << byte_level + R"("add_prefix_space": false, "use_regex": true})"
                               << QByteArray("Hello world's 42!")
                               << QByteArrayList{"Hello", "\u0120world", "'s", "\u012042", "!"};
    QTest::newRow("ByteLevel add_prefix_space")
        << byte_level + R"("add_prefix_space": true, "use_regex": true})"
        << QByteArray("Hello  world") << QByteArrayList{"\u0120Hello", "\u0120", "\u0120world"};
    QTest::newRow("ByteLevel without regex")
        << byte_level + R"("add_prefix_space": false, "use_regex": false})"
        << QByteArray("Hi there \u00e9") << QByteArrayList{"Hi\u0120there\u0120\u00c3\u00a9"};
    QTest::newRow("ByteLevel without regex, add_prefix_space")
        << byte_level + R"("add_prefix_space": true, "use_regex": false})" << QByteArray("Hi there")
        << QByteArrayList{"\u0120Hi\u0120there"};

    // tokenizers.js never splits in Metaspace.
    QTest::newRow("Metaspace always, split")
        << QByteArray(
               R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true})")
        << QByteArray("Hey  you there") << QByteArrayList{"▁Hey", "▁", "▁you", "▁there"};
    QTest::newRow("Metaspace always, no split")
        << QByteArray(
               R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": false})")
        << QByteArray("Hey you") << QByteArrayList{"▁Hey▁you"};
    QTest::newRow("Metaspace never")
        << QByteArray(
               R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": true})")
        << QByteArray("Hey you") << QByteArrayList{"Hey", "▁you"};
    QTest::newRow("Metaspace first")
        << QByteArray(
               R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true})")
        << QByteArray("Hey you") << QByteArrayList{"▁Hey", "▁you"};
    QTest::newRow("Metaspace after a leading space")
        << QByteArray(
               R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true})")
        << QByteArray(" Hey") << QByteArrayList{"▁Hey"};
    QTest::newRow("Metaspace from before prepend_scheme")
        << QByteArray(R"({"type": "Metaspace", "replacement": "▁", "add_prefix_space": true})")
        << QByteArray("Hey you") << QByteArrayList{"▁Hey", "▁you"};
    QTest::newRow("Metaspace with another replacement")
        << QByteArray(
               R"({"type": "Metaspace", "replacement": "_", "prepend_scheme": "always", "split": true})")
        << QByteArray("a b") << QByteArrayList{"_a", "_b"};

    QTest::newRow("Digits") << QByteArray(R"({"type": "Digits", "individual_digits": false})")
                            << QByteArray("ab123c45") << QByteArrayList{"ab", "123", "c", "45"};
    QTest::newRow("Digits individual")
        << QByteArray(R"({"type": "Digits", "individual_digits": true})") << QByteArray("ab123c45")
        << QByteArrayList{"ab", "1", "2", "3", "c", "4", "5"};
    QTest::newRow("Whitespace") << QByteArray(R"({"type": "Whitespace"})")
                                << QByteArray("Hi, you!  ok")
                                << QByteArrayList{"Hi", ",", "you", "!", "ok"};
    QTest::newRow("WhitespaceSplit")
        << QByteArray(R"({"type": "WhitespaceSplit"})") << QByteArray("Hi, you!  ok")
        << QByteArrayList{"Hi,", "you!", "ok"};
    QTest::newRow("Sequence")
        << QByteArray(R"({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                          {"type": "Digits", "individual_digits": true}]})")
        << QByteArray("a12 b3") << QByteArrayList{"a", "1", "2", "b", "3"};
    QTest::newRow("Sequence of Split and ByteLevel")
        << QByteArray(R"({"type": "Sequence", "pretokenizers": [
             {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated",
              "invert": false},
             {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false,
              "use_regex": false}]})")
        << QByteArray("x 12345 y") << QByteArrayList{"x\u0120", "123", "45", "\u0120y"};
  }

  // Each word the pre-tokenizer makes is one token of the model (words_model).
  void preTokenizers() {
    QFETCH(QByteArray, pre_tokenizer);
    QFETCH(QByteArray, text);
    QFETCH(QByteArrayList, words);
    const auto tokenizer = quire::test::load_json(
        quire::test::tokenizer_json(quire::test::words_model(words), {}, pre_tokenizer));
    const auto ids = tokenizer.encode(text.toStdString(), false);
    QCOMPARE(quire::test::pieces(tokenizer, ids), words);
  }

  // prepend_scheme "first": only the text at the very start of the input
  // gets "▁", not the text after an added token.
  void metaspaceFirstOnlyAtTheStart_data() {
    QTest::addColumn<QByteArray>("scheme");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArrayList>("words");
    QTest::newRow("first") << QByteArray("first") << QByteArray("a b<x>c d")
                           << QByteArrayList{"▁a", "▁b", "<x>", "c", "▁d"};
    QTest::newRow("first, token first")
        << QByteArray("first") << QByteArray("<x>c") << QByteArrayList{"<x>", "c"};
    QTest::newRow("always") << QByteArray("always") << QByteArray("a b<x>c d")
                            << QByteArrayList{"▁a", "▁b", "<x>", "▁c", "▁d"};
  }

  void metaspaceFirstOnlyAtTheStart() {
    QFETCH(QByteArray, scheme);
    QFETCH(QByteArray, text);
    QFETCH(QByteArrayList, words);
    Json model = quire::test::words_model({"▁a", "▁b", "c", "▁c", "▁d", "<x>"});
    const Json pre_tokenizer = {{"type", "Metaspace"},
                                {"replacement", "▁"},
                                {"split", true},
                                {"prepend_scheme", scheme.toStdString()}};
    const int x = model["vocab"]["<x>"].get<int>();
    const Json added = Json::array({{{"id", x}, {"content", "<x>"}, {"special", true}}});
    const auto tokenizer = quire::test::load_json(
        quire::test::tokenizer_json(model, {}, QByteArray::fromStdString(pre_tokenizer.dump()), {},
                                    {}, QByteArray::fromStdString(added.dump())));
    const auto ids = tokenizer.encode(text.toStdString(), {.parse_special = true});
    QCOMPARE(quire::test::pieces(tokenizer, ids), words);
  }
};

QUIRE_TEST(HfTextStepsTest)
#include "test_hf_text_steps.moc"
