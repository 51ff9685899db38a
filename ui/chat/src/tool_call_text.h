#pragma once

// The words and the layout of text a tool call card shows, apart from the
// widgets so that each can be checked on its own.

#include <QString>

#include "quire/ui/chat_view_data.h"

namespace quire::ui {

// "server › tool"; the tool alone when the server has no name.
QString toolCallTitle(const ToolCallView& call);

// JSON arguments indented for reading, in the model's key order and
// spelling; the text as written
// when it is no JSON object or array (a model can write anything there), and
// "No arguments" for an empty object or no text at all.
QString prettyToolArguments(const QString& arguments);

// Where the call stands, for people: "Waiting for your approval", "Running…",
// "Done · 412 characters", "Failed: the server closed the connection".
QString toolCallStateText(const ToolCallView& call);

// The states that report a failure and are shown in the error colour.
bool isToolCallFailure(ToolCallView::State state);

}  // namespace quire::ui
