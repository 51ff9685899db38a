#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quire/cache/types.h"
#include "quire/engine/generator/image_input.h"
#include "quire/engine/generator/ngram_drafter.h"
#include "quire/engine/generator/sampler.h"
#include "quire/engine/generator/stop_conditions.h"
#include "quire/engine/grammar/grammar.h"

namespace quire::engine {

using JobId = std::uint64_t;

// What a job took, for the status line, the chat store and the benchmarks.
struct JobStatistics {
  std::int64_t prompt_tokens = 0;
  std::int64_t cached_tokens = 0;    // prompt tokens served from the cache
  std::int64_t disk_tokens = 0;      // of those, read back from the disk tier
  std::int64_t computed_tokens = 0;  // prompt tokens computed
  std::int64_t generated_tokens = 0;
  int preemptions = 0;
  // Speculative decoding (JobRequest::draft): tokens drafted, and of those
  // the ones verification kept; steps that verified drafts.
  std::int64_t drafted_tokens = 0;
  std::int64_t accepted_tokens = 0;
  std::int64_t draft_steps = 0;
  // Times a banned string sent the reply back to draw a token again
  // (JobRequest::banned_strings), counting draws refused on the spot.
  std::int64_t banned_rewinds = 0;
  double queue_seconds = 0;        // submit to admission
  double prefill_seconds = 0;      // admission to the first token
  double decode_seconds = 0;       // first token to the last (to the stop when cancelled)
  double time_to_first_token = 0;  // submit to the first token

  double decode_tokens_per_second() const {
    return decode_seconds > 0 && generated_tokens > 1
               ? static_cast<double>(generated_tokens - 1) / decode_seconds
               : 0.0;
  }
};

struct JobResult {
  JobId id = 0;
  std::string text;                    // everything streamed
  std::vector<cache::TokenId> tokens;  // generated ids, the stopping token excluded
  StopReason stop_reason = StopReason::Eos;
  std::string stop_string;  // the stop string that matched, if any
  std::string error;        // for StopReason::Error: why, for people
  JobStatistics statistics;
  // Which of Generator::submit_alternatives' replies this is; 0 for a lone job.
  int alternative = 0;
};

// Speculative decoding for one job: each decode step drafts up to
// `max_tokens` tokens cheaply and the model verifies them in the same
// forward pass as the job's last token. A greedy job keeps the longest
// prefix that equals its own greedy choices and then its own next token:
// the reply is token for token what it is without drafting. A sampled job
// keeps drafts by speculative sampling's rejection rule: each token is
// distributed exactly as without drafting (every sampling setting applies),
// and a seed still reproduces the reply, though not the same reply as
// without drafting. Jobs with a grammar, and alternatives while they branch,
// decode as usual with the setting ignored.
struct DraftSettings {
  // Ngram: prompt lookup (NgramDrafter). Model: the generator's draft model
  // (Generator::set_draft_model), a smaller model with the same tokenizer.
  enum class Method : std::uint8_t { Off, Ngram, Model };
  Method method = Method::Off;
  int max_tokens = 4;  // drafted per step, at most (1..64)
  NgramSettings ngram;
};

// Throws std::invalid_argument naming the setting out of range; Generator::
// submit checks a request that drafts.
void validate(const DraftSettings& settings);

struct JobRequest {
  std::vector<cache::TokenId> prompt;
  // The images the prompt holds, in order: each one's positions in the
  // prompt hold image_position_ids() of its digest. Generator::submit
  // refuses positions that do not, ids outside the vocabulary that no image
  // covers, overlapping images, and an image attending both ways that one
  // step cannot hold. A job with images does not draft (DraftSettings): a
  // drafter would read image positions as tokens.
  std::vector<PromptImagePlacement> images;
  SamplingSettings sampling;
  std::vector<std::string> stop_strings;
  std::vector<cache::TokenId> stop_tokens;  // in addition to the model's EOS
  bool stop_at_eos = true;
  int max_new_tokens = 256;
  // Text the reply must never show, matched without regard to case across
  // tokens (BannedStringGuard). Text that may begin one is held back; when
  // one appears the reply goes back to the token where it began and draws
  // that position again with the token banned there, as exllamav2 does.
  // A job with banned strings does not draft; they cannot be combined with
  // a grammar (Generator::submit refuses it), whose matcher cannot go back.
  std::vector<std::string> banned_strings;
  // Structured output: when set, every sampled token keeps the reply inside
  // this grammar (grammar::compile_json_schema), the reply may end on EOS or
  // a stop token only where the grammar's text is complete, and it ends by
  // itself (StopReason::Eos) once complete with nothing more to add. A stop
  // string still cuts the reply where it appears.
  std::shared_ptr<const grammar::Grammar> grammar;
  // With triggers the grammar is lazy: the reply is free until its text
  // (with special_tokens_in_text, the markers spelled out) shows one of
  // them; from that trigger's first byte on the reply must be a text of the
  // grammar, which begins with the trigger. A strict tool's call under
  // tool_choice "auto": free text, or a call held to the tool's schema.
  std::vector<grammar::GrammarTrigger> grammar_triggers;
  // The reply's text spells out the special tokens it holds (as
  // Tokenizer::decode(ids, false)), for replies whose tool calls are marked
  // by them (<|python_tag|>, [TOOL_CALLS], Harmony's channels). A stop token
  // or EOS that ends the reply is never part of the text.
  bool special_tokens_in_text = false;
  // Off by default; see DraftSettings.
  DraftSettings draft;
  // Shown where this job's pages are described (the chat's title).
  std::string label;
  // Newly decided text, in order; never half a UTF-8 character. Called on the
  // thread that runs Generator::step().
  std::function<void(JobId, std::string_view text)> on_text;
  // Once, when the job ends for any reason.
  std::function<void(const JobResult&)> on_done;
};

}  // namespace quire::engine
