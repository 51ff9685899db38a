// A chat's whole tree for reading: the branches in order, and Markdown of
// the current branch and of the whole tree compared byte for byte with
// tests/data/chat_export/.

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;

namespace {

QString data_file(const QString& name) {
  return QStringLiteral(QUIRE_TEST_DATA_DIR "/chat_export/") + name;
}

// tests/data/chat_export/kyoto.quire.json: a first message with another
// version, a regenerated reply, and a reply that called a tool.
ChatDocument kyoto() {
  QString error;
  std::optional<ChatDocument> document =
      chat_from_json(test::read_bytes(data_file(QStringLiteral("kyoto.quire.json"))), &error);
  if (!document) qFatal("kyoto.quire.json: %s", qPrintable(error));
  return *document;
}

// Compares with the expected file; on a difference the output is left next
// to the build for a look (a diff tool shows it better than a test log).
bool same_as_file(const QByteArray& actual, const QString& name) {
  const QByteArray expected = test::read_bytes(data_file(name));
  if (actual == expected) return true;
  const QString kept = QDir::current().filePath(name + QStringLiteral(".actual"));
  test::write_bytes(kept, actual);
  qWarning("%s differs from the expected file; the output is in %s", qPrintable(name),
           qPrintable(kept));
  return false;
}

QList<qint64> ids(const QList<Message>& messages) {
  QList<qint64> out;
  for (const Message& message : messages)
    out << raw(message.id);
  return out;
}

}  // namespace

class ChatExportTreeTest : public QObject {
  Q_OBJECT

 private slots:
  void branchesFollowTheCurrentPathThenEachFork() {
    const QList<ChatBranch> branches = chat_branches(kyoto());
    QCOMPARE(branches.size(), 4);
    QCOMPARE(branches[0].label, QStringLiteral("1"));
    QCOMPARE(ids(branches[0].messages), (QList<qint64>{1, 3, 4, 5}));
    // The other first message, then the other reply to message 1, then
    // the other reply to message 4 (which goes on after its tool call).
    QCOMPARE(branches[1].label, QStringLiteral("1.1"));
    QCOMPARE(ids(branches[1].messages), (QList<qint64>{6, 7}));
    QCOMPARE(branches[2].label, QStringLiteral("1.2"));
    QCOMPARE(ids(branches[2].messages), (QList<qint64>{2}));
    QCOMPARE(branches[3].label, QStringLiteral("1.3"));
    QCOMPARE(ids(branches[3].messages), (QList<qint64>{8, 9, 10}));
    for (int i = 1; i < 4; ++i) {
      QCOMPARE(branches[i].parent_label, QStringLiteral("1"));
      QCOMPARE(branches[i].depth, 1);
    }
  }

  void nestedBranchesAreNumberedUnderTheirBranch() {
    ChatDocument document = kyoto();
    // Another reply to message 7, which is on branch 1.1.
    Message other;
    other.id = MessageId{11};
    other.parent = MessageId{6};
    other.position = 1;
    other.role = Role::Assistant;
    other.text = QStringLiteral("Osaka castle.");
    document.messages << other;
    const QList<ChatBranch> branches = chat_branches(document);
    QCOMPARE(branches.size(), 5);
    // Branch 1.1 follows the newest reply; the older one leaves it.
    QCOMPARE(ids(branches[1].messages), (QList<qint64>{6, 11}));
    QCOMPARE(branches[2].label, QStringLiteral("1.1.1"));
    QCOMPARE(branches[2].parent_label, QStringLiteral("1.1"));
    QCOMPARE(branches[2].depth, 2);
    QCOMPARE(ids(branches[2].messages), (QList<qint64>{7}));
    QCOMPARE(branches[3].label, QStringLiteral("1.2"));
  }

  void markdownOfTheCurrentBranchIsExact() {
    const QByteArray markdown = chat_to_markdown(kyoto(), ExportScope::CurrentBranch).toUtf8();
    QVERIFY(same_as_file(markdown, QStringLiteral("kyoto.branch.md")));
    QCOMPARE(markdown, chat_to_markdown(kyoto()).toUtf8());
  }

  void markdownOfTheWholeTreeIsExact() {
    QVERIFY(same_as_file(chat_to_markdown(kyoto(), ExportScope::WholeTree).toUtf8(),
                         QStringLiteral("kyoto.tree.md")));
  }

  void aChatWithoutBranchesReadsTheSameEitherWay() {
    ChatDocument document = kyoto();
    document.messages = current_path(document);
    QCOMPARE(chat_to_markdown(document, ExportScope::WholeTree),
             chat_to_markdown(document, ExportScope::CurrentBranch));
  }

  void theWholeTreeIsWrittenFromTheStore() {
    QTemporaryDir dir;
    ChatStore store;
    QVERIFY(store.open(test::options(dir.filePath(QStringLiteral("chats.sqlite")))));
    const auto chat = store.insert_document(kyoto());
    QVERIFY(chat);
    const QString path = dir.filePath(QStringLiteral("kyoto.md"));
    QString error;
    QVERIFY2(export_chat_markdown(store, *chat, path, ExportScope::WholeTree, &error),
             qPrintable(error));
    QVERIFY(same_as_file(test::read_bytes(path), QStringLiteral("kyoto.tree.md")));
  }
};

QUIRE_TEST(ChatExportTreeTest)
#include "test_chat_export_tree.moc"
