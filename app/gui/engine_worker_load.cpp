// Loading and unloading a model: EngineWorker's load side (the rest is in
// engine_worker.cpp, engine_worker_server.cpp and engine_worker_disk.cpp).

#include <QDir>
#include <QFileInfo>

#include "backend_choice.h"
#include "demo_model_text.h"
#include "engine_failure.h"
#include "engine_worker.h"
#include "engine_worker_loaded.h"
#include "quire/app/images/prompt_images.h"
#include "quire/engine/generator/chat_format.h"
#include "quire/engine/planner/planner.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/fault_injecting_backend.h"
#include "runtime_settings.h"
#include "vision_status.h"

namespace quire::gui {

// The model's chat template, or a built-in format. A setting that cannot be
// followed (no template where "template" was chosen, an unknown name) falls
// back the way "auto" does, and says so: a chat never fails for its format.
engine::FormatChoice format_for_chat(const QString& directory, const QString& name) {
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

namespace {

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
  const std::string_view cache_title = cache::format_info(runtime.options().cache_format).title;
  info.cache_format =
      QString::fromUtf8(cache_title.data(), static_cast<qsizetype>(cache_title.size()));
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
      format_for_chat(settings.model_directory, settings.prompt_format);
  // A tower the plan finds no host memory for is none (vision_status.cpp).
  const std::optional<engine::VisionTowerPlacement>& tower = loaded.runtime->plan().vision_tower;
  if (loaded.model->vision.tower && (!tower || tower->fits)) {
    std::string why;
    loaded.images = images::open_image_preparer(settings.model_directory.toStdString(), why);
  }
  loaded.books[settings.prompt_format] = std::make_unique<ConversationBook>(
      *loaded.tokenizer, format.format, settings.model_directory);
  loaded.books[settings.prompt_format]->set_image_preparer(loaded.images);
  loaded.generator_config = generator_config(settings);
  loaded.generator = std::make_unique<engine::Generator>(*loaded.runtime, *loaded.tokenizer,
                                                         loaded.generator_config);
  loaded.info =
      describe(*loaded.runtime, settings, format, QString::fromStdString(loaded.backend->name()));
  loaded.info.backend_note = selection.fallback_reason;
  describe_vision(loaded.info, loaded.model->vision, loaded.runtime->plan().vision_tower);
  // It sees only where its images also reach the model (ImagePreparer).
  loaded.info.has_vision = loaded.info.has_vision && loaded.images != nullptr;
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

}  // namespace quire::gui
