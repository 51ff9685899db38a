#pragma once

#include <QWidget>
#include <utility>
#include <vector>

#include "chat_style.h"
#include "markdown_segments.h"
#include "quire/ui/chat_view_data.h"

class QBoxLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QToolButton;
class QVBoxLayout;

namespace quire::ui {

class ElidedLabel;
class MessageImagesRow;

class BranchSwitcher;
class DocumentView;
class TintedFrame;
class ToolCallCard;

// One message of the conversation: caption, body, error or notice,
// statistics, actions. User messages are right-aligned bubbles shown exactly
// as typed; assistant messages are full-width blocks rendered from Markdown,
// each fenced code block split out into a CodeBlockWidget so that it has its
// own Copy button. A long message shows folded (message_fold.h) until the user
// asks for all of it; a reply the user watched arrive stays whole. The tool
// calls of a reply follow its text, one ToolCallCard each.
class MessageWidget : public QWidget {
  Q_OBJECT

 public:
  // The role is fixed for the widget's life; everything else follows setMessage.
  explicit MessageWidget(const ChatMessageView& message, QWidget* parent = nullptr);

  qint64 id() const { return message_.id; }
  const ChatMessageView& message() const { return message_; }
  // Shows `message`; only the parts of the body whose text changed are rendered
  // again, so a streaming reply re-renders its last paragraph or code block.
  void setMessage(const ChatMessageView& message);
  // Regenerate is offered on the conversation's last reply only.
  void setRegenerateAvailable(bool available);
  // Retry is offered on a failed last reply that allows it (canRetry).
  void setRetryAvailable(bool available);
  // Switching to another version and deleting one wait while the chat
  // generates: the reply streams into the path on show.
  void setBranchingAvailable(bool available);
  // Shows one tool call in place: its card is updated, or added at the end
  // for a call id the message does not have yet. Nothing else is rendered.
  void updateToolCall(const ToolCallView& call);
  bool isEditing() const;
  // Whether the message is long enough to fold, and folded now.
  bool isFoldable() const { return foldable_; }
  bool isFolded() const { return foldable_ && !expanded_ && !message_.streaming; }

 public slots:
  void startEditing();
  void cancelEditing();
  // Copies the text, and the Copy button says "Copied" for a moment.
  void copyMessage();
  // Shows all of a folded message, or folds it again.
  void toggleFold();

 signals:
  void editRequested(qint64 id, const QString& newText);
  void regenerateRequested(qint64 id);
  void retryRequested(qint64 id);
  // The switcher's arrows: -1 for the previous version, +1 for the next.
  void branchSwitchRequested(qint64 id, int step);
  void branchFromHereRequested(qint64 id);
  void deleteBranchRequested(qint64 id);
  void toolCallDecided(qint64 id, const QString& callId, quire::ui::ToolDecision decision);
  void toolCallCancelRequested(qint64 id, const QString& callId);
  void imageOpenRequested(qint64 id, int index);

 protected:
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // A framed, selectable, wrapping text in `tint` (an error, a note), added to `root`.
  std::pair<TintedFrame*, QLabel*> addTintedText(QBoxLayout* root, Tint tint, const QString& name,
                                                 const QString& accessibleName);
  struct Part {
    MarkdownSegment segment;
    QWidget* widget = nullptr;
  };

  void buildFrame();
  QToolButton* addAction(const QString& name, const QString& text, const QString& accessible,
                         const QString& tip);
  void renderBody();
  // The text on show: all of it, or its beginning while folded.
  QString shownText() const;
  void renderPlain();
  void renderMarkdown();
  void updateChrome();
  // Matches the cards to message_.toolCalls: kept where the ids agree,
  // updated in place, built or removed where they do not.
  void syncToolCalls();
  ToolCallCard* buildToolCard(const ToolCallView& call);
  void discardToolCards(std::size_t from);
  void updateBubbleWidth();
  void fitEditor();
  void submitEdit();

  ChatMessageView message_;
  bool rendered_ = false;
  bool regenerateAvailable_ = false;
  bool retryAvailable_ = false;
  bool branchingAvailable_ = true;
  bool foldable_ = false;
  bool expanded_ = false;

  QWidget* buildContextDivider();
  QWidget* contextDivider_ = nullptr;
  QLabel* caption_ = nullptr;
  MessageImagesRow* images_ = nullptr;
  TintedFrame* bubble_ = nullptr;
  QVBoxLayout* bodyLayout_ = nullptr;
  DocumentView* plainView_ = nullptr;
  std::vector<Part> parts_;
  QVBoxLayout* toolCallsLayout_ = nullptr;
  std::vector<ToolCallCard*> toolCards_;  // parallel to message_.toolCalls
  QWidget* editorArea_ = nullptr;
  QPlainTextEdit* editor_ = nullptr;
  QLabel* progressLabel_ = nullptr;
  TintedFrame* errorFrame_ = nullptr;
  QLabel* errorLabel_ = nullptr;
  TintedFrame* noticeFrame_ = nullptr;
  QLabel* noticeLabel_ = nullptr;
  QToolButton* foldButton_ = nullptr;
  ElidedLabel* statsLabel_ = nullptr;
  QToolButton* copyButton_ = nullptr;
  QToolButton* editButton_ = nullptr;
  QToolButton* regenerateButton_ = nullptr;
  QToolButton* retryButton_ = nullptr;
  BranchSwitcher* switcher_ = nullptr;
  QToolButton* branchButton_ = nullptr;
  QToolButton* deleteBranchButton_ = nullptr;
};

}  // namespace quire::ui
