#pragma once

// --draft and --draft-tokens: speculative decoding for the commands that
// generate (generate, chat, serve, bench), and the figures they print about
// it: prompt lookup (ngram) or a draft model, given as its directory.

#include <cstdint>
#include <string>

#include "quire/engine/generator/job.h"

namespace CLI {
class App;
}

namespace quire::cli {

// What --draft names.
struct DraftChoice {
  enum class Kind : std::uint8_t { Off, Ngram, Model };
  Kind kind = Kind::Off;
  std::string model_directory;  // Kind::Model: a smaller model with the same tokenizer
};

// "off", "ngram" or an existing directory (a draft model). Anything else
// throws UsageError naming the value and the choices.
DraftChoice parse_draft_choice(const std::string& value);

// The engine's settings for a choice (a draft model's directory is loaded by
// load_session; see DraftOptions::model_directory).
engine::DraftSettings draft_settings(const DraftChoice& choice, int max_tokens);

struct DraftOptions {
  std::string draft = "off";
  int max_tokens = 4;

  void add_to(CLI::App& command);
  // Throws UsageError for a choice the engine cannot take; commands call it
  // before loading the model.
  engine::DraftSettings settings() const;
  // The draft model's directory for load_session; empty unless --draft names one.
  std::string model_directory() const;
};

// A job's speculative decoding in figures. Every verifying step yields its
// accepted drafts and the model's own next token, so the job took
// generated - accepted forward steps of the model.
struct DraftFigures {
  std::int64_t drafted = 0;
  std::int64_t accepted = 0;
  double acceptance_rate = 0;  // accepted / drafted; 0 when nothing was drafted
  double tokens_per_step = 0;  // generated tokens / forward steps; 0 when none were generated
};

DraftFigures draft_figures(const engine::JobStatistics& statistics);

// "drafts: 29 of 40 accepted (72%), 2.9 tokens per step", for the lines
// that end a reply.
std::string draft_summary(const engine::JobStatistics& statistics);

}  // namespace quire::cli
