// --disk-cache and --disk-cache-size: sizes parsed and refused by name, a
// prompt whose pages a second run reads back from disk (the same greedy
// reply, private files), a folder that cannot be made (one line, and the
// reply still comes), a server restart that keeps its clients' prefixes, and
// bench's disk-resume workload at a tiny size.

#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <stdexcept>

#include "cli_run.h"
#include "disk_cache_size.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;
using quire::cli::parse_byte_size;

constexpr int kPageSize = 256;

// Token ids of a prompt: 2 full pages and some more for 700.
QString prompt_ids(int count, int first = 0) {
  QStringList ids;
  for (int i = first; i < first + count; ++i)
    ids.append(QString::number(3 + (i * 37) % 3000));
  return ids.join(QLatin1Char(','));
}

QJsonArray prompt_array(int count) {
  QJsonArray ids;
  for (int i = 0; i < count; ++i)
    ids.append(3 + (i * 37) % 3000);
  return ids;
}

QJsonObject disk_json_of(const Run& run) {
  return QJsonDocument::fromJson(run.out).object();
}

QString disk_why(const Run& run) {
  return QStringLiteral("exit %1, stderr: %2").arg(run.exit_code).arg(run.err);
}

// The message parse_byte_size refuses `text` with; empty when it takes it.
QString refusal(const char* text) {
  try {
    parse_byte_size(text);
  } catch (const std::invalid_argument& error) {
    return QString::fromUtf8(error.what());
  }
  return {};
}

// Every page file and folder under `root` with its permission bits.
QMap<QString, int> modes_under(const QString& root) {
  QMap<QString, int> modes;
  QDirIterator it(root, QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot,
                  QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    struct stat st {};
    if (::stat(QFile::encodeName(path).constData(), &st) != 0) continue;
    modes.insert(QDir(root).relativeFilePath(path), static_cast<int>(st.st_mode & 07777));
  }
  return modes;
}

// One HTTP exchange with the server, waited for.
struct HttpAnswer {
  int status = 0;
  QJsonObject body;
};

HttpAnswer http(const QString& method, const QUrl& url, const QJsonObject& body = {}) {
  QNetworkAccessManager manager;
  manager.setProxy(
      QNetworkProxy::NoProxy);  // the server is this machine's, whatever http_proxy says
  QNetworkRequest request(url);
  request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
  QNetworkReply* reply = method == QLatin1String("POST")
                             ? manager.post(request, QJsonDocument(body).toJson())
                             : manager.get(request);
  QEventLoop loop;
  QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
  QTimer::singleShot(120000, &loop, &QEventLoop::quit);
  loop.exec();
  HttpAnswer answer;
  answer.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  answer.body = QJsonDocument::fromJson(reply->readAll()).object();
  reply->deleteLater();
  return answer;
}

// quire-cli serve on a free port; stopped with SIGTERM, as a service manager would.
class Server {
 public:
  explicit Server(const QStringList& arguments) {
    process_.setProgram(QStringLiteral(QUIRE_CLI_PATH));
    process_.setArguments(QStringList{QStringLiteral("serve")} + arguments +
                          QStringList{QStringLiteral("--port"), QStringLiteral("0")});
    process_.setReadChannel(QProcess::StandardError);
    process_.start();
    const QRegularExpression listening(QStringLiteral("on http://127\\.0\\.0\\.1:(\\d+)/v1"));
    QElapsedTimer waited;
    waited.start();
    while (port_ == 0 && waited.elapsed() < 120000 && process_.state() != QProcess::NotRunning) {
      process_.waitForReadyRead(1000);
      err_ += QString::fromUtf8(process_.readAllStandardError());
      if (const QRegularExpressionMatch match = listening.match(err_); match.hasMatch())
        port_ = match.captured(1).toInt();
    }
  }
  ~Server() {
    if (process_.state() != QProcess::NotRunning) {
      process_.kill();
      process_.waitForFinished(10000);
    }
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const { return port_; }
  QUrl url(const QString& path) const {
    return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(port_).arg(path));
  }
  // SIGTERM, then the exit status; what it said on stderr is err().
  int stop() {
    process_.terminate();
    if (!process_.waitForFinished(120000)) return -1;
    err_ += QString::fromUtf8(process_.readAllStandardError());
    return process_.exitStatus() == QProcess::NormalExit ? process_.exitCode() : -1;
  }
  const QString& err() const { return err_; }

 private:
  QProcess process_;
  QString err_;
  int port_ = 0;
};

}  // namespace

class DiskCacheOptionTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;

 private slots:
  void initTestCase() {
    // Room for prompts of several pages (the demo model holds 256 positions).
    model_ = root_.filePath(QStringLiteral("model"));
    const Run made = run_cli({QStringLiteral("make-model"),
                              model_,
                              QStringLiteral("--arch"),
                              QStringLiteral("llama"),
                              QStringLiteral("--hidden"),
                              QStringLiteral("128"),
                              QStringLiteral("--layers"),
                              QStringLiteral("2"),
                              QStringLiteral("--heads"),
                              QStringLiteral("4"),
                              QStringLiteral("--kv-heads"),
                              QStringLiteral("2"),
                              QStringLiteral("--intermediate"),
                              QStringLiteral("128"),
                              QStringLiteral("--vocab"),
                              QStringLiteral("4096"),
                              QStringLiteral("--tokenizer-from"),
                              QStringLiteral(QUIRE_DEMO_MODEL_DIR),
                              QStringLiteral("--max-position-embeddings"),
                              QStringLiteral("4096"),
                              QStringLiteral("--seed"),
                              QStringLiteral("3")});
    QVERIFY2(made.exit_code == 0, qPrintable(disk_why(made)));
  }

  void sizesTakeBytesAndBinaryUnits_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qulonglong>("bytes");
    QTest::newRow("bytes") << "4096" << 4096ULL;
    QTest::newRow("bytes with B") << "4096B" << 4096ULL;
    QTest::newRow("K") << "2K" << 2048ULL;
    QTest::newRow("512M") << "512M" << (512ULL << 20);
    QTest::newRow("8G") << "8G" << (8ULL << 30);
    QTest::newRow("8GB") << "8GB" << (8ULL << 30);
    QTest::newRow("8GiB") << "8GiB" << (8ULL << 30);
    QTest::newRow("lower case") << "8gib" << (8ULL << 30);
    QTest::newRow("T") << "2T" << (2ULL << 40);
    QTest::newRow("fraction") << "1.5G" << (3ULL << 29);
    QTest::newRow("largest") << "18446744073709551615" << 18446744073709551615ULL;
  }
  void sizesTakeBytesAndBinaryUnits() {
    QFETCH(QString, text);
    QFETCH(qulonglong, bytes);
    QCOMPARE(static_cast<qulonglong>(parse_byte_size(text.toStdString())), bytes);
  }

  void sizesRefuseWhatIsNoSize_data() {
    const QString forms = QStringLiteral(
        "; write bytes, or a number with K, M, G or T (powers of 1024, optionally followed by B "
        "or iB), such as 512M, 8G or 8GiB");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << ""
                           << "\"\" is not a size" + forms;
    QTest::newRow("words") << "lots"
                           << "\"lots\" is not a size" + forms;
    QTest::newRow("unknown unit") << "8X"
                                  << "\"8X\" is not a size" + forms;
    QTest::newRow("trailing") << "8GiBs"
                              << "\"8GiBs\" is not a size" + forms;
    QTest::newRow("space") << "8 G"
                           << "\"8 G\" is not a size" + forms;
    QTest::newRow("point only") << "8.G"
                                << "\"8.G\" is not a size" + forms;
    QTest::newRow("negative") << "-1G"
                              << "\"-1G\" is negative" + forms;
    QTest::newRow("zero") << "0"
                          << "\"0\" is zero: the disk cache needs room for at least one page" +
                                 forms;
    QTest::newRow("zero with unit")
        << "0G"
        << "\"0G\" is zero: the disk cache needs room for at least one page" + forms;
    QTest::newRow("fraction of a byte") << "1.5"
                                        << "\"1.5\" is not a whole number of bytes" + forms;
    QTest::newRow("too many bytes") << "18446744073709551616"
                                    << "\"18446744073709551616\" is too large" + forms;
    QTest::newRow("too many T") << "20000000T"
                                << "\"20000000T\" is too large" + forms;
  }
  void sizesRefuseWhatIsNoSize() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    QCOMPARE(refusal(text.toUtf8().constData()), message);
  }

  void optionsAreCheckedBeforeTheModelLoads() {
    const Run alone =
        run_cli({QStringLiteral("generate"), model_, QStringLiteral("--tokens"),
                 QStringLiteral("5"), QStringLiteral("--disk-cache-size"), QStringLiteral("8G")});
    QCOMPARE(alone.exit_code, 2);
    QCOMPARE(alone.err, QStringLiteral("quire-cli: --disk-cache-size needs --disk-cache DIR, the "
                                       "folder that keeps the cache's pages\n"));
    const Run zero = run_cli({QStringLiteral("generate"), model_, QStringLiteral("--tokens"),
                              QStringLiteral("5"), QStringLiteral("--disk-cache"),
                              root_.filePath(QStringLiteral("unused")),
                              QStringLiteral("--disk-cache-size"), QStringLiteral("0")});
    QCOMPARE(zero.exit_code, 2);
    QCOMPARE(zero.err,
             QStringLiteral("quire-cli: --disk-cache-size \"0\" is zero: the disk cache needs room "
                            "for at least one page; write bytes, or a number with K, M, G or T "
                            "(powers of 1024, optionally followed by B or iB), such as 512M, 8G "
                            "or 8GiB\n"));
    QVERIFY(!QFileInfo::exists(root_.filePath(QStringLiteral("unused"))));
    // serve and chat refuse the same way.
    for (const char* command : {"serve", "chat", "replay"}) {
      QStringList arguments{QString::fromLatin1(command), model_,
                            QStringLiteral("--disk-cache-size"), QStringLiteral("1G")};
      if (QLatin1String(command) == QLatin1String("replay"))
        arguments << QStringLiteral("--conversation") << QStringLiteral("unused.json");
      const Run run = run_cli(arguments);
      QCOMPARE(run.exit_code, 2);
      QVERIFY2(run.err.contains(QStringLiteral("--disk-cache-size needs --disk-cache DIR")),
               qPrintable(command + (": " + run.err)));
    }
  }

  void aSecondRunReadsThePromptFromDisk() {
    QTemporaryDir work;
    const QString cache = work.filePath(QStringLiteral("pages"));  // made by the command
    const QStringList arguments{QStringLiteral("generate"),  model_,
                                QStringLiteral("--tokens"),  prompt_ids(700),
                                QStringLiteral("--greedy"),  QStringLiteral("--ignore-eos"),
                                QStringLiteral("--max-new"), QStringLiteral("4"),
                                QStringLiteral("--json")};
    const Run plain = run_cli(arguments);
    QVERIFY2(plain.exit_code == 0, qPrintable(disk_why(plain)));
    QCOMPARE(disk_json_of(plain)[u"disk_tokens"].toInt(), 0);

    const QStringList with_disk = arguments + QStringList{QStringLiteral("--disk-cache"), cache};
    const Run first = run_cli(with_disk);
    QVERIFY2(first.exit_code == 0, qPrintable(disk_why(first)));
    QCOMPARE(disk_json_of(first)[u"disk_tokens"].toInt(), 0);
    // 704 tokens: two full pages, archived when the command ends.
    const QRegularExpression written(QStringLiteral("^disk cache: 2 pages written to (.+)\n$"));
    const QRegularExpressionMatch match = written.match(first.err);
    QVERIFY2(match.hasMatch(), qPrintable(first.err));
    QVERIFY(match.captured(1).startsWith(cache + QLatin1Char('/')));

    const Run second = run_cli(with_disk);
    QVERIFY2(second.exit_code == 0, qPrintable(disk_why(second)));
    const QJsonObject out = disk_json_of(second);
    QCOMPARE(out[u"disk_tokens"].toInt(), 2 * kPageSize);
    QCOMPARE(out[u"cached_tokens"].toInt(), 2 * kPageSize);
    QCOMPARE(out[u"prompt_tokens"].toInt(), 700);
    QCOMPARE(out[u"tokens"].toArray(), disk_json_of(plain)[u"tokens"].toArray());
    QCOMPARE(out[u"text"].toString(), disk_json_of(plain)[u"text"].toString());
    // Nothing new to write: nothing said.
    QCOMPARE(second.err, QString());

    // <root>/<model>/<coding>/<hash>.page: folders 0700, page files 0600.
    const QMap<QString, int> modes = modes_under(cache);
    int pages = 0;
    for (auto it = modes.begin(); it != modes.end(); ++it) {
      const bool folder = QFileInfo(cache + QLatin1Char('/') + it.key()).isDir();
      if (it.key().endsWith(QLatin1String(".page"))) ++pages;
      if (it.key().endsWith(QLatin1String(".lock"))) continue;
      QVERIFY2(it.value() == (folder ? 0700 : 0600),
               qPrintable(QStringLiteral("%1: %2").arg(it.key()).arg(it.value(), 0, 8)));
    }
    QCOMPARE(pages, 2);
    struct stat st {};
    QCOMPARE(::stat(QFile::encodeName(cache).constData(), &st), 0);
    QCOMPARE(static_cast<int>(st.st_mode & 07777), 0700);
  }

  void theStatisticsLineCountsDiskTokens() {
    QTemporaryDir work;
    const QStringList arguments{QStringLiteral("generate"),     model_,
                                QStringLiteral("--tokens"),     prompt_ids(600),
                                QStringLiteral("--greedy"),     QStringLiteral("--ignore-eos"),
                                QStringLiteral("--max-new"),    QStringLiteral("2"),
                                QStringLiteral("--disk-cache"), work.path()};
    QCOMPARE(run_cli(arguments).exit_code, 0);
    const Run again = run_cli(arguments);
    QCOMPARE(again.exit_code, 0);
    QVERIFY2(again.err.contains(
                 QStringLiteral("; 512 of 600 prompt tokens from the cache (512 from disk)]\n")),
             qPrintable(again.err));
  }

  void chatArchivesOnQuitAndResumesFromDisk() {
    QTemporaryDir work;
    QString message = QStringLiteral("Please remember this list:");
    for (int i = 0; i < 120; ++i)
      message += QStringLiteral(" apple%1").arg(i % 10);
    // One turn, then /quit; the second time the same first message.
    const auto chat = [&](const QString& quit) {
      QProcess process;
      process.start(QStringLiteral(QUIRE_CLI_PATH),
                    {QStringLiteral("chat"), model_, QStringLiteral("--greedy"),
                     QStringLiteral("--max-new"), QStringLiteral("8"), QStringLiteral("--format"),
                     QStringLiteral("chatml"), QStringLiteral("--disk-cache"), work.path()});
      process.write((message + QLatin1Char('\n') + quit).toUtf8());
      process.closeWriteChannel();
      process.waitForFinished(120000);
      return QString::fromUtf8(process.readAllStandardError());
    };
    const QString first = chat(QStringLiteral("/quit\n"));
    const QRegularExpression written(QStringLiteral("\ndisk cache: (\\d+) pages? written to "));
    const QRegularExpressionMatch archived = written.match(first);
    QVERIFY2(archived.hasMatch(), qPrintable(first));
    QVERIFY(archived.captured(1).toInt() >= 1);
    QVERIFY2(first.contains(QStringLiteral(" prompt tokens from the cache (0 from disk)]")),
             qPrintable(first));

    // Ended by the end of input this time: the prompt's full pages come from disk.
    const QString second = chat(QString());
    const QRegularExpression line(
        QStringLiteral("; (\\d+) of (\\d+) prompt tokens from the cache \\((\\d+) from disk\\)]"));
    const QRegularExpressionMatch resumed = line.match(second);
    QVERIFY2(resumed.hasMatch(), qPrintable(second));
    QVERIFY(resumed.captured(3).toInt() >= kPageSize);
    QCOMPARE(resumed.captured(3).toInt() % kPageSize, 0);
    QCOMPARE(resumed.captured(1), resumed.captured(3));
  }

  void aFolderThatCannotBeMadeLeavesTheCacheOut() {
    QTemporaryDir work;
    // A file where a folder must go: no user, root included, can make it.
    const QString file = work.filePath(QStringLiteral("a-file"));
    QFile blocker(file);
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    const QString cache = file + QStringLiteral("/pages");
    const Run run =
        run_cli({QStringLiteral("generate"), model_, QStringLiteral("--tokens"), prompt_ids(300),
                 QStringLiteral("--greedy"), QStringLiteral("--max-new"), QStringLiteral("3"),
                 QStringLiteral("--ignore-eos"), QStringLiteral("--json"),
                 QStringLiteral("--disk-cache"), cache});
    QVERIFY2(run.exit_code == 0, qPrintable(disk_why(run)));
    QCOMPARE(run.err, QStringLiteral("quire-cli: going on without the disk cache: %1: is not a "
                                     "folder: Not a directory\n")
                          .arg(file));
    QCOMPARE(disk_json_of(run)[u"tokens"].toArray().size(), 3);
  }

  void aFolderThatCannotBeWrittenLeavesTheCacheOut() {
    if (::geteuid() == 0) QSKIP("root writes into any folder");
    QTemporaryDir work;
    const QString cache = work.filePath(QStringLiteral("read-only"));
    QVERIFY(QDir().mkdir(cache));
    QVERIFY(QFile::setPermissions(cache, QFile::ReadOwner | QFile::ExeOwner));
    const Run run =
        run_cli({QStringLiteral("generate"), model_, QStringLiteral("--tokens"), prompt_ids(300),
                 QStringLiteral("--greedy"), QStringLiteral("--max-new"), QStringLiteral("3"),
                 QStringLiteral("--ignore-eos"), QStringLiteral("--json"),
                 QStringLiteral("--disk-cache"), cache});
    QFile::setPermissions(cache, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QVERIFY2(run.exit_code == 0, qPrintable(disk_why(run)));
    // The model's folder inside it cannot be made.
    const QRegularExpression notice(
        QStringLiteral("^quire-cli: going on without the disk cache: %1/[0-9a-f]{32}: cannot "
                       "create the folder: Permission denied\n$")
            .arg(QRegularExpression::escape(cache)));
    QVERIFY2(notice.match(run.err).hasMatch(), qPrintable(run.err));
    QCOMPARE(disk_json_of(run)[u"tokens"].toArray().size(), 3);
  }

  void aModelTheTierCannotKeepRunsWithoutIt() {
    // Gemma 2's sliding layers keep their pages in a window pool of their own.
    const QString gemma = root_.filePath(QStringLiteral("gemma2"));
    const Run made =
        run_cli({QStringLiteral("make-model"),       gemma,
                 QStringLiteral("--arch"),           QStringLiteral("gemma2"),
                 QStringLiteral("--hidden"),         QStringLiteral("128"),
                 QStringLiteral("--layers"),         QStringLiteral("2"),
                 QStringLiteral("--heads"),          QStringLiteral("4"),
                 QStringLiteral("--kv-heads"),       QStringLiteral("2"),
                 QStringLiteral("--intermediate"),   QStringLiteral("256"),
                 QStringLiteral("--vocab"),          QStringLiteral("4096"),
                 QStringLiteral("--tokenizer-from"), QStringLiteral(QUIRE_DEMO_MODEL_DIR),
                 QStringLiteral("--sliding-window"), QStringLiteral("64"),
                 QStringLiteral("--seed"),           QStringLiteral("3")});
    QVERIFY2(made.exit_code == 0, qPrintable(disk_why(made)));
    QTemporaryDir work;
    const Run run =
        run_cli({QStringLiteral("generate"), gemma, QStringLiteral("--tokens"), prompt_ids(20),
                 QStringLiteral("--greedy"), QStringLiteral("--max-new"), QStringLiteral("2"),
                 QStringLiteral("--json"), QStringLiteral("--disk-cache"), work.path()});
    QVERIFY2(run.exit_code == 0, qPrintable(disk_why(run)));
    QCOMPARE(run.err, QStringLiteral("quire-cli: going on without the disk cache: the disk tier "
                                     "does not keep the pages of sliding-window layers mixed with "
                                     "global ones (Gemma 2 and 3): run this model without it\n"));
    QCOMPARE(disk_json_of(run)[u"tokens"].toArray().size(), 2);
  }

  void aRestartedServerKeepsItsClientsPrefixes() {
    QTemporaryDir work;
    const QString cache = work.filePath(QStringLiteral("pages"));
    const QStringList arguments{model_, QStringLiteral("--disk-cache"), cache,
                                QStringLiteral("--disk-cache-size"), QStringLiteral("64M")};
    QJsonArray first_prompt = prompt_array(600);
    {
      Server server(arguments);
      QVERIFY2(server.port() > 0, qPrintable(server.err()));
      const HttpAnswer stats =
          http(QStringLiteral("GET"), server.url(QStringLiteral("/v1/quire/stats")));
      const QJsonObject disk = stats.body[u"disk_cache"].toObject();
      QCOMPARE(disk[u"limit_bytes"].toDouble(), double(64 << 20));
      QVERIFY2(disk[u"folder"].toString().startsWith(cache + QLatin1Char('/')),
               qPrintable(disk[u"folder"].toString()));
      QCOMPARE(disk[u"pages"].toInt(), 0);
      QCOMPARE(disk[u"disk_full"].toBool(), false);
      QCOMPARE(disk[u"notice"].toString(), QString());
      const HttpAnswer answer =
          http(QStringLiteral("POST"), server.url(QStringLiteral("/v1/completions")),
               {{QStringLiteral("prompt"), first_prompt},
                {QStringLiteral("max_tokens"), 2},
                {QStringLiteral("temperature"), 0}});
      QCOMPARE(answer.status, 200);
      QCOMPARE(answer.body[u"usage"].toObject()[u"prompt_tokens"].toInt(), 600);
      QCOMPARE(server.stop(), 0);
      QVERIFY2(server.err().contains(QStringLiteral("disk cache: 2 pages written to ")),
               qPrintable(server.err()));
    }
    Server server(arguments);
    QVERIFY2(server.port() > 0, qPrintable(server.err()));
    // The first prompt, and more: its two full pages come from disk.
    QJsonArray longer = first_prompt;
    for (const QJsonValue& id : prompt_array(200))
      longer.append(id);
    const HttpAnswer answer =
        http(QStringLiteral("POST"), server.url(QStringLiteral("/v1/completions")),
             {{QStringLiteral("prompt"), longer},
              {QStringLiteral("max_tokens"), 2},
              {QStringLiteral("temperature"), 0}});
    QCOMPARE(answer.status, 200);
    const QJsonObject usage = answer.body[u"usage"].toObject();
    QCOMPARE(usage[u"prompt_tokens"].toInt(), 800);
    QCOMPARE(usage[u"prompt_tokens_details"].toObject()[u"cached_tokens"].toInt(), 2 * kPageSize);
    // The statistics are published once the engine thread ends its step.
    QJsonObject disk;
    QTRY_VERIFY_WITH_TIMEOUT(
        (disk = http(QStringLiteral("GET"), server.url(QStringLiteral("/v1/quire/stats")))
                    .body[u"disk_cache"]
                    .toObject())[u"restored_pages"]
                .toInt() == 2,
        20000);
    QCOMPARE(disk[u"pages"].toInt(), 2);
    QVERIFY(disk[u"used_bytes"].toDouble() > 0);
    QCOMPARE(disk[u"dropped_pages"].toInt(), 0);
    QCOMPARE(server.stop(), 0);
    // 800 + 2 tokens: a third full page, new to the disk.
    QVERIFY2(server.err().contains(QStringLiteral("disk cache: 1 page written to ")),
             qPrintable(server.err()));
  }

  void theResumeBenchmarkReportsEveryFigure() {
    QTemporaryDir work;
    const Run run =
        run_cli({QStringLiteral("bench"), model_, QStringLiteral("--resume-tokens"),
                 QStringLiteral("600"), QStringLiteral("--repeat"), QStringLiteral("1"),
                 QStringLiteral("--resume-folder"), work.path(), QStringLiteral("--json")});
    QVERIFY2(run.exit_code == 0, qPrintable(disk_why(run)));
    const QJsonObject out = disk_json_of(run);
    const QJsonObject resume = out[u"resume"].toObject();
    QCOMPARE(resume[u"prompt_tokens"].toInt(), 600);
    QCOMPARE(resume[u"runs"].toInt(), 1);
    QCOMPARE(resume[u"cold_computed_tokens"].toInt(), 600);
    QCOMPARE(resume[u"archived_pages"].toInt(), 2);
    QCOMPARE(resume[u"restored_pages"].toInt(), 2);
    QCOMPARE(resume[u"disk_tokens"].toInt(), 2 * kPageSize);
    QCOMPARE(resume[u"disk_cached_tokens"].toInt(), 2 * kPageSize);
    QVERIFY(resume[u"warm_cached_tokens"].toInt() >= 2 * kPageSize);
    QVERIFY(resume[u"page_file_bytes"].toDouble() > 0);
    QCOMPARE(resume[u"disk_bytes_read"].toDouble(), 2 * resume[u"page_file_bytes"].toDouble());
    QCOMPARE(resume[u"same_first_token"].toBool(), true);
    for (const char* key : {"cold_ttft_s", "warm_ttft_s", "disk_ttft_s", "archive_s", "open_s"})
      QVERIFY2(resume[QLatin1String(key)].toDouble() > 0, key);
    QCOMPARE(resume[u"runs_disk_ttft_s"].toArray().size(), 1);
    // The measurement's folder is gone.
    QCOMPARE(QDir(work.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());

    const Run text = run_cli({QStringLiteral("bench"), model_, QStringLiteral("--resume-tokens"),
                              QStringLiteral("300"), QStringLiteral("--repeat"),
                              QStringLiteral("1"), QStringLiteral("--resume-folder"), work.path()});
    QVERIFY2(text.exit_code == 0, qPrintable(disk_why(text)));
    QVERIFY2(text.out.contains("reopening a chat of 300 tokens after a restart"), text.out);
    QVERIFY2(text.out.contains("256 tokens from disk, 1 page, "), text.out);
  }
};

QUIRE_TEST(DiskCacheOptionTest)
#include "test_disk_cache_option.moc"
