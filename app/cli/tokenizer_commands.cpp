// quire-cli tokenize / detokenize: the model's own tokenizer, from the command line.

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "hub_model_option.h"
#include "model_commands.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::cli {
namespace {

struct TokenizeOptions {
  std::string directory;
  std::string text;
  bool no_bos = false;
  bool parse_special = false;
};

struct DetokenizeOptions {
  std::string directory;
  std::string tokens;
};

int run_tokenize(const TokenizeOptions& options) {
  const engine::Tokenizer tokenizer = engine::Tokenizer::load(options.directory);
  // Typed text keeps special tokens' spellings as text (what chat input gets);
  // --parse-special turns them into their ids, as Hugging Face's encode does,
  // so a rendered prompt's ids can be checked.
  engine::EncodeOptions encode_options;
  encode_options.add_special = tokenizer.adds_bos() && !options.no_bos;
  encode_options.parse_special = options.parse_special;
  const std::vector<std::int32_t> ids = tokenizer.encode(options.text, encode_options);
  std::cout << nlohmann::json(ids).dump() << '\n';
  return 0;
}

int run_detokenize(const DetokenizeOptions& options) {
  const engine::Tokenizer tokenizer = engine::Tokenizer::load(options.directory);
  const std::vector<std::int32_t> ids = parse_token_list(options.tokens);
  for (const std::int32_t id : ids) {
    if (id >= tokenizer.vocab_size()) {
      throw UsageError("token id " + std::to_string(id) + " lies outside the vocabulary of " +
                       std::to_string(tokenizer.vocab_size()));
    }
  }
  std::cout << tokenizer.decode(ids) << '\n';
  return 0;
}

}  // namespace

void add_tokenizer_commands(CLI::App& app, int& exit_code) {
  auto tokenize = std::make_shared<TokenizeOptions>();
  CLI::App* encode = app.add_subcommand(
      "tokenize", "Print the token ids of a text as a JSON array (with BOS if the model adds it)");
  encode->add_option("directory", tokenize->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  encode->add_option("--text", tokenize->text, "Text to tokenize")->required();
  encode->add_flag("--no-bos", tokenize->no_bos, "Do not add the BOS token");
  encode->add_flag("--parse-special", tokenize->parse_special,
                   "Turn special tokens spelled in the text (<|im_start|>) into their ids, as "
                   "Hugging Face's encode does; without it they are plain text");
  encode->callback([tokenize, &exit_code] { exit_code = run_tokenize(*tokenize); });

  auto detokenize = std::make_shared<DetokenizeOptions>();
  CLI::App* decode = app.add_subcommand("detokenize", "Print the text of token ids");
  decode->add_option("directory", detokenize->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  decode->add_option("--tokens", detokenize->tokens, "Token ids, e.g. 1,2,3")->required();
  decode->callback([detokenize, &exit_code] { exit_code = run_detokenize(*detokenize); });
}

}  // namespace quire::cli
