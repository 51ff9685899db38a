#pragma once

namespace CLI {
class App;
}

namespace quire::cli {

// tokenize-bench: how fast the model's tokenizer encodes a text file.
void add_tokenize_bench_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
