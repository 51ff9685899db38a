#include "chat_export_files.h"

#include <QFileInfo>
#include <QObject>
#include <QSet>

#include "quire/app/attachments/image_views.h"

namespace quire::gui {
namespace {

using ExportedState = ui::ToolCallView::State;

ExportedState exported_state(store::ToolStatus status) {
  switch (status) {
    case store::ToolStatus::Allowed:
      return ExportedState::Done;
    case store::ToolStatus::Denied:
      return ExportedState::Denied;
    case store::ToolStatus::Failed:
      return ExportedState::Failed;
    case store::ToolStatus::TimedOut:
      return ExportedState::TimedOut;
    case store::ToolStatus::Cancelled:
      return ExportedState::Cancelled;
  }
  return ExportedState::Done;
}

ui::TranscriptMessage::Role exported_role(store::Role role) {
  switch (role) {
    case store::Role::System:
      return ui::TranscriptMessage::Role::System;
    case store::Role::User:
      return ui::TranscriptMessage::Role::User;
    case store::Role::Assistant:
      return ui::TranscriptMessage::Role::Assistant;
    case store::Role::Tool:
      return ui::TranscriptMessage::Role::Tool;
  }
  return ui::TranscriptMessage::Role::User;
}

// The messages of one branch; a tool's answer shows in the card of the call
// it answers, as in the chat view, and only an answer no card shows stands
// on its own.
QList<ui::TranscriptMessage> exported_messages(const QList<store::Message>& messages) {
  QList<ui::TranscriptMessage> out;
  QSet<QString> answered;  // call ids whose result a reply's card shows
  for (qsizetype i = 0; i < messages.size(); ++i) {
    const store::Message& message = messages[i];
    if (message.role == store::Role::Tool && message.tool_result &&
        answered.contains(message.tool_result->call_id)) {
      continue;
    }
    ui::TranscriptMessage entry;
    entry.role = exported_role(message.role);
    entry.text = message.text;
    if (message.tool_result) entry.toolName = message.tool_result->name;
    for (const store::ChatImage& image : message.images) {
      entry.images << ui::TranscriptImage{image.bytes, image.mime_type,
                                          attachments::decode_image(image.bytes)};
    }
    for (const store::ToolCall& call : message.tool_calls) {
      ui::ToolCallView view;
      view.id = call.id;
      view.server = call.server;
      view.tool = call.name;
      view.arguments = call.arguments;
      // A call no result answers was left when the reply ended.
      view.state = ExportedState::Cancelled;
      for (qsizetype j = i + 1; j < messages.size(); ++j) {
        const store::Message& later = messages[j];
        if (later.role != store::Role::Tool || !later.tool_result ||
            later.tool_result->call_id != call.id) {
          continue;
        }
        view.state = exported_state(later.tool_result->status);
        if (view.state != ExportedState::Denied) view.result = later.text;
        view.summary =
            view.state == ExportedState::Denied
                ? QObject::tr("Denied")
                : (later.text.size() == 1 ? QObject::tr("1 character")
                                          : QObject::tr("%1 characters").arg(later.text.size()));
        answered.insert(call.id);
        break;
      }
      entry.toolCalls << view;
    }
    out << entry;
  }
  return out;
}

template <typename Write>
bool export_with(const store::ChatStore& store, store::ChatId chat, store::ExportScope scope,
                 QString* error, Write write) {
  const auto document = store.document(chat);
  if (!document) {
    if (error != nullptr) *error = store.error_string();
    return false;
  }
  return write(transcriptOf(*document, scope));
}

}  // namespace

ui::Transcript transcriptOf(const store::ChatDocument& document, store::ExportScope scope) {
  ui::Transcript transcript;
  transcript.title = document.title.simplified();
  if (transcript.title.isEmpty()) transcript.title = QObject::tr("Untitled chat");
  if (!document.model.model_dir.isEmpty())
    transcript.model = QFileInfo(document.model.model_dir).fileName();
  const QDateTime when = document.updated.isValid() ? document.updated : document.created;
  if (when.isValid())
    transcript.date = when.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"));
  QList<store::ChatBranch> branches = store::chat_branches(document);
  if (scope == store::ExportScope::CurrentBranch && branches.size() > 1) branches.resize(1);
  for (const store::ChatBranch& branch : branches) {
    ui::TranscriptSection section;
    section.depth = branch.depth;
    if (!branch.parent_label.isEmpty()) {
      section.heading = QObject::tr("Branch %1").arg(branch.label);
      const int number = branch.messages.isEmpty() ? 1 : branch.messages.front().position + 1;
      section.note = QObject::tr("Another version of message %1 of branch %2.")
                         .arg(number)
                         .arg(branch.parent_label);
    }
    section.messages = exported_messages(branch.messages);
    transcript.sections << section;
  }
  return transcript;
}

bool exportChatHtml(const store::ChatStore& store, store::ChatId chat, const QString& path,
                    store::ExportScope scope, QString* error) {
  return export_with(store, chat, scope, error, [&](const ui::Transcript& transcript) {
    return store::write_file_atomically(path, ui::transcriptToHtml(transcript).toUtf8(), error);
  });
}

bool exportChatPdf(const store::ChatStore& store, store::ChatId chat, const QString& path,
                   store::ExportScope scope, QPageSize::PageSizeId pageSize, QString* error) {
  return export_with(store, chat, scope, error, [&](const ui::Transcript& transcript) {
    return ui::writeTranscriptPdf(transcript, path, pageSize, error);
  });
}

}  // namespace quire::gui
