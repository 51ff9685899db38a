#pragma once

// Importing chat files of any kind Quire reads: its own JSON export, and the
// exports of ChatGPT, Open WebUI and LM Studio (see
// quire/importers/foreign_chats.h). The format is recognised from the
// content, not the file name. A file with several conversations adds them
// all, in one transaction: a file with a problem adds nothing.

#include <QByteArray>
#include <QList>
#include <QString>
#include <optional>

#include "quire/app/store/chat_store.h"
#include "quire/app/store/chat_types.h"

namespace quire::importers {
struct ForeignChat;
}

namespace quire::store {

// The chats a file holds, and the name of its format ("Quire chat",
// "ChatGPT export", "Open WebUI export", "LM Studio conversation").
struct ChatFileContents {
  QString format;
  QList<ChatDocument> chats;
};

// Reads `bytes` in whichever format they are. nullopt with *error naming the
// problem (without the file), e.g. "conversation 3, mapping node 'abc':
// parent 'xyz' is missing".
std::optional<ChatFileContents> read_chat_file(const QByteArray& bytes, QString* error);

// A foreign chat as a document: message ids 1, 2, ... in the chat's order,
// roles, texts and times as read; LM Studio's system prompt becomes the
// chat's own; an untitled chat is called "<format> chat".
ChatDocument document_from_foreign(const importers::ForeignChat& chat, const QString& format);

struct ImportedChats {
  QString format;
  QList<ChatId> chats;
};

// Reads the file at `path` and adds every chat it holds, titled as
// import_title() says (and distinct from one another). nullopt with *error
// "Cannot import <file name>: <problem>." when the file cannot be read, is of
// no known format, or has a problem anywhere.
std::optional<ImportedChats> import_chat_file(ChatStore& store, const QString& path,
                                              QString* error);

}  // namespace quire::store
