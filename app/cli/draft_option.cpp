#include "draft_option.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "cli_support.h"

namespace quire::cli {

DraftChoice parse_draft_choice(const std::string& value) {
  if (value == "off") return {};
  if (value == "ngram") return {DraftChoice::Kind::Ngram, {}};
  std::error_code error;
  if (!value.empty() && std::filesystem::is_directory(value, error)) {
    return {DraftChoice::Kind::Model, value};
  }
  throw UsageError("--draft " + value + ": expected ngram, off or the directory of a draft model");
}

engine::DraftSettings draft_settings(const DraftChoice& choice, int max_tokens) {
  engine::DraftSettings settings;
  settings.max_tokens = max_tokens;
  switch (choice.kind) {
    case DraftChoice::Kind::Off:
      settings.method = engine::DraftSettings::Method::Off;
      break;
    case DraftChoice::Kind::Ngram:
      settings.method = engine::DraftSettings::Method::Ngram;
      break;
    case DraftChoice::Kind::Model:
      settings.method = engine::DraftSettings::Method::Model;
      break;
  }
  engine::validate(settings);
  return settings;
}

void DraftOptions::add_to(CLI::App& command) {
  command
      .add_option("--draft", draft,
                  "Speculative decoding: ngram drafts tokens from the text so far, DIR drafts "
                  "them with a smaller model of the same family (the same tokenizer), and the "
                  "model verifies them, several tokens a step where drafts are right; off "
                  "decodes one token a step. Greedy replies keep their text, sampled ones "
                  "their distribution")
      ->capture_default_str()
      ->type_name("ngram|DIR|off")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            parse_draft_choice(value);
            return {};
          },
          "", "draft choice"));
  command.add_option("--draft-tokens", max_tokens, "Longest draft verified in one step")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
}

engine::DraftSettings DraftOptions::settings() const {
  return draft_settings(parse_draft_choice(draft), max_tokens);
}

std::string DraftOptions::model_directory() const {
  return parse_draft_choice(draft).model_directory;
}

DraftFigures draft_figures(const engine::JobStatistics& statistics) {
  DraftFigures figures;
  figures.drafted = statistics.drafted_tokens;
  figures.accepted = statistics.accepted_tokens;
  if (figures.drafted > 0) {
    figures.acceptance_rate =
        static_cast<double>(figures.accepted) / static_cast<double>(figures.drafted);
  }
  const std::int64_t steps = statistics.generated_tokens - statistics.accepted_tokens;
  if (statistics.generated_tokens > 0 && steps > 0) {
    figures.tokens_per_step =
        static_cast<double>(statistics.generated_tokens) / static_cast<double>(steps);
  }
  return figures;
}

std::string draft_summary(const engine::JobStatistics& statistics) {
  const DraftFigures figures = draft_figures(statistics);
  char text[160];
  std::snprintf(text, sizeof text, "drafts: %lld of %lld accepted (%d%%), %.1f tokens per step",
                static_cast<long long>(figures.accepted), static_cast<long long>(figures.drafted),
                static_cast<int>(std::lround(100.0 * figures.acceptance_rate)),
                figures.tokens_per_step);
  return text;
}

}  // namespace quire::cli
