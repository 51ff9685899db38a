#pragma once

// What the window says about a chat's context policy: the context gauge's
// forecast of what sending the next message drops (engine::plan_context()
// on the conversation the engine holds, as ConversationBook::begin() fits
// it), and a reply's note about what was dropped for it.

#include <QList>
#include <QString>

#include "engine_messages.h"
#include "quire/ui/status_line.h"

namespace quire::gui {

// The conversation of a chat as the last reply left it.
struct ChatContextState {
  qint64 used = 0;     // tokens
  qint64 limit = 0;    // the context, in tokens
  qint64 reserve = 0;  // kept for a reply
  ContextTurns turns;
};

// What the gauge marks and its tooltip says when the next message is sent
// under `policy` ("stop", "drop_oldest", "truncate_middle"). The message is
// taken as a short one (the turn markers' allowance): a longer one may drop
// more. Turns are numbered as the chat shows them: `path_user_ids` are the
// store ids of the user messages on show, in order. Nothing when the next
// turn fits.
ui::StatusLine::ContextDrop forecast_drop(const ChatContextState& state, const QString& policy,
                                          const QList<qint64>& path_user_ids);

// The note on a reply for which turns were dropped: how many, from where,
// and how many tokens the cache had to compute again because of it.
QString dropped_note(const ReplyOutcome& outcome);

}  // namespace quire::gui
