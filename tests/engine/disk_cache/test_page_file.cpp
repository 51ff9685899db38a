#include <QTest>
#include <cstring>
#include <stdexcept>

#include "disk_cache_test_support.h"
#include "quire/engine/disk_cache/page_file.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test::disk_cache;

Q_DECLARE_METATYPE(quire::cache::CacheFormat)

namespace {

struct EncodedPage {
  PageCoding coding;
  cache::PageHash hash;
  std::vector<std::byte> payload;
  std::vector<std::byte> file;
};

EncodedPage encoded(cache::CacheFormat format = cache::CacheFormat::Q6) {
  EncodedPage page{small_coding(format), chain(2, 7)[1], {}, {}};
  page.payload = random_payload(page.coding, 11);
  page.file =
      encode_page_file(model_number(1), page.coding, page.hash, chain(2, 7)[0], 16, page.payload);
  return page;
}

PageFileCheck decode(const EncodedPage& page, std::span<const std::byte> file) {
  PageFileHeader header;
  std::span<const std::byte> payload;
  return decode_page_file(file, PageExpectation{model_number(1), &page.coding, page.hash}, header,
                          payload);
}

}  // namespace

class PageFileTest : public QObject {
  Q_OBJECT

 private slots:
  void randomPagesRoundTrip_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    QTest::addColumn<int>("layers");
    QTest::addColumn<bool>("first");
    for (const cache::CacheFormat format : cache::all_cache_format_pairs())
      QTest::addRow("%s", std::string(cache::format_info(format).name).c_str())
          << format << int(1 + static_cast<int>(format.key) * 2) << (format.value == format.key);
  }
  void randomPagesRoundTrip() {
    QFETCH(cache::CacheFormat, format);
    QFETCH(int, layers);
    QFETCH(bool, first);
    const PageCoding coding = small_coding(format, layers);
    const auto hashes = chain(3, 100 + layers);
    const auto payload = random_payload(coding, std::uint64_t(layers) * 977);
    const std::optional<cache::PageHash> parent = first ? std::nullopt : std::optional(hashes[1]);
    const auto file = encode_page_file(model_number(4), coding, hashes[2], parent, 9, payload);
    QCOMPARE(file.size(), kPageFileFixedHeader + kPageFileLayerEntry * std::size_t(layers) +
                              payload.size() + kPageFileChecksum);

    PageFileHeader header;
    std::span<const std::byte> read;
    const PageFileCheck check =
        decode_page_file(file, PageExpectation{model_number(4), &coding, hashes[2]}, header, read);
    QVERIFY2(check, check.detail.c_str());
    QVERIFY(std::equal(read.begin(), read.end(), payload.begin(), payload.end()));
    QVERIFY(header.coding == coding);
    QVERIFY(header.model == model_number(4));
    QVERIFY(header.hash == hashes[2]);
    QVERIFY(header.parent == parent);
    QCOMPARE(header.token_count, 9u);
    QCOMPARE(header.version, kPageFileVersion);
  }

  // Each coding field changes the coding's folder name.
  void codingKeysTellCodingsApart() {
    const PageCoding q6 = small_coding();
    QVERIFY(q6.key().starts_with("q6-16-"));
    QCOMPARE(q6.key().size(), std::string("q6-16-").size() + 16);
    QCOMPARE(small_coding().key(), q6.key());
    std::vector<PageCoding> others(5, q6);
    others[0] = small_coding(cache::CacheFormat::Q8);
    others[1] = small_coding(cache::CacheFormat::Q6, 4);
    others[2].producer += 1;
    others[3].page_size = 32;
    others[4].layers[2].value_scales += 2;
    for (const PageCoding& other : others)
      QVERIFY(other.key() != q6.key());
  }

  void encodingRefusesAPayloadOfAnotherSize() {
    const PageCoding coding = small_coding();
    auto payload = random_payload(coding, 1);
    payload.pop_back();
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        encode_page_file(model_number(1), coding, chain(1, 1)[0], std::nullopt, 16, payload));
    payload.push_back(std::byte{0});
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        encode_page_file(model_number(1), coding, chain(1, 1)[0], std::nullopt, 17, payload));
  }

  void truncatedFilesAreTruncated() {
    const EncodedPage page = encoded();
    const std::size_t header = kPageFileFixedHeader + 3 * kPageFileLayerEntry;
    for (const std::size_t length :
         {std::size_t{0}, std::size_t{5}, std::size_t{8}, std::size_t{12}, std::size_t{40},
          kPageFileFixedHeader - 1, kPageFileFixedHeader, header - 1, header, header + 1,
          header + page.payload.size() / 2, page.file.size() - kPageFileChecksum,
          page.file.size() - 1}) {
      const PageFileCheck check = decode(page, std::span(page.file).first(length));
      QVERIFY2(check.problem == PageFileProblem::Truncated,
               (std::to_string(length) + ": " + check.detail).c_str());
    }
  }

  void bytesPastTheEndAreMalformed() {
    EncodedPage page = encoded();
    page.file.push_back(std::byte{0});
    const PageFileCheck check = decode(page, page.file);
    QVERIFY(check.problem == PageFileProblem::Malformed);
    QCOMPARE(check.detail, "the file holds " + std::to_string(page.file.size()) +
                               " bytes, more than the " + std::to_string(page.file.size() - 1) +
                               " its header says");
  }

  void otherMagicAndVersionAreNamed() {
    EncodedPage page = encoded();
    auto file = page.file;
    file[0] = std::byte{'X'};
    QVERIFY(decode(page, file).problem == PageFileProblem::BadMagic);
    file = page.file;
    file[8] = std::byte{2};
    const PageFileCheck check = decode(page, file);
    QVERIFY(check.problem == PageFileProblem::OtherVersion);
    QCOMPARE(check.detail, std::string("format version 2, this Quire reads 1"));
  }

  // A flip anywhere after the version (header fields, data, the checksum
  // itself) is damage, even where the flipped field would name another model.
  void flippedBitsFailTheChecksum() {
    const EncodedPage page = encoded();
    const std::size_t header = kPageFileFixedHeader + 3 * kPageFileLayerEntry;
    for (const std::size_t at :
         {std::size_t{13}, std::size_t{30}, std::size_t{50}, std::size_t{65}, header, header + 777,
          page.file.size() - kPageFileChecksum - 1, page.file.size() - 1}) {
      auto file = page.file;
      file[at] ^= std::byte{0x10};
      const PageFileCheck check = decode(page, file);
      QVERIFY2(check.problem == PageFileProblem::ChecksumMismatch,
               (std::to_string(at) + ": " + check.detail).c_str());
    }
  }

  void contradictoryFieldsAreMalformed() {
    const EncodedPage page = encoded();
    auto file = page.file;
    file[72] = std::byte{17};  // 17 tokens in a 16-token page
    QVERIFY(decode(page, file).problem == PageFileProblem::Malformed);
    file = page.file;
    file[60] = std::byte{2};  // "has a parent" is 0 or 1
    QVERIFY(decode(page, file).problem == PageFileProblem::Malformed);
    file = page.file;
    file[80] = std::byte{0};  // layer 0's key data: 0 bytes
    file[81] = std::byte{0};
    QVERIFY(decode(page, file).problem == PageFileProblem::Malformed);
  }

  void foreignPagesAreNamed() {
    const EncodedPage page = encoded();
    PageFileHeader header;
    std::span<const std::byte> payload;
    PageFileCheck check = decode_page_file(
        page.file, PageExpectation{model_number(2), &page.coding, page.hash}, header, payload);
    QVERIFY(check.problem == PageFileProblem::OtherModel);
    QCOMPARE(check.detail, "written for model " + model_number(1).hex() + ", this is model " +
                               model_number(2).hex());

    const PageCoding q4 = small_coding(cache::CacheFormat::Q4);
    check = decode_page_file(page.file, PageExpectation{model_number(1), &q4, page.hash}, header,
                             payload);
    QVERIFY(check.problem == PageFileProblem::OtherCoding);
    QCOMPARE(check.detail,
             "written as " + page.coding.describe() + ", the cache is " + q4.describe());
    PageCoding newer = page.coding;
    newer.producer = PageCoding::kCurrentProducer + 1;
    check = decode_page_file(page.file, PageExpectation{model_number(1), &newer, page.hash}, header,
                             payload);
    QVERIFY(check.problem == PageFileProblem::OtherCoding);

    const cache::PageHash other = chain(1, 99)[0];
    check = decode_page_file(page.file, PageExpectation{model_number(1), &page.coding, other},
                             header, payload);
    QVERIFY(check.problem == PageFileProblem::OtherPage);
    QCOMPARE(check.detail,
             "holds page " + page.hash.hex() + ", page " + other.hex() + " was asked for");
  }
};

QUIRE_TEST(PageFileTest)
#include "test_page_file.moc"
