#include "quire/app/store/reply_writer.h"

#include <QtDebug>
#include <chrono>

namespace quire::store {
namespace {

qint64 steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ReplyWriter::ReplyWriter(ChatStore& store, MessageId message, Options options, QObject* parent)
    : QObject(parent),
      store_(&store),
      message_(message),
      interval_ms_(std::max(0, options.interval_ms)),
      clock_(options.clock ? std::move(options.clock) : Clock(steady_ms)),
      use_timer_(options.timer) {
  // begin_reply() committed the empty message just now.
  last_commit_ = now();
  timer_.setSingleShot(true);
  connect(&timer_, &QTimer::timeout, this, [this] { flush(); });
}

ReplyWriter::~ReplyWriter() {
  if (!finished_) flush();
}

void ReplyWriter::append(const QString& delta, std::span<const std::int32_t> tokens) {
  if (finished_) {
    qWarning("ReplyWriter: append after finish ignored (message %lld)", raw(message_));
    return;
  }
  text_ += delta;
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  pending_ = true;
  const qint64 waited = now() - last_commit_;
  if (waited >= interval_ms_) {
    flush();
  } else if (use_timer_ && !timer_.isActive()) {
    // Deadline of the oldest pending delta, should no further delta arrive.
    timer_.start(static_cast<int>(interval_ms_ - waited));
  }
}

void ReplyWriter::set_tokens(std::vector<std::int32_t> tokens) {
  tokens_ = std::move(tokens);
  pending_ = true;
}

bool ReplyWriter::flush() {
  if (!pending_) return true;
  return write(std::nullopt);
}

bool ReplyWriter::finish(const GenerationStats& stats) {
  if (finished_) return true;
  if (!write(stats)) return false;
  finished_ = true;
  return true;
}

bool ReplyWriter::write(const std::optional<GenerationStats>& stats) {
  timer_.stop();
  if (gone_) return false;
  // A failed attempt also restarts the interval: retrying on every delta
  // would turn a full disk into a stall of the GUI thread.
  last_commit_ = now();
  if (store_.isNull()) {
    error_ = QStringLiteral("The chat history was closed while a reply was being written.");
    gone_ = true;
  } else if (store_->write_reply(message_, text_, tokens_, stats)) {
    pending_ = false;
    ++commits_;
    error_.clear();
    emit committed(static_cast<int>(text_.size()));
    return true;
  } else {
    error_ = store_->error_string();
    gone_ = store_->error() == StoreError::NotFound || store_->error() == StoreError::NotOpen ||
            store_->error() == StoreError::InvalidArgument;
  }
  emit failed(error_);
  return false;
}

}  // namespace quire::store
