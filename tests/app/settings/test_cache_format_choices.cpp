// The cache formats the settings panel offers, as the application builds
// them from the cache's own table of names and sizes.

#include <QTest>

#include "quire/app/cache_format_choices.h"
#include "test_main.h"

using quire::ui::CacheFormatChoice;
using quire::ui::CacheFormatChoices;

class CacheFormatChoicesTest : public QObject {
  Q_OBJECT

 private slots:
  void formatsAreTheCachesPairsUsualOnesFirst() {
    const CacheFormatChoices choices = quire::app::cache_format_choices();
    QStringList ids;
    for (const CacheFormatChoice& format : choices.formats)
      ids.append(format.id);
    QCOMPARE(ids,
             (QStringList{"fp16", "q8", "q6", "q4", "fp8", "k16vf8", "k16v8", "k16v4", "kf8v16",
                          "kf8v8", "kf8v4", "k8v16", "k8vf8", "k4v16", "k4vf8", "k4v8"}));
    for (const CacheFormatChoice& format : choices.formats) {
      QVERIFY2(choices.coding(format.key) && choices.coding(format.value), qPrintable(format.id));
      QCOMPARE(choices.id_of(format.key, format.value), format.id);
    }
  }

  void codingsAreLabelledWithTheirBits() {
    const CacheFormatChoices choices = quire::app::cache_format_choices();
    QCOMPARE(choices.codings.size(), 4);
    QCOMPARE(choices.codings.at(0).label(),
             QStringLiteral("FP16 — 16-bit floating point, 16 bits per value"));
    QCOMPARE(choices.codings.at(1).label(),
             QStringLiteral("FP8 — 8-bit floating point, a scale per page and head, 8 bits per "
                            "value"));
    QCOMPARE(choices.codings.at(2).label(),
             QStringLiteral("Q8 — 8-bit integers, a scale per 32 values, 8.5 bits per value"));
    QCOMPARE(choices.codings.at(3).label(),
             QStringLiteral("Q4 — 4-bit integers, a scale per 32 values, 4.5 bits per value"));
    QCOMPARE(choices.codings.at(0).bits_per_value, 16.0);
  }

  void pairsAreNamedAndSummedUp() {
    const CacheFormatChoices choices = quire::app::cache_format_choices();
    QCOMPARE(choices.id_of(QStringLiteral("q8"), QStringLiteral("q4")), QStringLiteral("q6"));
    QCOMPARE(choices.id_of(QStringLiteral("q5"), QStringLiteral("q4")), QString());
    QCOMPARE(choices.summary(QStringLiteral("fp8")),
             QStringLiteral("FP8 — FP8 keys and values, 8 bits per value"));
    QCOMPARE(choices.summary(QStringLiteral("q6")),
             QStringLiteral("Q6 — Q8 keys, Q4 values, 6.5 bits per value"));
    QCOMPARE(choices.summary(QStringLiteral("kf8v4")),
             QStringLiteral("K FP8, V Q4 — FP8 keys, Q4 values, 6.25 bits per value"));
    QCOMPARE(choices.summary(QStringLiteral("k3v4")), QString());
  }
};

QUIRE_TEST(CacheFormatChoicesTest)
#include "test_cache_format_choices.moc"
