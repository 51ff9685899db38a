#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace quire::cli {

// quantize's arguments as typed; values stay text until run_quantize, so a
// malformed one is reported like any other invalid value.
struct QuantizeArguments {
  std::string in;
  std::string out;
  std::string format;
  std::optional<std::string> head_bits, group_size, seed;
  // EXL3, W4A16 and W8A16.
  std::optional<std::string> calibration, calibration_tokens;
  // EXL3 only.
  std::optional<std::string> out_scales, threads;
  // W4A16 and W8A16 only.
  bool actorder = false;
};

// Reads the FP16/BF16 model directory arguments.in and writes arguments.out
// (new or empty): every linear layer of every decoder layer in EXL2 (mixed
// widths around the target, a seeded act-order permutation), EXL3 (whole
// widths per tensor averaging the target, as exllamav3 allocates them; the
// head too when the model has its own) or compressed-tensors' integers
// (W4A16, W8A16: llm-compressor's layout, GPTQ with a calibration text),
// embeddings and norms in FP16, the tokenizer and configuration files
// copied, config.json with a quantization_config (and for EXL3
// quantization_config.json, as exllamav3 writes it). EXL3 and the integer
// formats report their progress on `err`, a line per tensor. Prints
// one line on `out` saying what was written. Returns the exit status: 0; 2
// with one line on `err` for options or input it cannot use; 1 when writing
// fails.
int run_quantize(const QuantizeArguments& arguments, std::ostream& out, std::ostream& err);

void add_quantize_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
