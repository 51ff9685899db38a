#include "engine_worker.h"

#include <QDir>
#include <QFileInfo>

#include "app_server.h"
#include "backend_choice.h"
#include "conversation_book.h"
#include "demo_model_text.h"
#include "engine_failure.h"
#include "engine_worker_loaded.h"
#include "memory_snapshot.h"
#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/vocabulary_check.h"
#include "quire/engine/planner/planner.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/kernels/fault_injecting_backend.h"
#include "reply_stats.h"
#include "runtime_settings.h"
#include "tool_reply.h"

namespace quire::gui {

namespace {

// The model's chat template, or a built-in format. A setting that cannot be
// followed (no template where "template" was chosen, an unknown name) falls
// back the way "auto" does, and says so: a chat never fails for its format.
engine::FormatChoice choose_format(const QString& directory, const QString& name) {
  const std::string dir = directory.toStdString();
  try {
    return engine::choose_chat_format(dir, name.toStdString());
  } catch (const engine::ModelError& error) {
    engine::FormatChoice choice = engine::choose_chat_format(dir, "auto");
    choice.notice =
        error.what() + std::string("; Quire uses ") + choice.format.title() + " instead";
    return choice;
  }
}

QString text_of(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

// A folder named after its quantization ("exl2-4.0", "4.0bpw", "gptq") says
// little alone: its parent names the model.
QString display_name(const QString& directory) {
  const QFileInfo folder(QDir::cleanPath(directory));
  const QString name = folder.fileName();
  const QString lower = name.toLower();
  const bool variant =
      lower.startsWith(QLatin1String("exl2")) || lower.startsWith(QLatin1String("gptq")) ||
      lower.startsWith(QLatin1String("fp16")) || lower.startsWith(QLatin1String("bf16")) ||
      lower.endsWith(QLatin1String("bpw"));
  const QString parent = folder.dir().dirName();
  if (!variant || parent.isEmpty() || parent == QLatin1String(".")) return name;
  return parent + QStringLiteral(" · ") + name;
}

ModelInfo describe(const engine::ModelRuntime& runtime, const ui::EngineSettings& settings,
                   const engine::FormatChoice& format, const QString& backend) {
  ModelInfo info;
  info.directory = settings.model_directory;
  info.name = display_name(settings.model_directory);
  info.backend = backend;
  for (const engine::DevicePlacement& device : runtime.plan().devices) {
    if (device.module_count > 0) info.devices << QString::fromStdString(device.name);
  }
  info.cache_format = text_of(cache::format_info(runtime.options().cache_format).title);
  info.cache_tokens = runtime.plan().context_tokens;
  // One conversation holds at most what the settings allow, what the cache
  // holds and what the model was trained for: past max_position_embeddings a
  // model without rope scaling produces noise.
  info.context_tokens = settings.max_context > 0
                            ? std::min<qint64>(settings.max_context, info.cache_tokens)
                            : info.cache_tokens;
  const std::int64_t trained = runtime.model().config.max_position_embeddings;
  if (trained > 0 && info.context_tokens >= trained) {
    info.context_tokens = trained;
    info.context_is_model_limit = true;
  }
  info.prompt_format = QString::fromStdString(format.format.name());
  info.prompt_format_title = QString::fromStdString(format.format.title());
  info.format_notice = QString::fromStdString(format.notice);
  info.parameters = runtime.model().parameters;
  if (is_demo_model(info.directory)) info.name = demo_model_name(info.parameters);
  return info;
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

// ---- loading ----

std::unique_ptr<EngineWorker::Loaded> EngineWorker::prepare(const LoadRequest& request) {
  const ui::EngineSettings& settings = request.settings;
  if (std::optional<EngineFailure> problem = model_folder_failure(settings.model_directory)) {
    throw *problem;
  }
  auto loaded = std::make_unique<Loaded>();
  loaded->request = request;
  loaded->model = std::make_shared<const engine::ModelDescription>(
      engine::ModelDescription::open(settings.model_directory.toStdString()));
  loaded->tokenizer = std::make_unique<engine::Tokenizer>(
      engine::Tokenizer::load(settings.model_directory.toStdString()));
  // Before any weight is read: tokenizer files of another model are refused at once.
  engine::check_tokenizer_fits_model(*loaded->tokenizer, *loaded->model);
  return loaded;
}

void EngineWorker::complete(Loaded& loaded) {
  const LoadRequest& request = loaded.request;
  const ui::EngineSettings& settings = request.settings;
  BackendSelection selection = make_backend(settings, request.devices);
  loaded.backend = std::move(selection.backend);
  // Out-of-memory handling checked by hand (QUIRE_FAULT_OP and friends).
  if (kernels::FaultPlan faults = kernels::fault_plan_from_environment(); !faults.empty()) {
    loaded.backend =
        std::make_unique<kernels::FaultInjectingBackend>(std::move(loaded.backend), faults);
  }
  const engine::RuntimeOptions options =
      runtime_options(settings, *loaded.model, selection.indices, loaded.backend->devices());

  // The verdict first, in the planner's words, before any weight is read.
  const engine::PlacementPlan plan = engine::plan_placement(
      engine::placement_request(*loaded.model, loaded.backend->devices(), options));
  if (!plan.fits) throw does_not_fit_failure(plan);

  engine::LoadOptions load_options;
  load_options.cancel = request.cancel.get();
  int last_percent = -1;
  load_options.progress = [&](std::int64_t done, std::int64_t total) {
    const int percent = total > 0 ? static_cast<int>(done * 100 / total) : 100;
    if (percent == last_percent) return;
    last_percent = percent;
    emit loadProgress(request.id, done, total);
  };
  loaded.runtime =
      std::make_unique<engine::ModelRuntime>(loaded.model, *loaded.backend, options, load_options);
  const engine::FormatChoice format =
      choose_format(settings.model_directory, settings.prompt_format);
  loaded.books[settings.prompt_format] = std::make_unique<ConversationBook>(
      *loaded.tokenizer, format.format, settings.model_directory);
  loaded.generator_config = generator_config(settings);
  loaded.generator = std::make_unique<engine::Generator>(*loaded.runtime, *loaded.tokenizer,
                                                         loaded.generator_config);
  loaded.info =
      describe(*loaded.runtime, settings, format, QString::fromStdString(loaded.backend->name()));
  loaded.info.backend_note = selection.fallback_reason;
  loadDraftModel(loaded);
  openDiskTier(loaded);
  loaded.info.render_key =
      loaded.books.at(settings.prompt_format)->render_key(settings.system_prompt);
  // Cancelled after its last tensor is still cancelled: the model before is
  // loaded again rather than this one kept.
  if (request.cancel && request.cancel->load()) throw engine::LoadCancelled();
}

void EngineWorker::loadDraftModel(Loaded& loaded) {
  const QString folder = ui::loaded_draft_model(loaded.request.settings);
  if (folder.isEmpty()) return;
  try {
    // After the model, planned against what it left free.
    loaded.draft = std::make_unique<engine::LoadedDraftModel>(folder.toStdString(), *loaded.runtime,
                                                              *loaded.tokenizer, *loaded.backend);
    loaded.generator->set_draft_model(&loaded.draft->drafter());
    loaded.info.draft_model = folder;
  } catch (const std::exception& error) {
    // The model serves without it: a draft is a speed-up, not the reply.
    loaded.draft.reset();
    loaded.info.draft_notice = tr("The draft model %1 was not loaded: %2. Replies decode without "
                                  "its drafts; choose another in Settings → Speculative decoding.")
                                   .arg(folder, QString::fromStdString(error.what()));
  }
}

void EngineWorker::loadModel(const LoadRequest& request) {
  std::unique_ptr<Loaded> next;
  try {
    next = prepare(request);
    if (request.cancel && request.cancel->load()) throw engine::LoadCancelled();
  } catch (...) {
    // The model before was not touched: it serves on.
    emit loadFailed(request.id, failure_from(std::current_exception()));
    return;
  }
  // Weights, cache and scratch of two models rarely fit at once, so the
  // model before goes first; the plan then counts its memory as free.
  std::optional<LoadRequest> previous;
  if (loaded_) previous = loaded_->request;
  unloadModel();
  try {
    complete(*next);
  } catch (...) {
    EngineFailure failure = failure_from(std::current_exception());
    next.reset();
    if (previous) restore(*previous, failure);
    emit loadFailed(request.id, failure);
    return;
  }
  loaded_ = std::move(next);
  memory_reported_ = engine::MemoryRecoveries::Action::None;
  disk_full_reported_ = false;
  refreshDiskStatus();
  emit modelLoaded(request.id, loaded_->info);
  publishSnapshot();
  startServer();
}

void EngineWorker::restore(LoadRequest previous, EngineFailure& failure) {
  // The user cancelled the new load, not the model before it.
  previous.cancel = std::make_shared<std::atomic<bool>>(false);
  const QString name = display_name(previous.settings.model_directory);
  try {
    std::unique_ptr<Loaded> again = prepare(previous);
    complete(*again);
    loaded_ = std::move(again);
  } catch (...) {
    failure.addAdvice(QStringLiteral("%1, loaded before, could not be loaded again either (%2), so "
                                     "no model is loaded.")
                          .arg(name, failure_from(std::current_exception()).text()));
    return;
  }
  failure.addAdvice(
      QStringLiteral("Quire loaded %1 again with its earlier settings.").arg(loaded_->info.name));
  disk_full_reported_ = false;
  refreshDiskStatus();
  emit modelRestored(loaded_->info);
  publishSnapshot();
  startServer();
}

void EngineWorker::unloadModel() {
  if (!loaded_) return;
  stopServer();
  endAllReplies();
  // The next load of this model (after a switch, or tomorrow) finds its
  // chats' pages on disk.
  archiveCache(true);
  loaded_.reset();
  disk_view_ = ui::DiskTierView{};
  emit modelUnloaded();
  emit snapshotReady(ui::MemorySnapshotView{});
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
    const engine::FormatChoice format = choose_format(loaded.info.directory, request.prompt_format);
    slot =
        std::make_unique<ConversationBook>(*loaded.tokenizer, format.format, loaded.info.directory);
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
  job.sampling = sampling_settings(request.sampling);
  job.draft = draft_settings(request.drafts, loaded_->draft != nullptr);
  job.stop_tokens = turn.stops.tokens;
  job.stop_strings = turn.stops.strings;
  job.max_new_tokens = turn.max_new_tokens;
  job.label = request.chat_title.toStdString();
  for (auto it = request.token_bias.begin(); it != request.token_bias.end(); ++it)
    job.sampling.token_bias[it.key()] = static_cast<float>(it.value());
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
  const engine::JobId id = loaded.generator->submit(std::move(job));
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
