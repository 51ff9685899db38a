// quire-cli download and search against the fake Hub (tests/app/hub), run as
// a child process with the Hub's environment variables pointing at it.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "fake_hub.h"
#include "test_main.h"

using quire::test::FakeHub;

namespace {

struct HubRun {
  int exit_code = -1;
  QString out;
  QString err;
};

// Runs quire-cli while this process's event loop serves the fake Hub.
HubRun run_with_hub(const QStringList& arguments, const QMap<QString, QString>& environment) {
  QProcessEnvironment variables = QProcessEnvironment::systemEnvironment();
  for (const QString& name : variables.keys())
    if (name.startsWith(QLatin1String("HF_")) || name == QLatin1String("HUGGING_FACE_HUB_TOKEN"))
      variables.remove(name);
  for (auto item = environment.cbegin(); item != environment.cend(); ++item)
    variables.insert(item.key(), item.value());
  QProcess process;
  process.setProcessEnvironment(variables);
  process.start(QStringLiteral(QUIRE_CLI_PATH), arguments);
  if (!process.waitForStarted()) return {};
  HubRun run;
  if (!QTest::qWaitFor([&] { return process.state() == QProcess::NotRunning; }, 120000)) {
    process.kill();
    process.waitForFinished();
    run.err = QStringLiteral("(quire-cli did not finish in two minutes)");
    return run;
  }
  run.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  run.out = QString::fromUtf8(process.readAllStandardOutput());
  run.err += QString::fromUtf8(process.readAllStandardError());
  return run;
}

QByteArray random_bytes(qsizetype size, char seed) {
  QByteArray bytes(size, Qt::Uninitialized);
  quint32 state = static_cast<quint32>(seed) * 2654435761u + 1;
  for (char& byte : bytes) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<char>(state >> 24);
  }
  return bytes;
}

quire::test::FakeRepo model_repo(const QString& id, qint64 downloads) {
  quire::test::FakeRepo repo;
  repo.id = id;
  repo.downloads = downloads;
  repo.tags = {QStringLiteral("exl2")};
  repo.branches = {{QStringLiteral("main"),
                    QStringLiteral("c3").repeated(20),
                    {{QStringLiteral("config.json"), R"({"model_type":"llama"})", false},
                     {QStringLiteral("model.safetensors"), random_bytes(200 * 1024, 7), true}}},
                   {QStringLiteral("4.0bpw"),
                    QStringLiteral("d4").repeated(20),
                    {{QStringLiteral("config.json"), R"({"bits":4})", false},
                     {QStringLiteral("output.safetensors"), random_bytes(50 * 1024, 8), true}}}};
  return repo;
}

QStringList lines_of(const QString& text) {
  return text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

}  // namespace

class HubCommandsTest : public QObject {
  Q_OBJECT

