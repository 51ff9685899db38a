#include "quire/ui/settings_data.h"
#include "same_list.h"

namespace quire::ui {

bool operator==(const EngineSettings& a, const EngineSettings& b) {
  return a.model_directory == b.model_directory && a.recent_models == b.recent_models &&
         a.remote_url == b.remote_url && a.remote_model == b.remote_model &&
         a.backend == b.backend && same_list(a.devices, b.devices) && a.split == b.split &&
         same_list(a.manual_gb, b.manual_gb) && a.reserve_mib == b.reserve_mib &&
         same_list(a.device_reserve_mib, b.device_reserve_mib) && a.max_context == b.max_context &&
         a.cache_format == b.cache_format && a.cache_tokens == b.cache_tokens &&
         a.host_cache_mib == b.host_cache_mib && a.disk_cache == b.disk_cache &&
         a.disk_cache_mib == b.disk_cache_mib && a.residual_window == b.residual_window &&
         a.reserve_pages == b.reserve_pages && a.cache_residence == b.cache_residence &&
         a.cache_device == b.cache_device && a.max_batch == b.max_batch &&
         a.chunk_size == b.chunk_size && a.sampling == b.sampling && a.drafts == b.drafts &&
         a.system_prompt == b.system_prompt && a.prompt_format == b.prompt_format &&
         a.context_overflow == b.context_overflow && a.default_preset == b.default_preset;
}

QStringList reload_reasons(const EngineSettings& applied, const EngineSettings& edited) {
  // Everything that changes where the weights go or how the cache is laid out
  // is fixed when the model loads; the rest is read per request.
  QStringList reasons;
  if (applied.model_directory != edited.model_directory) reasons << QStringLiteral("model");
  if (applied.remote_url != edited.remote_url) reasons << QStringLiteral("remote endpoint");
  if (applied.remote_model != edited.remote_model) reasons << QStringLiteral("remote model");
  if (applied.backend != edited.backend) reasons << QStringLiteral("backend");
  if (!same_list(applied.devices, edited.devices)) reasons << QStringLiteral("devices");
  // Manual limits mean nothing in the other modes, so editing them there is
  // kept but costs no reload.
  const bool manual_changed = edited.split == EngineSettings::Split::Manual &&
                              !same_list(applied.manual_gb, edited.manual_gb);
  if (applied.split != edited.split || manual_changed) reasons << QStringLiteral("split");
  if (applied.reserve_mib != edited.reserve_mib ||
      !same_list(applied.device_reserve_mib, edited.device_reserve_mib)) {
    reasons << QStringLiteral("reserve");
  }
  if (applied.cache_format != edited.cache_format) reasons << QStringLiteral("cache format");
  if (applied.cache_tokens != edited.cache_tokens) reasons << QStringLiteral("cache size");
  if (applied.host_cache_mib != edited.host_cache_mib) reasons << QStringLiteral("host cache");
  if (applied.residual_window != edited.residual_window)
    reasons << QStringLiteral("residual window");
  if (applied.reserve_pages != edited.reserve_pages) reasons << QStringLiteral("page reservation");
  if (applied.cache_residence != edited.cache_residence)
    reasons << QStringLiteral("cache residence");
  if (applied.cache_device != edited.cache_device) reasons << QStringLiteral("cache device");
  // The batch sizes the per-sequence tables and the chunk the scratch the
  // planner reserves on every device.
  if (applied.max_batch != edited.max_batch) reasons << QStringLiteral("batch size");
  if (applied.chunk_size != edited.chunk_size) reasons << QStringLiteral("chunk size");
  if (loaded_draft_model(applied) != loaded_draft_model(edited))
    reasons << QStringLiteral("draft model");
  return reasons;
}

QString loaded_draft_model(const EngineSettings& settings) {
  return settings.drafts.method == QLatin1String("model") ? settings.drafts.model_directory
                                                          : QString();
}

ApplyEffect apply_effect(const EngineSettings& applied, const EngineSettings& edited) {
  if (!reload_reasons(applied, edited).isEmpty()) return ApplyEffect::Reload;
  return applied == edited ? ApplyEffect::None : ApplyEffect::Live;
}

bool needs_reload(const EngineSettings& applied, const EngineSettings& edited) {
  return apply_effect(applied, edited) == ApplyEffect::Reload;
}

QString split_id(EngineSettings::Split split) {
  switch (split) {
    case EngineSettings::Split::Fill:
      return QStringLiteral("fill");
    case EngineSettings::Split::Balanced:
      return QStringLiteral("balanced");
    case EngineSettings::Split::Manual:
      return QStringLiteral("manual");
  }
  return QStringLiteral("fill");
}

EngineSettings::Split parse_split(const QString& id, bool* ok) {
  if (ok != nullptr) *ok = true;
  if (id == QLatin1String("fill")) return EngineSettings::Split::Fill;
  if (id == QLatin1String("balanced")) return EngineSettings::Split::Balanced;
  if (id == QLatin1String("manual")) return EngineSettings::Split::Manual;
  if (ok != nullptr) *ok = false;
  return EngineSettings::Split::Fill;
}

}  // namespace quire::ui
