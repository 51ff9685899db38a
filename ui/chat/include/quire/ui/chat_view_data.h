#pragma once

#include <QImage>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QtGlobal>

namespace quire::ui {

// One call of a tool that a reply made, as the chat shows it: what was asked
// of which server, where the call stands, and what came back. app/ fills it
// from the tool runner; the view only shows it and reports the user's answer.
struct ToolCallView {
  enum class State {
    AwaitingApproval,  // shown with Allow once / Always allow in this chat / Deny
    Running,           // allowed and in progress; may be stopped
    Done,              // the server answered; `result` holds the answer
    Failed,            // the server or the call failed; `summary` says why
    Denied,            // the user said no; the model was told so
    TimedOut,          // no answer within the server's call timeout
    Cancelled,         // stopped by the user, or by the end of the reply
  };

  QString id;      // the call's id, unique within its message
  QString server;  // the tool server's name as the user named it in Settings
  QString tool;    // the tool's name as the server lists it
  // The arguments as the model wrote them: JSON text, shown pretty-printed
  // when it parses and as written when it does not.
  QString arguments;
  State state = State::AwaitingApproval;
  // The server's answer as text (Done), or the details of a failure.
  QString result;
  // One line about the outcome: "412 characters", or the error of a failure.
  QString summary;

  friend bool operator==(const ToolCallView&, const ToolCallView&) = default;
};

// The user's answer to a call that waits for approval.
enum class ToolDecision {
  AllowOnce,    // run this call
  AlwaysAllow,  // run it, and this tool's later calls in this chat without asking
  Deny,         // do not run it
};

// One message as the chat view shows it. Plain values that app/ fills from its
// chat store and from the generator's stream; the view never reaches back.
struct ChatMessageView {
  enum class Role { System, User, Assistant };

  qint64 id = 0;
  Role role = Role::User;
  // Markdown for the assistant; user and system text is shown exactly as typed.
  QString text;
  // The reply is still being generated (text grows through appendToMessage).
  bool streaming = false;
  // Preformatted statistics, e.g. "212 tokens · 34.1 tok/s · 0.18 s to first token".
  QString stats;
  // Why the turn failed, e.g. "does not fit: ..."; empty when it did not.
  QString error;
  // Something worth knowing about the turn that is no failure, e.g. that the
  // oldest turns were left out to fit the context.
  QString notice;
  // The messages before this one (back to the last message marked so, or the
  // start) are not in the model's context any more: a context policy dropped
  // them to fit. The view draws a thin divider above the message saying so.
  bool contextResumesHere = false;
  // Whether Regenerate may be offered on this reply (when it is the last
  // message): false where generating it again cannot succeed or has nothing
  // to replace, such as a reply refused before it started.
  bool canRegenerate = true;
  // Where the message stands among the versions of its turn (the edits of a
  // question, the regenerated replies to it), oldest first; with more than
  // one the message shows a "‹ 2/3 ›" switcher.
  int siblingIndex = 0;
  int siblingCount = 1;
  // The tool calls this reply made, in the order it made them, each with its
  // outcome; shown as cards under the reply's text. Empty for other roles.
  QList<ToolCallView> toolCalls;
  // Thumbnails of the images attached to a user message, in order; a
  // click asks for the full view (ChatView::imageOpenRequested).
  QList<QImage> images;
  // A reply that failed before it began (the message did not fit the
  // context): Retry asks for it again once the user has changed something,
  // such as the context or the cache in Settings. Offered on the last message.
  bool canRetry = false;
};

}  // namespace quire::ui

Q_DECLARE_METATYPE(quire::ui::ChatMessageView)
Q_DECLARE_METATYPE(quire::ui::ToolCallView)
Q_DECLARE_METATYPE(quire::ui::ToolDecision)
