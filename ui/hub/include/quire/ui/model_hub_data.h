#pragma once

// What the "Get models" window shows, as plain values: app/ fills them from
// the Hub client, the planner and the downloads, and the window only draws
// them and says what the user asked for.

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace quire::ui {

// The weight formats the search can be narrowed to.
enum class HubFormat { Any, Exl2, Exl3, GptqAwq, Fp8, Fp16 };

struct HubSearchRequest {
  QString text;
  QString sort = QStringLiteral("downloads");  // downloads, likes, lastModified
  HubFormat format = HubFormat::Any;

  friend bool operator==(const HubSearchRequest&, const HubSearchRequest&) = default;
};

struct HubModelRow {
  QString repo;  // org/name
  qint64 downloads = 0;
  qint64 likes = 0;
  QString last_modified;  // ISO date
  QStringList formats;    // "EXL2", "EXL3", ... as its tags say
  bool gated = false;

  friend bool operator==(const HubModelRow&, const HubModelRow&) = default;
};

// The planner's answer for one quantization on the user's devices.
enum class FitVerdict {
  Pending,      // its headers are being read
  Fits,         // with the settings' context and cache coding
  FitsSmaller,  // only with a smaller context or cache coding (fit_label says which)
  DoesNotFit,
  Unsupported,  // Quire cannot run it (detail says why)
  Unknown,      // its headers could not be read (detail says why)
};

struct QuantizationRow {
  QString key;       // revision or revision/subfolder
  QString label;     // "4.0bpw", "main", "main: exl3/4.0bpw"
  qint64 bytes = 0;  // the download
  QString weights;   // "EXL2 4.13 bits per weight" once the headers are read
  FitVerdict verdict = FitVerdict::Pending;
  qint64 largest_context_tokens = 0;    // Fits and FitsSmaller
  bool context_is_model_limit = false;  // the model's own limit set it, not memory
  QString fit_label;                    // FitsSmaller: "q8 cache", "a 12,288-token cache"
  QString detail;                       // DoesNotFit, Unsupported and Unknown: why
  bool downloaded = false;
  bool downloading = false;

  friend bool operator==(const QuantizationRow&, const QuantizationRow&) = default;
};

struct DownloadRow {
  enum class State { Queued, Running, Paused, Failed, Done };
  QString id;
  QString title;  // "org/name 4.0bpw"
  State state = State::Queued;
  qint64 bytes_done = 0;
  qint64 bytes_total = 0;
  double bytes_per_second = 0;  // 0: not measured yet
  QString message;              // the last note, or the error

  friend bool operator==(const DownloadRow&, const DownloadRow&) = default;
};

struct LocalModelRow {
  QString id;      // what removal and opening name
  QString title;   // "org/name 4.0bpw", or the folder's name
  QString folder;  // the model folder
  qint64 bytes = 0;
  bool removable = false;  // in the shared cache (Quire's own folder is the user's)

  friend bool operator==(const LocalModelRow&, const LocalModelRow&) = default;
};

}  // namespace quire::ui

Q_DECLARE_METATYPE(quire::ui::HubSearchRequest)
