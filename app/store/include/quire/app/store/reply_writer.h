#pragma once

// Streams an assistant reply into the store. Deltas are buffered and the whole
// reply is written (one transaction) at most `interval_ms` after the oldest
// uncommitted delta, and on finish: killing the process mid-reply loses at
// most the last interval of that one reply.

#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "quire/app/store/chat_store.h"

namespace quire::store {

class ReplyWriter : public QObject {
  Q_OBJECT

 public:
  // Milliseconds from any fixed origin, never decreasing.
  using Clock = std::function<qint64()>;

  struct Options {
    // The longest time appended text may stay uncommitted.
    int interval_ms = 1000;
    // Decides when append() commits. Default: std::chrono::steady_clock.
    Clock clock;
    // A timer commits text still pending when the stream stalls. Tests that
    // drive the clock by hand switch it off to stay deterministic.
    bool timer = true;
  };

  // `message` comes from ChatStore::begin_reply() or replace_last_reply().
  ReplyWriter(ChatStore& store, MessageId message, Options options, QObject* parent = nullptr);
  ReplyWriter(ChatStore& store, MessageId message) : ReplyWriter(store, message, Options{}) {}
  // Commits what is pending. A reply never finished keeps kStopInterrupted.
  ~ReplyWriter() override;

  MessageId message() const { return message_; }
  const QString& text() const { return text_; }
  const std::vector<std::int32_t>& tokens() const { return tokens_; }
  bool is_finished() const { return finished_; }
  bool has_pending() const { return pending_; }
  int commit_count() const { return commits_; }
  QString error_string() const { return error_; }

  // Adds generated text and its token ids; commits when the interval has passed.
  void append(const QString& delta, std::span<const std::int32_t> tokens = {});
  // Replaces the token ids, e.g. with the rendered turn (template tokens included).
  void set_tokens(std::vector<std::int32_t> tokens);
  // Commits now if anything is pending.
  bool flush();
  // Commits the reply with its statistics; later appends are ignored.
  bool finish(const GenerationStats& stats);

 signals:
  // After each commit, with the length of the text now stored.
  void committed(int text_length);
  // A commit failed (the store says why). The writer retries at the next
  // interval unless the message is gone.
  void failed(const QString& error);

 private:
  bool write(const std::optional<GenerationStats>& stats);
  qint64 now() const { return clock_(); }

  QPointer<ChatStore> store_;
  MessageId message_;
  int interval_ms_;
  Clock clock_;
  QTimer timer_;
  bool use_timer_;
  QString text_;
  std::vector<std::int32_t> tokens_;
  qint64 last_commit_ = 0;
  int commits_ = 0;
  bool pending_ = false;
  bool finished_ = false;
  bool gone_ = false;  // the message no longer exists; nothing more to write
  QString error_;
};

}  // namespace quire::store
