// tokenizer.json files that cannot be read: each is refused at load with one
// ModelError line that names the file, the place and the problem, and says
// what to do.

#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <string>

#include "quire/engine/model_error.h"
#include "quire/engine/tokenizer/detail/tokenizer_json_text.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "test_main.h"
#include "tokenizer_json_support.h"
#include "tokenizer_test_support.h"

using quire::engine::ModelError;
using quire::engine::Tokenizer;
using quire::test::Json;

namespace {

// A file that uses every component field the reader knows; the type table
// below breaks one field at a time.
Json complete_tokenizer() {
  return Json::parse(R"({
    "version": "1.0",
    "model": {"type": "BPE", "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "▁": 4},
              "merges": ["a b"], "unk_token": "<unk>", "dropout": null,
              "continuing_subword_prefix": null, "end_of_word_suffix": null,
              "fuse_unk": false, "byte_fallback": false, "ignore_merges": false},
    "added_tokens": [{"id": 5, "content": "<s>", "special": true, "single_word": false,
                      "lstrip": false, "rstrip": false, "normalized": false}],
    "normalizer": {"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "▁"},
      {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
      {"type": "Strip", "strip_left": false, "strip_right": false}]},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "\\d"}, "behavior": "Isolated", "invert": false},
      {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
      {"type": "Digits", "individual_digits": true},
      {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
    "post_processor": {"type": "Sequence", "processors": [
      {"type": "ByteLevel"},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                  {"Sequence": {"id": "A", "type_id": 0}}],
       "special_tokens": {"<s>": {"id": "<s>", "ids": [5], "tokens": ["<s>"]}}}]},
    "decoder": {"type": "Sequence", "decoders": [
      {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
      {"type": "Strip", "content": " ", "start": 1, "stop": 0},
      {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}]}
  })");
}

const char* const kSmallModel =
    R"("model": {"type": "BPE", "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3}, "merges": ["a b"]})";

QString load_error(const QByteArray& text) {
  try {
    quire::engine::detail::load_tokenizer_json_text(text.toStdString());
  } catch (const ModelError& error) {
    return QString::fromUtf8(error.what());
  }
  return {};
}

}  // namespace

class TokenizerJsonErrorsTest : public QObject {
  Q_OBJECT

 private slots:
  void theCompleteFileLoads() {
    const auto tokenizer = quire::test::load_json(complete_tokenizer());
    QCOMPARE(tokenizer.vocab_size(), 6);
    const std::vector<std::int32_t> ids = tokenizer.encode("ab", true);
    QCOMPARE(ids.front(), 5);
    QCOMPARE(ids.back(), 3);
  }

  void refusesTheFile_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QStringList>("expected");  // parts of the message

