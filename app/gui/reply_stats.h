#pragma once

// A finished job's statistics as the store keeps them and the chat view and
// status line show them.

#include <QString>

#include "quire/app/store/chat_types.h"
#include "quire/engine/generator/job.h"

namespace quire::gui {

// "eos", "stop_string", "max_tokens", "cancelled" or "error".
QString stop_reason_name(engine::StopReason reason);

store::GenerationStats generation_stats(const engine::JobResult& result, const QString& model);

// "12 ms to first token" below a second, "1.25 s to first token" above.
QString first_token_text(double milliseconds);

// "drafts 72% accepted, 2.9 tok/step" for a reply that drafted (speculative
// decoding), else empty.
QString drafts_text(const store::GenerationStats& stats);

// "212 tokens · 34.1 tok/s · drafts 72% accepted, 2.9 tok/step · 0.18 s to
// first token · 480 of 512 prompt tokens from the cache", for the line under
// a reply; the drafts only where it drafted, and ", 256 from disk" after the
// cache's figure where pages were read from the disk tier.
QString stats_text(const store::GenerationStats& stats);

}  // namespace quire::gui
