#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace quire::cli {

// make-model's arguments as typed. Values stay text until run_make_model, so
// that a malformed one is reported like any other invalid value: one line
// naming the option and what it takes, exit status 2.
struct MakeModelArguments {
  std::string out;
  std::optional<std::string> like;  // a preset (model_presets.h); the options below override it
  // A published config.json (published_config.h); the options below override it.
  std::optional<std::string> config_from;
  std::optional<std::string> arch, format;  // default llama, fp16
  std::optional<std::string> layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, seed,
      sliding_window, rope_scaling, rope_theta, max_position_embeddings, shards, gptq_group_size,
      head_bits, tokenizer_vocab, tokenizer_from, torch_dtype, bos, eos;
  // Gemma
  std::optional<std::string> softcap, query_pre_attn_scalar, sliding_window_pattern, text_prefix;
  bool layer_types = false;
  bool multimodal = false;
  // Phi-3
  std::optional<std::string> partial_rotary_factor;
  // Mixtral and Qwen3-MoE
  std::optional<std::string> experts, experts_per_token, expert_intermediate, mlp_only_layers;
  bool no_norm_topk_prob = false;
  bool tie = false;
  bool no_tie = false;
  bool gptq_v2 = false;
  bool gptq_no_act_order = false;
  // w4a16, w8a16, int8 and awq: inputs per group or "channel"; group actorder.
  std::optional<std::string> group_size;
  bool actorder = false;
};

// Writes a random model into arguments.out and prints one line saying what
// was written and its size. Returns the exit status: 0, 2 for invalid options
// or an OUT that is not new or empty (one line on `err`), 1 when writing fails.
int run_make_model(const MakeModelArguments& arguments, std::ostream& out, std::ostream& err);

void add_make_model_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
