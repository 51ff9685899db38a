#pragma once

// Runs the conversation of the chat on show and the replies of every chat:
// the user's message is committed to the store before the engine hears of it,
// each reply streams into its ReplyWriter (committed at least every second)
// and, when the chat is on show, into the chat view. Several chats may
// generate at once; switching chats never stops a reply.
//
// A chat is a tree of messages and the view shows its current path: edit and
// resend, and regenerate, add a version beside the old one instead of
// replacing it; the switcher on a message selects another version; "Branch"
// copies the path into a new chat; a deleted version can be brought back.
// Whatever branch a turn continues, the engine gets that path's token ids, so
// the history the branches share comes from the cache.

#include <QObject>
#include <QString>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "context_forecast.h"
#include "engine_messages.h"
#include "quire/app/store/chat_store.h"
#include "quire/app/store/reply_writer.h"
#include "quire/ui/chat_view_data.h"

namespace quire::tools {
class ToolServers;
}
namespace quire::ui {
class ChatView;
class InputBox;
class StatusLine;
}  // namespace quire::ui

namespace quire::gui {

class EngineHost;
class ChatToolCalls;
class PendingImages;

class ChatController : public QObject {
  Q_OBJECT

 public:
  // Longest title made from a first message.
  static constexpr int kTitleLength = 48;

  ChatController(store::ChatStore& store, EngineHost& host, ui::ChatView& view, ui::InputBox& input,
                 ui::StatusLine& status, QObject* parent = nullptr);
  ~ChatController() override;

  // Sampling, system prompt, prompt format and context for the next replies.
  void setEngineSettings(const ui::EngineSettings& settings);
  // How long a reply may stay uncommitted (ReplyWriter's interval).
  void setCommitInterval(int milliseconds) { commit_interval_ms_ = milliseconds; }
  // The longest reply, in tokens (the context may allow fewer).
  void setMaxNewTokens(int tokens) { max_new_tokens_ = tokens; }
  // The tool servers whose tools chats offer the model (null: none), and
  // whether a chat that says nothing itself uses them.
  void setToolServers(tools::ToolServers* servers);
  // The images attached to the message being written (sent with it).
  PendingImages& pendingImages() { return *pending_images_; }
  void setToolsByDefault(bool on);
  // Changes each request before it goes to the engine (tests: a bias that
  // makes a random model begin a tool call).
  void setRequestAdjuster(std::function<void(ReplyRequest&)> adjust) {
    adjust_request_ = std::move(adjust);
  }

  std::optional<store::ChatId> currentChat() const { return current_; }
  bool isGenerating(store::ChatId chat) const;
  int runningReplies() const { return static_cast<int>(replies_.size()); }

  // The title a chat gets from its first message: its first line, shortened.
  static QString titleFor(const QString& text);
  // A stored message as the view shows it.
  static ui::ChatMessageView viewOf(const store::Message& message);

 public slots:
  // Shows a chat (nullopt: a new, empty one that is created on first send).
  void openChat(std::optional<quire::store::ChatId> chat);
  // Commits `text` as the next user message of the chat on show (creating the
  // chat if needed) and asks the engine for the reply.
  void send(const QString& text);
  // Stops the reply of the chat on show.
  void stop();
  // Generates a reply of the chat on show again, as a new version beside it.
  void regenerate(qint64 message_id);
  // Asks again for the reply `failed_reply_id` of the chat on show, which
  // failed before anything of it was kept (it is not in the store): a new
  // reply to the unanswered message at the end of the path, with the
  // settings as they are now.
  void retry(qint64 failed_reply_id);
  // Sends `text` as a new version of a user message (the original and what
  // followed it stay, one switch away), then asks for a reply.
  void editAndResend(qint64 message_id, const QString& text);
  // Shows the version `step` places (-1, +1) from message `message_id`
  // among its siblings, with the branch below it selected last. Refused
  // while the chat on show generates.
  void switchBranch(qint64 message_id, int step);
  // A new chat holding the path down to message `message_id`, shown and
  // selected (chatCreated).
  void branchFromHere(qint64 message_id);
  // Removes message `message_id` and everything below it; the view offers
  // to undo it. Refused while the chat on show generates.
  void deleteBranch(qint64 message_id);
  // Brings back a branch deleteBranch() removed.
  void undoDeleteBranch(qint64 message_id);
  // The chat is being deleted: its reply stops and the engine forgets it.
  void chatRemoved(quire::store::ChatId chat);
  // The model changed: conversations are rendered again with the new one.
  void modelChanged();
  // The full view of image `index` of message `message_id`
  // (chat_controller_images.cpp).
  void openImage(qint64 message_id, int index);

 signals:
  // A chat was created by send() or branchFromHere(); the window selects it.
  void chatCreated(quire::store::ChatId chat);
  void replyStarted(quire::store::ChatId chat);
  void replyFinished(quire::store::ChatId chat, const quire::store::GenerationStats& stats);
  // Something went wrong that is not a reply's own error (the store failed).
  void problem(const QString& text);

 private:
  struct Running {
    store::ChatId chat{};
    std::unique_ptr<store::ReplyWriter> writer;
  };
  // What the gauge forecasts for the next message of the chat on show, and
  // which message the view marks as where the model's context resumes.
  // `used`: the context of the reply version on show, when it is not the
  // chat's latest.
  void showContextForecast(store::ChatId chat, std::optional<std::int64_t> used = std::nullopt);
  // Marks the message where the model's context resumes after dropped turns.
  void markContextResume(store::ChatId chat);
  // The chat's context policy: its own, else the global one.
  QString contextPolicyOf(store::ChatId chat) const;

  void onReplyText(qint64 reply_id, const QString& delta);
  // Every call of the chat's last reply has its result: the model answers.
  void goOnAfterTools(store::ChatId chat);
  // Calls of the chat that wait or run end unrun, before the path changes
  // (a new message, another version, a deleted one).
  void settleToolCalls(store::ChatId chat);
  void onReplyFinished(const ReplyOutcome& outcome);
  // Asks the engine for the reply `reply` of `chat`, whose history is in the store.
  void startReply(store::ChatId chat, store::MessageId reply);
  ReplyRequest requestFor(store::ChatId chat, store::MessageId reply) const;
  void showLastReplyOf(store::ChatId chat);
  // Renders the chat's current path into the view.
  void showPath(store::ChatId chat);
  // The view of a stored message with its place among its siblings.
  ui::ChatMessageView pathViewOf(const store::Message& message) const;
  void refreshInput();
  std::optional<qint64> runningReplyOf(store::ChatId chat) const;
  void report(const QString& what);
  // The note on a reply to a message with images the model cannot see;
  // empty when there is none (chat_controller_images.cpp).
  QString imagesNoteOf(const store::Message& reply) const;

  store::ChatStore& store_;
  EngineHost& host_;
  ui::ChatView& view_;
  ui::InputBox& input_;
  ui::StatusLine& status_;
  ui::EngineSettings settings_;
  int commit_interval_ms_ = 1000;
  int max_new_tokens_ = 1024;
  std::optional<store::ChatId> current_;
  std::map<qint64, Running> replies_;            // by the reply's message id
  std::map<qint64, ChatContextState> contexts_;  // by chat id
  // What each reply finished in this session left in its context, by the
  // reply's id: the footer shows the count of the version on show.
  std::map<qint64, std::int64_t> reply_contexts_;
  std::unique_ptr<ChatToolCalls> tool_calls_;
  std::function<void(ReplyRequest&)> adjust_request_;
  std::unique_ptr<PendingImages> pending_images_;
};

}  // namespace quire::gui
