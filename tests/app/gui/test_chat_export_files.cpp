// A chat as a reader's file: HTML compared byte for byte and the PDF's text
// (pdftotext) with tests/data/chat_export/, the PDF's pages, the paper per
// locale; the exports from the File menu and the chat list's menu; chat
// files dropped onto the window and the chat list.

#include <QAction>
#include <QDropEvent>
#include <QFile>
#include <QListView>
#include <QMimeData>
#include <QProcess>
#include <QRegularExpression>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include "app_test_support.h"
#include "chat_controller.h"
#include "chat_export_files.h"
#include "main_window.h"
#include "quire/app/store/chat_export.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/chat_transcript.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

QString data_file(const QString& name) {
  return QStringLiteral(QUIRE_TEST_DATA_DIR "/") + name;
}

QByteArray read_all(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return file.readAll();
}

// A chat file of tests/data/chat_export/.
store::ChatDocument chat_fixture(const char* name) {
  QString error;
  const auto document = store::chat_from_json(
      read_all(data_file(QStringLiteral("chat_export/") + QLatin1String(name))), &error);
  if (!document) qFatal("%s: %s", name, qPrintable(error));
  return *document;
}

store::ChatDocument kyoto() {
  return chat_fixture("kyoto.quire.json");
}

// A chat whose question has two images (a PNG, and a JPEG shown rotated).
store::ChatDocument postcard() {
  return chat_fixture("postcard.quire.json");
}

bool same_as_file(const QByteArray& actual, const QString& name) {
  if (actual == read_all(data_file(QStringLiteral("chat_export/") + name))) return true;
  QFile kept(name + QStringLiteral(".actual"));
  if (kept.open(QIODevice::WriteOnly)) kept.write(actual);
  qWarning("%s differs from the expected file; the output is in %s", qPrintable(name),
           qPrintable(QFileInfo(kept).absoluteFilePath()));
  return false;
}

