#pragma once

// The samplers people tune beyond temperature, top-p and min-p: DRY, XTC,
// top-nσ and mirostat v2, as plain data for the settings (global defaults)
// and a chat's "Advanced sampling" group. The engine's SamplingSettings says
// what each does; app/ converts. Every default turns its sampler off.

#include <QString>
#include <QStringList>

#include "quire/ui/settings_limits.h"

namespace quire::ui {

struct TunedSampling {
  double dry_multiplier = 0;  // 0: off
  double dry_base = 1.75;
  int dry_allowed_length = 2;
  int dry_range = 0;  // tokens searched; 0: the whole context
  QStringList dry_sequence_breakers{QStringLiteral("\n"), QStringLiteral(":"), QStringLiteral("\""),
                                    QStringLiteral("*")};
  double xtc_threshold = 0.1;
  double xtc_probability = 0;  // 0: off
  double top_n_sigma = 0;      // 0: off
  bool mirostat = false;       // mirostat v2
  double mirostat_tau = 5;
  double mirostat_eta = 0.1;

  friend bool operator==(const TunedSampling&, const TunedSampling&) = default;
};

namespace limits {
inline constexpr RealRange kDryMultiplier{0, 5, 2};
inline constexpr RealRange kDryBase{1, 4, 2};
inline constexpr IntRange kDryAllowedLength{1, 20};
inline constexpr IntRange kDryRange{0, 1 << 20};
inline constexpr RealRange kXtcThreshold{0, 0.5, 2};
inline constexpr RealRange kXtcProbability{0, 1, 2};
inline constexpr RealRange kTopNSigma{0, 5, 2};
inline constexpr RealRange kMirostatTau{0.1, 20, 2};
inline constexpr RealRange kMirostatEta{0.01, 1, 2};
}  // namespace limits

}  // namespace quire::ui
