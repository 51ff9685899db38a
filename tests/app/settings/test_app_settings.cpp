// AppSettings: the table's defaults, a full save and load, and the engine
// settings handed to and taken from the settings panel.

#include <QFile>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/app_settings.h"
#include "test_main.h"

using quire::app::AppSettings;
using quire::app::SettingsProblem;
using quire::ui::EngineSettings;

namespace {

// Every value away from its default, with the awkward cases a file format
// gets wrong: commas, newlines, quotes, '=' and '#', non-ASCII text, NUL bytes.
AppSettings every_value_changed(const QString& path) {
  AppSettings s(path);
  EngineSettings& e = s.engine;
  e.model_directory = QStringLiteral("/models/Llama 3 (8B), exl2=4.0bpw #1");
  e.recent_models = {e.model_directory, QStringLiteral("/models/qwen2, 7b"),
                     QStringLiteral("/模型/mistral")};
  e.remote_url = QStringLiteral("https://gpu-box:8000/v1");
  e.remote_model = QStringLiteral("meta-llama/Llama-3.1-70B-Instruct");
  e.backend = QStringLiteral("cuda");
  e.devices = {0, 2};
  e.split = EngineSettings::Split::Manual;
  e.manual_gb = {20.5, 0, 11.25};
  e.reserve_mib = 384.5;
  e.device_reserve_mib = {-1, 1536};
  e.max_context = 32768;
  e.cache_format = QStringLiteral("q6");
  e.cache_tokens = 131072;
  e.host_cache_mib = 8192;
  e.disk_cache = false;
  e.disk_cache_mib = 12288;
  e.residual_window = 6;
  e.cache_residence = QStringLiteral("offload-global");
  e.cache_device = 2;
  e.max_batch = 4;
  e.chunk_size = 1024;
  quire::ui::TunedSampling tuned;
  tuned.dry_multiplier = 0.8;
  tuned.dry_base = 2.25;
  tuned.dry_allowed_length = 4;
  tuned.dry_range = 2048;
  tuned.dry_sequence_breakers = {QStringLiteral("\n"), QStringLiteral("\", = #"),
                                 QStringLiteral("「")};
  tuned.xtc_threshold = 0.15;
  tuned.xtc_probability = 0.5;
  tuned.top_n_sigma = 1.5;
  tuned.mirostat = true;
  tuned.mirostat_tau = 4.5;
  tuned.mirostat_eta = 0.25;
  e.sampling = {0.65, 0.85, 0.02, 1.12, 64, tuned};
  e.drafts = {QStringLiteral("model"), 9, QStringLiteral("/models/small-draft")};
  e.system_prompt =
      QStringLiteral("Line one; \"quoted\"\n\tLine two = two, [three]\n# not a comment");
  e.prompt_format = QStringLiteral("llama3");
  e.context_overflow = QStringLiteral("truncate_middle");
  e.default_preset = QStringLiteral("Story, \"long\" = mine");
  s.server = {true, 18642};
  s.window.geometry = QByteArray("\x01\xd9\xd0\xcb\x00\x03", 6);
  s.window.state = QByteArray(64, '\0');
  s.window.splitter = QByteArrayLiteral("splitter=state, with comma");
  s.preferences.theme = QStringLiteral("dark");
  s.preferences.chat_font_point_size = 13;
  s.preferences.show_memory_panel = false;
  s.preferences.send_with_enter = false;
  s.preferences.last_chat = QStringLiteral("3f2a9c0e-chat");
  return s;
}

}  // namespace