// The text of a PDF's pages `first` to `last` (1-based; 0: all), as
// Debian's poppler-utils extract it.
QByteArray pdf_text(const QString& path, int first = 0, int last = 0) {
  QStringList arguments{QStringLiteral("-enc"), QStringLiteral("UTF-8")};
  if (first > 0) arguments << QStringLiteral("-f") << QString::number(first);
  if (last > 0) arguments << QStringLiteral("-l") << QString::number(last);
  arguments << path << QStringLiteral("-");
  QProcess process;
  process.start(QStringLiteral("pdftotext"), arguments);
  if (!process.waitForFinished(60'000) || process.exitCode() != 0) {
    qWarning("pdftotext failed (scripts/setup-debian.sh installs poppler-utils): %s",
             process.readAllStandardError().constData());
    return {};
  }
  return process.readAllStandardOutput();
}

void drop_files(QWidget* target, const QStringList& paths) {
  QMimeData data;
  QList<QUrl> urls;
  for (const QString& path : paths)
    urls << QUrl::fromLocalFile(path);
  data.setUrls(urls);
  const QPoint at = target->rect().center();
  QDragEnterEvent enter(at, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(target, &enter);
  QVERIFY(enter.isAccepted());
  QDropEvent drop(at, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(target, &drop);
  QVERIFY(drop.isAccepted());
}

}  // namespace

class ChatExportFilesTest : public QObject {
  Q_OBJECT

 private slots:
  void htmlOfTheWholeTreeIsExact() {
    const ui::Transcript transcript = gui::transcriptOf(kyoto(), store::ExportScope::WholeTree);
    QVERIFY(
        same_as_file(ui::transcriptToHtml(transcript).toUtf8(), QStringLiteral("kyoto.tree.html")));
  }

  void htmlOfTheCurrentBranchIsExact() {
    const ui::Transcript transcript = gui::transcriptOf(kyoto(), store::ExportScope::CurrentBranch);
    QVERIFY(same_as_file(ui::transcriptToHtml(transcript).toUtf8(),
                         QStringLiteral("kyoto.branch.html")));
  }

  void pdfTextIsExact() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("kyoto.pdf"));
    QString error;
    QVERIFY2(ui::writeTranscriptPdf(gui::transcriptOf(kyoto(), store::ExportScope::WholeTree), path,
                                    QPageSize::A4, &error),
             qPrintable(error));
    QVERIFY(read_all(path).startsWith("%PDF-"));
    QVERIFY(same_as_file(pdf_text(path), QStringLiteral("kyoto.tree.pdf.txt")));
  }

  void htmlHoldsImagesAsDataUris() {
    const ui::Transcript transcript =
        gui::transcriptOf(postcard(), store::ExportScope::CurrentBranch);
    QCOMPARE(transcript.sections[0].messages[0].images.size(), 2);
    // The JPEG is decoded as it is shown: its EXIF orientation turns it upright.
    QCOMPARE(transcript.sections[0].messages[0].images[1].image.size(), QSize(8, 16));
    QVERIFY(
        same_as_file(ui::transcriptToHtml(transcript).toUtf8(), QStringLiteral("postcard.html")));
  }

  void pdfDrawsTheImages() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("postcard.pdf"));
    QString error;
    QVERIFY2(ui::writeTranscriptPdf(gui::transcriptOf(postcard(), store::ExportScope::WholeTree),
                                    path, QPageSize::A4, &error),
             qPrintable(error));
    QVERIFY(same_as_file(pdf_text(path), QStringLiteral("postcard.pdf.txt")));
    // Both pictures are in the file (pdfimages lists each image drawn).
    QProcess list;
    list.start(QStringLiteral("pdfimages"), {QStringLiteral("-list"), path});
    QVERIFY(list.waitForFinished(60'000));
    const QStringList rows =
        QString::fromUtf8(list.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
    QStringList sizes;
    for (const QString& row : rows.mid(2)) {  // after the two header lines
      const QStringList columns = row.simplified().split(u' ');
      if (columns.size() > 4 && columns[2] == QLatin1String("image")) {
        sizes << columns[3] + u'x' + columns[4];
      }
    }
    QCOMPARE(sizes, (QStringList{QStringLiteral("6x4"), QStringLiteral("8x16")}));
  }

  void codeBlocksBreakBetweenLinesAcrossPages() {
    store::ChatDocument document = kyoto();
    QString code;
    for (int line = 1; line <= 150; ++line)
      code += QStringLiteral("step %1 of the long listing\n").arg(line, 3, 10, QLatin1Char('0'));
    document.messages[4].text = QStringLiteral("```text\n") + code + QStringLiteral("```");
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("long.pdf"));
    QString error;
    QVERIFY2(ui::writeTranscriptPdf(gui::transcriptOf(document, store::ExportScope::CurrentBranch),
                                    path, QPageSize::Letter, &error),
             qPrintable(error));
    // Every line of the listing, whole, once, in order, over several pages;
    // each page numbered.
    const QRegularExpression footer(QStringLiteral("Page 1 of (\\d+)"));
    const QRegularExpressionMatch first = footer.match(QString::fromUtf8(pdf_text(path, 1, 1)));
    QVERIFY(first.hasMatch());
    const int pages = first.captured(1).toInt();
    QStringList found;
    for (int page = 1; page <= pages; ++page) {
      const QString text = QString::fromUtf8(pdf_text(path, page, page));
      for (const QString& line : text.split(u'\n')) {
        if (line.startsWith(QStringLiteral("step "))) found << line;
      }
    }
    QVERIFY(pages >= 3);
    QCOMPARE(found.size(), 150);
    for (int line = 1; line <= 150; ++line) {
      QCOMPARE(found[line - 1],
               QStringLiteral("step %1 of the long listing").arg(line, 3, 10, QLatin1Char('0')));
    }
    for (int page = 1; page <= pages; ++page) {
      QVERIFY(QString::fromUtf8(pdf_text(path, page, page))
                  .contains(QStringLiteral("Page %1 of %2").arg(page).arg(pages)));
    }
  }

  void paperFollowsTheLocale() {
    QCOMPARE(ui::pageSizeForLocale(QLocale(QLocale::English, QLocale::UnitedStates)),
             QPageSize::Letter);
    QCOMPARE(ui::pageSizeForLocale(QLocale(QLocale::French, QLocale::Canada)), QPageSize::Letter);
    QCOMPARE(ui::pageSizeForLocale(QLocale(QLocale::English, QLocale::UnitedKingdom)),
             QPageSize::A4);
    QCOMPARE(ui::pageSizeForLocale(QLocale(QLocale::German, QLocale::Germany)), QPageSize::A4);
  }

  void exportsRunFromTheMenusWithTheBranchChoice() {
    AppRun run{QString()};
    run.start();
    const auto chat = run.app->store().insert_document(kyoto());
    QVERIFY(chat);
    run.app->show();
    gui::MainWindow& window = run.app->window();
    emit window.chatList()->chatSelected(store::raw(*chat));
    QCOMPARE(run.app->chats().currentChat(), chat);

    // The chat's context menu in the list offers the same exports.
    const QList<QAction*> menu =
        window.chatList()->findChild<QListView*>(QStringLiteral("chatListView"))->actions();
    for (QAction* action :
         {window.exportJsonAction(), window.exportMarkdownAction(), window.exportHtmlAction(),
          window.exportPdfAction(), window.exportAllBranchesAction()}) {
      QVERIFY(menu.contains(action));
    }

    QTemporaryDir target;
    run.choose_file = [&](const QString&, const QString& start, const QString&, bool) {
      return target.filePath(QFileInfo(start).fileName());
    };
    window.exportHtmlAction()->trigger();
    const QString html = target.filePath(QStringLiteral("Trip to Kyoto.html"));
    QVERIFY(same_as_file(read_all(html), QStringLiteral("kyoto.branch.html")));
    window.exportAllBranchesAction()->setChecked(true);
    window.exportHtmlAction()->trigger();
    QVERIFY(same_as_file(read_all(html), QStringLiteral("kyoto.tree.html")));
    window.exportMarkdownAction()->trigger();
    QVERIFY(same_as_file(read_all(target.filePath(QStringLiteral("Trip to Kyoto.md"))),
                         QStringLiteral("kyoto.tree.md")));
    window.exportPdfAction()->trigger();
    const QString pdf = target.filePath(QStringLiteral("Trip to Kyoto.pdf"));
    QVERIFY(read_all(pdf).startsWith("%PDF-"));
    QCOMPARE(window.statusBar()->currentMessage(),
             QStringLiteral("Exported “Trip to Kyoto” to %1").arg(QDir::toNativeSeparators(pdf)));
  }

  void droppedFilesAreImported() {
    AppRun run{QString()};
    run.start();
    run.app->show();
    gui::MainWindow& window = run.app->window();

    // A ChatGPT export dropped on the chat list: both its conversations.
    drop_files(window.chatList(),
               {data_file(QStringLiteral("chat_import/chatgpt_conversations.json"))});
    QCOMPARE(run.app->store().list_chats().size(), 2);
    QCOMPARE(window.statusBar()->currentMessage(),
             QStringLiteral("Imported 2 chats from chatgpt_conversations.json (ChatGPT export)"));
    const auto shown = run.app->chats().currentChat();
    QVERIFY(shown);
    QCOMPARE(run.app->store().chat(*shown)->title, QStringLiteral("Sorting in Python"));

    // Onto the window: an LM Studio conversation, then a broken file, which
    // adds nothing and says why.
    drop_files(&window, {data_file(QStringLiteral("chat_import/lm_studio.conversation.json"))});
    QCOMPARE(run.app->store().list_chats().size(), 3);
    drop_files(&window, {data_file(QStringLiteral("chat_import/chatgpt_missing_parent.json"))});
    QCOMPARE(run.app->store().list_chats().size(), 3);
    QCOMPARE(window.noticeText(),
             QStringLiteral("Cannot import chatgpt_missing_parent.json: conversation 3, mapping "
                            "node 'abc': parent 'xyz' is missing."));
  }
};

QUIRE_TEST(ChatExportFilesTest)
#include "test_chat_export_files.moc"
