#pragma once

namespace CLI {
class App;
}

namespace quire::cli {

// inspect, logits, perplexity, tokenize and detokenize: commands over a model directory.
void add_inspect_command(CLI::App& app, int& exit_code);
void add_logits_command(CLI::App& app, int& exit_code);
// perplexity: how well the model predicts a text, with any cache coding.
void add_perplexity_command(CLI::App& app, int& exit_code);
// calibrate-kv: calibrated FP8 K/V scales from a text, into a copy of the model.
void add_calibrate_kv_command(CLI::App& app, int& exit_code);
void add_tokenizer_commands(CLI::App& app, int& exit_code);
// render: a conversation as the model reads it (text and ids).
void add_render_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
