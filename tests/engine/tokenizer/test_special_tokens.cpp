#include <QTemporaryDir>
#include <QTest>
#include <optional>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"
#include "test_main.h"
#include "tokenizer_test_support.h"

using quire::engine::Tokenizer;

namespace {

using Ids = std::vector<std::int32_t>;

// Names the piece ids the table uses: <unk> is 0 and the byte pieces follow
// the three control pieces, so "<0x0A>" is 3 + 10.
constexpr std::int32_t kUnk = 0;
constexpr std::int32_t kNewlineByte = 13;

}  // namespace

class SpecialTokensTest : public QObject {
  Q_OBJECT

 private slots:
  void followsThePrecedenceOfTheConfigurations_data() {
    QTest::addColumn<QByteArray>("generationConfig");
    QTest::addColumn<QByteArray>("config");
    QTest::addColumn<QByteArray>("tokenizerConfig");
    QTest::addColumn<int>("bos");  // -1: none
    QTest::addColumn<Ids>("eos");
    QTest::addColumn<bool>("addsBos");

    const QByteArray named = R"({"bos_token": "<0x0A>", "eos_token": {"content": "<unk>"}})";
    QTest::newRow("tokenizer.model alone")
        << QByteArray() << QByteArray() << QByteArray() << 1 << Ids{2} << true;
    QTest::newRow("tokenizer_config names tokens")
        << QByteArray() << QByteArray() << named << int(kNewlineByte) << Ids{kUnk} << true;
    QTest::newRow("config.json before tokenizer_config")
        << QByteArray() << QByteArray(R"({"bos_token_id": 200, "eos_token_id": 201})") << named
        << 200 << Ids{201} << true;
    QTest::newRow("text_config when the top level lacks the keys")
        << QByteArray()
        << QByteArray(R"({"text_config": {"bos_token_id": 300, "eos_token_id": [301, 302]}})")
        << named << 300 << Ids{301, 302} << true;
    QTest::newRow("top level before text_config, key by key")
        << QByteArray()
        << QByteArray(
               R"({"bos_token_id": 200, "text_config": {"bos_token_id": 300, "eos_token_id": 301}})")
        << QByteArray() << 200 << Ids{301} << true;
    QTest::newRow("generation_config before config.json")
        << QByteArray(R"({"bos_token_id": 100, "eos_token_id": [101, 102]})")
        << QByteArray(R"({"bos_token_id": 200, "eos_token_id": 201})") << named << 100
        << Ids{101, 102} << true;
    QTest::newRow("each key from the first file that sets it")
        << QByteArray(R"({"eos_token_id": 101})") << QByteArray(R"({"bos_token_id": 200})") << named
        << 200 << Ids{101} << true;
    QTest::newRow("null means not set")
        << QByteArray(R"({"bos_token_id": null, "eos_token_id": null})")
        << QByteArray(R"({"bos_token_id": 200, "eos_token_id": 201})") << QByteArray() << 200
        << Ids{201} << true;
    QTest::newRow("an empty list means not set")
        << QByteArray(R"({"eos_token_id": []})") << QByteArray() << QByteArray() << 1 << Ids{2}
        << true;
    QTest::newRow("add_bos_token false")
        << QByteArray() << QByteArray() << QByteArray(R"({"add_bos_token": false})") << 1 << Ids{2}
        << false;
    QTest::newRow("add_bos_token true with a configured BOS")
        << QByteArray() << QByteArray(R"({"bos_token_id": 5})")
        << QByteArray(R"({"add_bos_token": true, "bos_token": "<unk>"})") << 5 << Ids{2} << true;
    QTest::newRow("unrelated keys are ignored")
        << QByteArray(R"({"temperature": 0.6, "pad_token_id": 99999})")
        << QByteArray(R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 32000})")
        << QByteArray(R"({"model_max_length": 4096})") << 1 << Ids{2} << true;
  }

  void followsThePrecedenceOfTheConfigurations() {
    QFETCH(QByteArray, generationConfig);
    QFETCH(QByteArray, config);
    QFETCH(QByteArray, tokenizerConfig);
    QFETCH(int, bos);
    QFETCH(Ids, eos);
    QFETCH(bool, addsBos);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QMap<QString, QByteArray> files;
    if (!generationConfig.isEmpty())
      files[QStringLiteral("generation_config.json")] = generationConfig;
    if (!config.isEmpty()) files[QStringLiteral("config.json")] = config;
    if (!tokenizerConfig.isEmpty())
      files[QStringLiteral("tokenizer_config.json")] = tokenizerConfig;
    const Tokenizer tokenizer = Tokenizer::load(quire::test::write_model_dir(dir.path(), files));

    QCOMPARE(tokenizer.bos(), bos < 0 ? std::nullopt : std::optional<std::int32_t>(bos));
    QCOMPARE(tokenizer.eos(), eos);
    QCOMPARE(tokenizer.adds_bos(), addsBos);
  }

  void keepsEveryEosInOrderOnce() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Tokenizer tokenizer = Tokenizer::load(quire::test::write_model_dir(
        dir.path(), {{QStringLiteral("generation_config.json"),
                      R"({"eos_token_id": [107, 2, 107, 1, 2, 300]})"}}));
    QCOMPARE(tokenizer.eos(), (Ids{107, 2, 1, 300}));
    for (const std::int32_t id : {107, 2, 1, 300})
      QVERIFY(tokenizer.is_eos(id));
    QVERIFY(!tokenizer.is_eos(0));
    QVERIFY(!tokenizer.is_eos(108));
  }

  void encodeUsesTheConfiguredBos() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Tokenizer tokenizer = Tokenizer::load(quire::test::write_model_dir(
        dir.path(), {{QStringLiteral("config.json"), R"({"bos_token_id": 42})"}}));
    const std::vector<std::int32_t> ids = tokenizer.encode("Hi", true);
    QCOMPARE(ids.front(), 42);
    QCOMPARE(tokenizer.encode("Hi", false).size() + 1, ids.size());
  }
};

QUIRE_TEST(SpecialTokensTest)
#include "test_special_tokens.moc"
