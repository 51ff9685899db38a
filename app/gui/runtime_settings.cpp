#include "runtime_settings.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "quire/ui/settings_limits.h"

namespace quire::gui {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;

engine::PlacementMode placement_mode(ui::EngineSettings::Split split) {
  switch (split) {
    case ui::EngineSettings::Split::Fill:
      return engine::PlacementMode::FillInOrder;
    case ui::EngineSettings::Split::Balanced:
      return engine::PlacementMode::Balanced;
    case ui::EngineSettings::Split::Manual:
      return engine::PlacementMode::Manual;
  }
  return engine::PlacementMode::FillInOrder;
}

// The generator needs room in each step for every running job's token and
// one more for a prefill, so the chunk never drops below the batch plus one.
int step_tokens(const ui::EngineSettings& settings) {
  return std::max(settings.chunk_size, settings.max_batch + 1);
}

std::int64_t mib_to_bytes(double mib) {
  return static_cast<std::int64_t>(std::llround(mib * kMiB));
}

// The settings keep reserves by device index; the planner wants them by the
// position of each selected device. Without any figure of its own every
// device keeps the common one.
engine::DeviceReserves reserves(const ui::EngineSettings& settings,
                                const std::vector<int>& selected) {
  if (settings.device_reserve_mib.isEmpty() || selected.empty()) {
    return mib_to_bytes(settings.reserve_mib);
  }
  std::vector<std::int64_t> bytes;
  for (int index : selected) {
    const double own = settings.device_reserve_mib.value(index, -1);
    bytes.push_back(mib_to_bytes(own >= 0 ? own : settings.reserve_mib));
  }
  return engine::DeviceReserves(std::move(bytes));
}

engine::CacheResidence cache_residence(const QString& id) {
  if (id == QLatin1String("device")) return engine::CacheResidence::Device;
  if (id == QLatin1String("offloaded")) return engine::CacheResidence::Offloaded;
  if (id == QLatin1String("offload-global")) return engine::CacheResidence::OffloadGlobalLayers;
  throw std::invalid_argument("the cache residence \"" + id.toStdString() +
                              "\" is not device, offloaded or offload-global");
}

// The settings name the cache device by index; the engine wants its position
// among the selected devices.
std::optional<int> cache_device_position(int device, const std::vector<int>& selected) {
  if (device < 0) return std::nullopt;
  const auto found = std::find(selected.begin(), selected.end(), device);
  if (found == selected.end()) {
    throw std::invalid_argument("the cache device " + std::to_string(device) +
                                " is not among the chosen devices; choose it too, or keep the "
                                "cache with its layers");
  }
  return static_cast<int>(found - selected.begin());
}

}  // namespace

engine::RuntimeOptions runtime_options(const ui::EngineSettings& settings,
                                       const engine::ModelDescription& model,
                                       const std::vector<int>& selected) {
  engine::RuntimeOptions options;
  const std::optional<cache::CacheFormat> format =
      cache::parse_cache_format(settings.cache_format.toStdString());
  if (!format) {
    throw std::invalid_argument("cache format \"" + settings.cache_format.toStdString() +
                                "\" is not fp16, q8, q6, q4 or fp8");
  }
  if (settings.cache_tokens <= 0) throw std::invalid_argument("the cache size must be positive");
  if (settings.max_batch <= 0) throw std::invalid_argument("the batch size must be positive");
  options.cache_format = *format;
  options.cache_tokens = settings.cache_tokens;
  options.page_size = kPageSize;
  options.max_chunk_tokens = step_tokens(settings);
  options.max_sequences = settings.max_batch + 1;
  options.host_pages = host_pages(model, *format, settings.host_cache_mib);
  options.residual_window = settings.residual_window;
  options.reserve_bytes = reserves(settings, selected);
  if (settings.reserve_pages == QLatin1String("all")) {
    options.reservation = cache::ReservationPolicy::ReserveOnAdmission;
  } else if (settings.reserve_pages == QLatin1String("on-demand")) {
    options.reservation = cache::ReservationPolicy::OnDemand;
  }
  options.cache_residence = cache_residence(settings.cache_residence);
  options.cache_device = cache_device_position(settings.cache_device, selected);
  options.placement.mode = placement_mode(settings.split);
  if (settings.split == ui::EngineSettings::Split::Manual) {
    // The settings keep GB by device index; the planner wants them by the
    // position of each selected device.
    for (int index : selected) {
      const double gb = index < settings.manual_gb.size() ? settings.manual_gb.at(index) : 0.0;
      options.placement.manual_limit_bytes.push_back(
          static_cast<std::int64_t>(std::llround(std::max(0.0, gb) * kGiB)));
    }
  }
  return options;
}