 private slots:
  void downloadPrintsTheSnapshotFolderLast() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = model_repo(QStringLiteral("org/model"), 10);
    hub.addRepo(repo);
    hub.faults().drops = 1;
    hub.faults().drop_after = 70'000;
    QTemporaryDir home;
    const QString cache = home.path() + QStringLiteral("/cache");
    const HubRun run = run_with_hub({QStringLiteral("download"), QStringLiteral("org/model"),
                                     QStringLiteral("--cache-dir"), cache},
                                    {{QStringLiteral("HF_ENDPOINT"), hub.endpoint()},
                                     {QStringLiteral("HF_HOME"), home.path()},
                                     {QStringLiteral("HF_TOKEN"), QStringLiteral("hf_secret")}});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QString snapshot = cache + QStringLiteral("/models--org--model/snapshots/") +
                             QStringLiteral("c3").repeated(20);
    QCOMPARE(lines_of(run.out).last(), snapshot);
    QCOMPARE(lines_of(run.out).size(), 1);
    QVERIFY2(run.err.startsWith(QLatin1String("org/model at main: 2 files, 200.0 KiB\n")),
             qPrintable(run.err));
    QVERIFY2(run.err.contains(QLatin1String("model.safetensors: the connection closed at 70000 "
                                            "of 204800 bytes; trying again")),
             qPrintable(run.err));
    QVERIFY2(run.err.contains(QLatin1String("100%  200.0 KiB of 200.0 KiB, 2 of 2 files")),
             qPrintable(run.err));
    QFile weights(snapshot + QStringLiteral("/model.safetensors"));
    QVERIFY(weights.open(QIODevice::ReadOnly));
    QCOMPARE(weights.readAll(), repo.branches[0].files[1].content);
    QCOMPARE(hub.fileHostRequestsWithAuthorization(), 0);
  }

  void downloadTakesABranchAndGlobsAndTheCacheFromTheEnvironment() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(model_repo(QStringLiteral("org/model"), 10));
    QTemporaryDir home;
    const HubRun run = run_with_hub(
        {QStringLiteral("download"), QStringLiteral("org/model"), QStringLiteral("--revision"),
         QStringLiteral("4.0bpw"), QStringLiteral("--include"), QStringLiteral("*.safetensors"),
         QStringLiteral("--include"), QStringLiteral("*.json"), QStringLiteral("--exclude"),
         QStringLiteral("config.json")},
        {{QStringLiteral("HF_ENDPOINT"), hub.endpoint()},
         {QStringLiteral("HF_HOME"), home.path()}});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QString snapshot = home.path() + QStringLiteral("/hub/models--org--model/snapshots/") +
                             QStringLiteral("d4").repeated(20);
    QCOMPARE(lines_of(run.out).last(), snapshot);
    QCOMPARE(QDir(snapshot).entryList(QDir::Files | QDir::System),
             QStringList{QStringLiteral("output.safetensors")});
    QFile ref(home.path() + QStringLiteral("/hub/models--org--model/refs/4.0bpw"));
    QVERIFY(ref.open(QIODevice::ReadOnly));
    QCOMPARE(ref.readAll(), QStringLiteral("d4").repeated(20).toLatin1());

    // Offline, the same command answers from the cache without a request.
    const int requests = hub.requests().size();
    const HubRun offline = run_with_hub({QStringLiteral("download"), QStringLiteral("org/model"),
                                         QStringLiteral("--revision"), QStringLiteral("4.0bpw")},
                                        {{QStringLiteral("HF_ENDPOINT"), hub.endpoint()},
                                         {QStringLiteral("HF_HOME"), home.path()},
                                         {QStringLiteral("HF_HUB_OFFLINE"), QStringLiteral("1")}});
    QVERIFY2(offline.exit_code == 0, qPrintable(offline.err));
    QCOMPARE(offline.out, snapshot + QLatin1Char('\n'));
    QCOMPARE(hub.requests().size(), requests);
  }

  void downloadFailsOnOneLine_data() {
    QTest::addColumn<QString>("repo");
    QTest::addColumn<QString>("line");
    QTest::newRow("gated") << QStringLiteral("org/gated")
                           << QStringLiteral(
                                  "quire-cli: org/gated is gated: the Hub refused the "
                                  "file config.json (HTTP 401: ");
    QTest::newRow("absent") << QStringLiteral("org/absent")
                            << QStringLiteral("quire-cli: org/absent was not found on ");
    QTest::newRow("not a name") << QStringLiteral("model")
                                << QStringLiteral(
                                       "quire-cli: \"model\" is not a repository name "
                                       "such as org/name.");
  }
  void downloadFailsOnOneLine() {
    QFETCH(QString, repo);
    QFETCH(QString, line);
    FakeHub hub;
    QVERIFY(hub.start());
    quire::test::FakeRepo gated = model_repo(QStringLiteral("org/gated"), 1);
    gated.gated = QStringLiteral("manual");
    hub.addRepo(gated);
    QTemporaryDir home;
    const HubRun run = run_with_hub({QStringLiteral("download"), repo},
                                    {{QStringLiteral("HF_ENDPOINT"), hub.endpoint()},
                                     {QStringLiteral("HF_HOME"), home.path()}});
    QCOMPARE(run.exit_code, 2);
    QCOMPARE(run.out, QString());
    const QStringList lines = lines_of(run.err);
    QVERIFY2(lines.last().startsWith(line), qPrintable(run.err));
    // Only the announcement may come before the error line.
    QVERIFY2(lines.size() <= 3, qPrintable(run.err));
  }

  void modelDirectoriesTakeHubReferences() {
    FakeHub hub;
    QVERIFY(hub.start());
    quire::test::FakeRepo demo;
    demo.id = QStringLiteral("demo/tiny");
    demo.branches = {{QStringLiteral("main"), QStringLiteral("e5").repeated(20), {}}};
    const QDir model(QStringLiteral(QUIRE_DEMO_MODEL_DIR));
    for (const QString& name : model.entryList(QDir::Files)) {
      QFile file(model.filePath(name));
      QVERIFY(file.open(QIODevice::ReadOnly));
      demo.branches[0].files.append({name, file.readAll(), !name.endsWith(QLatin1String(".json"))});
    }
    hub.addRepo(demo);
    QTemporaryDir home;
    const QMap<QString, QString> environment{{QStringLiteral("HF_ENDPOINT"), hub.endpoint()},
                                             {QStringLiteral("HF_HOME"), home.path()}};
    const HubRun download =
        run_with_hub({QStringLiteral("download"), QStringLiteral("demo/tiny")}, environment);
    QVERIFY2(download.exit_code == 0, qPrintable(download.err));

    const QStringList tokenize{QStringLiteral("tokenize"), QStringLiteral("hf:demo/tiny"),
                               QStringLiteral("--text"), QStringLiteral("Hello there")};
    const HubRun from_cache = run_with_hub(tokenize, environment);
    QVERIFY2(from_cache.exit_code == 0, qPrintable(from_cache.err));
    QStringList from_folder_arguments = tokenize;
    from_folder_arguments[1] = model.path();
    const HubRun from_folder = run_with_hub(from_folder_arguments, environment);
    QCOMPARE(from_cache.out, from_folder.out);
    QVERIFY(!from_cache.out.isEmpty());
    QCOMPARE(run_with_hub({QStringLiteral("tokenize"),
                           QStringLiteral("hf:demo/tiny@") + QStringLiteral("e5").repeated(20),
                           QStringLiteral("--text"), QStringLiteral("Hello there")},
                          environment)
                 .out,
             from_folder.out);

    const HubRun absent = run_with_hub(
        {QStringLiteral("inspect"), QStringLiteral("hf:demo/tiny@4.0bpw")}, environment);
    QCOMPARE(absent.exit_code, 2);
    QCOMPARE(absent.err,
             QStringLiteral("quire-cli: hf:demo/tiny@4.0bpw is not in the cache %1/hub; "
                            "download it first: quire-cli download demo/tiny "
                            "--revision 4.0bpw\n")
                 .arg(home.path()));
    const HubRun malformed =
        run_with_hub({QStringLiteral("inspect"), QStringLiteral("hf:tiny")}, environment);
    QCOMPARE(malformed.exit_code, 2);
    QCOMPARE(malformed.err, QStringLiteral("quire-cli: \"hf:tiny\" is not a Hub model such as "
                                           "hf:org/name or hf:org/name@revision.\n"));
  }

  void searchListsModels() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(model_repo(QStringLiteral("org/llama-small-exl2"), 10));
    hub.addRepo(model_repo(QStringLiteral("org/llama-big-exl2"), 500));
    hub.addRepo(model_repo(QStringLiteral("other/qwen"), 900));
    hub.setModelPageSize(1);
    const QMap<QString, QString> environment{{QStringLiteral("HF_ENDPOINT"), hub.endpoint()}};

    const HubRun text =
        run_with_hub({QStringLiteral("search"), QStringLiteral("llama")}, environment);
    QVERIFY2(text.exit_code == 0, qPrintable(text.err));
    QCOMPARE(
        lines_of(text.out),
        (QStringList{
            QStringLiteral("org/llama-big-exl2  downloads 500  likes 0  updated 2026-01-01"),
            QStringLiteral("org/llama-small-exl2  downloads 10  likes 0  updated 2026-01-01")}));

    const HubRun json =
        run_with_hub({QStringLiteral("search"), QStringLiteral("llama"), QStringLiteral("--limit"),
                      QStringLiteral("1"), QStringLiteral("--json")},
                     environment);
    QVERIFY2(json.exit_code == 0, qPrintable(json.err));
    const QJsonArray list = QJsonDocument::fromJson(json.out.toUtf8()).array();
    QCOMPARE(list.size(), 1);
    QCOMPARE(list[0].toObject()[QStringLiteral("id")].toString(),
             QStringLiteral("org/llama-big-exl2"));
    QCOMPARE(list[0].toObject()[QStringLiteral("downloads")].toInt(), 500);

    const HubRun none =
        run_with_hub({QStringLiteral("search"), QStringLiteral("mistral")}, environment);
    QCOMPARE(none.exit_code, 0);
    QCOMPARE(none.out, QStringLiteral("No model matches \"mistral\".\n"));
  }

  void searchFailsOnOneLine() {
    const HubRun run =
        run_with_hub({QStringLiteral("search"), QStringLiteral("llama")},
                     {{QStringLiteral("HF_ENDPOINT"), QStringLiteral("http://127.0.0.1:1")}});
    QCOMPARE(run.exit_code, 2);
    QCOMPARE(lines_of(run.err).size(), 1);
    QVERIFY2(run.err.startsWith(QLatin1String("quire-cli: Could not reach http://127.0.0.1:1 for "
                                              "the search: ")),
             qPrintable(run.err));
    const HubRun limit = run_with_hub({QStringLiteral("search"), QStringLiteral("x"),
                                       QStringLiteral("--limit"), QStringLiteral("0")},
                                      {});
    QCOMPARE(limit.exit_code, 2);
    QCOMPARE(limit.err, QStringLiteral("quire-cli: --limit must be at least 1\n"));
  }
};

QUIRE_TEST(HubCommandsTest)
#include "test_hub_commands.moc"
