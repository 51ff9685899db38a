#include <QTest>
#include <set>
#include <string>

#include "quire/cache/cache_format.h"
#include "test_main.h"

using namespace quire::cache;

Q_DECLARE_METATYPE(CacheFormat)

class CacheFormatTest : public QObject {
  Q_OBJECT

 private slots:
  // Llama-3-8B's attention: 8 KV heads of 128 dims, 256-token pages.
  void pageBytesAreExact_data() {
    QTest::addColumn<CacheFormat>("format");
    QTest::addColumn<qint64>("keyData");
    QTest::addColumn<qint64>("keyScales");
    QTest::addColumn<qint64>("valueData");
    QTest::addColumn<qint64>("valueScales");
    QTest::addColumn<qint64>("tokenBytes");
    QTest::addColumn<double>("bits");
    // 256 tokens x 1024 elements = 262144 elements per plane.
    QTest::newRow("fp16") << CacheFormat::FP16 << qint64(524288) << qint64(0) << qint64(524288)
                          << qint64(0) << qint64(4096) << 16.0;
    QTest::newRow("q8") << CacheFormat::Q8 << qint64(262144) << qint64(16384) << qint64(262144)
                        << qint64(16384) << qint64(2176) << 8.5;
    QTest::newRow("q6") << CacheFormat::Q6 << qint64(262144) << qint64(16384) << qint64(131072)
                        << qint64(16384) << qint64(1664) << 6.5;
    QTest::newRow("q4") << CacheFormat::Q4 << qint64(131072) << qint64(16384) << qint64(131072)
                        << qint64(16384) << qint64(1152) << 4.5;
    QTest::newRow("fp8") << CacheFormat::FP8 << qint64(262144) << qint64(32) << qint64(262144)
                         << qint64(32) << qint64(2048) << 8.0;
    // Keys and values coded apart: each half priced as its own coding.
    QTest::newRow("kf8v4") << CacheFormat{ElementCoding::FP8, ElementCoding::Q4} << qint64(262144)
                           << qint64(32) << qint64(131072) << qint64(16384) << qint64(1600) << 6.25;
    QTest::newRow("k16v8") << CacheFormat{ElementCoding::FP16, ElementCoding::Q8} << qint64(524288)
                           << qint64(0) << qint64(262144) << qint64(16384) << qint64(3136) << 12.25;
    QTest::newRow("k4v16") << CacheFormat{ElementCoding::Q4, ElementCoding::FP16} << qint64(131072)
                           << qint64(16384) << qint64(524288) << qint64(0) << qint64(2624) << 10.25;
  }

  void pageBytesAreExact() {
    QFETCH(CacheFormat, format);
    QFETCH(qint64, keyData);
    QFETCH(qint64, keyScales);
    QFETCH(qint64, valueData);
    QFETCH(qint64, valueScales);
    QFETCH(qint64, tokenBytes);
    QFETCH(double, bits);
    const CacheFormatInfo& info = format_info(format);
    const PageBytes bytes = info.page_bytes(LayerShape{8, 128}, 256);
    QCOMPARE(bytes.key_data, keyData);
    QCOMPARE(bytes.key_scales, keyScales);
    QCOMPARE(bytes.value_data, valueData);
    QCOMPARE(bytes.value_scales, valueScales);
    QCOMPARE(bytes.total(), keyData + keyScales + valueData + valueScales);
    QCOMPARE(info.token_bytes(LayerShape{8, 128}), tokenBytes);
    QCOMPARE(info.bits_per_element(), bits);
  }

  void fp16PricesLlama3At128KibPerToken() {
    // 32 layers x 4096 bytes = 128 KiB per token, the figure the planner quotes.
    QCOMPARE(format_info(CacheFormat::FP16).token_bytes(LayerShape{8, 128}) * 32, qint64(131072));
  }

  void namesParseBothWays() {
    for (const CacheFormat format : all_cache_formats()) {
      const CacheFormatInfo& info = format_info(format);
      QCOMPARE(parse_cache_format(info.name), std::optional<CacheFormat>(format));
    }
    QCOMPARE(parse_cache_format("Q4"), std::optional<CacheFormat>(CacheFormat::Q4));
    QCOMPARE(parse_cache_format("FP8"), std::optional<CacheFormat>(CacheFormat::FP8));
    QCOMPARE(parse_cache_format("q5"), std::optional<CacheFormat>());
    QCOMPARE(all_cache_formats().size(), std::size_t(5));
  }

