#include "chat_controller.h"

#include <QJsonObject>

#include "chat_overrides.h"
#include "chat_tool_calls.h"
#include "engine_host.h"
#include "image_support.h"
#include "pending_images.h"
#include "quire/app/attachments/image_views.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "quire/ui/status_line.h"
#include "reply_stats.h"

namespace quire::gui {
namespace {

constexpr char kRenderKey[] = "render_key";
// Thumbnails in the chat are made at this size (the bubble shows them smaller
// where it must), so that a high-density screen still draws them sharply.
constexpr int kThumbnailSide = 240;

ui::ChatMessageView::Role view_role(store::Role role) {
  switch (role) {
    case store::Role::System:
      return ui::ChatMessageView::Role::System;
    case store::Role::User:
      return ui::ChatMessageView::Role::User;
    case store::Role::Assistant:
      return ui::ChatMessageView::Role::Assistant;
    case store::Role::Tool:
      break;  // shown inside the reply whose call it answers, never alone
  }
  return ui::ChatMessageView::Role::User;
}

ui::ChatMessageView streaming_reply(store::MessageId id, const QString& text = {}) {
  ui::ChatMessageView view;
  view.id = store::raw(id);
  view.role = ui::ChatMessageView::Role::Assistant;
  view.text = text;
  view.streaming = true;
  return view;
}

}  // namespace

ChatController::ChatController(store::ChatStore& store, EngineHost& host, ui::ChatView& view,
                               ui::InputBox& input, ui::StatusLine& status, QObject* parent)
    : QObject(parent), store_(store), host_(host), view_(view), input_(input), status_(status) {
  connect(&host_, &EngineHost::replyText, this, &ChatController::onReplyText);
  connect(&host_, &EngineHost::replyFinished, this, &ChatController::onReplyFinished);
  // A chat's own context policy may change in its settings: the forecast follows.
  connect(&store_, &store::ChatStore::chat_changed, this, [this](store::ChatId chat) {
    if (current_ == chat) showContextForecast(chat);
  });
  pending_images_ = std::make_unique<PendingImages>(input_, host_);
  connect(&view_, &ui::ChatView::imageOpenRequested, this, &ChatController::openImage);
  connect(&input_, &ui::InputBox::sendRequested, this, &ChatController::send);
  connect(&input_, &ui::InputBox::stopRequested, this, &ChatController::stop);
  connect(&view_, &ui::ChatView::regenerateRequested, this, &ChatController::regenerate);
  connect(&view_, &ui::ChatView::retryRequested, this, &ChatController::retry);
  connect(&view_, &ui::ChatView::editRequested, this, &ChatController::editAndResend);
  connect(&view_, &ui::ChatView::branchSwitchRequested, this, &ChatController::switchBranch);
  connect(&view_, &ui::ChatView::branchFromHereRequested, this, &ChatController::branchFromHere);
  connect(&view_, &ui::ChatView::deleteBranchRequested, this, &ChatController::deleteBranch);
  connect(&view_, &ui::ChatView::undoDeleteBranchRequested, this,
          &ChatController::undoDeleteBranch);
  tool_calls_ = std::make_unique<ChatToolCalls>(store_, view_);
  connect(tool_calls_.get(), &ChatToolCalls::resultsReady, this, &ChatController::goOnAfterTools);
  connect(tool_calls_.get(), &ChatToolCalls::problem, this, &ChatController::problem);
}

void ChatController::setToolServers(tools::ToolServers* servers) {
  tool_calls_->setServers(servers);
}

void ChatController::setToolsByDefault(bool on) {
  tool_calls_->setToolsByDefault(on);
}

void ChatController::settleToolCalls(store::ChatId chat) {
  if (!tool_calls_->busy(chat)) return;
  tool_calls_->settle(chat);
  if (current_ == chat) showPath(chat);
}

void ChatController::goOnAfterTools(store::ChatId chat) {
  if (isGenerating(chat)) return;
  const QString model = host_.model() ? host_.model()->name : QString();
  const std::optional<store::MessageId> reply = store_.begin_reply(chat, model);
  if (!reply) return report(tr("The reply after the tools could not be started"));
  if (current_ == chat) view_.appendMessage(streaming_reply(*reply));
  startReply(chat, *reply);
}

// Replies still running end with their writers, which commit what they have;
// the stored reply keeps its "interrupted" mark.
ChatController::~ChatController() = default;

QString ChatController::titleFor(const QString& text) {
  QString line = text.trimmed().section(u'\n', 0, 0).simplified();
  if (line.isEmpty()) return tr("New chat");
  if (line.size() > kTitleLength) line = line.left(kTitleLength - 1).trimmed() + QChar(0x2026);
  return line;
}

ui::ChatMessageView ChatController::viewOf(const store::Message& message) {
  ui::ChatMessageView view;
  view.id = store::raw(message.id);
  view.role = view_role(message.role);
  view.text = message.text;
  for (const store::ChatImage& image : message.images) {
    view.images << attachments::make_thumbnail(image.bytes, kThumbnailSide);
  }
  if (message.role == store::Role::Assistant && message.stats) {
    const store::GenerationStats& stats = *message.stats;
    if (stats.stop_reason == QLatin1String(store::kStopInterrupted)) {
      view.error =
          tr("This reply was cut short when Quire closed. Regenerate it to get a whole one.");
    } else if (stats.stop_reason == QLatin1String("error")) {
      view.error = tr("This reply ended with an error.");
    } else {
      view.stats = stats_text(stats);
    }
  }
  return view;
}

bool ChatController::isGenerating(store::ChatId chat) const {
  return runningReplyOf(chat).has_value();
}

std::optional<qint64> ChatController::runningReplyOf(store::ChatId chat) const {
  for (const auto& [reply, running] : replies_) {
    if (running.chat == chat) return reply;
  }
  return std::nullopt;
}

void ChatController::report(const QString& what) {
  emit problem(what + QStringLiteral(": ") + store_.error_string());
}

void ChatController::openChat(std::optional<store::ChatId> chat) {
  // The undo of a deleted version belongs to the chat it was deleted from.
  if (chat != current_) view_.dismissBranchUndo();
  current_ = chat;
  status_.clearLastReply();
  status_.setContextFill(0, 0);
  if (!chat) {
    view_.clear();
    refreshInput();
    return;
  }
  showPath(*chat);
  showLastReplyOf(*chat);
  refreshInput();
  input_.focusInput();
}

ui::ChatMessageView ChatController::pathViewOf(const store::Message& message) const {
  ui::ChatMessageView view = viewOf(message);
  // A reply still streaming shows what has arrived, not what was committed.
  if (auto found = replies_.find(view.id); found != replies_.end()) {
    view = streaming_reply(message.id, found->second.writer->text());
  }
  if (!message.tool_calls.isEmpty()) {
    view.toolCalls = tool_calls_->viewsOf(message, store_.current_path(message.chat));
  }
  if (const std::optional<store::Siblings> siblings = store_.siblings(message.id)) {
    view.siblingIndex = siblings->index;
    view.siblingCount = static_cast<int>(siblings->ids.size());
  }
  if (view.notice.isEmpty()) view.notice = imagesNoteOf(message);
  return view;
}

void ChatController::showPath(store::ChatId chat) {
  const auto context = contexts_.find(store::raw(chat));
  const qint64 resumes_at = context == contexts_.end() ? 0 : context->second.turns.resumes_at;
  QList<ui::ChatMessageView> views;
  for (const store::Message& message : store_.current_path(chat)) {
    // A result shows in the card of the call it answers.
    if (message.role == store::Role::Tool) continue;
    views.append(pathViewOf(message));
    views.last().contextResumesHere = resumes_at != 0 && store::raw(message.id) == resumes_at;
  }
  view_.setMessages(views);
}

void ChatController::showLastReplyOf(store::ChatId chat) {
  // The path on show, not the newest message of the chat: after switching
  // versions the footer speaks of the version the user reads.
  const QList<store::Message> path = store_.current_path(chat);
  std::optional<std::int64_t> used;
  for (auto it = path.crbegin(); it != path.crend(); ++it) {
    if (it->role != store::Role::Assistant || !it->stats) continue;
    const store::GenerationStats& stats = *it->stats;
    if (stats.generated_tokens <= 0) continue;
    status_.setTokensPerSecond(stats.tokens_per_second);
    status_.setTimeToFirstToken(stats.time_to_first_token_ms / 1000.0);
    status_.setReusedTokens(stats.cached_tokens, stats.prompt_tokens);
    const auto known = reply_contexts_.find(store::raw(it->id));
    used = known != reply_contexts_.end()
               ? known->second
               : std::int64_t{stats.prompt_tokens} + stats.generated_tokens;
    break;
  }
  showContextForecast(chat, used);
}

void ChatController::markContextResume(store::ChatId chat) {
  const auto context = contexts_.find(store::raw(chat));
  const qint64 resumes_at = context == contexts_.end() ? 0 : context->second.turns.resumes_at;
  // Only the messages whose mark changes are shown again: the divider moves
  // to where the model's context now resumes.
  for (const store::Message& message : store_.current_path(chat)) {
    const std::optional<ui::ChatMessageView> shown = view_.message(store::raw(message.id));
    if (!shown) continue;
    const bool mark = resumes_at != 0 && store::raw(message.id) == resumes_at;
    if (shown->contextResumesHere == mark) continue;
    ui::ChatMessageView changed = *shown;
    changed.contextResumesHere = mark;
    view_.updateMessage(changed);
  }
}

void ChatController::setEngineSettings(const ui::EngineSettings& settings) {
  settings_ = settings;
  // The global context policy may have changed.
  if (current_) showContextForecast(*current_);
}

QString ChatController::contextPolicyOf(store::ChatId chat) const {
  ReplyRequest request;
  request.context_overflow = settings_.context_overflow;
  if (const std::optional<store::ChatSettings> own = store_.chat_settings(chat))
    apply_chat_settings(*own, request);
  return request.context_overflow;
}

void ChatController::showContextForecast(store::ChatId chat, std::optional<std::int64_t> used) {
  const auto found = contexts_.find(store::raw(chat));
  if (found == contexts_.end() || current_ != chat) return;
  const ChatContextState& state = found->second;
  status_.setContextFill(used.value_or(state.used), state.limit);
  QList<qint64> user_ids;
  for (const store::Message& message : store_.current_path(chat)) {
    if (message.role == store::Role::User) user_ids.append(store::raw(message.id));
  }
  status_.setContextDrop(forecast_drop(state, contextPolicyOf(chat), user_ids));
}

void ChatController::refreshInput() {
  const bool generating = current_ && isGenerating(*current_);
  input_.setGenerating(generating);
  view_.setBranchSwitchingEnabled(!generating);
}

void ChatController::send(const QString& text) {
  const QList<store::ChatImage> images = pending_images_->images();
  if (text.trimmed().isEmpty() && images.isEmpty()) return;
  if (current_ && isGenerating(*current_)) return;
  const QString model = host_.model() ? host_.model()->name : QString();
  bool created = false;
  if (!current_) {
    const std::optional<store::ChatId> chat = store_.create_chat(titleFor(text));
    if (!chat) return report(tr("The chat could not be created"));
    current_ = chat;
    created = true;
    view_.clear();
  }
  const store::ChatId chat = *current_;
  // Calls that still wait end unrun: the conversation goes on from here.
  if (!created) settleToolCalls(chat);
  // Committed before the engine hears of it: a crash from here on keeps it.
  const std::optional<store::MessageId> question =
      store_.append_message(chat, store::Role::User, text, {}, images);
  if (!question) return report(tr("The message could not be saved"));
  pending_images_->take();
  const std::optional<store::MessageId> reply = store_.begin_reply(chat, model);
  if (!reply) return report(tr("The reply could not be started"));
  if (created) emit chatCreated(chat);

  ui::ChatMessageView asked;
  asked.id = store::raw(*question);
  asked.role = ui::ChatMessageView::Role::User;
  asked.text = text;
  if (const std::optional<store::Message> stored = store_.message(*question)) {
    asked.images = viewOf(*stored).images;
  }
  view_.appendMessage(asked);
  ui::ChatMessageView replying = streaming_reply(*reply);
  if (!images.isEmpty() && !model_sees_images(host_.model())) {
    replying.notice = reply_without_images_note(model);
  }
  view_.appendMessage(replying);
  startReply(chat, *reply);
}

void ChatController::stop() {
  if (!current_) return;
  if (const std::optional<qint64> reply = runningReplyOf(*current_)) host_.stopReply(*reply);
}

void ChatController::regenerate(qint64 message_id) {
  if (!current_ || isGenerating(*current_)) return;
  const std::optional<store::Message> last = store_.message(store::MessageId{message_id});
  if (!last || last->chat != *current_ || last->role != store::Role::Assistant) return;
  if (!last->parent) return;
  settleToolCalls(*current_);
  const QString model = host_.model() ? host_.model()->name : QString();
  // The old reply stays, the new one's sibling: the switcher shows both.
  const std::optional<store::MessageId> reply = store_.begin_reply_after(*last->parent, model);
  if (!reply) return report(tr("The reply could not be started"));
  const store::ChatId chat = *current_;
  startReply(chat, *reply);
  showPath(chat);
}

void ChatController::retry(qint64 failed_reply_id) {
  if (!current_ || isGenerating(*current_)) return;
  // The failed reply was never kept; what it answered is the path's end.
  if (store_.message(store::MessageId{failed_reply_id})) return;
  const QList<store::Message> path = store_.current_path(*current_);
  if (path.isEmpty() || path.constLast().role != store::Role::User) return;
  const store::ChatId chat = *current_;
  const QString model = host_.model() ? host_.model()->name : QString();
  const std::optional<store::MessageId> reply = store_.begin_reply(chat, model);
  if (!reply) return report(tr("The reply could not be started"));
  startReply(chat, *reply);
  showPath(chat);
}

void ChatController::editAndResend(qint64 message_id, const QString& text) {
  if (!current_ || isGenerating(*current_) || text.trimmed().isEmpty()) return;
  const std::optional<store::Message> original = store_.message(store::MessageId{message_id});
  if (!original || original->chat != *current_ || original->role != store::Role::User) return;
  const store::ChatId chat = *current_;
  settleToolCalls(chat);
  // The edit is a new version beside the original, which keeps its replies.
  if (!store_.add_message(chat, original->parent, store::Role::User, text, {}, original->images)) {
    return report(tr("The edited message could not be saved"));
  }
  const QString model = host_.model() ? host_.model()->name : QString();
  const std::optional<store::MessageId> reply = store_.begin_reply(chat, model);
  if (!reply) return report(tr("The reply could not be started"));
  startReply(chat, *reply);
  showPath(chat);
}

ReplyRequest ChatController::requestFor(store::ChatId chat, store::MessageId reply) const {
  ReplyRequest request;
  request.reply_id = store::raw(reply);
  request.chat_id = store::raw(chat);
  if (const std::optional<store::ChatSummary> summary = store_.chat(chat)) {
    request.chat_title = summary->title;
    request.render_key = summary->model.settings.value(QLatin1String(kRenderKey)).toString();
  }
  for (const store::Message& message : store_.messages(chat)) {
    if (message.id == reply) break;
    if (message.role == store::Role::System) continue;
    // A question left unanswered (its reply failed, or was never started
    // before a crash) stays on show but is not part of the conversation, nor
    // is a turn whose tools were left without the reply after them: the
    // engine needs whole turns.
    if (message.role == store::Role::User) {
      while (!request.history.isEmpty() && (request.history.constLast().role == store::Role::Tool ||
                                            !request.history.constLast().tool_calls.isEmpty())) {
        request.history.removeLast();
      }
      if (!request.history.isEmpty() && request.history.constLast().role == store::Role::User)
        request.history.removeLast();
    }
    TurnMessage turn{
        store::raw(message.id), message.role, message.text, message.tokens, {}, {}, {}, {}};
    turn.tool_calls = message.tool_calls;
    // Images reach the model only where it sees them; else the text goes alone.
    if (model_sees_images(host_.model())) {
      for (const store::ChatImage& image : message.images)
        turn.images.append(image.bytes);
    }
    if (message.tool_result) {
      turn.tool_call_id = message.tool_result->call_id;
      turn.tool_name = message.tool_result->name;
    }
    request.history.append(turn);
  }
  request.tools = tool_calls_->toolsFor(chat);
  request.sampling = settings_.sampling;
  request.drafts = settings_.drafts;
  request.system_prompt = settings_.system_prompt;
  request.prompt_format = settings_.prompt_format;
  request.max_context = settings_.max_context;
  request.max_new_tokens = max_new_tokens_;
  request.context_overflow = settings_.context_overflow;
  // What the chat sets itself replaces the global values, for every reply.
  if (const std::optional<store::ChatSettings> own = store_.chat_settings(chat))
    apply_chat_settings(*own, request);
  return request;
}

void ChatController::startReply(store::ChatId chat, store::MessageId reply) {
  store::ReplyWriter::Options options;
  options.interval_ms = commit_interval_ms_;
  Running running{chat, std::make_unique<store::ReplyWriter>(store_, reply, options)};
  connect(running.writer.get(), &store::ReplyWriter::failed, this, [this](const QString& error) {
    emit problem(tr("The reply is not being saved: ") + error);
  });
  replies_.emplace(store::raw(reply), std::move(running));
  if (current_ == chat) {
    status_.clearLastReply();
    refreshInput();
  }
  emit replyStarted(chat);
  ReplyRequest request = requestFor(chat, reply);
  if (adjust_request_) adjust_request_(request);
  host_.startReply(request);
}

void ChatController::onReplyText(qint64 reply_id, const QString& delta) {
  auto found = replies_.find(reply_id);
  if (found == replies_.end()) return;
  found->second.writer->append(delta);
  if (current_ == found->second.chat) view_.appendToMessage(reply_id, delta);
}

void ChatController::onReplyFinished(const ReplyOutcome& outcome) {
  auto found = replies_.find(outcome.reply_id);
  if (found == replies_.end()) return;
  const store::ChatId chat = found->second.chat;
  std::unique_ptr<store::ReplyWriter> writer = std::move(found->second.writer);
  replies_.erase(found);

  // Token ids worth keeping: the next turn restores them instead of
  // tokenizing the text again, so its prompt matches the cached pages.
  std::vector<std::int32_t> reply_tokens;
  for (const RenderedMessage& rendered : outcome.rendered) {
    if (rendered.id == outcome.reply_id) {
      reply_tokens = rendered.tokens;
    } else {
      store_.set_message_tokens(store::MessageId{rendered.id}, rendered.tokens);
    }
  }
  if (!outcome.render_key.isEmpty()) {
    store::ModelUse use;
    if (const std::optional<store::ChatSummary> summary = store_.chat(chat)) use = summary->model;
    if (host_.model()) use.model_dir = host_.model()->directory;
    use.settings.insert(QLatin1String(kRenderKey), outcome.render_key);
    store_.set_chat_model(chat, use);
  }

  const bool failed = !outcome.error.isEmpty();
  const bool empty = writer->text().isEmpty();
  if (failed && empty) {
    // Nothing to keep: the question stays, unanswered, and can be sent again.
    // Only this reply goes; other versions of it stay.
    writer.reset();
    store_.delete_branch(store::MessageId{outcome.reply_id});
  } else {
    writer->set_tokens(std::move(reply_tokens));
    writer->finish(outcome.stats);
  }
  // The calls wait for the user (or run, where the chat always allows them).
  if (!failed && !outcome.tool_calls.isEmpty()) {
    tool_calls_->callsMade(chat, store::MessageId{outcome.reply_id}, outcome.tool_calls);
  }

  contexts_[store::raw(chat)] = ChatContextState{outcome.context_used, outcome.context_limit,
                                                 outcome.context_reserve, outcome.context_turns};
  if (!(failed && empty)) reply_contexts_[outcome.reply_id] = outcome.context_used;
  if (current_ == chat) {
    ui::ChatMessageView view = streaming_reply(store::MessageId{outcome.reply_id});
    view.streaming = false;
    view.text = failed && empty ? QString() : outcome.text;
    if (const std::optional<store::Message> stored =
            store_.message(store::MessageId{outcome.reply_id})) {
      view = pathViewOf(*stored);
    }
    if (failed) {
      view.error = outcome.error;
      // The reply was never stored: there is nothing to generate again, and
      // the message itself or the settings have to change.
      view.canRegenerate = !empty;
      // Asking again can succeed once the settings change (a longer
      // context, a larger cache): Retry, besides editing the message.
      view.canRetry = empty;
    } else if (outcome.trimmed_turns > 0) {
      view.notice = dropped_note(outcome);
    }
    view_.updateMessage(view);
    if (!failed) {
      status_.setTokensPerSecond(outcome.stats.tokens_per_second);
      status_.setTimeToFirstToken(outcome.stats.time_to_first_token_ms / 1000.0);
      status_.setReusedTokens(outcome.stats.cached_tokens, outcome.stats.prompt_tokens);
    }
    if (outcome.context_limit > 0) {
      if (outcome.trimmed_turns > 0) markContextResume(chat);
      showContextForecast(chat);
    }
    refreshInput();
  }
  emit replyFinished(chat, outcome.stats);
}

void ChatController::chatRemoved(store::ChatId chat) {
  if (const std::optional<qint64> reply = runningReplyOf(chat)) host_.stopReply(*reply);
  host_.forgetChat(store::raw(chat));
  contexts_.erase(store::raw(chat));
  if (current_ == chat) openChat(std::nullopt);
}

void ChatController::modelChanged() {
  contexts_.clear();
  reply_contexts_.clear();
  if (current_) status_.setContextFill(0, 0);
}

}  // namespace quire::gui