engine::RuntimeOptions runtime_options(const ui::EngineSettings& settings,
                                       const engine::ModelDescription& model,
                                       const std::vector<int>& selected,
                                       std::span<const kernels::DeviceInfo> devices) {
  engine::RuntimeOptions options = runtime_options(settings, model, selected);
  options.cache_residence = engine::effective_residence(options.cache_residence, devices);
  return options;
}

engine::GeneratorConfig generator_config(const ui::EngineSettings& settings) {
  engine::GeneratorConfig config;
  config.max_batch_size = settings.max_batch;
  config.max_step_tokens = step_tokens(settings);
  return config;
}

engine::DraftSettings draft_settings(const ui::DraftDefaults& defaults, bool draft_model_loaded) {
  engine::DraftSettings draft;
  if (defaults.method == QLatin1String("ngram"))
    draft.method = engine::DraftSettings::Method::Ngram;
  if (defaults.method == QLatin1String("model") && draft_model_loaded)
    draft.method = engine::DraftSettings::Method::Model;
  draft.max_tokens =
      std::clamp(defaults.max_tokens, ui::limits::kDraftTokens.min, ui::limits::kDraftTokens.max);
  return draft;
}

engine::SamplingSettings sampling_settings(const ui::SamplingDefaults& defaults) {
  engine::SamplingSettings sampling;
  sampling.temperature = static_cast<float>(defaults.temperature);
  sampling.top_k = defaults.top_k;
  // The panel allows 0 for "off" where the sampler's own off value is 1.
  sampling.top_p = defaults.top_p > 0 ? static_cast<float>(defaults.top_p) : 1.0f;
  sampling.min_p = static_cast<float>(defaults.min_p);
  sampling.repetition_penalty =
      defaults.repetition_penalty >= 1 ? static_cast<float>(defaults.repetition_penalty) : 1.0f;
  const ui::TunedSampling& tuned = defaults.tuned;
  sampling.dry_multiplier = static_cast<float>(tuned.dry_multiplier);
  sampling.dry_base = static_cast<float>(tuned.dry_base);
  sampling.dry_allowed_length = tuned.dry_allowed_length;
  sampling.dry_range = tuned.dry_range;
  sampling.dry_sequence_breakers.clear();
  for (const QString& breaker : tuned.dry_sequence_breakers)
    sampling.dry_sequence_breakers.push_back(breaker.toStdString());
  sampling.xtc_threshold = static_cast<float>(tuned.xtc_threshold);
  sampling.xtc_probability = static_cast<float>(tuned.xtc_probability);
  sampling.top_n_sigma = static_cast<float>(tuned.top_n_sigma);
  sampling.mirostat = tuned.mirostat ? 2 : 0;
  sampling.mirostat_tau = static_cast<float>(tuned.mirostat_tau);
  sampling.mirostat_eta = static_cast<float>(tuned.mirostat_eta);
  return sampling;
}

int host_pages(const engine::ModelDescription& model, cache::CacheFormat format, int mebibytes) {
  if (mebibytes <= 0) return 0;
  std::int64_t page_bytes = 0;
  for (const engine::ModuleCost& module : model.modules(format, kPageSize, 1))
    page_bytes += module.cache_bytes_per_page;
  if (page_bytes <= 0) return 0;
  const std::int64_t pages = static_cast<std::int64_t>(mebibytes) * (1 << 20) / page_bytes;
  return static_cast<int>(std::min<std::int64_t>(pages, std::numeric_limits<int>::max() / 2));
}

}  // namespace quire::gui
