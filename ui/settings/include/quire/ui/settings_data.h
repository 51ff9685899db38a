#pragma once

// Plain data exchanged between the settings panel and the application: the
// engine settings a user edits, and the placement plan the application prices
// for them. No engine type appears here; app/ converts in both directions.

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QtGlobal>

#include "quire/ui/tuned_sampling.h"

namespace quire::ui {

// Sampling used for a new chat unless the chat overrides it.
struct SamplingDefaults {
  double temperature = 0;
  double top_p = 0;
  double min_p = 0;
  double repetition_penalty = 0;
  int top_k = 0;        // 0: off
  TunedSampling tuned;  // DRY, XTC, top-nσ, mirostat

  friend bool operator==(const SamplingDefaults&, const SamplingDefaults&) = default;
};

// Speculative decoding for the replies of every chat and of the server
// inside the application: tokens are drafted cheaply and the model verifies
// several in one step, with the same text as without. `method` is one of
// draft_method_ids(): "ngram" drafts from the chat's own text, "model" with
// the draft model in `model_directory` (a smaller model of the same family,
// loaded beside the model: changing it reloads).
struct DraftDefaults {
  QString method;      // "off", "ngram" or "model"
  int max_tokens = 0;  // the longest draft verified in one step (limits::kDraftTokens)
  QString model_directory;

  friend bool operator==(const DraftDefaults&, const DraftDefaults&) = default;
};

// Everything the engine needs to plan, load and run a model, plus the chat
// defaults. The defaults live in one table, app's AppSettings; a
// value-initialised EngineSettings is zeros and empty strings, not a usable
// configuration.
struct EngineSettings {
  enum class Split { Fill, Balanced, Manual };

  QString model_directory;
  QStringList recent_models;  // most recent first
  // A remote OpenAI-compatible engine to chat through instead of a model
  // folder run here: its address as typed ("http://gpu-box:8000/v1"), empty
  // for a local model, and the model it serves (empty: its first). Its API
  // key is kept in the desktop keyring, never here.
  QString remote_url;
  QString remote_model;
  QString backend;     // "auto", "cpu" or "cuda"
  QList<int> devices;  // backend device indices, ascending; empty: all
  Split split = Split::Fill;
  // Manual split: GB the plan may use on device index i (not on the i-th
  // selected device); 0 or missing: not used. Trailing zeros are dropped.
  QList<double> manual_gb;
  double reserve_mib = 0;  // kept free on every device without a figure of its own
  // MiB kept free on device index i (not on the i-th selected device); a
  // negative entry, or none, means reserve_mib. Trailing negatives are dropped.
  QList<double> device_reserve_mib;
  int max_context = 0;     // tokens one conversation may hold
  QString cache_format;    // "fp16", "q8", "q6", "q4" or "fp8"
  int cache_tokens = 0;    // size of the shared paged cache, in tokens
  int host_cache_mib = 0;  // host-memory tier for evicted pages; 0: off
  // The disk tier (Settings → Disk cache): pages kept on disk, so a chat
  // resumes after a restart without being computed again; the limit is for
  // every model's pages together. Both apply live.
  bool disk_cache = false;
  int disk_cache_mib = 0;
  // Running chats whose newest page is also kept in FP16 beside a coded
  // cache (the residual window, --residual-window); 0: off.
  int residual_window = 4;
  // "all": a reply's every page is reserved when it starts; "on-demand":
  // pages are taken as it grows (reservation_ids()).
  QString reserve_pages;
  // Where the cache's pages live (cache_residence_ids()): "device",
  // "offloaded" (host memory, streamed to the devices layer by layer) or
  // "offload-global" (host memory for the layers without a sliding window).
  QString cache_residence;
  // The device index (not the i-th selected device) that holds every layer's
  // pages while the layers spread over the devices; -1: each layer's pages
  // on its own device. -1 here, not 0, because 0 names a device.
  int cache_device = -1;
  int max_batch = 0;   // sequences decoded together
  int chunk_size = 0;  // prefill tokens per step
  SamplingDefaults sampling;
  DraftDefaults drafts;
  QString system_prompt;
  QString prompt_format;  // "auto" or a format name
  // What a chat does when it outgrows the context, unless it says otherwise:
  // "stop", "drop_oldest" or "truncate_middle" (context_overflow_ids()).
  QString context_overflow = QStringLiteral("drop_oldest");
  // The preset a new chat starts from (its values copied in, its name
  // remembered); empty: none, the chat follows these settings.
  QString default_preset;

