#pragma once

#include <QWidget>
#include <optional>

class QLabel;
class QTimer;
class QToolButton;

namespace quire::ui {

// "Deleted a version of the conversation  [Undo]" above the conversation
// after a branch was deleted, for timeout() ms, as the chat list offers for
// a deleted chat. Only the latest deletion can be undone: showing the bar
// for another one forgets the earlier one.
//
// Object names: "branchUndoBar", "branchUndoLabel", "branchUndoButton".
class BranchUndoBar : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kDefaultTimeoutMs = 8000;

  explicit BranchUndoBar(QWidget* parent = nullptr);

  // `id` names the deleted branch (its first message) in undoRequested.
  void offer(qint64 id);
  // Hides the bar; the deletion stays.
  void dismiss();
  std::optional<qint64> pending() const { return pending_; }
  int timeout() const { return timeoutMs_; }
  void setTimeout(int milliseconds) { timeoutMs_ = milliseconds; }

 signals:
  void undoRequested(qint64 id);

 private:
  void undo();

  std::optional<qint64> pending_;
  int timeoutMs_ = kDefaultTimeoutMs;
  QLabel* label_ = nullptr;
  QToolButton* button_ = nullptr;
  QTimer* timer_ = nullptr;
};

}  // namespace quire::ui
