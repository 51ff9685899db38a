// quire-cli render: the prompt a conversation becomes for a model — its text
// with the special tokens spelled out, and the token ids — so that users can
// see exactly what the model reads, with its own chat template or a built-in
// format. Reads only the tokenizer and template files, no weights.

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "conversation_runner.h"
#include "conversation_script.h"
#include "hub_model_option.h"
#include "model_commands.h"
#include "quire/engine/generator/conversation.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::cli {
namespace {

struct RenderOptions {
  std::string directory;
  std::string conversation;
  std::string format = "auto";
  bool json = false;
};

int run_render(const RenderOptions& options) {
  const ConversationScript script = read_conversation_script(options.conversation);
  if (script.replies.size() + 1 < script.messages.size()) {
    throw UsageError(options.conversation + " has " + std::to_string(script.messages.size()) +
                     " messages and " + std::to_string(script.replies.size()) +
                     " replies; render needs a reply after every message but the last (the "
                     "\"replies\" list)");
  }
  const engine::Tokenizer tokenizer = engine::Tokenizer::load(options.directory);
  const engine::FormatChoice choice = engine::choose_chat_format(options.directory, options.format);
  if (!choice.notice.empty() && !options.json) std::cerr << "quire-cli: " << choice.notice << '\n';

  engine::Conversation conversation(choice.format, tokenizer, script.system);
  nlohmann::ordered_json turns = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < script.messages.size(); ++i) {
    const std::int64_t before = conversation.token_count();
    conversation.begin_turn(script.messages[i]);
    turns.push_back(
        {{"turn", i + 1},
         {"prompt_tokens", conversation.token_count()},
         {"new_tokens", conversation.token_count() - before + conversation.recomputed_tokens()},
         {"recomputed_tokens", conversation.recomputed_tokens()}});
    if (i < script.replies.size()) {
      const std::string& reply = script.replies[i];
      conversation.end_turn(tokenizer.encode(reply, false), false, reply);
    }
  }

  if (options.json) {
    nlohmann::ordered_json out{{"format", choice.format.name()},
                               {"format_title", choice.format.title()}};
    if (!choice.notice.empty()) out["notice"] = choice.notice;
    out["text"] = conversation.text();
    out["ids"] = conversation.ids();
    out["turns"] = turns;
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  std::cerr << "format: " << choice.format.title() << "; " << conversation.token_count()
            << " tokens\n";
  std::cout << conversation.text() << '\n' << nlohmann::json(conversation.ids()).dump() << '\n';
  return 0;
}

}  // namespace

void add_render_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<RenderOptions>();
  CLI::App* command = app.add_subcommand(
      "render", "Print the prompt a conversation becomes: its text and its token ids");
  command->add_option("directory", options->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  command->add_option("--conversation", options->conversation, kConversationFileHelp)->required();
  command->add_option("--format", options->format, kFormatHelp)->capture_default_str();
  command->add_flag("--json", options->json,
                    "Print one JSON object: format, text, ids and what each turn added");
  command->callback([options, &exit_code] { exit_code = run_render(*options); });
}

}  // namespace quire::cli
