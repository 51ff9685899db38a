#include <QTest>

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
