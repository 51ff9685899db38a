#pragma once

// A stored chat as a reader's document: the plain transcript the widgets lay
// out (ui/chat_transcript.h), and its HTML and PDF files.

#include <QPageSize>
#include <QString>

#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_store.h"
#include "quire/ui/chat_transcript.h"

namespace quire::gui {

// The chat as the view shows it: tool calls with their outcomes under the
// reply that made them (the Tool messages answering them are not repeated),
// branch 1 first and, for the whole tree, each other branch as a section
// "Branch 1.2" with where it starts. The date is the chat's last activity in
// UTC ("2024-05-01 12:00 UTC"), the model its directory's name.
ui::Transcript transcriptOf(const store::ChatDocument& document, store::ExportScope scope);

bool exportChatHtml(const store::ChatStore& store, store::ChatId chat, const QString& path,
                    store::ExportScope scope, QString* error);
bool exportChatPdf(const store::ChatStore& store, store::ChatId chat, const QString& path,
                   store::ExportScope scope, QPageSize::PageSizeId pageSize, QString* error);

}  // namespace quire::gui
