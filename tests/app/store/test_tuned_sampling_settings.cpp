// A chat's DRY, XTC, top-nσ and mirostat settings: kept by the store across a
// reopen, carried by the chat file both ways, and refused when out of range.

#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;

namespace {

TunedSampling tuned_values() {
  TunedSampling tuned;
  tuned.dry_multiplier = 0.8;
  tuned.dry_base = 2.5;
  tuned.dry_allowed_length = 3;
  tuned.dry_range = 512;
  tuned.dry_sequence_breakers = {QStringLiteral("\n"), QStringLiteral("###")};
  tuned.xtc_threshold = 0.15;
  tuned.xtc_probability = 0.5;
  tuned.top_n_sigma = 1.25;
  tuned.mirostat = true;
  tuned.mirostat_tau = 4;
  tuned.mirostat_eta = 0.2;
  return tuned;
}

}  // namespace

class TunedSamplingSettingsTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;

  QString path() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void theStoreKeepsThemAcrossAReopen() {
    ChatSettings settings;
    settings.temperature = 0.7;
    settings.tuned_sampling = tuned_values();
    ChatId chat{};
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
      chat = *store.create_chat(QStringLiteral("tuned"));
      QCOMPARE(store.chat_settings(chat)->tuned_sampling, std::nullopt);
      QVERIFY2(store.set_chat_settings(chat, settings), qPrintable(store.error_string()));
    }
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    QCOMPARE(store.chat_settings(chat), std::optional<ChatSettings>(settings));

    // No breakers is a choice of its own, not the defaults.
    settings.tuned_sampling->dry_sequence_breakers.clear();
    QVERIFY(store.set_chat_settings(chat, settings));
    QCOMPARE(store.chat_settings(chat), std::optional<ChatSettings>(settings));
    // Following the global settings again.
    settings.tuned_sampling.reset();
    QVERIFY(store.set_chat_settings(chat, settings));
    QCOMPARE(store.chat_settings(chat)->tuned_sampling, std::nullopt);
  }

  void outOfRangeValuesAreRefusedByName() {
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const ChatId chat = *store.create_chat(QStringLiteral("tuned"));
    ChatSettings settings;
    settings.tuned_sampling = tuned_values();
    settings.tuned_sampling->xtc_probability = 1.5;
    QVERIFY(!store.set_chat_settings(chat, settings));
    QCOMPARE(store.error(), StoreError::InvalidArgument);
    QCOMPARE(store.error_string(),
             QStringLiteral("The chat's settings were not changed: xtc_probability must be "
                            "between 0 and 1 (got 1.5)."));
    TunedSampling bad;
    bad.dry_base = 0.5;
    QCOMPARE(bad.problem(), QStringLiteral("dry_base must be 1 or more (got 0.5)"));
    bad = TunedSampling{};
    bad.dry_sequence_breakers << QString();
    QCOMPARE(bad.problem(), QStringLiteral("dry_sequence_breakers must not hold an empty string"));
    bad = TunedSampling{};
    bad.mirostat_eta = 0;
    QCOMPARE(bad.problem(),
             QStringLiteral("mirostat_eta must be greater than 0 and at most 1 (got 0)"));
  }

  void theChatFileCarriesThemBothWays() {
    ChatDocument document;
    document.title = QStringLiteral("tuned");
    document.created = QDateTime::fromMSecsSinceEpoch(1714564800000, Qt::UTC);
    document.updated = document.created;
    document.settings.tuned_sampling = tuned_values();
    const QByteArray json = chat_to_json(document);
    QVERIFY(json.contains("\"dry_multiplier\": 0.8"));
    QVERIFY(json.contains("\"mirostat\": 2"));
    QString error;
    const std::optional<ChatDocument> read = chat_from_json(json, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(*read, document);
  }

  void absentKeysInTheFileTakeTheDefaults() {
    QString error;
    const auto read = chat_from_json(
        test::chat_file_with_settings("{\"tuned_sampling\": {\"xtc_probability\": 0.5}}"), &error);
    QVERIFY2(read, qPrintable(error));
    TunedSampling expected;
    expected.xtc_probability = 0.5;
    QCOMPARE(read->settings.tuned_sampling, std::optional<TunedSampling>(expected));
  }

  void badFilesAreRefusedNamingTheField_data() {
    QTest::addColumn<QByteArray>("settings");
    QTest::addColumn<QString>("message");
    QTest::newRow("not an object") << QByteArray("{\"tuned_sampling\": 2}")
                                   << "chat_settings.tuned_sampling: expected an object";
    QTest::newRow("out of range") << QByteArray("{\"tuned_sampling\": {\"dry_base\": 0.5}}")
                                  << "chat_settings.tuned_sampling: dry_base must be 1 or more "
                                     "(got 0.5)";
    QTest::newRow("mirostat 1") << QByteArray("{\"tuned_sampling\": {\"mirostat\": 1}}")
                                << "chat_settings.tuned_sampling: mirostat: expected 0 (off) or "
                                   "2 (mirostat v2)";
    QTest::newRow("a number as text")
        << QByteArray("{\"tuned_sampling\": {\"top_n_sigma\": \"1\"}}")
        << "chat_settings.tuned_sampling: top_n_sigma: expected a number";
    QTest::newRow("breakers") << QByteArray(
                                     "{\"tuned_sampling\": {\"dry_sequence_breakers\": [1]}}")
                              << "chat_settings.tuned_sampling: dry_sequence_breakers: expected "
                                 "strings";
  }

  void badFilesAreRefusedNamingTheField() {
    QFETCH(QByteArray, settings);
    QFETCH(QString, message);
    QString error;
    QVERIFY(!chat_from_json(test::chat_file_with_settings(settings), &error));
    QVERIFY2(error.contains(message), qPrintable(error));
  }
};

QUIRE_TEST(TunedSamplingSettingsTest)
#include "test_tuned_sampling_settings.moc"
