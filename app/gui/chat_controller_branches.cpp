// The branches of a chat: switching between the versions of a message,
// copying a path into a new chat, deleting a version and bringing it back.

#include "chat_controller.h"
#include "chat_tool_calls.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/status_line.h"

namespace quire::gui {

void ChatController::switchBranch(qint64 message_id, int step) {
  // A streaming reply writes into the path on show; it stays until it ends.
  if (!current_ || isGenerating(*current_)) return;
  const store::MessageId message{message_id};
  const std::optional<store::Message> stored = store_.message(message);
  if (!stored || stored->chat != *current_) return;
  const std::optional<store::Siblings> siblings = store_.siblings(message);
  if (!siblings) return report(tr("The other versions could not be read"));
  settleToolCalls(*current_);
  const qsizetype target = siblings->index + step;
  if (target < 0 || target >= siblings->ids.size()) return;
  if (!store_.select_message(siblings->ids.at(target))) {
    return report(tr("The other version could not be shown"));
  }
  showPath(*current_);
  status_.clearLastReply();
  showLastReplyOf(*current_);
}

void ChatController::branchFromHere(qint64 message_id) {
  const store::MessageId message{message_id};
  const std::optional<store::Message> stored = store_.message(message);
  if (!stored) return;
  const std::optional<store::ChatSummary> source = store_.chat(stored->chat);
  const QString title = source ? tr("%1 (branch)").arg(source->title) : tr("Branch");
  const std::optional<store::ChatId> branch = store_.branch_chat(message, title);
  if (!branch) return report(tr("The branch could not be made"));
  openChat(*branch);
  emit chatCreated(*branch);
}

void ChatController::deleteBranch(qint64 message_id) {
  if (!current_ || isGenerating(*current_)) return;
  const store::MessageId message{message_id};
  const std::optional<store::Message> stored = store_.message(message);
  if (!stored || stored->chat != *current_) return;
  settleToolCalls(*current_);
  if (!store_.delete_branch(message)) return report(tr("The version could not be deleted"));
  showPath(*current_);
  view_.offerBranchUndo(message_id);
}

void ChatController::undoDeleteBranch(qint64 message_id) {
  const store::MessageId message{message_id};
  if (!store_.restore_branch(message)) return report(tr("The version could not be restored"));
  const std::optional<store::Message> restored = store_.message(message);
  if (restored && current_ == restored->chat) showPath(*current_);
}

}  // namespace quire::gui
