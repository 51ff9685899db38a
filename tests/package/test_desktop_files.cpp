// desktop-file-validate and appstreamcli, as the distributions run them, on
// the files the package installs; and the names the files point to exist.

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>

#include "test_main.h"

namespace {

const QString kDesktopFile = QStringLiteral(QUIRE_DESKTOP_DIR "/" QUIRE_APP_ID ".desktop");
const QString kMetainfoFile = QStringLiteral(QUIRE_DESKTOP_DIR "/" QUIRE_APP_ID ".metainfo.xml");

struct Run {
  int exit_code = -1;
  QString output;
};

Run run(const QString& program, const QStringList& arguments) {
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start(program, arguments);
  Run result;
  if (!process.waitForFinished(120'000)) {
    result.output = process.errorString();
    return result;
  }
  result.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  result.output = QString::fromUtf8(process.readAll());
  return result;
}

QString tool(const char* name) {
  return QStandardPaths::findExecutable(QString::fromLatin1(name));
}

QString desktop_value(const QString& key) {
  QFile file(kDesktopFile);
  if (!file.open(QIODevice::ReadOnly)) return {};
  for (const QByteArray& line : file.readAll().split('\n')) {
    if (line.startsWith(key.toUtf8() + '=')) return QString::fromUtf8(line.mid(key.size() + 1));
  }
  return {};
}

}  // namespace

class DesktopFilesTest : public QObject {
  Q_OBJECT

 private slots:
  void theDesktopEntryValidates() {
    const QString validator = tool("desktop-file-validate");
    if (validator.isEmpty()) QSKIP("desktop-file-validate is not installed (desktop-file-utils)");
    const Run result = run(validator, {kDesktopFile});
    QVERIFY2(result.exit_code == 0 && result.output.trimmed().isEmpty(), qPrintable(result.output));
  }

  void theMetainfoValidates() {
    const QString appstream = tool("appstreamcli");
    if (appstream.isEmpty()) QSKIP("appstreamcli is not installed (appstream)");
    // --no-net: CI has no network; the URLs are not fetched.
    const Run result = run(appstream, {QStringLiteral("validate"), QStringLiteral("--no-net"),
                                       QStringLiteral("--pedantic"), kMetainfoFile});
    QVERIFY2(result.exit_code == 0, qPrintable(result.output));
    QVERIFY2(!result.output.contains(QStringLiteral("E:")) &&
                 !result.output.contains(QStringLiteral("W:")),
             qPrintable(result.output));
  }

  void theEntryNamesWhatThePackageInstalls() {
    QCOMPARE(desktop_value(QStringLiteral("Exec")).section(u' ', 0, 0),
             QStringLiteral(QUIRE_GUI_EXECUTABLE));
    QCOMPARE(desktop_value(QStringLiteral("Icon")), QStringLiteral(QUIRE_APP_ID));
    // The window's class: QApplication's name.
    QCOMPARE(desktop_value(QStringLiteral("StartupWMClass")), QStringLiteral("quire"));
    QVERIFY(QFile::exists(QStringLiteral(QUIRE_ICONS_DIR "/quire.svg")));
    for (int size : {16, 24, 32, 48, 64, 128, 256, 512}) {
      QVERIFY(QFile::exists(QStringLiteral(QUIRE_ICONS_DIR "/quire-%1.png").arg(size)));
    }
  }

  void theMetainfoPointsAtTheEntry() {
    QFile file(kMetainfoFile);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString xml = QString::fromUtf8(file.readAll());
    QVERIFY(xml.contains(QStringLiteral("<id>" QUIRE_APP_ID "</id>")));
    QVERIFY(xml.contains(
        QStringLiteral("<launchable type=\"desktop-id\">" QUIRE_APP_ID ".desktop</launchable>")));
    QVERIFY(xml.contains(QStringLiteral("<binary>" QUIRE_GUI_EXECUTABLE "</binary>")));
    QVERIFY(xml.contains(QStringLiteral("<binary>" QUIRE_CLI_EXECUTABLE "</binary>")));
  }
};

QUIRE_TEST(DesktopFilesTest)
#include "test_desktop_files.moc"
