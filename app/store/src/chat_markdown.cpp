// The Markdown form of a chat: a heading per message, the text as written;
// each tool call with its tool and arguments, each result with its status;
// each image as a link to its file in the images folder beside the .md.

#include <QCryptographicHash>
#include <QStringList>
#include <algorithm>

#include "quire/app/store/chat_export.h"

namespace quire::store {
namespace {

QString heading(Role role) {
  switch (role) {
    case Role::System:
      return QStringLiteral("## System");
    case Role::User:
      return QStringLiteral("## User");
    case Role::Assistant:
      return QStringLiteral("## Assistant");
    case Role::Tool:
      return QStringLiteral("## Tool");
  }
  return {};
}

// `text` in a fenced code block whose fence no run of backticks inside it
// can close.
QString fenced(const QString& text, const QString& language) {
  qsizetype longest = 0;
  qsizetype run = 0;
  for (const QChar c : text) {
    run = c == QLatin1Char('`') ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const QString fence(std::max<qsizetype>(3, longest + 1), QLatin1Char('`'));
  QString body = text;
  while (body.endsWith(QLatin1Char('\n')))
    body.chop(1);
  return fence + language + QLatin1Char('\n') + body + QLatin1Char('\n') + fence;
}

QString tool_call_block(const ToolCall& call) {
  QString line = QStringLiteral("**Tool call:** `%1`").arg(call.name);
  if (!call.server.isEmpty()) line += QStringLiteral(" from `%1`").arg(call.server);
  line += QStringLiteral(" (id `%1`)").arg(call.id);
  return line + QStringLiteral("\n\n") + fenced(call.arguments, QStringLiteral("json"));
}

QString tool_result_block(const Message& message) {
  QString line = QStringLiteral("**Result**");
  if (message.tool_result) {
    line = QStringLiteral("**Result of** `%1` (id `%2`): %3")
               .arg(message.tool_result->name, message.tool_result->call_id,
                    tool_status_name(message.tool_result->status));
  }
  if (message.text.isEmpty()) return line;
  return line + QStringLiteral("\n\n") + fenced(message.text, QString());
}

// A CommonMark fence line: up to three spaces, then three or more ` or ~.
// Returns the fence run ("```", "~~~~"), or an empty string.
QString fence_of(const QString& line) {
  qsizetype i = 0;
  while (i < line.size() && i < 3 && line.at(i) == QLatin1Char(' '))
    ++i;
  if (i >= line.size()) return {};
  const QChar mark = line.at(i);
  if (mark != QLatin1Char('`') && mark != QLatin1Char('~')) return {};
  qsizetype end = i;
  while (end < line.size() && line.at(end) == mark)
    ++end;
  if (end - i < 3) return {};
  return line.mid(i, end - i);
}

// The fence a message leaves open at its end, or an empty string.
QString open_fence(const QString& text) {
  QString open;
  for (const QString& line : text.split(QLatin1Char('\n'))) {
    const QString fence = fence_of(line);
    if (fence.isEmpty()) continue;
    if (open.isEmpty()) {
      open = fence;
    } else if (fence.at(0) == open.at(0) && fence.size() >= open.size() &&
               line.trimmed() == fence) {
      open.clear();  // a closing fence: same mark, at least as long, nothing after it
    }
  }
  return open;
}

// The images of a message, one line each (one paragraph): links to their
// files in `folder`, in angle brackets so that spaces in the folder's name
// need no escaping.
QString images_block(const QList<ChatImage>& images, const QString& folder) {
  QStringList lines;
  for (qsizetype i = 0; i < images.size(); ++i) {
    const ChatImage& image = images[i];
    lines << QStringLiteral("![Image %1 (%2 × %3)](<%4/%5>)")
                 .arg(i + 1)
                 .arg(image.width)
                 .arg(image.height)
                 .arg(folder, markdown_image_file_name(image));
  }
  return lines.join(QLatin1Char('\n'));
}

// A message's heading (one level deeper inside a branch section), its
// images, its text and its tool calls or result.
void append_message(const Message& message, bool in_branch, const QString& images_folder,
                    QStringList* blocks) {
  *blocks << (in_branch ? QStringLiteral("#") : QString()) + heading(message.role);
  if (!message.images.isEmpty()) *blocks << images_block(message.images, images_folder);
  if (message.role == Role::Tool) {
    *blocks << tool_result_block(message);
    return;
  }
  QString text = message.text;
  while (text.endsWith(QLatin1Char('\n')))
    text.chop(1);
  if (!text.isEmpty()) {
    const QString fence = open_fence(text);
    if (!fence.isEmpty()) text += QLatin1Char('\n') + fence;
    *blocks << text;
  }
  for (const ToolCall& call : message.tool_calls)
    *blocks << tool_call_block(call);
}

QString title_line(const ChatDocument& document) {
  const QString title = document.title.simplified();
  return QStringLiteral("# ") + (title.isEmpty() ? QStringLiteral("Untitled chat") : title);
}

}  // namespace

QString markdown_image_file_name(const ChatImage& image) {
  QString extension = image.mime_type.section(QLatin1Char('/'), 1);
  if (extension == QLatin1String("jpeg")) extension = QStringLiteral("jpg");
  if (extension.isEmpty()) extension = QStringLiteral("bin");
  return QString::fromLatin1(image.content_hash().toHex().left(16)) + QLatin1Char('.') + extension;
}

QString chat_to_markdown(const ChatDocument& document) {
  return chat_to_markdown(document, ExportScope::CurrentBranch, QStringLiteral("images"));
}

QString chat_to_markdown(const ChatDocument& document, ExportScope scope) {
  return chat_to_markdown(document, scope, QStringLiteral("images"));
}

QString chat_to_markdown(const ChatDocument& document, ExportScope scope,
                         const QString& images_folder) {
  const QList<ChatBranch> branches = chat_branches(document);
  if (scope == ExportScope::CurrentBranch || branches.size() <= 1) {
    QStringList blocks{title_line(document)};
    for (const Message& message : current_path(document))
      append_message(message, false, images_folder, &blocks);
    return blocks.join(QStringLiteral("\n\n")) + QLatin1Char('\n');
  }
  QStringList blocks{title_line(document)};
  blocks << QStringLiteral(
                "*%1 branches: branch 1 is the current one; each other branch follows "
                "the branch it leaves, from the message where it starts.*")
                .arg(branches.size());
  for (const ChatBranch& branch : branches) {
    const bool first = branch.parent_label.isEmpty();
    if (!first) {
      blocks << QStringLiteral("## Branch %1").arg(branch.label);
      const int number = branch.messages.isEmpty() ? 1 : branch.messages.front().position + 1;
      blocks << QStringLiteral("*Another version of message %1 of branch %2.*")
                    .arg(number)
                    .arg(branch.parent_label);
    }
    for (const Message& message : branch.messages)
      append_message(message, !first, images_folder, &blocks);
  }
  return blocks.join(QStringLiteral("\n\n")) + QLatin1Char('\n');
}

}  // namespace quire::store
