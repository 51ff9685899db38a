// quire-cli tokenize-bench: encoding speed of a model directory's tokenizer
// on a text file, printed as {"bytes", "tokens", "seconds", "mb_per_s"}, the
// shape tests/reference/encode.mjs --bench prints, so bench/tokenizer.sh can
// set the two side by side. --parse-special encodes as Hugging Face's encode
// does, recognising special tokens spelled in the text; --paragraphs encodes
// each piece between blank lines on its own, as the reference scripts'
// --paragraphs do (a long text without a pre-tokenizer is one word to BPE).

#include "tokenize_bench_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli_support.h"
#include "hub_model_option.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::cli {
namespace {

struct TokenizeBenchOptions {
  std::string directory;
  std::string text_file;
  int repeat = 1;
  bool parse_special = false;
  bool paragraphs = false;
};

// The pieces between "\n\n" separators, without them, as JavaScript's
// split("\n\n") gives them.
std::vector<std::string_view> split_paragraphs(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find("\n\n", start);
    pieces.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return pieces;
    start = end + 2;
  }
}

int run_tokenize_bench(const TokenizeBenchOptions& options) {
  const engine::Tokenizer tokenizer = engine::Tokenizer::load(options.directory);
  const std::string text = read_text_file(options.text_file, "--text");
  const engine::EncodeOptions encode_options{.add_special = false,
                                             .parse_special = options.parse_special};
  const std::vector<std::string_view> pieces =
      options.paragraphs ? split_paragraphs(text) : std::vector<std::string_view>{text};
  const auto encode_all = [&] {
    std::size_t count = 0;
    for (const std::string_view piece : pieces)
      count += tokenizer.encode(piece, encode_options).size();
    return count;
  };

  // One untimed pass first, as the reference does: it fills whatever caches
  // either implementation keeps, so both are measured warm.
  static_cast<void>(encode_all());
  std::size_t tokens = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < options.repeat; ++i)
    tokens += encode_all();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const double bytes = static_cast<double>(text.size()) * options.repeat;
  nlohmann::ordered_json result;
  result["bytes"] = text.size() * static_cast<std::size_t>(options.repeat);
  result["tokens"] = tokens;
  result["seconds"] = seconds;
  result["mb_per_s"] = seconds > 0 ? bytes / 1e6 / seconds : 0.0;
  std::cout << result.dump() << '\n';
  return 0;
}

}  // namespace

void add_tokenize_bench_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TokenizeBenchOptions>();
  CLI::App* command = app.add_subcommand(
      "tokenize-bench", "Time encoding a text file with the model's tokenizer (JSON: MB/s)");
  command->add_option("directory", options->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  command->add_option("--text", options->text_file, "Text file to encode")->required();
  command->add_option("--repeat", options->repeat, "Timed encodings of the whole file")
      ->check(CLI::PositiveNumber);
  command->add_flag("--parse-special", options->parse_special,
                    "Recognise special tokens spelled in the text, as Hugging Face's encode does");
  command->add_flag("--paragraphs", options->paragraphs,
                    "Encode each piece between blank lines on its own");
  command->callback([options, &exit_code] { exit_code = run_tokenize_bench(*options); });
}

}  // namespace quire::cli
