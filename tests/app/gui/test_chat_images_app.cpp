// Images in the window: attached through the attach dialog, a paste from the
// clipboard and a drop (on the message box and on the window), shown as
// removable thumbnails with the note that the model cannot see them, sent
// with the message (the reply says it got the text only), shown in the
// bubble and opened in a full view that Esc closes. A file that is no
// usable image is refused with a notice naming it.

#include <QAbstractButton>
#include <QClipboard>
#include <QDropEvent>
#include <QGuiApplication>
#include <QLabel>
#include <QMimeData>
#include <QPainter>
#include <QPainterPath>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTest>
#include <QToolButton>
#include <QUrl>

#include "app_test_support.h"
#include "chat_controller.h"
#include "image_support.h"
#include "main_window.h"
#include "quire/engine/generator/image_input.h"
#include "quire/ui/attachment_strip.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/image_viewer.h"
#include "quire/ui/input_box.h"
#include "test_main.h"

using namespace quire;
using quire::test::AppRun;

namespace {

QString imageFixturePath(const char* name) {
  return QStringLiteral(QUIRE_TEST_DATA_DIR "/images/") + QLatin1String(name);
}

ui::AttachmentStrip& attachmentStripOf(AppRun& run) {
  return *run.app->window().input()->attachmentStrip();
}

QList<QToolButton*> removeAttachmentButtons(AppRun& run) {
  return attachmentStripOf(run).findChildren<QToolButton*>(QStringLiteral("removeAttachment"));
}

// A drop of `mime` on `target` as a window system delivers it.
void dropImageMime(QWidget* target, QMimeData* mime) {
  const QPointF at(target->width() / 2.0, target->height() / 2.0);
  QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(target, &enter);
  QDropEvent drop(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(target, &drop);
}

// A small landscape to show in the README's picture: sky, sun, hills and a
// house, drawn rather than read so that the test needs no photograph.
QImage drawnLandscape() {
  QImage picture(480, 320, QImage::Format_RGB32);
  QPainter painter(&picture);
  painter.setRenderHint(QPainter::Antialiasing);
  QLinearGradient sky(0, 0, 0, 220);
  sky.setColorAt(0, QColor(70, 130, 220));
  sky.setColorAt(1, QColor(190, 220, 250));
  painter.fillRect(picture.rect(), sky);
  painter.setPen(Qt::NoPen);
  painter.setBrush(QColor(250, 210, 60));
  painter.drawEllipse(QPointF(380, 70), 38, 38);
  painter.setBrush(QColor(80, 160, 70));
  painter.drawEllipse(QRectF(-120, 190, 460, 260));
  painter.setBrush(QColor(60, 135, 60));
  painter.drawEllipse(QRectF(200, 210, 420, 240));
  painter.setBrush(QColor(235, 225, 200));
  painter.drawRect(QRectF(120, 170, 90, 70));
  QPainterPath roof;
  roof.moveTo(110, 172);
  roof.lineTo(165, 128);
  roof.lineTo(220, 172);
  roof.closeSubpath();
  painter.setBrush(QColor(180, 60, 50));
  painter.drawPath(roof);
  painter.setBrush(QColor(110, 70, 40));
  painter.drawRect(QRectF(155, 200, 22, 40));
  return picture;
}

ui::ImageViewer* openImageViewer() {
  for (QWidget* widget : QApplication::topLevelWidgets()) {
    if (auto* viewer = qobject_cast<ui::ImageViewer*>(widget); viewer && viewer->isVisible()) {
      return viewer;
    }
  }
  return nullptr;
}

}  // namespace

class ChatImagesAppTest : public QObject {
  Q_OBJECT

 private slots:
  // A model loaded with a vision side whose images reach it sees them
  // (has_vision is set only then); a text-only model and a remote engine
  // do not.
  void whichModelsSeeImages() {
    QVERIFY(!gui::model_sees_images(std::nullopt));
    gui::ModelInfo vision;
    vision.name = QStringLiteral("gemma-3-4b-it");
    vision.backend = QStringLiteral("cuda");
    vision.has_vision = true;
    QVERIFY(gui::model_sees_images(vision));
    gui::ModelInfo remote = vision;
    remote.backend = QStringLiteral("remote");
    QVERIFY(!gui::model_sees_images(remote));
    gui::ModelInfo text_only = vision;
    text_only.has_vision = false;
    QVERIFY(!gui::model_sees_images(text_only));
  }

