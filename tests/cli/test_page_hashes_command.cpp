// quire-cli page-hashes against an independent implementation: vectors made by
// Python's hashlib (tests/tools/page_hash_vectors.py), and, where python3 is
// installed, the same script run live on fresh random tokens.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTemporaryFile>
#include <QTest>

#include "test_main.h"

namespace {

struct Run {
  int exit_code = -1;
  QString out;
  QString err;
};

Run run_cli(const QStringList& arguments, const QByteArray& input) {
  QProcess process;
  process.start(QStringLiteral(QUIRE_CLI_PATH), arguments);
  if (!process.waitForStarted()) return {};
  process.write(input);
  process.closeWriteChannel();
  process.waitForFinished(60000);
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromUtf8(process.readAllStandardOutput()),
          QString::fromUtf8(process.readAllStandardError())};
}

QByteArray as_input(const QJsonArray& tokens) {
  QByteArray text;
  for (qsizetype i = 0; i < tokens.size(); ++i) {
    text += QByteArray::number(tokens[i].toInteger());
    text += (i % 17 == 16) ? "\n" : " ";  // mixed whitespace on purpose
  }
  return text;
}

}  // namespace

class PageHashesCommandTest : public QObject {
  Q_OBJECT

 private slots:
  void helpListsTheCommand() {
    const Run help = run_cli({QStringLiteral("--help")}, {});
    QCOMPARE(help.exit_code, 0);
    QVERIFY(help.out.contains(QStringLiteral("page-hashes")));
  }

  void matchesHashlibVectors() {
    QFile file(QStringLiteral(QUIRE_TEST_DATA_DIR "/page_hash_vectors.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonArray cases = QJsonDocument::fromJson(file.readAll()).array();
    QVERIFY(!cases.isEmpty());
    for (const QJsonValue& value : cases) {
      const QJsonObject entry = value.toObject();
      const Run run = run_cli({QStringLiteral("page-hashes"), QStringLiteral("--page-size"),
                               QString::number(entry[u"page_size"].toInt())},
                              as_input(entry[u"tokens"].toArray()));
      QCOMPARE(run.exit_code, 0);
      QString expected;
      const QJsonArray hashes = entry[u"hashes"].toArray();
      for (qsizetype i = 0; i < hashes.size(); ++i) {
        expected += QString::number(i) + u' ' + hashes[i].toString() + u'\n';
      }
      QCOMPARE(run.out, expected);
    }
  }

  void defaultPageSizeIs256() {
    QByteArray input;
    for (int i = 0; i < 512; ++i)
      input += QByteArray::number(i) + ' ';
    const Run run = run_cli({QStringLiteral("page-hashes")}, input);
    QCOMPARE(run.exit_code, 0);
    QCOMPARE(run.out.count(u'\n'), 2);
    QVERIFY(run.out.startsWith(QStringLiteral("0 06137266f1e5ed8a632506e6ad43c334\n")));
  }

  void matchesLivePythonOnRandomTokens() {
    const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
    if (python.isEmpty()) QSKIP("python3 is not installed");
    QRandomGenerator rng(20261122);
    for (const int page_size : {1, 3, 64, 256}) {
      QByteArray input;
      const int count = int(rng.bounded(1, 3000));
      for (int i = 0; i < count; ++i)
        input += QByteArray::number(rng.bounded(0, 1 << 30)) + '\n';
      QTemporaryFile tokens;
      QVERIFY(tokens.open());
      tokens.write(input);
      tokens.flush();
      QProcess reference;
      reference.start(python, {QStringLiteral(QUIRE_TEST_TOOLS_DIR "/page_hash_vectors.py"),
                               QStringLiteral("--tokens"), tokens.fileName(),
                               QStringLiteral("--page-size"), QString::number(page_size)});
      QVERIFY(reference.waitForFinished(60000));
      QCOMPARE(reference.exitCode(), 0);
      const Run run = run_cli({QStringLiteral("page-hashes"), QStringLiteral("--page-size"),
                               QString::number(page_size)},
                              input);
      QCOMPARE(run.exit_code, 0);
      QCOMPARE(run.out, QString::fromUtf8(reference.readAllStandardOutput()));
    }
  }

  void rejectsWordsThatAreNotTokenIds() {
    for (const QByteArray& input : {QByteArray("12 abc 7"), QByteArray("5 -1"),
                                    QByteArray("4294967296"), QByteArray("1.5")}) {
      const Run run = run_cli({QStringLiteral("page-hashes")}, input);
      QCOMPARE(run.exit_code, 2);
      QVERIFY(run.out.isEmpty());
      QVERIFY2(run.err.contains(QStringLiteral("is not a token id")), qPrintable(run.err));
    }
    const Run bad_size =
        run_cli({QStringLiteral("page-hashes"), QStringLiteral("--page-size"), QStringLiteral("0")},
                "1 2 3");
    QVERIFY(bad_size.exit_code != 0);
  }
};

QUIRE_TEST(PageHashesCommandTest)
#include "test_page_hashes_command.moc"
