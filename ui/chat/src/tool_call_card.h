#pragma once

#include <QString>

#include "chat_style.h"
#include "message_fold.h"
#include "quire/ui/chat_view_data.h"

class QLabel;
class QPushButton;
class QToolButton;

namespace quire::ui {

class DocumentView;

// One tool call of a reply, as a compact card under its text: "server › tool",
// the arguments in monospace, where the call stands and, once it ran, what
// came back. While the call waits for approval the card offers "Allow once",
// "Always allow in this chat" and "Deny"; while it runs, "Stop". Long
// arguments and results show folded, their first lines and a toggle. A
// failure is tinted and worded in the error colour.
//
// After a decision its buttons are disabled until the call's state changes,
// so a second click cannot answer the same call twice.
//
// Object names: "toolCallCard" (property "callId"), "toolCallTitle",
// "toolCallState", "toolCallArguments", "toolArgumentsFoldButton",
// "toolCallResult", "toolResultFoldButton", "allowOnceButton",
// "alwaysAllowButton", "denyButton", "stopToolCallButton".
class ToolCallCard : public TintedFrame {
  Q_OBJECT

 public:
  explicit ToolCallCard(const ToolCallView& call, QWidget* parent = nullptr);

  const ToolCallView& call() const { return call_; }
  // Shows `call` in place; what is unchanged is not laid out again.
  void setCall(const ToolCallView& call);

  bool isArgumentsFolded() const { return arguments_.isFolded(); }
  bool isResultFolded() const { return result_.isFolded(); }

 public slots:
  void toggleArguments();
  void toggleResult();

 signals:
  void decided(const QString& callId, quire::ui::ToolDecision decision);
  void cancelRequested(const QString& callId);

 private:
  // A monospace text that folds to its beginning past `limits`.
  struct FoldedText {
    explicit FoldedText(FoldLimits foldLimits) : limits(foldLimits) {}

    FoldLimits limits;
    QString text;
    bool foldable = false;
    bool expanded = false;
    DocumentView* view = nullptr;
    QToolButton* toggle = nullptr;

    bool isFolded() const { return foldable && !expanded; }
  };

  void buildFrame();
  QPushButton* addDecisionButton(const QString& name, const QString& text,
                                 const QString& accessible, const QString& tip,
                                 ToolDecision decision);
  void decide(ToolDecision decision);
  // Shows `text` in `part`, folded when it is long and not expanded.
  void setFoldedText(FoldedText& part, const QString& text);
  void renderFoldedText(FoldedText& part);
  void updateChrome();

  ToolCallView call_;
  bool answered_ = false;  // a decision was sent for the call on show
  QLabel* title_ = nullptr;
  QLabel* state_ = nullptr;
  QToolButton* stop_ = nullptr;
  QWidget* decisions_ = nullptr;
  QPushButton* allowOnce_ = nullptr;
  QPushButton* alwaysAllow_ = nullptr;
  QPushButton* deny_ = nullptr;
  FoldedText arguments_{kToolArgumentsFold};
  QLabel* resultCaption_ = nullptr;
  FoldedText result_{kToolResultFold};
};

}  // namespace quire::ui