    QByteArray whole = QByteArray::fromStdString(complete_tokenizer().dump(2));
    QTest::newRow("truncated") << whole.left(whole.size() / 2)
                               << QStringList{"tokenizer.json is not valid JSON",
                                              "unexpected end of input", "download it again"};
    QTest::newRow("invalid JSON")
        << QByteArray("{\n  \"model\": {\n    \"vocab\": {\"a\": 1,}\n  }\n}")
        << QStringList{"tokenizer.json is not valid JSON (parse error at line 3, column 22",
                       "repair the file or download it again"};
    QTest::newRow("empty") << QByteArray() << QStringList{"tokenizer.json is not valid JSON"};
    // nlohmann reports a number it cannot hold as out_of_range, not a parse error.
    QTest::newRow("number overflow")
        << QByteArray(R"({"model": {"type": "BPE", "dropout": 2e99999}})")
        << QStringList{"tokenizer.json is not valid JSON", "number overflow"};
    QTest::newRow("not an object")
        << QByteArray("[1, 2]") << QStringList{"tokenizer.json must hold a JSON object"};
    QTest::newRow("no model") << QByteArray(R"({"normalizer": null})")
                              << QStringList{"tokenizer.json: the file has no \"model\"",
                                             "download it again"};
    for (const char* type : {"WordPiece", "Unigram", "WordLevel"}) {
      QTest::addRow("%s model", type)
          << QByteArray::fromStdString(
                 Json{{"model", {{"type", type}, {"vocab", Json::object()}}}}.dump())
          << QStringList{QStringLiteral("tokenizer.json uses a %1 model, which Quire does not "
                                        "read yet; Quire reads BPE tokenizers")
                             .arg(QLatin1StringView(type))};
    }
    QTest::newRow("unknown model type")
        << QByteArray(R"({"model": {"type": "Magic"}})")
        << QStringList{"\"model\" has the unknown type \"Magic\"",
                       "Quire cannot tokenize text for this model yet"};
    QTest::newRow("unknown normalizer")
        << (QByteArray("{") + kSmallModel +
            R"(, "normalizer": {"type": "Sequence", "normalizers": [
                 {"type": "NFC"}, {"type": "Precompiled", "precompiled_charsmap": "AAAA"}]}})")
        << QStringList{
               "\"normalizer.normalizers[1]\" is a normalizer of type \"Precompiled\", "
               "which Quire does not read",
               "Quire cannot tokenize text for this model yet"};
    QTest::newRow("unknown pre-tokenizer")
        << (QByteArray("{") + kSmallModel +
            R"(, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Punctuation"}]}})")
        << QStringList{
               "\"pre_tokenizer.pretokenizers[0]\" is a pre-tokenizer of type "
               "\"Punctuation\""};
    QTest::newRow("unknown post-processor")
        << (QByteArray("{") + kSmallModel + R"(, "post_processor": {"type": "Fancy"}})")
        << QStringList{"\"post_processor\" is a post-processor of type \"Fancy\""};
    QTest::newRow("unknown decoder")
        << (QByteArray("{") + kSmallModel +
            R"(, "decoder": {"type": "Sequence", "decoders": [{"type": "WordPiece"}]}})")
        << QStringList{"\"decoder.decoders[0]\" is a decoder of type \"WordPiece\""};
    const QByteArray vocab = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2)";
    QTest::newRow("merge of a token not in the vocabulary")
        << vocab + R"(}, "merges": ["a b", "a c"]}})"
        << QStringList{"\"model.merges[1]\" names \"c\", which is not in the vocabulary",
                       "download it again"};
    QTest::newRow("merge into a token not in the vocabulary")
        << vocab + R"(}, "merges": [["a", "b"], ["b", "b"]]}})"
        << QStringList{"\"model.merges[1]\" merges into \"bb\", which is not in the vocabulary"};
    QTest::newRow("merge that is not two tokens")
        << vocab + R"(}, "merges": ["a  b"]}})"
        << QStringList{"\"model.merges[0]\" is \"a  b\", not two tokens separated by one space"};
    QTest::newRow("merge text on one line")
        << vocab + R"(}, "merges": ["a\nb"]}})"
        << QStringList{"\"model.merges[0]\" is \"a\\nb\", not two tokens"};
    QTest::newRow("negative vocabulary id") << vocab + R"(, "c": -1}, "merges": []}})"
                                            << QStringList{"\"model.vocab.c\" is -1, outside 0 to"};
    QTest::newRow("huge vocabulary id")
        << vocab + R"(, "c": 4000000000}, "merges": []}})"
        << QStringList{"\"model.vocab.c\" is 4000000000, more than"};
    QTest::newRow("two tokens with one id")
        << vocab + R"(, "c": 1}, "merges": []}})"
        << QStringList{"\"model.vocab.c\" gives id 1 to \"c\", but \"b\" has it already"};
    QTest::newRow("unknown token not in the vocabulary")
        << vocab + R"(}, "merges": [], "unk_token": "<unk>"}})"
        << QStringList{"\"model.unk_token\" is \"<unk>\", which is not in the vocabulary"};
    QTest::newRow("empty vocabulary")
        << QByteArray(R"({"model": {"type": "BPE", "vocab": {}, "merges": []}})")
        << QStringList{"tokenizer.json has an empty vocabulary"};
    const QByteArray model = "{" + QByteArray(kSmallModel) + R"(, "added_tokens": )";
    QTest::newRow("added tokens with one id")
        << model + R"([{"id": 5, "content": "<x>"}, {"id": 5, "content": "<y>"}]})"
        << QStringList{
               "\"added_tokens[1]\" gives id 5 to \"<y>\", but an earlier added token "
               "\"<x>\" has it"};
    QTest::newRow("added token on another token's id")
        << model + R"([{"id": 1, "content": "<x>"}]})"
        << QStringList{"added token 1 is \"<x>\", but the vocabulary gives that id to \"a\"",
                       "the file is inconsistent, download it again"};
    QTest::newRow("huge added token id")
        << model + R"([{"id": 16000000, "content": "<x>"}]})"
        << QStringList{"\"added_tokens[0].id\" is 16000000, more than"};
    QTest::newRow("empty added token") << model + R"([{"id": 4, "content": ""}]})"
                                       << QStringList{"\"added_tokens[0].content\" is empty"};
    QTest::newRow("regex PCRE2 cannot compile")
        << ("{" + QByteArray(kSmallModel) +
            ", \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(a|b\"}, "
            "\"behavior\": \"Isolated\", \"invert\": false}}")
        << QStringList{
               "\"pre_tokenizer.pattern.Regex\" is a regular expression that PCRE2 "
               "cannot compile: (a|b (missing closing parenthesis at offset 4)"};
    QTest::newRow("template naming an undefined token")
        << ("{" + QByteArray(kSmallModel) +
            R"(, "post_processor": {"type": "TemplateProcessing",
                 "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}],
                 "special_tokens": {}}})")
        << QStringList{
               "\"post_processor.single[0].SpecialToken\" names the special token "
               "\"<s>\", which \"special_tokens\" lacks"};
    QTest::newRow("template adding a token outside the vocabulary")
        << ("{" + QByteArray(kSmallModel) +
            R"(, "post_processor": {"type": "TemplateProcessing",
                 "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}],
                 "special_tokens": {"<s>": {"ids": [9]}}}})")
        << QStringList{"the post-processor adds token 9, outside the vocabulary of 4 tokens"};
  }

  void refusesTheFile() {
    QFETCH(QByteArray, text);
    QFETCH(QStringList, expected);
    const QString message = load_error(text);
    QVERIFY2(!message.isEmpty(), "no ModelError");
    QVERIFY2(!message.contains(u'\n'), qPrintable(message));
    for (const QString& part : expected)
      QVERIFY2(message.contains(part), qPrintable(message));
  }

  // Each field with a value of the wrong type, one at a time.
  void refusesWrongTypes_data() {
    QTest::addColumn<QString>("pointer");  // JSON pointer into complete_tokenizer()
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<QString>("expected");

    auto row = [](const char* pointer, const char* value, const char* expected) {
      QTest::addRow("%s = %s", pointer, value)
          << QString::fromUtf8(pointer) << QByteArray(value) << QString::fromUtf8(expected);
    };
    row("/model", "[]", "\"model\" must be a JSON object, not array []");
    row("/model/type", "1", "\"model.type\" must be a string, not number 1");
    row("/model/vocab", "[]", "\"model.vocab\" must be a JSON object");
    row("/model/vocab/a", "\"1\"", "\"model.vocab.a\" must be an integer, not string \"1\"");
    row("/model/vocab/a", "1.5", "\"model.vocab.a\" must be an integer");
    row("/model/merges", "{}", "\"model.merges\" must be a JSON array");
    row("/model/merges/0", "5", "\"model.merges[0]\" must be a pair of tokens");
    row("/model/merges/0", "[\"a\"]", "\"model.merges[0]\" must be a pair of tokens");
    row("/model/merges/0", "[\"a\", 2]", "\"model.merges[0][1]\" must be a string");
    row("/model/unk_token", "0", "\"model.unk_token\" must be a string");
    row("/model/dropout", "\"0.1\"", "\"model.dropout\" must be a number");
    row("/model/continuing_subword_prefix", "1",
        "\"model.continuing_subword_prefix\" must be a string");
    row("/model/end_of_word_suffix", "[]", "\"model.end_of_word_suffix\" must be a string");
    row("/model/fuse_unk", "\"no\"", "\"model.fuse_unk\" must be true or false");
    row("/model/byte_fallback", "1", "\"model.byte_fallback\" must be true or false");
    row("/model/ignore_merges", "\"true\"", "\"model.ignore_merges\" must be true or false");
    row("/added_tokens", "{}", "\"added_tokens\" must be a JSON array");
    row("/added_tokens/0", "\"<s>\"", "\"added_tokens[0]\" must be a JSON object");
    row("/added_tokens/0/id", "\"5\"", "\"added_tokens[0].id\" must be an integer");
    row("/added_tokens/0/id", "-5", "\"added_tokens[0].id\" is -5, outside 0 to");
    row("/added_tokens/0/content", "5", "\"added_tokens[0].content\" must be a string");
    row("/added_tokens/0/special", "\"yes\"", "\"added_tokens[0].special\" must be true or false");
    row("/added_tokens/0/single_word", "1", "\"added_tokens[0].single_word\" must be true or");
    row("/added_tokens/0/lstrip", "1", "\"added_tokens[0].lstrip\" must be true or false");
    row("/added_tokens/0/rstrip", "1", "\"added_tokens[0].rstrip\" must be true or false");
    row("/added_tokens/0/normalized", "1", "\"added_tokens[0].normalized\" must be true or");
    row("/normalizer", "\"NFC\"", "\"normalizer\" must be a JSON object");
    row("/normalizer/type", "1", "\"normalizer.type\" must be a string");
    row("/normalizer/normalizers", "{}", "\"normalizer.normalizers\" must be a JSON array");
    row("/normalizer/normalizers/0/prepend", "1",
        "\"normalizer.normalizers[0].prepend\" must be a string");
    row("/normalizer/normalizers/1/pattern", "\" \"",
        "\"normalizer.normalizers[1].pattern\" must be a JSON object");
    row("/normalizer/normalizers/1/pattern", "{}",
        "\"normalizer.normalizers[1].pattern\" must hold \"String\" or \"Regex\"");
    row("/normalizer/normalizers/1/pattern/String", "1",
        "\"normalizer.normalizers[1].pattern.String\" must be a string");
    row("/normalizer/normalizers/1/content", "null",
        "\"normalizer.normalizers[1]\" has no \"content\"");
    row("/normalizer/normalizers/2/strip_left", "\"x\"",
        "\"normalizer.normalizers[2].strip_left\" must be true or false");
    row("/pre_tokenizer/pretokenizers", "{}",
        "\"pre_tokenizer.pretokenizers\" must be a JSON array");
    row("/pre_tokenizer/pretokenizers/0/behavior", "1",
        "\"pre_tokenizer.pretokenizers[0].behavior\" must be a string");
    row("/pre_tokenizer/pretokenizers/0/behavior", "\"Sideways\"",
        "\"pre_tokenizer.pretokenizers[0].behavior\" is \"Sideways\", not one of Removed");
    row("/pre_tokenizer/pretokenizers/0/invert", "\"no\"",
        "\"pre_tokenizer.pretokenizers[0].invert\" must be true or false");
    row("/pre_tokenizer/pretokenizers/1/replacement", "1",
        "\"pre_tokenizer.pretokenizers[1].replacement\" must be a string");
    row("/pre_tokenizer/pretokenizers/1/replacement", "\"ab\"",
        "\"pre_tokenizer.pretokenizers[1].replacement\" must be a single character");
    row("/pre_tokenizer/pretokenizers/1/prepend_scheme", "true",
        "\"pre_tokenizer.pretokenizers[1].prepend_scheme\" must be a string");
    row("/pre_tokenizer/pretokenizers/1/prepend_scheme", "\"sometimes\"",
        "\"pre_tokenizer.pretokenizers[1].prepend_scheme\" is \"sometimes\", not always, first");
    row("/pre_tokenizer/pretokenizers/1/split", "\"yes\"",
        "\"pre_tokenizer.pretokenizers[1].split\" must be true or false");
    row("/pre_tokenizer/pretokenizers/2/individual_digits", "1",
        "\"pre_tokenizer.pretokenizers[2].individual_digits\" must be true or false");
    row("/pre_tokenizer/pretokenizers/3/add_prefix_space", "\"x\"",
        "\"pre_tokenizer.pretokenizers[3].add_prefix_space\" must be true or false");
    row("/pre_tokenizer/pretokenizers/3/use_regex", "0",
        "\"pre_tokenizer.pretokenizers[3].use_regex\" must be true or false");
    row("/post_processor/processors", "{}", "\"post_processor.processors\" must be a JSON array");
    row("/post_processor/processors/1/single", "{}",
        "\"post_processor.processors[1].single\" must be a JSON array");
    row("/post_processor/processors/1/single/0", "{\"Other\": {}}",
        "\"post_processor.processors[1].single[0]\" must hold \"SpecialToken\" or \"Sequence\"");
    row("/post_processor/processors/1/single/0/SpecialToken/id", "5",
        "\"post_processor.processors[1].single[0].SpecialToken.id\" must be a string");
    row("/post_processor/processors/1/special_tokens/<s>/ids", "5",
        "\"post_processor.processors[1].special_tokens.<s>.ids\" must be a JSON array");
    row("/post_processor/processors/1/special_tokens/<s>/ids", "[\"5\"]",
        "\"post_processor.processors[1].special_tokens.<s>.ids[0]\" must be an integer");
    row("/decoder/decoders", "{}", "\"decoder.decoders\" must be a JSON array");
    row("/decoder/decoders/0/content", "1", "\"decoder.decoders[0].content\" must be a string");
    row("/decoder/decoders/1/start", "\"1\"", "\"decoder.decoders[1].start\" must be an integer");
    row("/decoder/decoders/1/stop", "-1", "\"decoder.decoders[1].stop\" is -1, outside 0 to");
    row("/decoder/decoders/1/content", "\"\"", "\"decoder.decoders[1].content\" is empty");
    row("/decoder/decoders/2/replacement", "\"\"",
        "\"decoder.decoders[2].replacement\" must be a single character, not \"\"");
    row("/decoder/decoders/2/prepend_scheme", "3",
        "\"decoder.decoders[2].prepend_scheme\" must be a string");
    row("/decoder/decoders/2/prepend_scheme", "\"sometimes\"",
        "\"decoder.decoders[2].prepend_scheme\" is \"sometimes\", not always, first or never");
  }

  void refusesWrongTypes() {
    QFETCH(QString, pointer);
    QFETCH(QByteArray, value);
    QFETCH(QString, expected);
    Json tokenizer = complete_tokenizer();
    tokenizer[Json::json_pointer(pointer.toStdString())] = Json::parse(value.toStdString());
    const QString message = load_error(QByteArray::fromStdString(tokenizer.dump()));
    QVERIFY2(message.startsWith(QStringLiteral("tokenizer.json: ") + expected),
             qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("download it again")), qPrintable(message));
    QVERIFY2(!message.contains(u'\n'), qPrintable(message));
  }

  // Through a model directory the message names the file's whole path.
  void namesThePathInADirectory() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    quire::test::write_file(dir.filePath(QStringLiteral("tokenizer.json")),
                            R"({"model": {"type": "Unigram", "vocab": []}})");
    try {
      Tokenizer::load(dir.path().toStdString());
      QFAIL("no ModelError");
    } catch (const ModelError& error) {
      QVERIFY2(QString::fromUtf8(error.what())
                   .startsWith(QDir(dir.path()).filePath(QStringLiteral("tokenizer.json")) +
                               QStringLiteral(" uses a Unigram model")),
               error.what());
    }
  }
};

QUIRE_TEST(TokenizerJsonErrorsTest)
#include "test_tokenizer_json_errors.moc"
