#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <set>
#include <vector>

#include "quire/cache/page_hash.h"
#include "test_main.h"

using quire::cache::hash_full_pages;
using quire::cache::hash_page;
using quire::cache::PageHash;
using quire::cache::PlaceholderSource;
using quire::cache::TokenId;

class PageHashTest : public QObject {
  Q_OBJECT

 private slots:
  // Vectors computed by Python's hashlib.blake2b(digest_size=16)
  // (tests/tools/page_hash_vectors.py), an implementation independent of libb2.
  void matchesIndependentVectors_data() {
    QTest::addColumn<int>("pageSize");
    QTest::addColumn<QVariantList>("tokens");
    QTest::addColumn<QStringList>("hashes");
    QFile file(QStringLiteral(QUIRE_TEST_DATA_DIR "/page_hash_vectors.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonArray cases = QJsonDocument::fromJson(file.readAll()).array();
    QCOMPARE(cases.size(), 7);
    for (qsizetype i = 0; i < cases.size(); ++i) {
      const QJsonObject entry = cases[i].toObject();
      QStringList hashes;
      for (const QJsonValue& value : entry[u"hashes"].toArray())
        hashes << value.toString();
      QTest::addRow("case %d (%d tokens)", int(i), int(entry[u"tokens"].toArray().size()))
          << entry[u"page_size"].toInt() << entry[u"tokens"].toArray().toVariantList() << hashes;
    }
  }

  void matchesIndependentVectors() {
    QFETCH(int, pageSize);
    QFETCH(QVariantList, tokens);
    QFETCH(QStringList, hashes);
    std::vector<TokenId> ids;
    for (const QVariant& token : tokens)
      ids.push_back(static_cast<TokenId>(token.toLongLong()));
    const std::vector<PageHash> computed = hash_full_pages(ids, pageSize);
    QCOMPARE(computed.size(), static_cast<std::size_t>(hashes.size()));
    for (qsizetype i = 0; i < hashes.size(); ++i) {
      QCOMPARE(QString::fromStdString(computed[static_cast<std::size_t>(i)].hex()), hashes[i]);
    }
  }

  void firstPageOfZeroToTwoFiftyFive() {
    std::vector<TokenId> ids(256);
    for (int i = 0; i < 256; ++i)
      ids[static_cast<std::size_t>(i)] = i;
    QCOMPARE(hash_page(nullptr, ids).hex(), std::string("06137266f1e5ed8a632506e6ad43c334"));
  }

  void chainsThroughThePreviousHash() {
    std::vector<TokenId> ids(12);
    for (int i = 0; i < 12; ++i)
      ids[static_cast<std::size_t>(i)] = 100 + i;
    const std::vector<PageHash> chain = hash_full_pages(ids, 4);
    QCOMPARE(chain.size(), std::size_t(3));
    const std::span<const TokenId> all(ids);
    QCOMPARE(chain[0], hash_page(nullptr, all.subspan(0, 4)));
    QCOMPARE(chain[1], hash_page(&chain[0], all.subspan(4, 4)));
    QCOMPARE(chain[2], hash_page(&chain[1], all.subspan(8, 4)));
    // The same tokens at another place in a chain have another identity.
    QVERIFY(hash_page(nullptr, all.subspan(4, 4)) != chain[1]);
  }

  void partialTrailingPageHasNoHash() {
    const std::vector<TokenId> ids(10, 7);
    QCOMPARE(hash_full_pages(ids, 4).size(), std::size_t(2));
    QCOMPARE(hash_full_pages(ids, 11).size(), std::size_t(0));
  }

  void hexIsLowercaseThirtyTwoDigits() {
    PageHash hash;
    for (std::size_t i = 0; i < 16; ++i)
      hash.bytes[i] = static_cast<std::uint8_t>(i * 17);
    QCOMPARE(hash.hex(), std::string("00112233445566778899aabbccddeeff"));
  }

  void placeholdersAreUniqueAndNeverRealHashes() {
    PlaceholderSource source;
    std::set<PageHash> seen;
    for (int i = 0; i < 20000; ++i)
      QVERIFY(seen.insert(source.next()).second);
    std::vector<TokenId> ids(16);
    for (int t = 0; t < 200; ++t) {
      for (int i = 0; i < 16; ++i)
        ids[static_cast<std::size_t>(i)] = t * 16 + i;
      QVERIFY(!seen.contains(hash_page(nullptr, ids)));
    }
  }
};

QUIRE_TEST(PageHashTest)
#include "test_page_hash.moc"
