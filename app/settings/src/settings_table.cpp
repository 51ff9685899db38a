#include "settings_table.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QStringList>
#include <algorithm>

#include "quire/app/app_settings.h"
#include "quire/cache/cache_format.h"
#include "quire/ui/context_overflow_choices.h"
#include "quire/ui/settings_limits.h"
#include "stored_values.h"

namespace quire::app {
namespace {

using ui::IntRange;
using ui::RealRange;
namespace limits = ui::limits;

// Reaches a member of AppSettings from the object, const or not, so one
// accessor serves reading, writing and resetting.
#define QUIRE_FIELD(path) \
  [](auto& s) -> auto& {  \
    return s.path;        \
  }

QString outside(double min, double max) {
  return QStringLiteral("is outside %1 to %2").arg(stored::number(min), stored::number(max));
}

enum class Empty { Allowed, Refused };

template <typename Field>
SettingRow text_row(const char* key, Field field, const QString& fallback,
                    Empty empty = Empty::Allowed) {
  return {QString::fromLatin1(key), fallback, [=](AppSettings& s) { field(s) = fallback; },
          [=](const AppSettings& s) { return QVariant(field(s)); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<QString> text = stored::text(value);
            if (!text) return QStringLiteral("is not text");
            if (empty == Empty::Refused && text->trimmed().isEmpty()) {
              return QStringLiteral("is empty");
            }
            field(s) = *text;
            return {};
          }};
}

template <typename Field>
SettingRow choice_row(const char* key, Field field, const QString& fallback,
                      const QStringList& choices) {
  return {QString::fromLatin1(key), fallback, [=](AppSettings& s) { field(s) = fallback; },
          [=](const AppSettings& s) { return QVariant(field(s)); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<QString> text = stored::text(value);
            if (!text || !choices.contains(text->trimmed())) {
              return QStringLiteral("is not one of ") + choices.join(QStringLiteral(", "));
            }
            field(s) = text->trimmed();
            return {};
          }};
}

// Any spelling of a pair of cache codings ("k8v4", "KQ8VQ4"), kept as the
// engine names the pair ("q6").
SettingRow cache_format_row() {
  const QString fallback = QStringLiteral("fp16");
  return {QStringLiteral("engine/cache_format"), fallback,
          [=](AppSettings& s) { s.engine.cache_format = fallback; },
          [](const AppSettings& s) { return QVariant(s.engine.cache_format); },
          [](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<QString> text = stored::text(value);
            const std::optional<cache::CacheFormat> format =
                cache::parse_cache_format(text ? text->trimmed().toStdString() : std::string());
            if (!format) {
              return QStringLiteral(
                  "is not a cache format: fp16, q8, q6, q4, fp8, or k<keys>v<values> with "
                  "each of 16, f8, 8 or 4");
            }
            const std::string_view name = cache::format_info(*format).name;
            s.engine.cache_format =
                QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
            return {};
          }};
}

template <typename Field>
SettingRow integer_row(const char* key, Field field, int fallback, IntRange range) {
  return {QString::fromLatin1(key), QString::number(fallback),
          [=](AppSettings& s) { field(s) = fallback; },
          [=](const AppSettings& s) { return QVariant(QString::number(field(s))); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<int> number = stored::integer(value);
            if (!number) return QStringLiteral("is not a whole number");
            if (!range.contains(*number)) return outside(range.min, range.max);
            field(s) = *number;
            return {};
          }};
}

template <typename Field>
SettingRow real_row(const char* key, Field field, double fallback, RealRange range) {
  return {QString::fromLatin1(key), stored::number(fallback),
          [=](AppSettings& s) { field(s) = fallback; },
          [=](const AppSettings& s) { return QVariant(stored::number(field(s))); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<double> number = stored::real(value);
            if (!number) return QStringLiteral("is not a number");
            if (!range.contains(*number)) return outside(range.min, range.max);
            field(s) = *number;
            return {};
          }};
}

template <typename Field>
SettingRow boolean_row(const char* key, Field field, bool fallback) {
  const QString text = fallback ? QStringLiteral("true") : QStringLiteral("false");
  return {QString::fromLatin1(key), text, [=](AppSettings& s) { field(s) = fallback; },
          [=](const AppSettings& s) {
            return QVariant(field(s) ? QStringLiteral("true") : QStringLiteral("false"));
          },
          [=](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<bool> flag = stored::boolean(value);
            if (!flag) return QStringLiteral("is not true or false");
            field(s) = *flag;
            return {};
          }};
}

template <typename Field>
SettingRow bytes_row(const char* key, Field field) {
  return {QString::fromLatin1(key), QString(), [=](AppSettings& s) { field(s) = QByteArray(); },
          [=](const AppSettings& s) { return QVariant(field(s)); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            // Qt checks these blobs itself when it restores a window.
            const std::optional<QByteArray> blob = stored::bytes(value);
            if (!blob) return QStringLiteral("is not a byte string");
            field(s) = *blob;
            return {};
          }};
}

SettingRow recent_models_row() {
  auto field = QUIRE_FIELD(engine.recent_models);
  return {QStringLiteral("engine/recent_models"), QString(),
          [=](AppSettings& s) { field(s) = QStringList(); },
          [=](const AppSettings& s) { return QVariant(field(s)); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<QStringList> list = stored::text_list(value);
            if (!list) return QStringLiteral("is not a list of folders");
            // A long or repetitive list is trimmed rather than dropped.
            QStringList kept;
            for (const QString& path : *list) {
              if (!path.isEmpty() && !kept.contains(path)) kept.append(path);
            }
            field(s) = kept.mid(0, limits::kMaxRecentModels);
            return {};
          }};
}

// DRY's sequence breakers, stored as a JSON array of strings (they are
// mostly punctuation and line breaks, and an empty list must stay empty).
QString breakers_text(const QStringList& breakers) {
  return QString::fromUtf8(
      QJsonDocument(QJsonArray::fromStringList(breakers)).toJson(QJsonDocument::Compact));
}

SettingRow dry_breakers_row() {
  auto field = QUIRE_FIELD(engine.sampling.tuned.dry_sequence_breakers);
  const QStringList fallback = ui::TunedSampling{}.dry_sequence_breakers;
  return {QStringLiteral("sampling/dry_sequence_breakers"), breakers_text(fallback),
          [=](AppSettings& s) { field(s) = fallback; },
          [=](const AppSettings& s) { return QVariant(breakers_text(field(s))); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<QString> text = stored::text(value);
            const QJsonDocument document =
                text ? QJsonDocument::fromJson(text->toUtf8()) : QJsonDocument();
            QStringList breakers;
            for (const QJsonValue& item : document.array()) {
              if (!item.isString() || item.toString().isEmpty()) {
                return QStringLiteral("is not a JSON array of non-empty strings");
              }
              breakers << item.toString();
            }
            if (!document.isArray()) {
              return QStringLiteral("is not a JSON array of non-empty strings");
            }
            field(s) = breakers;
            return {};
          }};
}

SettingRow devices_row() {
  auto field = QUIRE_FIELD(engine.devices);
  return {QStringLiteral("engine/devices"), QString(),
          [=](AppSettings& s) { field(s) = QList<int>(); },
          [=](const AppSettings& s) { return QVariant(stored::join(field(s))); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            std::optional<QList<int>> devices = stored::integer_list(value);
            if (!devices) return QStringLiteral("is not a list of device numbers");
            for (int device : *devices) {
              if (!limits::kDeviceIndex.contains(device)) {
                return QStringLiteral("names a device ") +
                       outside(limits::kDeviceIndex.min, limits::kDeviceIndex.max);
              }
            }
            std::sort(devices->begin(), devices->end());
            devices->erase(std::unique(devices->begin(), devices->end()), devices->end());
            field(s) = *devices;
            return {};
          }};
}

SettingRow manual_gb_row() {
  auto field = QUIRE_FIELD(engine.manual_gb);
  return {QStringLiteral("engine/manual_gb"), QString(),
          [=](AppSettings& s) { field(s) = QList<double>(); },
          [=](const AppSettings& s) { return QVariant(stored::join(field(s))); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            std::optional<QList<double>> gb = stored::real_list(value);
            if (!gb) return QStringLiteral("is not a list of GB per device");
            for (double each : *gb) {
              if (!limits::kManualGb.contains(each)) {
                return QStringLiteral("holds a value that ") +
                       outside(limits::kManualGb.min, limits::kManualGb.max);
              }
            }
            while (!gb->isEmpty() && gb->constLast() <= 0)
              gb->removeLast();
            field(s) = *gb;
            return {};
          }};
}

// Per-device reserves by device index. A device without a figure of its own
// is stored as an empty place ("", 1024: device 0 keeps the common reserve),
// which reads plainer in the file than a sentinel number would.
SettingRow device_reserves_row() {
  auto field = QUIRE_FIELD(engine.device_reserve_mib);
  return {QStringLiteral("engine/device_reserve_mib"), QString(),
          [=](AppSettings& s) { field(s) = QList<double>(); },
          [=](const AppSettings& s) {
            QStringList pieces;
            for (double mib : field(s))
              pieces.append(mib < 0 ? QString() : stored::number(mib));
            return QVariant(pieces.join(QStringLiteral(", ")));
          },
          [=](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<QString> text = stored::text(value);
            if (!text) return QStringLiteral("is not a list of MiB per device");
            QList<double> reserves;
            if (!text->trimmed().isEmpty()) {
              for (const QString& piece : text->split(QLatin1Char(','))) {
                if (piece.trimmed().isEmpty()) {
                  reserves.append(-1);
                  continue;
                }
                const std::optional<double> mib = stored::real(QVariant(piece));
                if (!mib) return QStringLiteral("is not a list of MiB per device");
                if (!limits::kReserveMib.contains(*mib)) {
                  return QStringLiteral("holds a value that ") +
                         outside(limits::kReserveMib.min, limits::kReserveMib.max);
                }
                reserves.append(*mib);
              }
            }
            while (!reserves.isEmpty() && reserves.constLast() < 0)
              reserves.removeLast();
            field(s) = reserves;
            return {};
          }};
}

SettingRow split_row() {
  auto field = QUIRE_FIELD(engine.split);
  return {QStringLiteral("engine/split"), QStringLiteral("fill"),
          [=](AppSettings& s) { field(s) = ui::EngineSettings::Split::Fill; },
          [=](const AppSettings& s) { return QVariant(ui::split_id(field(s))); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            bool ok = false;
            const std::optional<QString> text = stored::text(value);
            const ui::EngineSettings::Split split = ui::parse_split(text.value_or(QString()), &ok);
            if (!ok) return QStringLiteral("is not one of fill, balanced, manual");
            field(s) = split;
            return {};
          }};
}

// A device index, or -1 for each layer's pages on its own device. Kept when
// the device is absent: the panel says so and the file may move to a machine
// that has it.
SettingRow cache_device_row() {
  auto field = QUIRE_FIELD(engine.cache_device);
  return {QStringLiteral("engine/cache_device"), QStringLiteral("-1"),
          [=](AppSettings& s) { field(s) = -1; },
          [=](const AppSettings& s) { return QVariant(QString::number(field(s))); },
          [=](AppSettings& s, const QVariant& value) -> QString {
            const std::optional<int> device = stored::integer(value);
            if (!device || !limits::kCacheDevice.contains(*device)) {
              return QStringLiteral(
                         "is not a device number from %1 to %2, or -1 for the device "
                         "of each layer")
                  .arg(limits::kDeviceIndex.min)
                  .arg(limits::kDeviceIndex.max);
            }
            field(s) = *device;
            return {};
          }};
}

std::vector<SettingRow> make_rows() {
  return {
      // The model and where it goes.
      text_row("engine/model_directory", QUIRE_FIELD(engine.model_directory), QString()),
      recent_models_row(),
      // A remote engine instead of the folder; its key is in the keyring.
      text_row("engine/remote_url", QUIRE_FIELD(engine.remote_url), QString()),
      text_row("engine/remote_model", QUIRE_FIELD(engine.remote_model), QString()),
      choice_row("engine/backend", QUIRE_FIELD(engine.backend), QStringLiteral("auto"),
                 ui::backend_ids()),
      devices_row(),
      split_row(),
      manual_gb_row(),
      // The planner's own default: room for the CUDA context and a desktop.
      real_row("engine/reserve_mib", QUIRE_FIELD(engine.reserve_mib), 256, limits::kReserveMib),
      // Devices that need other headroom (one drives the desktop); the common
      // reserve above stays the figure of every other device, so a file from
      // before per-device reserves reads exactly as it did.
      device_reserves_row(),
      // Context and cache. The cache holds two full contexts so a second chat
      // (or an edited turn) does not evict the first.
      integer_row("engine/max_context", QUIRE_FIELD(engine.max_context), 8192, limits::kMaxContext),
      cache_format_row(),
      integer_row("engine/cache_tokens", QUIRE_FIELD(engine.cache_tokens), 16384,
                  limits::kCacheTokens),
      // Off here; load() gives a file without this key (the first run) a
      // share of the memory free then (host_cache_default.h says how much).
      integer_row("engine/host_cache_mib", QUIRE_FIELD(engine.host_cache_mib), 0,
                  limits::kHostCacheMib),
      // On, at the engine's default size (kDefaultDiskCacheBytes, 4 GiB).
      boolean_row("engine/disk_cache", QUIRE_FIELD(engine.disk_cache), true),
      integer_row("engine/disk_cache_mib", QUIRE_FIELD(engine.disk_cache_mib),
                  limits::kDefaultDiskCacheMib, limits::kDiskCacheMib),
      // As in the engine (kDefaultResidualWindow, which says why).
      integer_row("engine/residual_window", QUIRE_FIELD(engine.residual_window), 4,
                  limits::kResidualWindow),
      // Pages as replies grow: with 8 replies at once in a 2,048-token cache
      // (quire-cli bench, 64-token prompts, 256 new tokens) all 8 ran at once
      // instead of 4 and the first token came after 0.06 s instead of 0.49 s,
      // for 4 paused replies; the CLI's --reserve-pages has the same default.
      choice_row("engine/reserve_pages", QUIRE_FIELD(engine.reserve_pages),
                 QStringLiteral("on-demand"), ui::reservation_ids()),
      // Every page on the devices, each layer's beside it: the engine's and
      // the CLI's defaults (--cache-residence, --cache-device).
      choice_row("engine/cache_residence", QUIRE_FIELD(engine.cache_residence),
                 QStringLiteral("device"), ui::cache_residence_ids()),
      cache_device_row(),
      // The engine runtime's own defaults.
      integer_row("engine/max_batch", QUIRE_FIELD(engine.max_batch), 16, limits::kMaxBatch),
      integer_row("engine/chunk_size", QUIRE_FIELD(engine.chunk_size), 256, limits::kChunkSize),
      // Sampling for new chats.
      real_row("sampling/temperature", QUIRE_FIELD(engine.sampling.temperature), 0.8,
               limits::kTemperature),
      real_row("sampling/top_p", QUIRE_FIELD(engine.sampling.top_p), 0.95, limits::kTopP),
      real_row("sampling/min_p", QUIRE_FIELD(engine.sampling.min_p), 0.05, limits::kMinP),
      real_row("sampling/repetition_penalty", QUIRE_FIELD(engine.sampling.repetition_penalty), 1.0,
               limits::kRepetitionPenalty),
      integer_row("sampling/top_k", QUIRE_FIELD(engine.sampling.top_k), 40, limits::kTopK),
      // Speculative decoding: off, as in the engine and the CLI (--draft);
      // the engine's default draft length.
      choice_row("speculative/method", QUIRE_FIELD(engine.drafts.method), QStringLiteral("off"),
                 ui::draft_method_ids()),
      integer_row("speculative/max_tokens", QUIRE_FIELD(engine.drafts.max_tokens), 4,
                  limits::kDraftTokens),
      text_row("speculative/model", QUIRE_FIELD(engine.drafts.model_directory), QString()),
      // Chat.
      text_row("chat/system_prompt", QUIRE_FIELD(engine.system_prompt), QString()),
      text_row("chat/prompt_format", QUIRE_FIELD(engine.prompt_format), QStringLiteral("auto"),
               Empty::Refused),
      choice_row("chat/context_overflow", QUIRE_FIELD(engine.context_overflow),
                 QStringLiteral("drop_oldest"), ui::context_overflow_ids()),
      // The OpenAI-compatible server inside the application: off unless
      // asked for, on quire-cli serve's port.
      boolean_row("server/enabled", QUIRE_FIELD(server.enabled), false),
      integer_row("server/port", QUIRE_FIELD(server.port), limits::kDefaultServerPort,
                  limits::kServerPort),
      // Window.
      bytes_row("window/geometry", QUIRE_FIELD(window.geometry)),
      bytes_row("window/state", QUIRE_FIELD(window.state)),
      bytes_row("window/splitter", QUIRE_FIELD(window.splitter)),
      // Preferences.
      choice_row("ui/theme", QUIRE_FIELD(preferences.theme), QStringLiteral("system"),
                 {QStringLiteral("system"), QStringLiteral("light"), QStringLiteral("dark")}),
      integer_row("ui/chat_font_point_size", QUIRE_FIELD(preferences.chat_font_point_size), 0,
                  IntRange{0, 72}),
      boolean_row("ui/show_memory_panel", QUIRE_FIELD(preferences.show_memory_panel), true),
      boolean_row("ui/send_with_enter", QUIRE_FIELD(preferences.send_with_enter), true),
      text_row("ui/last_chat", QUIRE_FIELD(preferences.last_chat), QString()),
      // DRY, XTC, top-nσ and mirostat for new chats: off, as in the engine.
      real_row("sampling/dry_multiplier", QUIRE_FIELD(engine.sampling.tuned.dry_multiplier), 0.0,
               limits::kDryMultiplier),
      real_row("sampling/dry_base", QUIRE_FIELD(engine.sampling.tuned.dry_base), 1.75,
               limits::kDryBase),
      integer_row("sampling/dry_allowed_length",
                  QUIRE_FIELD(engine.sampling.tuned.dry_allowed_length), 2,
                  limits::kDryAllowedLength),
      integer_row("sampling/dry_range", QUIRE_FIELD(engine.sampling.tuned.dry_range), 0,
                  limits::kDryRange),
      dry_breakers_row(),
      real_row("sampling/xtc_threshold", QUIRE_FIELD(engine.sampling.tuned.xtc_threshold), 0.1,
               limits::kXtcThreshold),
      real_row("sampling/xtc_probability", QUIRE_FIELD(engine.sampling.tuned.xtc_probability), 0.0,
               limits::kXtcProbability),
      real_row("sampling/top_n_sigma", QUIRE_FIELD(engine.sampling.tuned.top_n_sigma), 0.0,
               limits::kTopNSigma),
      boolean_row("sampling/mirostat", QUIRE_FIELD(engine.sampling.tuned.mirostat), false),
      real_row("sampling/mirostat_tau", QUIRE_FIELD(engine.sampling.tuned.mirostat_tau), 5.0,
               limits::kMirostatTau),
      real_row("sampling/mirostat_eta", QUIRE_FIELD(engine.sampling.tuned.mirostat_eta), 0.1,
               limits::kMirostatEta),
      // The preset new chats start from: none unless chosen.
      text_row("chat/default_preset", QUIRE_FIELD(engine.default_preset), QString()),
  };
}

#undef QUIRE_FIELD

}  // namespace

const std::vector<SettingRow>& setting_rows() {
  static const std::vector<SettingRow> rows = make_rows();
  return rows;
}

}  // namespace quire::app
