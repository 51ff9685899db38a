#include <QTest>
#include <random>

#include "quire/engine/grammar/grammar.h"
#include "quire/engine/grammar/token_matcher.h"
#include "quire/engine/grammar/token_vocabulary.h"
#include "test_main.h"
#include "walk_schemas.h"

using quire::engine::grammar::compile_json_schema_text;
using quire::engine::grammar::TokenMatcher;
using quire::engine::grammar::TokenVocabulary;

namespace {

// Every single byte, then random strings over pieces chosen to straddle
// what the mask treats differently: plain characters, quotes, escapes,
// controls, whole and broken UTF-8, and long plain runs. The last id is the
// end of text.
std::shared_ptr<const TokenVocabulary> synthetic_vocabulary() {
  static const char* const kPieces[] = {"a",
                                        "Z",
                                        "7",
                                        " ",
                                        "-",
                                        "\"",
                                        "\\",
                                        "\\n",
                                        "\\u00e9",
                                        "{",
                                        "}",
                                        "[",
                                        "]",
                                        ",",
                                        ":",
                                        "\n",
                                        "\t",
                                        "\xC3\xA9",
                                        "\xE6\x9D\xB1",
                                        "\xF0\x9F\x98\x80",
                                        "\xC3",
                                        "\xA9",
                                        "\xE6\x9D",
                                        "true",
                                        "null",
                                        "0.5",
                                        "e+",
                                        "@",
                                        ".",
                                        "com",
                                        "ab",
                                        "xyzxyz",
                                        "\x7F",
                                        "\xEF\xBF\xBD"};
  std::mt19937 random(7);
  std::vector<std::string> tokens;
  for (int byte = 0; byte < 256; ++byte)
    tokens.emplace_back(1, static_cast<char>(byte));
  for (int i = 0; i < 6000; ++i) {
    std::string token;
    const int pieces = std::uniform_int_distribution<int>(1, i % 50 == 0 ? 40 : 5)(random);
    for (int p = 0; p < pieces; ++p)
      token +=
          kPieces[std::uniform_int_distribution<std::size_t>(0, std::size(kPieces) - 1)(random)];
    tokens.push_back(token);
  }
  tokens.push_back(std::string(70, 'q'));  // longer than any plain mask
  tokens.emplace_back();                   // end of text
  const auto eos = static_cast<std::int32_t>(tokens.size() - 1);
  return std::make_shared<const TokenVocabulary>(std::move(tokens), std::vector{eos});
}

bool bit(const std::vector<std::uint32_t>& mask, std::size_t id) {
  return (mask[id / 32] >> (id % 32)) & 1u;
}

}  // namespace

// The mask against a token-by-token reference on a synthetic vocabulary
// built to stress the trie walk and the plain-string shortcut; needs no
// downloaded tokenizer.
class SyntheticMaskTest : public QObject {
  Q_OBJECT

 private slots:
  void masksMatchTheReference_data() {
    QTest::addColumn<QByteArray>("schema_text");
    for (const auto& walk : quire::test::walk_schemas())
      QTest::newRow(walk.name) << QByteArray(walk.schema);
    QTest::newRow("bounded string")
        << QByteArray(R"({"type":"string","minLength":3,"maxLength":9})");
    QTest::newRow("free string") << QByteArray(R"({"type":"string"})");
  }
  void masksMatchTheReference() {
    QFETCH(QByteArray, schema_text);
    static const auto vocabulary = synthetic_vocabulary();
    TokenMatcher matcher(compile_json_schema_text(schema_text.toStdString()), vocabulary);
    std::vector<std::uint32_t> mask(matcher.mask_words());
    for (unsigned walk = 1; walk <= 8; ++walk) {
      std::mt19937 random(walk);
      matcher.reset();
      std::string output;
      for (int step = 0; step < 300 && !matcher.is_finished(); ++step) {
        matcher.allowed_tokens(mask);
        std::vector<std::int32_t> allowed;
        for (std::int32_t id = 0; id < vocabulary->size(); ++id) {
          const std::string& bytes = vocabulary->bytes(id);
          const bool expected = vocabulary->is_eos(id)
                                    ? matcher.is_accepting()
                                    : !bytes.empty() && matcher.allows_bytes(bytes);
          if (bit(mask, static_cast<std::size_t>(id)) != expected) {
            QFAIL(qPrintable(QStringLiteral("token %1 \"%2\" is %3 after \"%4\"")
                                 .arg(id)
                                 .arg(QString::fromStdString(bytes))
                                 .arg(expected ? "missing from the mask" : "wrongly in the mask")
                                 .arg(QString::fromStdString(output))));
          }
          if (expected) allowed.push_back(id);
        }
        QVERIFY(!allowed.empty());
        // Later steps prefer the end, so that walks finish.
        std::int32_t token =
            allowed[std::uniform_int_distribution<std::size_t>(0, allowed.size() - 1)(random)];
        if (step > 40 && matcher.is_accepting()) token = vocabulary->eos().front();
        QVERIFY(matcher.accept(token));
        if (!vocabulary->is_eos(token)) output += vocabulary->bytes(token);
      }
    }
  }
};

QUIRE_TEST(SyntheticMaskTest)
#include "test_synthetic_masks.moc"