  // Written out rather than defaulted: Qt 6.4 compares lists of numbers with
  // memcmp even when one empty list has no buffer, which UBSan rejects.
  friend bool operator==(const EngineSettings& a, const EngineSettings& b);
};

// The draft model a load of these settings brings beside the model: the
// draft folder while replies draft with a model, else none (empty).
QString loaded_draft_model(const EngineSettings& settings);

// The settings chat through a remote engine rather than a model run here.
inline bool is_remote(const EngineSettings& settings) {
  return !settings.remote_url.trimmed().isEmpty();
}
// A model is chosen, here or remote.
inline bool has_model(const EngineSettings& settings) {
  return is_remote(settings) || !settings.model_directory.isEmpty();
}

// What applying `edited` over `applied` takes: nothing, a live update of the
// running model (sampling, system prompt, prompt format, context limit, the
// recent list), or a reload because the placement or the cache changes.
enum class ApplyEffect { None, Live, Reload };

ApplyEffect apply_effect(const EngineSettings& applied, const EngineSettings& edited);
bool needs_reload(const EngineSettings& applied, const EngineSettings& edited);
// The settings that force the reload, for people: "cache format", "reserve".
QStringList reload_reasons(const EngineSettings& applied, const EngineSettings& edited);

// "fill", "balanced", "manual", and back; an unknown name gives `ok` false.
QString split_id(EngineSettings::Split split);
EngineSettings::Split parse_split(const QString& id, bool* ok = nullptr);

// One device as the planner would use it. Byte counts are exact.
struct PlanDeviceView {
  QString name;
  qint64 weights = 0;
  qint64 cache = 0;
  qint64 scratch = 0;
  qint64 reserve = 0;
  qint64 free_before = 0;
  // free_before - weights - cache - scratch; below `reserve` (or negative) on
  // the device that overflows when the plan does not fit.
  qint64 free_after = 0;
  bool used = false;

  friend bool operator==(const PlanDeviceView&, const PlanDeviceView&) = default;
};

// The planner's answer for the settings being edited.
struct PlanView {
  bool valid = false;  // a model is chosen and its headers could be read
  bool fits = false;
  // The model runs on a remote engine: nothing is planned here.
  bool remote = false;
  QString verdict;  // "fits", or the planner's "does not fit: ..." message
  // How the weights are stored: "EXL3, codebook MUL1: attention 4 bits, ...".
  QString weights;
  QList<PlanDeviceView> devices;
  qint64 largest_context_tokens = 0;  // 0: not even the weights fit
  // The model's max_position_embeddings set it, not memory.
  bool largest_context_is_model_limit = false;
  qint64 model_context_tokens = 0;  // the model's limit; 0: unknown
  QString error;                    // why there is no plan (valid == false)
  // When it does not fit: the nearest settings that do, if any (fit_label empty: none).
  QString fit_label;            // for the button: "q8 cache", "a 12,288-token cache"
  QString fit_change;           // "cache stored as q8 instead of fp16 (about 1% less exact)"
  QString fit_cache_format;     // the format to use; empty: the format stays
  qint64 fit_cache_tokens = 0;  // the cache's tokens with the suggestion
  // Offloaded pages in host memory, and what the host has free for them
  // beyond its reserve; both 0 when the cache lives on the devices.
  qint64 host_cache = 0;
  qint64 host_usable = 0;
  // The draft model (Settings → Speculative decoding), planned against what
  // the model leaves free: what it takes, or the planner's reason it does
  // not fit beside the model. Empty without one.
  QString draft_verdict;
  bool draft_fits = false;
  // A remote engine whose address has not answered yet: the verdict is
  // neither a promise (green) nor a failure (red).
  bool unchecked = false;

  friend bool operator==(const PlanView&, const PlanView&) = default;
};

}  // namespace quire::ui

Q_DECLARE_METATYPE(quire::ui::DraftDefaults)
Q_DECLARE_METATYPE(quire::ui::EngineSettings)
Q_DECLARE_METATYPE(quire::ui::PlanView)
