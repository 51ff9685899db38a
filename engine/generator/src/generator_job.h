#pragma once

// A job as the generator keeps it, shared by the files that make up
// Generator (generator.cpp, generator_memory.cpp).

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "quire/engine/generator/banned_strings.h"
#include "quire/engine/generator/draft_length.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/generator/token_constraint.h"

namespace quire::engine {

struct Generator::Job {
  Job(JobId job_id, JobRequest job_request, const Tokenizer& tokenizer,
      std::vector<cache::TokenId> eos_tokens)
      : id(job_id),
        request(std::move(job_request)),
        tokens(request.prompt),
        sampler(request.sampling),
        detokenizer(tokenizer, !request.special_tokens_in_text),
        stops(request.stop_strings, request.stop_tokens, std::move(eos_tokens)),
        bans(request.banned_strings),
        submitted(Clock::now()) {}

  JobId id;
  JobRequest request;
  // Prompt and generated tokens: what the cache holds, or will hold on resumption.
  std::vector<cache::TokenId> tokens;
  // Sampled and streamed, not yet in the cache.
  std::optional<cache::TokenId> pending;
  std::optional<cache::SequenceId> sequence;
  std::vector<cache::TokenRange> ranges;  // prompt positions still to compute
  std::vector<std::int32_t> adjusted;     // the candidate path's gathered ids, this step
  // Speculative decoding: the drafter when the request asks for one, and in
  // a step that verifies drafts, the job's last token followed by them (in
  // the cache past `tokens`, as the forward pass computes them) and the
  // distributions they were drawn from (empty for a point mass: DraftProposal).
  std::optional<NgramDrafter> drafter;
  std::optional<DraftLength> draft_length;  // how many to draft next (drafting jobs)
  std::vector<cache::TokenId> verifying;
  std::vector<DraftDistribution> drafted_from;
  int skips = 0;
  int failed_admissions = 0;  // in a row, for want of device memory
  int generated = 0;
  bool cancelled = false;
  bool admitted_once = false;
  // Alternatives (submit_alternatives): the first job's waiting followers,
  // and a follower's leader, whose prompt it branches from. A follower is
  // not admitted while it has one.
  std::vector<JobId> followers;
  std::optional<JobId> leader;
  Sampler sampler;
  // The request's grammar with this job's matcher; null when unconstrained.
  std::unique_ptr<TokenConstraint> constraint;
  StreamingDetokenizer detokenizer;
  StopMatcher stops;
  // Banned strings (generator_bans.cpp): the guard, the tokens banned at a
  // reply index after a banned string began there, and the mask that bans
  // them for one draw.
  BannedStringGuard bans;
  std::map<int, std::vector<cache::TokenId>> position_bans;
  std::vector<std::uint32_t> ban_mask;
  // Images (generator_images.cpp): each image's embeddings once computed,
  // by its index in request.images, kept while the job lives; and the rows
  // and both-ways ranges its prefill chunk gives the forward pass this step.
  std::map<std::size_t, std::vector<float>> image_rows;
  std::vector<ForwardPass::EmbeddedRows> step_rows;
  std::vector<cache::TokenRange> step_both_ways;
  // M-RoPE (generator_rope.cpp): the prompt's (t, h, w) rotary ids, three
  // per token, for a model with M-RoPE and a prompt with images (empty
  // otherwise: every axis takes the slot); a token past the prompt turns by
  // its slot plus rope_delta. step_rope holds this step's ids.
  std::vector<std::int32_t> rope_ids;
  std::int32_t rope_delta = 0;
  std::vector<std::int32_t> step_rope;
  JobResult result;
  Clock::time_point submitted, admitted, first_token, last_token;
};

}  // namespace quire::engine
