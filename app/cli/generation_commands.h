#pragma once

namespace CLI {
class App;
}

namespace quire::cli {

// generate, chat, replay and bench: commands that run the generator.
void add_generate_command(CLI::App& app, int& exit_code);
void add_chat_command(CLI::App& app, int& exit_code);
void add_replay_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
