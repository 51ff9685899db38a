#pragma once

// A chat as a file: JSON that imports back losslessly (title, model, the
// chat's settings, the tree of messages with roles, text, token ids and
// statistics, and the current path), and Markdown of the current path or
// of the whole tree for reading (HTML and PDF are laid out by ui/chat, see
// app/gui/chat_export_files.h; other applications' files are read by
// chat_import.h).
// Files are written through QSaveFile: an interrupted export never leaves a
// half-written file in place of a good one.

#include <QByteArray>
#include <QString>
#include <optional>

#include "quire/app/store/chat_store.h"
#include "quire/app/store/chat_types.h"

namespace quire::store {

// The "format" member of an exported chat, and the version this build writes
// and the newest it reads. Version 2 added the tree ("id" and "parent" on each
// message, "current" naming the current leaf) and "chat_settings"; a file of
// version 1 reads as one branch. Version 3 added tool calls and results;
// version 4 a message's "images" (MIME type, size and base64 bytes). A chat
// without images is still written as version 3, so older builds read it; one
// with images is version 4, which they refuse instead of dropping the images.
inline constexpr char kChatFileFormat[] = "quire-chat";
inline constexpr int kChatFileVersion = 4;

QByteArray chat_to_json(const ChatDocument& document);
// nullopt with *error naming the first problem, e.g. "messages[2].role: ...".
std::optional<ChatDocument> chat_from_json(const QByteArray& json, QString* error);

// "# Title", then "## User" / "## Assistant" / "## System" and each message's
// text verbatim, along the current path. A code fence a message leaves open (an interrupted reply)
// is closed, so the next heading is not swallowed into it.
QString chat_to_markdown(const ChatDocument& document);

// What an export holds: the current path only, or every branch of the tree.
enum class ExportScope { CurrentBranch, WholeTree };

// A chat's tree as branches, for reading it all in order. Branch "1" is the
// current path from its first message. Every other child of a message on a
// branch starts a branch of its own, numbered after the branch it leaves
// ("1.1", "1.2", then "1.1.1" for a branch leaving 1.1), in the order of
// the message it leaves and then of the children (oldest first). A branch
// follows, at each message, the newest child. Listed depth first: a branch,
// then the branches that leave it.
struct ChatBranch {
  QString label;         // "1", "1.2", "1.2.1"
  QString parent_label;  // empty for branch 1
  int depth = 0;         // 0 for branch 1, the number of dots otherwise
  QList<Message> messages;
};
QList<ChatBranch> chat_branches(const ChatDocument& document);

// CurrentBranch: as chat_to_markdown(document). WholeTree: the same for
// branch 1, then each other branch under "## Branch 1.2", with a line saying
// which message it starts at, and its messages under "### User" and so on.
// A chat without branches reads the same either way.
QString chat_to_markdown(const ChatDocument& document, ExportScope scope);

// Images stay files: a message's images are links,
// "![Image 1 (640 × 480)](<images_folder/name.png>)", under its heading, to
// the files export_chat_markdown() writes into images_folder beside the .md
// (named by markdown_image_file_name()). Every Markdown viewer shows a
// relative image (GitHub and GitLab refuse data: URIs, and base64 would bury
// the text for anyone reading the file itself). The overloads above use
// "images".
QString chat_to_markdown(const ChatDocument& document, ExportScope scope,
                         const QString& images_folder);
// The first 16 hex digits of the image's SHA-256 and its type's extension
// ("3f0c…e1.png"): the same image is one file however often it is attached.
QString markdown_image_file_name(const ChatImage& image);

// The file name an export suggests: the chat's title without the characters
// file systems refuse or treat specially ('/' and '\\' become '-', ':' '*'
// '?' '"' '<' '>' '|' and control characters go), then "." and `extension`
// ("json", "md"). A title with nothing usable left gives "Chat".
QString export_file_name(const QString& title, const QString& extension);

// The title an imported chat gets: `title` when no live chat has it, else
// "title (imported)", then "title (imported 2)", "title (imported 3)", ...
QString import_title(const ChatStore& store, const QString& title);

// Writes `bytes` to `path` atomically.
bool write_file_atomically(const QString& path, const QByteArray& bytes, QString* error);

bool export_chat_json(const ChatStore& store, ChatId chat, const QString& path, QString* error);
bool export_chat_markdown(const ChatStore& store, ChatId chat, const QString& path, QString* error);
// With images, they are written first into "<name>.images" beside `path`
// (for "Trip.md", "Trip.images/"), which the Markdown links to.
bool export_chat_markdown(const ChatStore& store, ChatId chat, const QString& path,
                          ExportScope scope, QString* error);
// Reads, validates and adds the chat as a new one, titled by import_title().
// Errors name the file.
std::optional<ChatId> import_chat_json(ChatStore& store, const QString& path, QString* error);

}  // namespace quire::store