  void everyPairOfCodingsHasOneNameThatParsesBack() {
    const auto pairs = all_cache_format_pairs();
    QCOMPARE(pairs.size(), std::size_t(16));
    std::set<std::string> names;
    for (const CacheFormat format : pairs) {
      const CacheFormatInfo& info = format_info(format);
      QCOMPARE(info.format, format);
      QCOMPARE(parse_cache_format(info.name), std::optional<CacheFormat>(format));
      names.insert(std::string(info.name));
    }
    QCOMPARE(names.size(), std::size_t(16));
    // The named formats come first, in their usual order.
    for (std::size_t i = 0; i < all_cache_formats().size(); ++i)
      QCOMPARE(pairs[i], all_cache_formats()[i]);
    QCOMPARE(all_element_codings().size(), std::size_t(4));
  }

  void keyAndValueCodingsAreNamedApart() {
    const CacheFormat fp8_keys{ElementCoding::FP8, ElementCoding::Q4};
    QCOMPARE(std::string(format_info(fp8_keys).name), std::string("kf8v4"));
    QCOMPARE(std::string(format_info(fp8_keys).title), std::string("K FP8, V Q4"));
    QCOMPARE(std::string(format_info(CacheFormat::Q6).title), std::string("Q6"));
    QCOMPARE(std::string(format_info(fp8_keys).label),
             std::string("K FP8, V Q4 — FP8 keys, 4-bit values"));
    QCOMPARE(format_info(fp8_keys).key.bits, 8);
    QCOMPARE(format_info(fp8_keys).value.bits, 4);
    // Today's names stay: q6 is k8v4, and each half may be spelt out.
    QCOMPARE(parse_cache_format("k8v4"), std::optional<CacheFormat>(CacheFormat::Q6));
    QCOMPARE(parse_cache_format("kq8vq4"), std::optional<CacheFormat>(CacheFormat::Q6));
    QCOMPARE(parse_cache_format("K4V4"), std::optional<CacheFormat>(CacheFormat::Q4));
    QCOMPARE(parse_cache_format("kfp16vq4"),
             std::optional<CacheFormat>(CacheFormat{ElementCoding::FP16, ElementCoding::Q4}));
    QCOMPARE(std::string(format_info(CacheFormat::Q6).name), std::string("q6"));
    for (const char* wrong : {"k3v4", "kv", "kv4", "k8v", "k8", "v4k8", "k8v4x", "k 8v4", "q6v4"}) {
      QVERIFY2(!parse_cache_format(wrong), wrong);
    }
  }

  void aMixedCodingNeedsWholeGroupsOnlyInItsIntegerHalf() {
    const CacheFormat fp16_keys{ElementCoding::FP16, ElementCoding::Q4};
    const auto reason = format_info(fp16_keys).unsupported_reason(LayerShape{8, 80});
    QVERIFY(reason.has_value());
    QVERIFY(reason->find("the k16v4 cache quantizes groups of 32") != std::string::npos);
    QVERIFY(!format_info(CacheFormat{ElementCoding::FP8, ElementCoding::FP16})
                 .unsupported_reason(LayerShape{8, 80}));
  }

  void q6HasEightBitKeysAndFourBitValues() {
    const CacheFormatInfo& info = format_info(CacheFormat::Q6);
    QCOMPARE(info.key.bits, 8);
    QCOMPARE(info.value.bits, 4);
  }

  void headDimMustHoldWholeGroups() {
    const auto reason = format_info(CacheFormat::Q4).unsupported_reason(LayerShape{8, 80});
    QVERIFY(reason.has_value());
    QVERIFY(reason->find("head_dim is 80") != std::string::npos);
    QVERIFY(reason->find("fp16 or fp8") != std::string::npos);
    QVERIFY(!format_info(CacheFormat::FP16).unsupported_reason(LayerShape{8, 80}));
    QVERIFY(!format_info(CacheFormat::FP8).unsupported_reason(LayerShape{8, 80}));
    QVERIFY(!format_info(CacheFormat::Q8).unsupported_reason(LayerShape{4, 64}));
    QVERIFY(format_info(CacheFormat::FP16).unsupported_reason(LayerShape{0, 64}).has_value());
  }
};

QUIRE_TEST(CacheFormatTest)
#include "test_cache_format.moc"
