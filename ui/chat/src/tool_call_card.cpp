#include "tool_call_card.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

#include "document_view.h"
#include "tool_call_text.h"

namespace quire::ui {
namespace {

using State = ToolCallView::State;

// The card's look for each state: a call waiting for the user stands out,
// a failure is red, the rest stay quiet.
Tint tintFor(State state) {
  if (state == State::AwaitingApproval) return Tint::Info;
  if (isToolCallFailure(state)) return Tint::Error;
  return Tint::System;
}

DocumentView* monospaceView(const QString& name, const QString& accessibleName, QWidget* parent) {
  auto* view = new DocumentView(parent);
  view->setObjectName(name);
  view->setAccessibleName(accessibleName);
  const QFont mono = monospaceFont();
  view->setFont(mono);
  view->document()->setDefaultFont(mono);
  return view;
}

QToolButton* foldToggle(const QString& name, QWidget* parent) {
  auto* toggle = new QToolButton(parent);
  toggle->setObjectName(name);
  toggle->setAutoRaise(true);
  toggle->setCursor(Qt::PointingHandCursor);
  scaleFont(toggle, 0.88);
  return toggle;
}

}  // namespace

ToolCallCard::ToolCallCard(const ToolCallView& call, QWidget* parent)
    : TintedFrame(tintFor(call.state), parent), call_(call) {
  setObjectName(QStringLiteral("toolCallCard"));
  setRadius(8);
  buildFrame();
  setFoldedText(arguments_, prettyToolArguments(call_.arguments));
  setFoldedText(result_, call_.result);
  updateChrome();
}

void ToolCallCard::buildFrame() {
  auto* root = new QVBoxLayout(this);
  root->setContentsMargins(12, 8, 12, 8);
  root->setSpacing(4);

  auto* header = new QHBoxLayout;
  header->setContentsMargins(0, 0, 0, 0);
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("toolCallTitle"));
  title_->setTextFormat(Qt::PlainText);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  scaleFont(title_, 0.95, true);
  header->addWidget(title_, 1);
  stop_ = new QToolButton(this);
  stop_->setObjectName(QStringLiteral("stopToolCallButton"));
  stop_->setText(tr("Stop"));
  stop_->setToolTip(tr("Stop this call; the model is told it was cancelled"));
  stop_->setAutoRaise(true);
  stop_->setCursor(Qt::PointingHandCursor);
  stop_->setFocusPolicy(Qt::StrongFocus);
  connect(stop_, &QToolButton::clicked, this, [this] { emit cancelRequested(call_.id); });
  header->addWidget(stop_);
  root->addLayout(header);

  state_ = new QLabel(this);
  state_->setObjectName(QStringLiteral("toolCallState"));
  state_->setTextFormat(Qt::PlainText);
  state_->setWordWrap(true);
  // Mouse only: a keyboard-selectable label would add a tab stop per card.
  state_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  scaleFont(state_, 0.9);
  root->addWidget(state_);

  arguments_.view =
      monospaceView(QStringLiteral("toolCallArguments"), tr("Tool call arguments"), this);
  root->addWidget(arguments_.view);
  arguments_.toggle = foldToggle(QStringLiteral("toolArgumentsFoldButton"), this);
  connect(arguments_.toggle, &QToolButton::clicked, this, &ToolCallCard::toggleArguments);
  root->addWidget(arguments_.toggle, 0, Qt::AlignLeft);

  decisions_ = new QWidget(this);
  auto* row = new QHBoxLayout(decisions_);
  row->setContentsMargins(0, 4, 0, 0);
  allowOnce_ = addDecisionButton(
      QStringLiteral("allowOnceButton"), tr("Allow once"), tr("Allow this call once"),
      tr("Run this call; the next call of this tool asks again"), ToolDecision::AllowOnce);
  alwaysAllow_ = addDecisionButton(
      QStringLiteral("alwaysAllowButton"), tr("Always allow in this chat"),
      tr("Always allow this tool in this chat"),
      tr("Run this call, and later calls of this tool in this chat without asking"),
      ToolDecision::AlwaysAllow);
  deny_ = addDecisionButton(QStringLiteral("denyButton"), tr("Deny"), tr("Deny this call"),
                            tr("Do not run this call; the model is told you declined"),
                            ToolDecision::Deny);
  row->addWidget(allowOnce_);
  row->addWidget(alwaysAllow_);
  row->addWidget(deny_);
  row->addStretch(1);
  root->addWidget(decisions_);

