// quire-cli: command-line entry to Quire's cache and engine.
//
// Exit status: 0 on success; 2 with a one-line reason on standard error for
// input the user can fix (options, model files, token ids); 1 for anything
// else that went wrong.

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli_support.h"
#include "devices_command.h"
#include "generation_commands.h"
#include "hub_commands.h"
#include "make_model_command.h"
#include "model_commands.h"
#include "models_command.h"
#include "page_hashes_command.h"
#include "quantize_command.h"
#include "quire/engine/model_error.h"
#include "serve_command.h"
#include "tokenize_bench_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Quire command-line tools: inspect the paged KV cache and run local models"};
  app.name("quire-cli");
  app.set_version_flag("--version", std::string("quire-cli ") + QUIRE_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Out-of-memory handling can be checked without a full device: "
      "QUIRE_FAULT_ALLOCATION=N[+K] fails the Nth device allocation (and K-1 more), "
      "QUIRE_FAULT_OP=name:N[+K][,...] the Nth call of a backend op (linear, paged_attention, "
      "write_kv, ...; N+ fails every call from the Nth), QUIRE_FAULT_ALLOCATIONS_ABOVE=SIZE "
      "every allocation above SIZE (e.g. 64MiB). Calls count from when the backend is made.");

  int exit_code = 0;
  quire::cli::add_page_hashes_command(app, exit_code);
  quire::cli::add_inspect_command(app, exit_code);
  quire::cli::add_logits_command(app, exit_code);
  quire::cli::add_perplexity_command(app, exit_code);
  quire::cli::add_calibrate_kv_command(app, exit_code);
  quire::cli::add_tokenizer_commands(app, exit_code);
  quire::cli::add_tokenize_bench_command(app, exit_code);
  quire::cli::add_render_command(app, exit_code);
  quire::cli::add_make_model_command(app, exit_code);
  quire::cli::add_quantize_command(app, exit_code);
  quire::cli::add_generate_command(app, exit_code);
  quire::cli::add_chat_command(app, exit_code);
  quire::cli::add_replay_command(app, exit_code);
  quire::cli::add_bench_command(app, exit_code);
  quire::cli::add_devices_command(app, exit_code);
  quire::cli::add_serve_command(app, exit_code);
  quire::cli::add_hub_commands(app, exit_code);
  quire::cli::add_models_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    std::cerr << "quire-cli: " << error.what() << " (see quire-cli --help)\n";
    return 2;
  } catch (const quire::cli::UsageError& error) {
    std::cerr << "quire-cli: " << error.what() << '\n';
    return 2;
  } catch (const quire::engine::ModelError& error) {
    std::cerr << "quire-cli: " << error.what() << '\n';
    return 2;
  } catch (const std::invalid_argument& error) {
    std::cerr << "quire-cli: " << error.what() << '\n';
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "quire-cli: " << error.what() << '\n';
    return 1;
  }
  return exit_code;
}
