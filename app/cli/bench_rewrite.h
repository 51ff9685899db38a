#pragma once

// quire-cli bench's rewrite workload: the decode that speculative decoding
// is for. The prompt holds a block of code and asks for it again with one
// change, so a reply that follows the request repeats long runs of its
// prompt, which the n-gram drafter proposes and the model confirms several
// tokens a step.

#include <nlohmann/json.hpp>
#include <string>

#include "generation_options.h"

namespace quire::cli {

struct RewriteWorkload {
  std::string directory;    // the model's, for its prompt format
  std::string prompt_file;  // empty: the built-in request
  int tokens = 128;         // generated per run; 0 skips the workload
  int repeats = 3;
  engine::DraftSettings draft;
};

// The user message: the file's text, or the built-in request to rewrite a
// function with one variable renamed. A file that cannot be read or is
// empty is a UsageError naming --prompt-file.
std::string rewrite_message(const std::string& prompt_file);

// Renders the message as one user turn in the model's format and decodes
// `tokens` greedy tokens from it `repeats` times (the end-of-text token does
// not stop it). Returns prompt_tokens, generated_tokens, tokens_per_s (the
// median run), runs_tokens_per_s and the drafting figures of all runs
// together (bench_draft_fields).
nlohmann::ordered_json measure_rewrite(LoadedSession& session, const RewriteWorkload& workload);

// drafted_tokens, accepted_tokens, acceptance_rate and tokens_per_step of
// jobs that generated `generated` tokens in all, added to `entry`.
void add_draft_fields(nlohmann::ordered_json& entry, std::int64_t generated, std::int64_t drafted,
                      std::int64_t accepted);

// ", 72% of drafts accepted, 2.9 tokens per step" for an entry with the
// fields above, or nothing for one that drafted nothing.
std::string draft_text(const nlohmann::ordered_json& entry);

}  // namespace quire::cli
