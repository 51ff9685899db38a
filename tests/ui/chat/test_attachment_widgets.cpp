// The widgets of image attachments: the message box's attach button and
// action, image drops and pastes offered to the app (text ones stay text),
// the strip of pending thumbnails with their remove buttons and note, a
// message of images alone, the thumbnails in a bubble and the full view;
// images in the HTML transcript.

#include <QApplication>
#include <QClipboard>
#include <QDropEvent>
#include <QLabel>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QToolButton>
#include <QUrl>

#include "chat_test_support.h"
#include "message_widget.h"
#include "quire/ui/attachment_strip.h"
#include "quire/ui/chat_transcript.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/image_viewer.h"
#include "quire/ui/input_box.h"
#include "quire/ui/offered_images.h"
#include "test_main.h"

using namespace quire::ui;

namespace {

QPlainTextEdit* attachBoxEditor(InputBox& box) {
  return box.findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
}

QImage solidImage(int width, int height, const QColor& color) {
  QImage image(width, height, QImage::Format_RGB32);
  image.fill(color);
  return image;
}

void dropMimeOn(QWidget* target, QMimeData* mime, bool* accepted) {
  const QPoint at = target->rect().center();
  QDragEnterEvent enter(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(target, &enter);
  QDropEvent drop(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(target, &drop);
  *accepted = drop.isAccepted();
}

}  // namespace

class AttachmentWidgetsTest : public QObject {
  Q_OBJECT

 private slots:
  void theAttachButtonAndActionAskForAFile() {
    InputBox box;
    QSignalSpy asked(&box, &InputBox::attachRequested);
    box.findChild<QToolButton*>(QStringLiteral("attachButton"))->click();
    QCOMPARE(asked.size(), 1);
    QCOMPARE(box.attachAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    box.attachAction()->trigger();
    QCOMPARE(asked.size(), 2);
  }

  void imageFilesDroppedOnTheBoxAreOffered() {
    InputBox box;
    box.resize(400, 100);
    box.show();
    QSignalSpy offered(&box, &InputBox::imagesOffered);
    QMimeData images;
    images.setUrls({QUrl::fromLocalFile(QStringLiteral("/tmp/a.PNG")),
                    QUrl::fromLocalFile(QStringLiteral("/tmp/notes.txt")),
                    QUrl::fromLocalFile(QStringLiteral("/tmp/b.jpeg"))});
    bool accepted = false;
    dropMimeOn(attachBoxEditor(box)->viewport(), &images, &accepted);
    QVERIFY(accepted);
    QCOMPARE(offered.size(), 1);
    const auto list = offered.first().first().value<QList<OfferedImage>>();
    QCOMPARE(list,
             (QList<OfferedImage>{{QStringLiteral("a.PNG"), QStringLiteral("/tmp/a.PNG"), {}},
                                  {QStringLiteral("b.jpeg"), QStringLiteral("/tmp/b.jpeg"), {}}}));
    // Text is the editor's to take, as before.
    QMimeData text;
    text.setText(QStringLiteral("hello"));
    dropMimeOn(attachBoxEditor(box)->viewport(), &text, &accepted);
    QCOMPARE(offered.size(), 1);
  }

  void aPastedPictureIsOfferedAndPastedTextIsText() {
    InputBox box;
    box.show();
    QSignalSpy offered(&box, &InputBox::imagesOffered);
    QApplication::clipboard()->setImage(solidImage(3, 5, Qt::red));
    box.focusInput();
    QTest::keyClick(attachBoxEditor(box), Qt::Key_V, Qt::ControlModifier);
    QCOMPARE(offered.size(), 1);
    const auto list = offered.first().first().value<QList<OfferedImage>>();
    QCOMPARE(list.size(), 1);
    QCOMPARE(list[0].name, QStringLiteral("pasted image"));
    QVERIFY(list[0].path.isEmpty());
    QImage decoded;
    QVERIFY(decoded.loadFromData(list[0].bytes, "PNG"));
    QCOMPARE(decoded.size(), QSize(3, 5));
    QVERIFY(box.text().isEmpty());

    QApplication::clipboard()->setText(QStringLiteral("plain words"));
    QTest::keyClick(attachBoxEditor(box), Qt::Key_V, Qt::ControlModifier);
    QCOMPARE(offered.size(), 1);
    QCOMPARE(box.text(), QStringLiteral("plain words"));
  }

  void theStripShowsRemovableThumbnailsAndItsNote() {
    InputBox box;
    box.show();
    AttachmentStrip& strip = *box.attachmentStrip();
    QVERIFY(!strip.isVisible());
    strip.setNote(QStringLiteral("tiny cannot see images"));
    strip.setImages({{solidImage(200, 100, Qt::blue), QStringLiteral("wide.png")},
                     {solidImage(10, 10, Qt::green), QStringLiteral("small.gif")}});
    QVERIFY(strip.isVisible());
    const QList<QWidget*> tiles =
        strip.findChildren<QWidget*>(QStringLiteral("attachmentThumbnail"));
    QCOMPARE(tiles.size(), 2);
    QCOMPARE(tiles[0]->toolTip(), QStringLiteral("wide.png"));
    // Scaled to fit the tile, aspect kept.
    const QLabel* picture = tiles[0]->findChild<QLabel*>();
    QCOMPARE(picture->pixmap().size(), QSize(64, 32));
    QCOMPARE(strip.findChild<QLabel*>(QStringLiteral("attachmentNote"))->text(),
             QStringLiteral("tiny cannot see images"));
    QVERIFY(strip.findChild<QLabel*>(QStringLiteral("attachmentNote"))->isVisible());

    QSignalSpy removed(&strip, &AttachmentStrip::removeRequested);
    tiles[1]->findChild<QToolButton*>(QStringLiteral("removeAttachment"))->click();
    QCOMPARE(removed.size(), 1);
    QCOMPARE(removed.first().first().toInt(), 1);

    // Images alone may be sent.
    QSignalSpy sent(&box, &InputBox::sendRequested);
    QVERIFY(box.canSend());
    box.send();
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent.first().first().toString(), QString());
    strip.setImages({});
    QVERIFY(!strip.isVisible());
    QVERIFY(!box.canSend());
  }

  void aBubbleShowsItsImagesAndOpensThem() {
    ChatView view;
    view.resize(700, 500);
    view.show();
    ChatMessageView asked = testing::userMessage(7, QStringLiteral("What is this?"));
    asked.images = {solidImage(300, 150, Qt::red), solidImage(20, 40, Qt::yellow)};
    view.setMessages({asked});
    MessageWidget* message = testing::messageWidget(view, 7);
    QVERIFY(message);
    const QList<QToolButton*> thumbnails =
        message->findChildren<QToolButton*>(QStringLiteral("messageImage"));
    QCOMPARE(thumbnails.size(), 2);
    QCOMPARE(thumbnails[0]->iconSize(), QSize(120, 60));
    QCOMPARE(thumbnails[1]->iconSize(), QSize(20, 40));
    QSignalSpy open(&view, &ChatView::imageOpenRequested);
    thumbnails[1]->click();
    QCOMPARE(open.size(), 1);
    QCOMPARE(open.first().at(0).toLongLong(), 7);
    QCOMPARE(open.first().at(1).toInt(), 1);
  }

  void theFullViewFitsTheImageAndEscCloses() {
    auto* viewer = new ImageViewer(solidImage(4000, 1000, Qt::cyan), QStringLiteral("Image"));
    viewer->resize(500, 400);
    viewer->show();
    QVERIFY(QTest::qWaitForWindowExposed(viewer));
    const QSize shown = viewer->shownSize();
    QVERIFY2(shown.width() <= 500 && shown.width() > 300,
             qPrintable(QString::number(shown.width())));
    QCOMPARE(shown.height(), shown.width() / 4);
    QPointer<ImageViewer> alive(viewer);
    QTest::keyClick(viewer, Qt::Key_Escape);
    QTRY_VERIFY(alive.isNull());  // closed and deleted

    // A small image is not enlarged.
    ImageViewer small(solidImage(30, 20, Qt::cyan), QStringLiteral("Small"));
    small.resize(500, 400);
    small.show();
    QCOMPARE(small.shownSize(), QSize(30, 20));
  }

  void theHtmlTranscriptHoldsImagesAsDataUris() {
    Transcript transcript;
    transcript.title = QStringLiteral("Pictures");
    TranscriptMessage message;
    message.text = QStringLiteral("Look");
    message.images = {TranscriptImage{QByteArray("\x89PNG-bytes"), QStringLiteral("image/png"),
                                      solidImage(6, 4, Qt::red)}};
    transcript.sections = {TranscriptSection{{}, {}, 0, {message}}};
    const QString html = transcriptToHtml(transcript);
    QVERIFY(html.contains(
        QStringLiteral("<img src=\"data:image/png;base64,%1\" width=\"6\" height=\"4\" "
                       "alt=\"Image 1 (6 × 4)\"")
            .arg(QString::fromLatin1(QByteArray("\x89PNG-bytes").toBase64()))));
  }
};

QUIRE_TEST(AttachmentWidgetsTest)
#include "test_attachment_widgets.moc"
