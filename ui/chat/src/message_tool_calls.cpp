// The tool calls of a reply, one ToolCallCard each under its text: matched
// to the message's calls by id, so that a change of one call touches one card.

#include <QVBoxLayout>
#include <algorithm>

#include "message_widget.h"
#include "tool_call_card.h"

namespace quire::ui {

void MessageWidget::updateToolCall(const ToolCallView& call) {
  QList<ToolCallView>& calls = message_.toolCalls;
  const auto it = std::find_if(calls.begin(), calls.end(),
                               [&call](const ToolCallView& known) { return known.id == call.id; });
  if (it == calls.end())
    calls.push_back(call);
  else
    *it = call;
  syncToolCalls();
}

void MessageWidget::syncToolCalls() {
  // Only replies call tools; a user or system message never shows a card.
  const QList<ToolCallView> none;
  const QList<ToolCallView>& calls =
      message_.role == ChatMessageView::Role::Assistant ? message_.toolCalls : none;
  std::size_t i = 0;
  for (; i < static_cast<std::size_t>(calls.size()); ++i) {
    const ToolCallView& call = calls[static_cast<qsizetype>(i)];
    if (i < toolCards_.size() && toolCards_[i]->call().id != call.id) {
      // The list changed shape (another version of the reply): rebuild the tail.
      discardToolCards(i);
    }
    if (i == toolCards_.size()) {
      ToolCallCard* card = buildToolCard(call);
      toolCallsLayout_->addWidget(card);
      toolCards_.push_back(card);
    } else if (!(toolCards_[i]->call() == call)) {
      toolCards_[i]->setCall(call);
    }
  }
  discardToolCards(i);
}

void MessageWidget::discardToolCards(std::size_t from) {
  // Deleted later: the app may answer a card's own signal (a decision) with
  // a new version of the reply, which removes that card.
  for (std::size_t j = from; j < toolCards_.size(); ++j) {
    ToolCallCard* card = toolCards_[j];
    toolCallsLayout_->removeWidget(card);
    card->hide();
    card->setParent(nullptr);
    card->deleteLater();
  }
  toolCards_.resize(from);
}

ToolCallCard* MessageWidget::buildToolCard(const ToolCallView& call) {
  auto* card = new ToolCallCard(call, bubble_);
  connect(card, &ToolCallCard::decided, this, [this](const QString& callId, ToolDecision decision) {
    emit toolCallDecided(message_.id, callId, decision);
  });
  connect(card, &ToolCallCard::cancelRequested, this,
          [this](const QString& callId) { emit toolCallCancelRequested(message_.id, callId); });
  return card;
}

}  // namespace quire::ui
