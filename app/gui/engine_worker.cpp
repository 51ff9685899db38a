#include "engine_worker.h"

#include "app_server.h"
#include "conversation_book.h"
#include "engine_failure.h"
#include "engine_worker_loaded.h"
#include "memory_snapshot.h"
#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/text_bias.h"
#include "quire/engine/generator/vocabulary_check.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "reply_stats.h"
#include "runtime_settings.h"
#include "tool_reply.h"

namespace quire::gui {

namespace {

QString text_of(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

}  // namespace

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {
  since_snapshot_.start();
}

EngineWorker::~EngineWorker() {
  stopServer();
  // Quitting: the thread is joined after this, so the application waits
  // until the chats' pages are on disk for the next start.
  archiveCache(false);
}

// ---- replies ----

void EngineWorker::failReply(const ReplyRequest& request, const EngineFailure& failure) {
  ReplyOutcome outcome;
  outcome.reply_id = request.reply_id;
  outcome.chat_id = request.chat_id;
  outcome.stats.stop_reason = stop_reason_name(engine::StopReason::Error);
  outcome.error = failure.text();
  emit replyFinished(outcome);
}

void EngineWorker::startReply(const ReplyRequest& request) {
  if (!loaded_) {
    failReply(request,
              EngineFailure{EngineFailure::Kind::NoModel, QStringLiteral("No model is loaded"),
                            QString(), QStringLiteral("Load one from Settings, then send again.")});
    return;
  }
  for (const auto& [job, active] : active_) {
    if (active.chat_id == request.chat_id) {
      failReply(request, EngineFailure{EngineFailure::Kind::Busy,
                                       QStringLiteral("This chat is still generating"), QString(),
                                       QStringLiteral("Wait for the reply or stop it first.")});
      return;
    }
  }
  Loaded& loaded = *loaded_;
  // The prompt format is a live setting, and a chat may have its own: each
  // format keeps its own book, and a chat that changes format is rendered
  // afresh in the new one.
  std::unique_ptr<ConversationBook>& slot = loaded.books[request.prompt_format];
  if (!slot) {
    const engine::FormatChoice format =
        format_for_chat(loaded.info.directory, request.prompt_format);
    slot =
        std::make_unique<ConversationBook>(*loaded.tokenizer, format.format, loaded.info.directory);
    slot->set_image_preparer(loaded.images);
  }
  ConversationBook& book = *slot;
  for (auto& [format, other] : loaded.books) {
    if (other.get() != &book) other->forget(request.chat_id);
  }

  ConversationBook::Turn turn;
  try {
    // The live context setting, within what the loaded model allows.
    ReplyRequest bounded = request;
    if (bounded.max_context <= 0 || bounded.max_context > loaded.info.context_tokens) {
      bounded.max_context = loaded.info.context_tokens;
    }
    turn = book.begin(bounded, {loaded.runtime->plan().context_tokens,
                                loaded.runtime->model().config.max_position_embeddings});
  } catch (const engine::ContextOverflow& overflow) {
    book.forget(request.chat_id);
    failReply(request, EngineFailure{EngineFailure::Kind::Other,
                                     QStringLiteral("The message does not fit the context"),
                                     QString::fromStdString(overflow.what()), QString()});
    return;
  } catch (...) {
    book.forget(request.chat_id);
    failReply(request, failure_from(std::current_exception()));
    return;
  }

  engine::JobRequest job;
  job.prompt = std::move(turn.prompt);
  job.images = std::move(turn.images);
  job.sampling = sampling_settings(request.sampling);
  job.draft = draft_settings(request.drafts, loaded_->draft != nullptr);
  job.stop_tokens = turn.stops.tokens;
  job.stop_strings = turn.stops.strings;
  job.max_new_tokens = turn.max_new_tokens;
  job.label = request.chat_title.toStdString();
  for (auto it = request.token_bias.begin(); it != request.token_bias.end(); ++it)
    job.sampling.token_bias[it.key()] = static_cast<float>(it.value());
  for (auto it = request.logit_bias_text.begin(); it != request.logit_bias_text.end(); ++it) {
    if (!engine::add_text_bias(job.sampling, *loaded.tokenizer, it.key().toStdString(),
                               static_cast<float>(it.value()))) {
      book.forget(request.chat_id);
      failReply(request, EngineFailure{EngineFailure::Kind::Other,
                                       QStringLiteral("The reply could not start"),
                                       QStringLiteral("The chat's logit bias names the text "
                                                      "\"%1\", which has no tokens.")
                                           .arg(it.key()),
                                       QStringLiteral("Remove it in Chat settings.")});
      return;
    }
  }
  for (const QString& text : request.banned_strings)
    job.banned_strings.push_back(text.toStdString());
  const qint64 reply_id = request.reply_id;
  // A reply that may call tools is read for them: its text spells the
  // markers, the chat sees only the content, and a call once begun is held
  // to its tool's schema.
  std::shared_ptr<ToolReplyReader> reader;
  const bool offers_tools = !request.tools.isEmpty();
  if (turn.tool_format != engine::tools::ToolCallFormat::None &&
      (offers_tools || turn.tool_format == engine::tools::ToolCallFormat::Harmony)) {
    reader = std::make_shared<ToolReplyReader>(turn.tool_format);
    job.special_tokens_in_text = true;
    if (offers_tools) constrain_tool_calls(job, turn.tool_format, request.tools);
  }
  job.on_text = [this, reply_id, reader](engine::JobId, std::string_view text) {
    const QString shown = reader ? reader->feed(text) : text_of(text);
    if (!shown.isEmpty()) emit replyText(reply_id, shown);
  };
  // Called inside Generator::step(); the result is settled after the step.
  job.on_done = [this](const engine::JobResult& result) { finished_.push_back(result); };
  const bool shaped = job.grammar != nullptr;
  engine::JobId id{};
  try {
    id = loaded.generator->submit(std::move(job));
  } catch (...) {
    book.forget(request.chat_id);
    EngineFailure failure = failure_from(std::current_exception());
    if (shaped && !request.banned_strings.isEmpty()) {
      // The engine refuses the two together: a grammar decides the text.
      failure = EngineFailure{
          EngineFailure::Kind::Other, QStringLiteral("The reply could not start"),
          QStringLiteral("This chat's banned strings cannot be combined with tool calls, whose "
                         "text follows each tool's schema."),
          QStringLiteral("Remove the banned strings in Chat settings, or turn tools off for "
                         "this chat there.")};
    }
    failReply(request, failure);
    return;
  }
  active_[id] = Active{request.reply_id,
                       request.chat_id,
                       turn.context_limit,
                       std::move(turn.rendered),
                       book.render_key(request.system_prompt),
                       request.prompt_format,
                       reader,
                       turn.trimmed,
                       request.context_overflow,
                       turn.reserve};
  setBusy(true);
  schedulePump();
}

void EngineWorker::stopReply(qint64 reply_id) {
  if (!loaded_) return;
  for (const auto& [job, active] : active_) {
    if (active.reply_id == reply_id) loaded_->generator->cancel(job);
  }
  schedulePump();
}

void EngineWorker::forgetChat(qint64 chat_id) {
  if (!loaded_) return;
  for (const auto& [job, active] : active_) {
    if (active.chat_id == chat_id) return;  // settled when its reply ends
  }
  for (auto& [format, book] : loaded_->books)
    book->forget(chat_id);
}

void EngineWorker::finishActive(const Active& active, const engine::JobResult& result) {
  ReplyOutcome outcome;
  outcome.reply_id = active.reply_id;
  outcome.chat_id = active.chat_id;
  outcome.text = QString::fromStdString(result.text);
  engine::tools::ParsedReply reply;
  reply.content = result.text;
  if (active.reader) {
    // The rest of the content streams out now; the calls go to the chat.
    if (const QString rest = active.reader->finish(); !rest.isEmpty())
      emit replyText(active.reply_id, rest);
    reply = active.reader->reply();
    outcome.text = QString::fromStdString(reply.content);
    for (const engine::tools::ToolCall& call : reply.tool_calls) {
      outcome.tool_calls.append({QString::fromStdString(call.id), QString::fromStdString(call.name),
                                 QString::fromStdString(call.arguments), QString()});
    }
    outcome.tool_call_error = QString::fromStdString(reply.broken_reason);
  }
  outcome.stats = generation_stats(result, loaded_->info.name);
  if (active.trimmed) {
    outcome.trimmed_turns = active.trimmed->turns;
    outcome.trimmed_first_turn = active.trimmed->first_turn;
    outcome.trimmed_tokens = active.trimmed->tokens;
    outcome.recomputed_tokens = active.trimmed->recomputed;
  }
  outcome.context_overflow = active.context_overflow;
  outcome.context_limit = active.context_limit;
  outcome.context_reserve = active.context_reserve;
  if (result.stop_reason == engine::StopReason::Error) {
    outcome.error = QString::fromStdString(result.error);
  }
  const ConversationBook::Closed closed =
      loaded_->books.at(active.format_request)->end(active.chat_id, active.reply_id, result, reply);
  outcome.context_used = closed.context_used;
  outcome.context_turns = closed.turns;
  if (result.stop_reason != engine::StopReason::Error) {
    outcome.rendered = active.rendered;
    outcome.rendered.append(closed.reply);
    outcome.render_key = active.render_key;
  }
  emit replyFinished(outcome);
}

void EngineWorker::settleFinished() {
  std::vector<engine::JobResult> finished;
  finished.swap(finished_);
  for (const engine::JobResult& result : finished) {
    auto found = active_.find(result.id);
    if (found == active_.end()) continue;
    const Active active = found->second;
    active_.erase(found);
    finishActive(active, result);
  }
}

// ---- stepping ----

void EngineWorker::schedulePump() {
  if (pump_queued_) return;
  pump_queued_ = true;
  // Queued, so whatever arrived meanwhile (a stop, a new request) runs first.
  QMetaObject::invokeMethod(this, &EngineWorker::pump, Qt::QueuedConnection);
}

void EngineWorker::pump() {
  pump_queued_ = false;
  if (!loaded_) return;
  takeServerJobs();
  bool more = false;
  try {
    more = loaded_->generator->step();
    reportMemoryRecovery();
    settleFinished();
    // Idle at last: one more step lets the generator tidy the cache
    // (defragmentation runs only when nothing is running).
    if (!more) loaded_->generator->step();
  } catch (...) {
    recoverFromStepFailure(failure_from(std::current_exception()));
    more = false;
  }
  publishServerStatus();
  if (more) {
    if (since_snapshot_.elapsed() >= kSnapshotIntervalMs) publishSnapshot();
    schedulePump();
    return;
  }
  // Idle: the disk tier's folder is read once per burst of work, not per step.
  refreshDiskStatus();
  publishSnapshot();
  setBusy(false);
}

void EngineWorker::recoverFromStepFailure(const EngineFailure& failure) {
  // A step that threw leaves its jobs half done. Every reply in flight ends
  // with the failure, the sequences they held are released (their computed
  // pages stay cached; pages the failed step may have half written forget
  // what they held), and a fresh generator takes over the same runtime.
  finished_.clear();
  Loaded& loaded = *loaded_;
  const std::map<engine::JobId, Active> failed = std::move(active_);
  active_.clear();
  // API requests end with the failure too; their jobs go with the generator.
  if (server_) server_->jobs().abandon(failure.text().toStdString());
  loaded.generator.reset();
  for (const cache::SequenceId sequence : loaded.runtime->cache().sequences())
    loaded.runtime->cache().release_after_failure(sequence);
  for (const auto& [job, active] : failed) {
    loaded.books.at(active.format_request)->forget(active.chat_id);
    ReplyOutcome outcome;
    outcome.reply_id = active.reply_id;
    outcome.chat_id = active.chat_id;
    outcome.stats.stop_reason = stop_reason_name(engine::StopReason::Error);
    outcome.error = failure.text();
    emit replyFinished(outcome);
  }
  loaded.generator = std::make_unique<engine::Generator>(*loaded.runtime, *loaded.tokenizer,
                                                         loaded.generator_config);
}

void EngineWorker::reportMemoryRecovery() {
  using Action = engine::MemoryRecoveries::Action;
  const engine::MemoryRecoveries& recoveries = loaded_->generator->memory_recoveries();
  // Told once per kind of measure: a shortage that lasts would otherwise
  // repeat the same sentence every few steps.
  if (recoveries.last_action <= memory_reported_) return;
  memory_reported_ = recoveries.last_action;
  const QString device = QString::fromStdString(recoveries.device_name);
  switch (recoveries.last_action) {
    case Action::None:
      return;
    case Action::Retried:
      emit memoryRecovered(
          tr("Memory ran short on %1; Quire freed its workspaces and replies continue.")
              .arg(device));
      return;
    case Action::RanFewer:
      emit memoryRecovered(
          tr("Memory ran short on %1; replies continue with fewer at once.").arg(device));
      return;
    case Action::OffloadedCache:
      emit memoryRecovered(
          tr("Memory ran short on %1; the cache moved to host memory and replies continue, "
             "slower.")
              .arg(device));
      return;
    case Action::EndedJob:
      emit memoryRecovered(
          tr("Memory ran short on %1; a reply that did not fit even alone ended, the others "
             "continue.")
              .arg(device));
      return;
  }
}

void EngineWorker::endAllReplies() {
  if (!loaded_ || active_.empty()) return;
  for (const auto& [job, active] : active_)
    loaded_->generator->cancel(job);
  try {
    // Cancelled jobs end at the start of the next step, before any compute.
    while (!active_.empty() && loaded_->generator->step())
      settleFinished();
    settleFinished();
  } catch (...) {
    recoverFromStepFailure(failure_from(std::current_exception()));
  }
  setBusy(false);
}

void EngineWorker::setBusy(bool busy) {
  if (busy_ == busy) return;
  busy_ = busy;
  emit busyChanged(busy);
}

void EngineWorker::publishSnapshot() {
  since_snapshot_.restart();
  if (!loaded_) return;
  ui::MemorySnapshotView snapshot = memory_snapshot(*loaded_->runtime, *loaded_->generator);
  // The counters are the cache's own; the files and the limit as last read.
  ui::DiskTierView& disk = snapshot.cache.disk;
  disk.enabled = disk_view_.enabled;
  disk.used_bytes = disk_view_.used_bytes;
  disk.limit_bytes = disk_view_.limit_bytes;
  disk.pages = disk_view_.pages;
  emit snapshotReady(snapshot);
}

}  // namespace quire::gui
