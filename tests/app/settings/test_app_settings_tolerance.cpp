// Loading settings files that people (or crashes, or other versions) broke:
// every unusable value falls back to its default and is reported, the rest of
// the file still loads, and nothing stored can crash the load.

#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/app_settings.h"
#include "test_main.h"

using quire::app::AppSettings;
using quire::app::SettingsProblem;

class TestAppSettingsTolerance : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(dir_.isValid());
    path_ = fresh_path();
  }

  void badValue_data() {
    QTest::addColumn<QString>("group");
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("reason");

    QTest::newRow("words for a number") << "engine"
                                        << "max_context=lots"
                                        << "is not a whole number";
    QTest::newRow("trailing junk") << "engine"
                                   << "max_context=12abc"
                                   << "is not a whole number";
    QTest::newRow("beyond int") << "engine"
                                << "max_context=99999999999"
                                << "is not a whole number";
    QTest::newRow("bytes for a number") << "engine"
                                        << "max_context=@ByteArray(4096)"
                                        << "is not a whole number";
    QTest::newRow("too small") << "engine"
                               << "max_context=100"
                               << "is outside 256 to 1048576";
    QTest::newRow("negative reserve") << "engine"
                                      << "reserve_mib=-5"
                                      << "is outside 0 to 65536";
    QTest::newRow("nan") << "engine"
                         << "reserve_mib=nan"
                         << "is not a number";
    QTest::newRow("infinity") << "engine"
                              << "reserve_mib=inf"
                              << "is not a number";
    QTest::newRow("unknown backend") << "engine"
                                     << "backend=vulkan"
                                     << "is not one of auto, cpu, cuda";
    QTest::newRow("unknown split") << "engine"
                                   << "split=layer"
                                   << "is not one of fill, balanced, manual";
    QTest::newRow("unknown cache format") << "engine"
                                          << "cache_format=q3"
                                          << "is not a cache format: fp16, q8, q6, q4, fp8, or "
                                             "k<keys>v<values> with each of 16, f8, 8 or 4";
    for (const char* spelling : {"k3v4", "kv4"}) {
      QTest::newRow(spelling) << "engine" << QStringLiteral("cache_format=%1").arg(spelling)
                              << "is not a cache format: fp16, q8, q6, q4, fp8, or "
                                 "k<keys>v<values> with each of 16, f8, 8 or 4";
    }
    QTest::newRow("device not a number") << "engine"
                                         << "devices=0,x"
                                         << "is not a list of device numbers";
    QTest::newRow("device out of range") << "engine"
                                         << "devices=0, 99"
                                         << "names a device is outside 0 to 63";
    QTest::newRow("manual GB out of range") << "engine"
                                            << "manual_gb=1e9"
                                            << "holds a value that is outside 0 to 4096";
    QTest::newRow("manual GB not numbers") << "engine"
                                           << "manual_gb=lots, lots"
                                           << "is not a list of GB per device";
    QTest::newRow("top-p above 1") << "sampling"
                                   << "top_p=1.5"
                                   << "is outside 0 to 1";
    QTest::newRow("temperature in words") << "sampling"
                                          << "temperature=hot"
                                          << "is not a number";
    QTest::newRow("top-k negative") << "sampling"
                                    << "top_k=-1"
                                    << "is outside 0 to 1000";
    QTest::newRow("unknown draft method") << "speculative"
                                          << "method=eagle"
                                          << "is not one of off, ngram, model";
    QTest::newRow("draft too long") << "speculative"
                                    << "max_tokens=65"
                                    << "is outside 1 to 64";
    QTest::newRow("empty prompt format") << "chat"
                                         << "prompt_format="
                                         << "is empty";
    QTest::newRow("unknown context policy") << "chat"
                                            << "context_overflow=sideways"
                                            << "is not one of stop, drop_oldest, truncate_middle";
    QTest::newRow("maybe") << "ui"
                           << "show_memory_panel=maybe"
                           << "is not true or false";
    QTest::newRow("unknown theme") << "ui"
                                   << "theme=neon"
                                   << "is not one of system, light, dark";
    QTest::newRow("negative font") << "ui"
                                   << "chat_font_point_size=-1"
                                   << "is outside 0 to 72";
  }

  void badValue() {
    QFETCH(QString, group);
    QFETCH(QString, line);
    QFETCH(QString, reason);
    // A good value beside the bad one must still load.
    write(QStringLiteral("[%1]\n%2\n\n[engine]\ncache_tokens=65536\n").arg(group, line));
    AppSettings s(path_);
    s.setFreeMemorySource([] { return qint64{0}; });  // the table's host tier, as `expected`
    const QList<SettingsProblem> problems = s.load();
    QCOMPARE(problems.size(), 1);
    const QString key = group + QLatin1Char('/') + line.section(QLatin1Char('='), 0, 0);
    QCOMPARE(problems.at(0).key, key);
    QCOMPARE(problems.at(0).reason, reason);
    QVERIFY(problems.at(0).text().startsWith(key + QStringLiteral(": \"")));
    QVERIFY(problems.at(0).text().endsWith(QStringLiteral("; using the default")));
    QCOMPARE(s.engine.cache_tokens, 65536);
    AppSettings expected(path_);
    expected.engine.cache_tokens = 65536;
    QCOMPARE(s, expected);  // the bad value is back at its default
  }

  void lenientWhereTheMeaningIsClear() {
    write(
        QStringLiteral("[engine]\ndevices=\"2,0,2\"\nmanual_gb=\"20, 0, 0\"\nbackend= cpu \n"
                       "max_context= 4096\n[ui]\nsend_with_enter=FALSE\nshow_memory_panel=1\n"));
    AppSettings s(path_);
    QCOMPARE(s.load(), QList<SettingsProblem>());
    QCOMPARE(s.engine.devices, (QList<int>{0, 2}));
    QCOMPARE(s.engine.manual_gb, (QList<double>{20}));
    QCOMPARE(s.engine.backend, QStringLiteral("cpu"));
    QCOMPARE(s.engine.max_context, 4096);
    QVERIFY(!s.preferences.send_with_enter);
    QVERIFY(s.preferences.show_memory_panel);
  }

  void longRecentListIsTrimmed() {
    QStringList paths;
    for (int i = 0; i < 15; ++i)
      paths << QStringLiteral("/m%1").arg(i % 12);
    write(QStringLiteral("[engine]\nrecent_models=%1\n").arg(paths.join(QStringLiteral(", "))));
    AppSettings s(path_);
    QVERIFY(s.load().isEmpty());
    QCOMPARE(s.engine.recent_models.size(), 10);
    QCOMPARE(s.engine.recent_models.first(), QStringLiteral("/m0"));
  }

  void unknownKeysAreIgnoredAndKept() {
    write(
        QStringLiteral("[meta]\nformat_version=7\n[future]\nthing=1\n[engine]\nchunk_size=128\n"));
    AppSettings s(path_);
    QVERIFY(s.load().isEmpty());
    QCOMPARE(s.engine.chunk_size, 128);
    QVERIFY(s.save());
    QFile file(path_);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("thing=1"));
  }

  void serializedGarbage() {
    // QSettings decodes @Variant(...) with QDataStream; a broken one must not
    // get through as a value.
    write(
        QStringLiteral("[engine]\nmax_context=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\x1bGarbage)\n"
                       "devices=@Variant(\\0\\0\\0\\n\\xff\\xff)\n[window]\n"
                       "geometry=@Variant(\\x1\\x2)\n"));
    AppSettings s(path_);
    s.load();
    QCOMPARE(s.engine.max_context, 8192);
    QCOMPARE(s.engine.devices, QList<int>());
    // Whatever was kept obeys the table's rules.
    QCOMPARE(AppSettings(s).setEngineSettings(s.engine), QList<SettingsProblem>());
  }

  void randomBytes() {
    QRandomGenerator random(20240611);
    for (int round = 0; round < 50; ++round) {
      QByteArray bytes(1 + static_cast<int>(random.bounded(4096)), '\0');
      for (char& byte : bytes)
        byte = static_cast<char>(random.bounded(256));
      // Some rounds keep real keys so the parser gets past the first line.
      if (round % 2 == 0) bytes.prepend("[engine]\nmax_context=");
      path_ = fresh_path();
      QFile file(path_);
      QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
      file.write(bytes);
      file.close();
      AppSettings s(path_);
      s.load();
      AppSettings copy = s;
      QCOMPARE(copy.setEngineSettings(s.engine), QList<SettingsProblem>());
    }
  }

 private:
  // A new file for every case: QSettings keeps parsed files by path and trusts
  // size and modification time, so a same-sized file rewritten within the
  // timestamp's resolution would be served from the previous case.
  QString fresh_path() { return dir_.filePath(QStringLiteral("quire-%1.conf").arg(++files_)); }

  void write(const QString& text) {
    QFile file(path_);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(text.toUtf8());
  }

  QTemporaryDir dir_;
  QString path_;
  int files_ = 0;
};

QUIRE_TEST(TestAppSettingsTolerance)
#include "test_app_settings_tolerance.moc"