class TestAppSettings : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(dir_.isValid());
    // A new file per test: QSettings keeps parsed files by path and trusts size
    // and modification time, which a quick rewrite may leave unchanged.
    path_ = dir_.filePath(QStringLiteral("quire-%1.conf").arg(++files_));
  }

  void defaults() {
    const AppSettings s(path_);
    const EngineSettings& e = s.engine;
    QCOMPARE(e.model_directory, QString());
    QCOMPARE(e.recent_models, QStringList());
    QCOMPARE(e.backend, QStringLiteral("auto"));
    QCOMPARE(e.devices, QList<int>());
    QCOMPARE(e.split, EngineSettings::Split::Fill);
    QCOMPARE(e.manual_gb, QList<double>());
    QCOMPARE(e.reserve_mib, 256.0);
    QCOMPARE(e.max_context, 8192);
    QCOMPARE(e.cache_format, QStringLiteral("fp16"));
    QCOMPARE(e.cache_tokens, 16384);
    QCOMPARE(e.host_cache_mib, 0);
    // The disk tier is on, at the engine's 4 GiB.
    QVERIFY(e.disk_cache);
    QCOMPARE(e.disk_cache_mib, 4096);
    QCOMPARE(e.residual_window, 4);
    QCOMPARE(e.cache_residence, QStringLiteral("device"));
    QCOMPARE(e.cache_device, -1);
    QCOMPARE(e.max_batch, 16);
    QCOMPARE(e.chunk_size, 256);
    QCOMPARE(e.default_preset, QString());  // new chats follow the settings
    QCOMPARE(e.sampling.temperature, 0.8);
    QCOMPARE(e.sampling.top_p, 0.95);
    QCOMPARE(e.sampling.min_p, 0.05);
    QCOMPARE(e.sampling.repetition_penalty, 1.0);
    QCOMPARE(e.sampling.top_k, 40);
    // DRY, XTC, top-nσ and mirostat off, as in the engine.
    QCOMPARE(e.sampling.tuned, quire::ui::TunedSampling{});
    QCOMPARE(e.sampling.tuned.dry_sequence_breakers,
             (QStringList{QStringLiteral("\n"), QStringLiteral(":"), QStringLiteral("\""),
                          QStringLiteral("*")}));
    // Speculative decoding off, with the engine's draft length ready.
    QCOMPARE(e.drafts.method, QStringLiteral("off"));
    QCOMPARE(e.drafts.max_tokens, 4);
    QCOMPARE(e.system_prompt, QString());
    QCOMPARE(e.prompt_format, QStringLiteral("auto"));
    // Quire's behaviour before chats chose a context policy.
    QCOMPARE(e.context_overflow, QStringLiteral("drop_oldest"));
    QVERIFY(s.window.geometry.isEmpty());
    QCOMPARE(s.preferences.theme, QStringLiteral("system"));
    QCOMPARE(s.preferences.chat_font_point_size, 0);
    QVERIFY(s.preferences.show_memory_panel);
    QVERIFY(s.preferences.send_with_enter);
    QCOMPARE(s.preferences.last_chat, QString());
    QVERIFY(!s.server.enabled);
    QCOMPARE(s.server.port, 8642);
    QCOMPARE(s, AppSettings());
  }

  void defaultsObeyTheirOwnRules() {
    AppSettings s(path_);
    QCOMPARE(s.setEngineSettings(s.engine), QList<SettingsProblem>());
  }

  void keysTable() {
    const auto keys = AppSettings::keys();
    QCOMPARE(keys.size(), 55);
    QSet<QString> names;
    for (const auto& key : keys)
      names.insert(key.key);
    QCOMPARE(names.size(), keys.size());
    QCOMPARE(keys.at(0).key, QStringLiteral("engine/model_directory"));
    for (const auto& key : keys) {
      if (key.key == QLatin1String("engine/cache_format")) {
        QCOMPARE(key.default_value, QStringLiteral("fp16"));
      }
      if (key.key == QLatin1String("sampling/temperature")) {
        QCOMPARE(key.default_value, QStringLiteral("0.8"));
      }
    }
  }

  void missingFileGivesDefaults() {
    AppSettings s(path_);
    s.engine.max_context = 1024;
    // No free memory to share: the host tier keeps the table's default too.
    s.setFreeMemorySource([] { return qint64{0}; });
    QCOMPARE(s.load(), QList<SettingsProblem>());
    QCOMPARE(s, AppSettings());
  }

  void roundTrip() {
    AppSettings written = every_value_changed(path_);
    QVERIFY2(written.save(), qPrintable(written.errorString()));
    AppSettings read(path_);
    const QList<SettingsProblem> problems = read.load();
    QVERIFY2(problems.isEmpty(), qPrintable(problems.value(0).text()));
    QCOMPARE(read.engine.model_directory, written.engine.model_directory);
    QCOMPARE(read.engine.recent_models, written.engine.recent_models);
    QCOMPARE(read.engine.remote_url, written.engine.remote_url);
    QCOMPARE(read.engine.remote_model, written.engine.remote_model);
    QCOMPARE(read.engine.manual_gb, written.engine.manual_gb);
    QCOMPARE(read.engine.residual_window, written.engine.residual_window);
    QCOMPARE(read.engine.system_prompt, written.engine.system_prompt);
    QCOMPARE(read.engine.sampling, written.engine.sampling);
    QCOMPARE(read.engine.drafts, written.engine.drafts);
    QCOMPARE(read.window, written.window);
    QCOMPARE(read.preferences, written.preferences);
    QCOMPARE(read.server, written.server);
    QVERIFY(read == written);
  }

  void noDryBreakersStayNone() {
    AppSettings written(path_);
    written.engine.sampling.tuned.dry_sequence_breakers.clear();
    QVERIFY2(written.save(), qPrintable(written.errorString()));
    AppSettings read(path_);
    QCOMPARE(read.load(), QList<SettingsProblem>());
    QCOMPARE(read.engine.sampling.tuned.dry_sequence_breakers, QStringList());
  }

  void shortListsRoundTrip_data() {
    QTest::addColumn<QStringList>("recent");
    QTest::addColumn<QList<int>>("devices");
    QTest::newRow("empty") << QStringList() << QList<int>();
    QTest::newRow("one each") << QStringList{QStringLiteral("/m")} << QList<int>{3};
    QTest::newRow("one with comma") << QStringList{QStringLiteral("/a,b")} << QList<int>{0};
  }

  void shortListsRoundTrip() {
    QFETCH(QStringList, recent);
    QFETCH(QList<int>, devices);
    AppSettings written = every_value_changed(path_);
    written.engine.recent_models = recent;
    written.engine.devices = devices;
    QVERIFY(written.save());
    AppSettings read(path_);
    QVERIFY(read.load().isEmpty());
    QCOMPARE(read.engine.recent_models, recent);
    QCOMPARE(read.engine.devices, devices);
  }

  void fileIsReadableText() {
    AppSettings s = every_value_changed(path_);
    QVERIFY(s.save());
    QFile file(path_);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    for (const char* line :
         {"cache_format=q6", "reserve_mib=384.5", "split=manual", "format_version=1",
          "temperature=0.65", "[server]\nenabled=true\nport=18642\n"}) {
      QVERIFY2(text.contains(line), line);
    }
  }

  void cacheFormatsOfKeysAndValuesApartLoadByAnySpelling() {
    for (const auto& [stored, loaded] :
         std::initializer_list<std::pair<const char*, const char*>>{{"kf8v4", "kf8v4"},
                                                                    {"K8V4", "q6"},
                                                                    {"kq8vq4", "q6"},
                                                                    {"kq4vq4", "q4"},
                                                                    {"k16vfp8", "k16vf8"}}) {
      // A file of its own for each: QSettings keeps what it read of a file
      // and reads it again only when its time or size changed, and two of
      // these files differ in neither when written within a second.
      const QString path = path_ + QLatin1Char('.') + QString::fromLatin1(stored);
      QFile file(path);
      QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
      file.write(QByteArray("[engine]\ncache_format=") + stored + "\n");
      file.close();
      AppSettings read(path);
      QVERIFY2(read.load().isEmpty(), stored);
      QCOMPARE(read.engine.cache_format, QString::fromLatin1(loaded));
    }
  }

  void saveReportsAFileItCannotWrite() {
    AppSettings s(dir_.path());  // a directory where the file should be
    QVERIFY(!s.save());
    QVERIFY(s.errorString().contains(dir_.path()));
  }

  void engineSettingsForThePanel() {
    AppSettings s = every_value_changed(path_);
    QCOMPARE(s.engineSettings(), s.engine);
    EngineSettings edited = s.engineSettings();
    edited.cache_format = QStringLiteral("q4");
    edited.sampling.top_k = 5;
    QVERIFY(s.setEngineSettings(edited).isEmpty());
    QCOMPARE(s.engine, edited);
  }

  void engineSettingsOutOfRangeAreReplaced() {
    AppSettings s(path_);
    EngineSettings edited = s.engineSettings();
    edited.max_context = 10;
    edited.backend = QStringLiteral("metal");
    edited.devices = {2, 0, 2};
    const QList<SettingsProblem> problems = s.setEngineSettings(edited);
    QCOMPARE(problems.size(), 2);
    QCOMPARE(problems.at(0).key, QStringLiteral("engine/backend"));
    QCOMPARE(problems.at(1).key, QStringLiteral("engine/max_context"));
    QCOMPARE(problems.at(1).text(),
             QStringLiteral("engine/max_context: \"10\" is outside 256 to 1048576; using the "
                            "default"));
    QCOMPARE(s.engine.max_context, 8192);
    QCOMPARE(s.engine.backend, QStringLiteral("auto"));
    QCOMPARE(s.engine.devices, (QList<int>{0, 2}));  // tidied, not refused
  }

  void serverPortsOutsideTheRangeAreReplaced_data() {
    QTest::addColumn<QString>("stored");
    QTest::addColumn<QString>("reason");
    QTest::newRow("privileged") << QStringLiteral("80")
                                << QStringLiteral("is outside 1024 to 65535");
    QTest::newRow("beyond") << QStringLiteral("70000")
                            << QStringLiteral("is outside 1024 to 65535");
    QTest::newRow("text") << QStringLiteral("http") << QStringLiteral("is not a whole number");
  }

  void serverPortsOutsideTheRangeAreReplaced() {
    QFETCH(QString, stored);
    QFETCH(QString, reason);
    QFile file(path_);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write("[server]\nenabled=true\nport=" + stored.toUtf8() + "\n");
    file.close();
    AppSettings read(path_);
    const QList<SettingsProblem> problems = read.load();
    QCOMPARE(problems.size(), 1);
    QCOMPARE(problems.at(0).key, QStringLiteral("server/port"));
    QCOMPARE(problems.at(0).reason, reason);
    QVERIFY(read.server.enabled);
    QCOMPARE(read.server.port, 8642);

    AppSettings set(path_);
    const QList<SettingsProblem> refused = set.setServerSettings({true, 1023});
    QCOMPARE(refused.size(), 1);
    QCOMPARE(refused.at(0).key, QStringLiteral("server/port"));
    QCOMPARE(set.server, (quire::ui::ServerSettings{true, 8642}));
    QVERIFY(set.setServerSettings({true, 1024}).isEmpty());
    QCOMPARE(set.server.port, 1024);
  }

  void rememberModel() {
    AppSettings s(path_);
    for (int i = 0; i < 12; ++i)
      s.rememberModel(QStringLiteral("/m%1").arg(i));
    s.rememberModel(QStringLiteral("/m5"));
    s.rememberModel(QString());
    QCOMPARE(s.engine.recent_models.size(), 10);
    QCOMPARE(s.engine.recent_models.at(0), QStringLiteral("/m5"));
    QCOMPARE(s.engine.recent_models.at(1), QStringLiteral("/m11"));
    QCOMPARE(s.engine.recent_models.count(QStringLiteral("/m5")), 1);
  }

 private:
  QTemporaryDir dir_;
  QString path_;
  int files_ = 0;
};

QUIRE_TEST(TestAppSettings)
#include "test_app_settings.moc"
