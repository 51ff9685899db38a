#include "reply_stats.h"

#include <QStringList>
#include <algorithm>

namespace quire::gui {

QString stop_reason_name(engine::StopReason reason) {
  switch (reason) {
    case engine::StopReason::Eos:
    case engine::StopReason::StopToken:
      return QStringLiteral("eos");
    case engine::StopReason::StopString:
      return QStringLiteral("stop_string");
    case engine::StopReason::MaxNewTokens:
      return QStringLiteral("max_tokens");
    case engine::StopReason::Cancelled:
      return QStringLiteral("cancelled");
    case engine::StopReason::Error:
      return QStringLiteral("error");
  }
  return QStringLiteral("error");
}

store::GenerationStats generation_stats(const engine::JobResult& result, const QString& model) {
  const engine::JobStatistics& statistics = result.statistics;
  store::GenerationStats stats;
  stats.prompt_tokens = static_cast<int>(statistics.prompt_tokens);
  stats.cached_tokens = static_cast<int>(statistics.cached_tokens);
  stats.computed_tokens = static_cast<int>(statistics.computed_tokens);
  stats.disk_tokens = static_cast<int>(statistics.disk_tokens);
  stats.generated_tokens = static_cast<int>(statistics.generated_tokens);
  stats.time_to_first_token_ms = statistics.time_to_first_token * 1000.0;
  stats.tokens_per_second = statistics.decode_tokens_per_second();
  if (result.stop_reason == engine::StopReason::Cancelled && statistics.decode_seconds > 0) {
    // Stopped early, perhaps after one token: the rate of what was generated
    // in the time it decoded, rather than 0.
    stats.tokens_per_second =
        static_cast<double>(statistics.generated_tokens) / statistics.decode_seconds;
  }
  stats.drafted_tokens = static_cast<int>(statistics.drafted_tokens);
  stats.accepted_tokens = static_cast<int>(statistics.accepted_tokens);
  stats.stop_reason = stop_reason_name(result.stop_reason);
  stats.model = model;
  return stats;
}

QString first_token_text(double milliseconds) {
  // A reply served almost wholly from the cache starts in milliseconds;
  // "0.00 s" would say it took no time at all.
  if (milliseconds < 999.5) {
    return QStringLiteral("%1 ms to first token").arg(std::max(1, qRound(milliseconds)));
  }
  return QStringLiteral("%1 s to first token").arg(milliseconds / 1000.0, 0, 'f', 2);
}

QString drafts_text(const store::GenerationStats& stats) {
  if (stats.drafted_tokens <= 0) return {};
  const int percent = qRound(100.0 * stats.accepted_tokens / stats.drafted_tokens);
  // Each step that verified drafts gave its accepted drafts and one token of
  // the model's own: the reply took generated - accepted steps.
  const int steps = stats.generated_tokens - stats.accepted_tokens;
  const double per_step = steps > 0 ? static_cast<double>(stats.generated_tokens) / steps : 0.0;
  return QStringLiteral("drafts %1% accepted, %2 tok/step").arg(percent).arg(per_step, 0, 'f', 1);
}

QString stats_text(const store::GenerationStats& stats) {
  QStringList parts;
  parts << (stats.generated_tokens == 1 ? QStringLiteral("1 token")
                                        : QStringLiteral("%1 tokens").arg(stats.generated_tokens));
  if (stats.tokens_per_second > 0) {
    parts << QStringLiteral("%1 tok/s").arg(stats.tokens_per_second, 0, 'f', 1);
  }
  if (const QString drafts = drafts_text(stats); !drafts.isEmpty()) parts << drafts;
  if (stats.time_to_first_token_ms > 0) parts << first_token_text(stats.time_to_first_token_ms);
  if (stats.prompt_tokens > 0 && stats.cached_tokens >= 0) {
    QString cached = QStringLiteral("%1 of %2 prompt tokens from the cache")
                         .arg(stats.cached_tokens)
                         .arg(stats.prompt_tokens);
    // A chat resumed after a restart: its pages were read, not computed.
    if (stats.disk_tokens > 0) cached += QStringLiteral(", %1 from disk").arg(stats.disk_tokens);
    parts << cached;
  } else if (stats.prompt_tokens > 0) {
    // A remote engine that does not report its cache.
    parts << QStringLiteral("%1 prompt tokens").arg(stats.prompt_tokens);
  }
  if (!stats.endpoint.isEmpty()) parts << QStringLiteral("from %1").arg(stats.endpoint);
  if (stats.stop_reason == QLatin1String("cancelled")) parts << QStringLiteral("stopped");
  if (stats.stop_reason == QLatin1String("max_tokens")) parts << QStringLiteral("length limit");
  return parts.join(QStringLiteral(" · "));
}

}  // namespace quire::gui
