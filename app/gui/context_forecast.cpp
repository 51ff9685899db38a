#include "context_forecast.h"

#include <QCoreApplication>
#include <QLocale>
#include <algorithm>

#include "quire/engine/generator/context_policy.h"
#include "quire/engine/generator/conversation.h"

namespace quire::gui {
namespace {

// ConversationBook's allowance for a message's turn markers: the size of the
// shortest next message.
constexpr qint64 kShortMessageTokens = 16;

QString forecast_tr(const char* text) {
  return QCoreApplication::translate("quire::gui::ContextForecast", text);
}

QString token_text(qint64 tokens) {
  return QLocale().toString(tokens);
}

// Turn `index` of the engine's conversation, numbered as the chat shows it.
int shown_number(const ChatContextState& state, int index, const QList<qint64>& path_user_ids) {
  if (index < state.turns.user_message_ids.size()) {
    const qsizetype at = path_user_ids.indexOf(state.turns.user_message_ids.at(index));
    if (at >= 0) return static_cast<int>(at) + 1;
  }
  return index + 1;
}

}  // namespace

ui::StatusLine::ContextDrop forecast_drop(const ChatContextState& state, const QString& policy,
                                          const QList<qint64>& path_user_ids) {
  const std::optional<engine::ContextPolicy> chosen =
      engine::parse_context_policy(policy.toStdString());
  engine::ContextShape shape;
  shape.preamble = state.turns.preamble;
  for (const qint64 tokens : state.turns.tokens)
    shape.turns.push_back(tokens);
  shape.context = state.limit;
  shape.reserve = state.reserve;
  shape.incoming = kShortMessageTokens;
  if (!chosen || shape.turns.empty() || shape.room() <= 0) return {};

  engine::ContextPlan plan;
  try {
    plan = engine::plan_context(*chosen, shape);
  } catch (const engine::ContextOverflow& overflow) {
    return {0, 0,
            forecast_tr("Sending now fails: %1.").arg(QString::fromStdString(overflow.what()))};
  }
  switch (plan.outcome) {
    case engine::ContextPlan::Outcome::Fits:
      return {};
    case engine::ContextPlan::Outcome::Stopped:
      return {0, 0,
              forecast_tr(
                  "Sending now stops: the chat is %1 tokens over the context, and its policy is "
                  "to stop. Start a new chat, allow a longer context, or choose another policy in "
                  "Chat settings.")
                  .arg(token_text(plan.over_by))};
    case engine::ContextPlan::Outcome::Dropped:
      break;
  }
  qint64 from = shape.preamble;
  for (int t = 0; t < plan.first_dropped; ++t)
    from += shape.turns[static_cast<std::size_t>(t)];
  const int first = shown_number(state, plan.first_dropped, path_user_ids);
  const int last = shown_number(state, plan.first_dropped + plan.dropped_turns - 1, path_user_ids);
  const QString turns = first == last ? forecast_tr("turn %1").arg(first)
                                      : forecast_tr("turns %1\u2013%2").arg(first).arg(last);
  return {from, from + plan.dropped_tokens(),
          forecast_tr("Sending now drops %1 (%2 tokens); the model then reads %3 tokens again.")
              .arg(turns, token_text(plan.dropped_tokens()), token_text(plan.recomputed_tokens))};
}

QString dropped_note(const ReplyOutcome& outcome) {
  const int turns = outcome.trimmed_turns;
  // Spelled out for one and many: without a translation loaded, Qt's %n
  // plural would print "turn(s)".
  QString note;
  if (outcome.trimmed_first_turn > 0) {
    note = turns == 1 ? forecast_tr(
                            "1 turn after the first of this chat no longer fits the context; the "
                            "model did not see it.")
                      : forecast_tr(
                            "%1 turns after the first of this chat no longer fit the context; the "
                            "model did not see them.")
                            .arg(turns);
  } else {
    note = turns == 1 ? forecast_tr(
                            "1 turn at the start of this chat no longer fits the context; the "
                            "model did not see it.")
                      : forecast_tr(
                            "%1 turns at the start of this chat no longer fit the context; the "
                            "model did not see them.")
                            .arg(turns);
  }
  return note + u' ' +
         forecast_tr("%1 tokens of the prompt were read again.")
             .arg(token_text(outcome.recomputed_tokens));
}

}  // namespace quire::gui