  resultCaption_ = new QLabel(tr("Result"), this);
  resultCaption_->setObjectName(QStringLiteral("toolCallResultCaption"));
  scaleFont(resultCaption_, 0.88);
  useMutedText(resultCaption_);
  root->addWidget(resultCaption_);
  result_.view = monospaceView(QStringLiteral("toolCallResult"), tr("Tool call result"), this);
  root->addWidget(result_.view);
  result_.toggle = foldToggle(QStringLiteral("toolResultFoldButton"), this);
  connect(result_.toggle, &QToolButton::clicked, this, &ToolCallCard::toggleResult);
  root->addWidget(result_.toggle, 0, Qt::AlignLeft);
}

QPushButton* ToolCallCard::addDecisionButton(const QString& name, const QString& text,
                                             const QString& accessible, const QString& tip,
                                             ToolDecision decision) {
  auto* button = new QPushButton(text, decisions_);
  button->setObjectName(name);
  button->setAccessibleName(accessible);
  button->setToolTip(tip);
  // Enter elsewhere in the window must never answer a call.
  button->setAutoDefault(false);
  button->setCursor(Qt::PointingHandCursor);
  connect(button, &QPushButton::clicked, this, [this, decision] { decide(decision); });
  return button;
}

void ToolCallCard::decide(ToolDecision decision) {
  if (call_.state != State::AwaitingApproval || answered_) return;
  answered_ = true;
  updateChrome();
  emit decided(call_.id, decision);
}

void ToolCallCard::setCall(const ToolCallView& call) {
  if (call.state != call_.state) answered_ = false;
  const bool argumentsChanged = call.arguments != call_.arguments;
  const bool resultChanged = call.result != call_.result;
  call_ = call;
  if (argumentsChanged) setFoldedText(arguments_, prettyToolArguments(call_.arguments));
  if (resultChanged) setFoldedText(result_, call_.result);
  updateChrome();
}

void ToolCallCard::toggleArguments() {
  if (!arguments_.foldable) return;
  arguments_.expanded = !arguments_.expanded;
  renderFoldedText(arguments_);
}

void ToolCallCard::toggleResult() {
  if (!result_.foldable) return;
  result_.expanded = !result_.expanded;
  renderFoldedText(result_);
}

void ToolCallCard::setFoldedText(FoldedText& part, const QString& text) {
  part.text = text;
  part.foldable = foldedText(text, part.limits).has_value();
  renderFoldedText(part);
}

void ToolCallCard::renderFoldedText(FoldedText& part) {
  const QString shown =
      part.isFolded() ? foldedText(part.text, part.limits).value_or(part.text) : part.text;
  if (part.view->toPlainText() != shown) part.view->setPlainText(shown);
  const bool isResult = &part == &result_;
  part.toggle->setVisible(part.foldable);
  if (part.isFolded()) {
    const qsizetype lines = part.text.count(u'\n') + 1;
    part.toggle->setText(lines > 1 ? tr("Show all %1 lines").arg(QLocale().toString(lines))
                                   : tr("Show all"));
    part.toggle->setAccessibleName(isResult ? tr("Show all of the result")
                                            : tr("Show all of the arguments"));
  } else {
    part.toggle->setText(tr("Show less"));
    part.toggle->setAccessibleName(isResult ? tr("Fold the result") : tr("Fold the arguments"));
  }
}

void ToolCallCard::updateChrome() {
  setProperty("callId", call_.id);
  setTint(tintFor(call_.state));
  const QString title = toolCallTitle(call_);
  title_->setText(title);
  const QString stateText = toolCallStateText(call_);
  state_->setText(stateText);
  useErrorText(state_, isToolCallFailure(call_.state));
  setAccessibleName(tr("Tool call %1").arg(title));
  setAccessibleDescription(stateText);

  const bool awaiting = call_.state == State::AwaitingApproval;
  decisions_->setVisible(awaiting);
  for (QPushButton* button : {allowOnce_, alwaysAllow_, deny_})
    button->setEnabled(awaiting && !answered_);
  stop_->setVisible(call_.state == State::Running);
  stop_->setAccessibleName(tr("Stop %1").arg(title));

  // A denied call never ran, and one waiting or running has no answer yet.
  const bool showResult = !result_.text.isEmpty() && call_.state != State::AwaitingApproval &&
                          call_.state != State::Running && call_.state != State::Denied;
  resultCaption_->setVisible(showResult);
  result_.view->setVisible(showResult);
  result_.toggle->setVisible(showResult && result_.foldable);
}

}  // namespace quire::ui
