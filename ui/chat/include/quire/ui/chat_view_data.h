#pragma once

#include <QMetaType>
#include <QString>
#include <QtGlobal>

namespace quire::ui {

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
  // Whether Regenerate may be offered on this reply (when it is the last
  // message): false where generating it again cannot succeed or has nothing
  // to replace, such as a reply refused before it started.
  bool canRegenerate = true;
  // Where the message stands among the versions of its turn (the edits of a
  // question, the regenerated replies to it), oldest first; with more than
  // one the message shows a "‹ 2/3 ›" switcher.
  int siblingIndex = 0;
  int siblingCount = 1;
};

}  // namespace quire::ui

Q_DECLARE_METATYPE(quire::ui::ChatMessageView)