  void attachSendAndView() {
    AppRun run(test::demo_model(), 8);
    QString chosen = imageFixturePath("red-blue-6x4.png");
    run.choose_file = [&chosen](const QString&, const QString&, const QString& filter, bool save) {
      // The dialog offers images only, and opens rather than saves.
      return !save && filter.contains(QStringLiteral("*.png")) && filter.contains("*.webp")
                 ? chosen
                 : QString();
    };
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    ui::InputBox& input = *window.input();
    QVERIFY(!attachmentStripOf(run).isVisibleTo(&window));

    // The attach action (the button, the Chat menu, Ctrl+Shift+A).
    input.attachAction()->trigger();
    QCOMPARE(attachmentStripOf(run).count(), 1);
    QVERIFY(attachmentStripOf(run).isVisibleTo(&window));
    const QString model = run.app->model()->name;
    QCOMPARE(attachmentStripOf(run).note(),
             model + QStringLiteral(" cannot see images; they will be kept "
                                    "with the chat but not sent to it."));
    // Removed again with its × button.
    QCOMPARE(removeAttachmentButtons(run).size(), 1);
    removeAttachmentButtons(run).front()->click();
    QCOMPARE(attachmentStripOf(run).count(), 0);
    QVERIFY(!attachmentStripOf(run).isVisibleTo(&window));
    input.attachAction()->trigger();

    // A picture pasted into the message box.
    auto* editor = input.findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
    QImage pasted(10, 20, QImage::Format_RGB32);
    pasted.fill(QColor(0, 200, 0));
    QGuiApplication::clipboard()->setImage(pasted);
    editor->setFocus();
    QTest::keyClick(editor, Qt::Key_V, Qt::ControlModifier);
    QCOMPARE(attachmentStripOf(run).count(), 2);
    QVERIFY(editor->toPlainText().isEmpty());  // not pasted as text as well

    // An image file dropped on the message box.
    auto* mime = new QMimeData;
    mime->setUrls({QUrl::fromLocalFile(imageFixturePath("green-5x7.gif"))});
    dropImageMime(editor->viewport(), mime);
    QCOMPARE(attachmentStripOf(run).count(), 3);
    delete mime;

    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    run.type(QStringLiteral("What are these?"));
    QVERIFY(finished.wait(120'000));
    QCOMPARE(attachmentStripOf(run).count(), 0);
    const std::optional<store::ChatId> chat = run.app->chats().currentChat();
    QVERIFY(chat);
    const QList<store::Message> path = run.app->store().current_path(*chat);
    QCOMPARE(path.size(), 2);
    QCOMPARE(path[0].images.size(), 3);
    QCOMPARE(path[0].images[0].mime_type, QStringLiteral("image/png"));
    QCOMPARE(QSize(path[0].images[1].width, path[0].images[1].height), QSize(10, 20));
    QCOMPARE(path[0].images[2].mime_type, QStringLiteral("image/gif"));

    // The reply says the model got the text only.
    ui::ChatView& view = *window.chatView();
    const QList<QLabel*> notes = view.findChildren<QLabel*>(QStringLiteral("messageNotice"));
    QVERIFY(std::any_of(notes.begin(), notes.end(), [&](QLabel* note) {
      return note->text() == model + QStringLiteral(
                                         " cannot see images: it was sent the text of "
                                         "the message only. The images are kept with "
                                         "the chat.");
    }));

    // The bubble's thumbnails open the full view; Esc closes it.
    const QList<QToolButton*> thumbnails =
        view.findChildren<QToolButton*>(QStringLiteral("messageImage"));
    QCOMPARE(thumbnails.size(), 3);
    thumbnails[1]->click();
    ui::ImageViewer* viewer = openImageViewer();
    QVERIFY(viewer);
    QCOMPARE(viewer->image().size(), QSize(10, 20));
    QCOMPARE(viewer->image().pixelColor(3, 3), QColor(0, 200, 0));
    QVERIFY(QTest::qWaitForWindowExposed(viewer));
    QTest::keyClick(viewer, Qt::Key_Escape);
    QTRY_VERIFY(openImageViewer() == nullptr);
  }

  // A model that sees: no note that it cannot, the picture's positions in
  // the question's tokens, the window's status saying so; the README's
  // picture (with QUIRE_SCREENSHOT_DIR) of Gemma 3 (random weights, so a
  // short reply) asked about a picture.
  void aPictureInAChatWithAModelThatSees() {
    AppRun run(test::published_family_model(QStringLiteral("gemma-3-4b-it"), "gemma-3-4b-it.json",
                                            "tokenizer-gemma3"),
               10);
    run.start();
    gui::MainWindow& window = run.app->window();
    window.resize(1280, 860);
    run.app->show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(run.waitForModel());
    auto* state = window.findChild<QLabel*>(QStringLiteral("engineState"));
    QVERIFY(state);
    QVERIFY2(state->text().endsWith(QStringLiteral(" · sees images")), qPrintable(state->text()));

    test::paste_picture(run, drawnLandscape());
    QCOMPARE(attachmentStripOf(run).count(), 1);
    QCOMPARE(attachmentStripOf(run).note(), QString());
    QVERIFY(run.send(QStringLiteral("What is in this picture?")));

    const std::optional<store::ChatId> chat = run.app->chats().currentChat();
    QVERIFY(chat);
    const QList<store::Message> path = run.app->store().current_path(*chat);
    QCOMPARE(path.size(), 2);
    QCOMPARE(QSize(path[0].images.value(0).width, path[0].images.value(0).height), QSize(480, 320));
    QVERIFY(std::any_of(path[0].tokens.begin(), path[0].tokens.end(),
                        [](std::int32_t id) { return engine::is_image_position(id); }));
    ui::ChatView& view = *window.chatView();
    QCOMPARE(view.findChildren<QToolButton*>(QStringLiteral("messageImage")).size(), 1);
    const QList<QLabel*> notes = view.findChildren<QLabel*>(QStringLiteral("messageNotice"));
    QVERIFY(std::none_of(notes.begin(), notes.end(), [](QLabel* note) {
      return note->isVisibleTo(note->window()) && note->text().contains("cannot see images");
    }));
    // Idle again, the line still says what the model is.
    QTRY_VERIFY2(state->text().endsWith(QStringLiteral(" · sees images")),
                 qPrintable(state->text()));
    // Gemma 3's note that its chats stay in memory is not the picture's subject.
    if (auto* close = window.findChild<QAbstractButton*>(QStringLiteral("noticeClose"));
        close && close->isVisible()) {
      close->click();
    }
    QTest::qWait(200);
    test::keep_screenshot(window.grab().toImage(), "quire-image-chat.png");
  }

  void aFileThatIsNoImageIsRefusedByName() {
    AppRun run(test::demo_model(), 8);
    run.choose_file = [](const QString&, const QString&, const QString&, bool) {
      return imageFixturePath("truncated.png");
    };
    run.start();
    QVERIFY(run.waitForModel());
    run.app->window().input()->attachAction()->trigger();
    QCOMPARE(attachmentStripOf(run).count(), 0);
    const QString notice = run.app->window().noticeText();
    QVERIFY2(notice.startsWith(QStringLiteral("“truncated.png” could not be read as a PNG image")),
             qPrintable(notice));
  }

  void anImageDroppedOnTheWindowIsAttachedNotImported() {
    AppRun run(test::demo_model(), 8);
    run.start();
    QVERIFY(run.waitForModel());
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(imageFixturePath("rotated-16x8-orientation6.jpg"))});
    dropImageMime(&run.app->window(), &mime);
    QCOMPARE(attachmentStripOf(run).count(), 1);
    QVERIFY(run.app->store().list_chats().isEmpty());
    QCOMPARE(run.app->window().noticeText(), QString());
  }
};

QUIRE_TEST(ChatImagesAppTest)
#include "test_chat_images_app.moc"
