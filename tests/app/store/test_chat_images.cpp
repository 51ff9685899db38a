// Images attached to messages: kept with the message, stored once however
// many messages, branches and chats show them, gone with the last chat that
// used them; carried by branches and by the chat file, whose broken or
// non-image payloads are refused whole; a version-8 history upgrades.

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_store.h"
#include "quire/app/store/image_bytes.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;
using quire::store::test::RawDatabase;

namespace {

ChatImage fixture_image(const QString& name, const QString& mime, int width, int height) {
  QFile file(QStringLiteral(QUIRE_TEST_DATA_DIR "/images/") + name);
  if (!file.open(QIODevice::ReadOnly)) qFatal("missing test image %s", qPrintable(name));
  return ChatImage{file.readAll(), mime, width, height};
}

// JSON written with ' for " (raw string literals confuse moc).
QByteArray quoted(const char* text) {
  return QByteArray(text).replace('\'', '"');
}

ChatImage png() {
  return fixture_image(QStringLiteral("red-blue-6x4.png"), QStringLiteral("image/png"), 6, 4);
}
ChatImage gif() {
  return fixture_image(QStringLiteral("green-5x7.gif"), QStringLiteral("image/gif"), 5, 7);
}

}  // namespace

class ChatImagesTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  QString path() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }

  qint64 count(const QString& table) {
    RawDatabase raw(path());
    return raw.value(QStringLiteral("SELECT COUNT(*) FROM %1").arg(table)).toLongLong();
  }

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void formatsAreRecognisedByTheirBytes() {
    QCOMPARE(sniff_image_mime_type(png().bytes), QStringLiteral("image/png"));
    QCOMPARE(sniff_image_mime_type(gif().bytes), QStringLiteral("image/gif"));
    QCOMPARE(sniff_image_mime_type(
                 fixture_image(QStringLiteral("rotated-16x8-orientation6.jpg"), {}, 0, 0).bytes),
             QStringLiteral("image/jpeg"));
    QCOMPARE(sniff_image_mime_type(fixture_image(QStringLiteral("tiny-3x2.bmp"), {}, 0, 0).bytes),
             QStringLiteral("image/bmp"));
    QCOMPARE(sniff_image_mime_type(QByteArray("RIFF\x10\0\0\0WEBPVP8 ", 16)),
             QStringLiteral("image/webp"));
    QCOMPARE(sniff_image_mime_type("%PDF-1.7 not a picture"), QString());
    QCOMPARE(sniff_image_mime_type(QByteArray()), QString());
  }

  void imagesComeBackInOrder() {
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const ChatId chat = *store.create_chat(QStringLiteral("Pictures"));
    const auto id = store.append_message(chat, Role::User, QStringLiteral("What are these?"), {},
                                         {gif(), png()});
    QVERIFY2(id, qPrintable(store.error_string()));
    const QList<Message> path = store.current_path(chat);
    QCOMPARE(path.size(), 1);
    QCOMPARE(path[0].images, (QList<ChatImage>{gif(), png()}));
    QCOMPARE(store.message(*id)->images, (QList<ChatImage>{gif(), png()}));
    QCOMPARE(store.document(chat)->messages[0].images, (QList<ChatImage>{gif(), png()}));
  }

  void oneImageIsStoredOnceAndGoesWithTheLastChat() {
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const ChatId chat = *store.create_chat(QStringLiteral("Pictures"));
    const MessageId first =
        *store.append_message(chat, Role::User, QStringLiteral("This?"), {}, {png()});
    store.append_message(chat, Role::Assistant, QStringLiteral("A flag."));
    store.append_message(chat, Role::User, QStringLiteral("And again?"), {}, {png()});
    // Edit and resend shares the original's images.
    const auto edited =
        store.add_message(chat, std::nullopt, Role::User, QStringLiteral("This one?"), {},
                          store.message(first)->images);
    QVERIFY(edited);
    // A branch copied into a new chat shares them too.
    const auto branch = store.branch_chat(first, QStringLiteral("Branch"));
    QVERIFY2(branch, qPrintable(store.error_string()));
    QCOMPARE(store.current_path(*branch)[0].images, QList<ChatImage>{png()});
    QCOMPARE(count(QStringLiteral("images")), 1);
    QCOMPARE(count(QStringLiteral("message_images")), 4);

    // A deleted branch keeps its images for undo.
    QVERIFY(store.delete_branch(*edited));
    QCOMPARE(count(QStringLiteral("message_images")), 4);
    QVERIFY(store.restore_branch(*edited));
    QCOMPARE(store.message(*edited)->images, QList<ChatImage>{png()});

    QVERIFY(store.delete_chat(chat));
    QVERIFY(store.purge_deleted(QDateTime::currentDateTimeUtc().addSecs(3600)) == 1);
    QCOMPARE(count(QStringLiteral("images")), 1);  // the branch still shows it
    QCOMPARE(count(QStringLiteral("message_images")), 1);
    QVERIFY(store.delete_chat(*branch));
    QVERIFY(store.purge_deleted(QDateTime::currentDateTimeUtc().addSecs(3600)) == 1);
    QCOMPARE(count(QStringLiteral("images")), 0);
    QCOMPARE(count(QStringLiteral("message_images")), 0);
  }

  void anUnfitImageStoresNothing() {
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const ChatId chat = *store.create_chat(QStringLiteral("Pictures"));
    ChatImage text{QByteArray("just some words"), QStringLiteral("image/png"), 4, 4};
    QVERIFY(!store.append_message(chat, Role::User, QStringLiteral("Look"), {}, {png(), text}));
    QCOMPARE(store.error(), StoreError::InvalidArgument);
    QCOMPARE(store.error_string(),
             QStringLiteral("Image 2 of the message cannot be stored: it is not a PNG, JPEG, "
                            "WebP, GIF or BMP file."));
    ChatImage mislabelled = png();
    mislabelled.mime_type = QStringLiteral("image/jpeg");
    QVERIFY(!store.append_message(chat, Role::User, QStringLiteral("Look"), {}, {mislabelled}));
    QCOMPARE(store.error_string(),
             QStringLiteral("Image 1 of the message cannot be stored: it is "
                            "labelled image/jpeg but its bytes are image/png."));
    QVERIFY(store.current_path(chat).isEmpty());
    QCOMPARE(count(QStringLiteral("images")), 0);
  }

  void theChatFileCarriesImages() {
    ChatDocument document;
    document.title = QStringLiteral("Pictures");
    Message question;
    question.role = Role::User;
    question.text = QStringLiteral("What is this?");
    question.images = {png(), gif()};
    Message answer;
    answer.role = Role::Assistant;
    answer.text = QStringLiteral("A flag.");
    document.messages = {question, answer};
    const QByteArray json = chat_to_json(document);
    QVERIFY(json.contains("\"version\": 4"));
    QVERIFY(json.contains("\"data\": \"" + png().bytes.toBase64() + "\""));
    QString error;
    const auto read = chat_from_json(json, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->messages[0].images, (QList<ChatImage>{png(), gif()}));
    QVERIFY(read->messages[1].images.isEmpty());

    // Imported into the store and exported again: the same images.
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const auto chat = store.insert_document(*read);
    QVERIFY2(chat, qPrintable(store.error_string()));
    QCOMPARE(store.current_path(*chat)[0].images, (QList<ChatImage>{png(), gif()}));
  }

  void aFileWithoutImagesStaysVersion3() {
    ChatDocument document;
    document.title = QStringLiteral("Words");
    Message question;
    question.text = QStringLiteral("Hi");
    document.messages = {question};
    QVERIFY(chat_to_json(document).contains("\"version\": 3"));
  }

  void brokenImagesInAFileAreRefused_data() {
    QTest::addColumn<QByteArray>("image");
    QTest::addColumn<QString>("message");
    const QByteArray good = png().bytes.toBase64();
    QTest::newRow("broken base64")
        << (quoted("{'mime_type': 'image/png', 'width': 6, 'height': 4, 'data': 'iVBO*w=='}"))
        << QStringLiteral("messages[1].images[0].data: not valid base64");
    QTest::newRow("not an image")
        << (quoted("{'mime_type': 'image/png', 'width': 6, 'height': 4, 'data': '") +
            QByteArray("#!/bin/sh\nrm -rf /\n").toBase64() + "\"}")
        << QStringLiteral("messages[1].images[0]: it is not a PNG, JPEG, WebP, GIF or BMP file");
    QTest::newRow("empty")
        << (quoted("{'mime_type': 'image/png', 'width': 6, 'height': 4, 'data': ''}"))
        << QStringLiteral("messages[1].images[0]: it is empty");
    QTest::newRow("no size")
        << (quoted("{'mime_type': 'image/png', 'width': 0, 'height': 4, 'data': '") + good + "\"}")
        << QStringLiteral(
               "messages[1].images[0].width: expected a positive whole number of pixels");
    QTest::newRow("no type")
        << (quoted("{'width': 6, 'height': 4, 'data': '") + good + "\"}")
        << QStringLiteral(
               "messages[1].images[0].mime_type: expected a string such as \"image/png\"");
    QTest::newRow("not an object") << QByteArray("42")
                                   << QStringLiteral(
                                          "messages[1].images[0]: expected an object "
                                          "with \"mime_type\", \"width\", \"height\" "
                                          "and \"data\"");
  }

  void brokenImagesInAFileAreRefused() {
    QFETCH(QByteArray, image);
    QFETCH(QString, message);
    const QByteArray json = quoted(
                                "{'format': 'quire-chat', 'version': 4, 'title': 't', 'messages': ["
                                "{'role': 'user', 'text': 'first'},"
                                "{'role': 'user', 'text': 'second', 'images': [") +
                            image + "]}]}";
    QString error;
    QVERIFY(!chat_from_json(json, &error));
    QCOMPARE(error, message);

    // Through the import: refused, and nothing is stored.
    const QString file = dir_->filePath(QStringLiteral("broken.quire.json"));
    test::write_bytes(file, json);
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    QVERIFY(!import_chat_json(store, file, &error));
    QVERIFY2(error.contains(message), qPrintable(error));
    QVERIFY(store.list_chats().isEmpty());
    QCOMPARE(count(QStringLiteral("images")), 0);
  }

  void manyChatsImportWholeOrNotAtAll() {
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    ChatDocument good;
    good.title = QStringLiteral("Good");
    Message with_image;
    with_image.text = QStringLiteral("Look");
    with_image.images = {png()};
    good.messages = {with_image};
    ChatDocument bad = good;
    bad.title = QStringLiteral("Bad");
    bad.messages[0].images = {ChatImage{QByteArray("GIF89a"), QStringLiteral("image/gif"), 0, 0}};
    QVERIFY(!store.insert_documents({good, bad}));
    QCOMPARE(store.error_string(),
             QStringLiteral("The chat cannot be added: messages[0]: Image 1 of the message cannot "
                            "be stored: its size 0×0 is not a size in pixels."));
    QVERIFY(store.list_chats().isEmpty());
    QCOMPARE(count(QStringLiteral("images")), 0);
  }

  void markdownKeepsImagesAsFilesBesideIt() {
    QString error;
    const auto document = chat_from_json(
        test::read_bytes(QStringLiteral(QUIRE_TEST_DATA_DIR "/chat_export/postcard.quire.json")),
        &error);
    QVERIFY2(document, qPrintable(error));
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const auto chat = store.insert_document(*document);
    QVERIFY(chat);
    const QString md = dir_->filePath(QStringLiteral("A postcard.md"));
    QVERIFY2(export_chat_markdown(store, *chat, md, ExportScope::WholeTree, &error),
             qPrintable(error));
    QCOMPARE(QString::fromUtf8(test::read_bytes(md)),
             QString::fromUtf8(
                 test::read_bytes(QStringLiteral(QUIRE_TEST_DATA_DIR "/chat_export/postcard.md"))));
    const QString folder = dir_->filePath(QStringLiteral("A postcard.images"));
    const QList<ChatImage> images = document->messages[0].images;
    QCOMPARE(test::file_names(folder), (QStringList{markdown_image_file_name(images[0]),
                                                    markdown_image_file_name(images[1])}));
    QCOMPARE(
        markdown_image_file_name(images[0]),
        QString::fromLatin1(images[0].content_hash().toHex().left(16)) + QStringLiteral(".png"));
    QVERIFY(markdown_image_file_name(images[1]).endsWith(QStringLiteral(".jpg")));
    for (const ChatImage& image : images) {
      QCOMPARE(test::read_bytes(folder + QLatin1Char('/') + markdown_image_file_name(image)),
               image.bytes);
    }
    // A chat without images leaves no folder behind.
    const ChatId plain = *store.create_chat(QStringLiteral("Words"));
    store.append_message(plain, Role::User, QStringLiteral("Hi"));
    QVERIFY(export_chat_markdown(store, plain, dir_->filePath(QStringLiteral("Words.md")),
                                 ExportScope::WholeTree, &error));
    QVERIFY(!QFileInfo::exists(dir_->filePath(QStringLiteral("Words.images"))));
  }

  void aVersion8HistoryUpgrades() {
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
      const ChatId chat = *store.create_chat(QStringLiteral("Before images"));
      store.append_message(chat, Role::User, QStringLiteral("Hello"));
    }
    {
      // Back to what version 8 wrote: no image tables.
      RawDatabase raw(path());
      QVERIFY(raw.exec({QStringLiteral("DROP TRIGGER images_unused"),
                        QStringLiteral("DROP TRIGGER message_images_message_gone"),
                        QStringLiteral("DROP TRIGGER message_images_deleted_gone"),
                        QStringLiteral("DROP TABLE message_images"),
                        QStringLiteral("DROP TABLE images"),
                        QStringLiteral("PRAGMA user_version = 8")}));
    }
    ChatStore store;
    QVERIFY2(store.open(test::options(path())), qPrintable(store.error_string()));
    QCOMPARE(ChatStore::schema_version(), 9);
    const QList<ChatSummary> chats = store.list_chats();
    QCOMPARE(chats.size(), 1);
    QCOMPARE(chats[0].title, QStringLiteral("Before images"));
    QCOMPARE(store.current_path(chats[0].id)[0].text, QStringLiteral("Hello"));
    QVERIFY(store.append_message(chats[0].id, Role::User, QStringLiteral("Now?"), {}, {png()}));
    QCOMPARE(store.current_path(chats[0].id)[1].images, QList<ChatImage>{png()});
  }
};

QUIRE_TEST(ChatImagesTest)
#include "test_chat_images.moc"
