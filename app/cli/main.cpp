// quire-cli: command-line entry to Quire's cache and engine.

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "page_hashes_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Quire command-line tools: inspect the paged KV cache and run local models"};
  app.name("quire-cli");
  app.set_version_flag("--version", std::string("quire-cli ") + QUIRE_VERSION);
  app.require_subcommand(1);

  int exit_code = 0;
  quire::cli::add_page_hashes_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::cerr << "quire-cli: " << error.what() << '\n';
    return 1;
  }
  return exit_code;
}
