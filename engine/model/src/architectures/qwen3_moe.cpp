// Qwen3MoeForCausalLM (Qwen3-30B-A3B, 235B-A22B): Qwen3's attention (per-head
// q_norm and k_norm), and on each sparse layer a router ("mlp.gate") over
// num_experts experts of moe_intermediate_size, the top num_experts_per_tok
// run, renormalized only with "norm_topk_prob". A layer is sparse unless
// "mlp_only_layers" lists it, when (index + 1) is a multiple of
// "decoder_sparse_step"; the others keep a dense MLP of intermediate_size.
// With "use_sliding_window" every layer slides.

#include <algorithm>

#include "architectures.h"

namespace quire::engine::architectures {

const Architecture& qwen3_moe() {
  static const Architecture architecture{
      .name = "Qwen3MoeForCausalLM",
      .label = "Qwen3-MoE",
      .apply =
          [](ModelConfig& config) {
            config.attention_output_bias = config.attention_bias;
            config.mlp_bias = false;
            config.qk_norm = true;
            // Unlike Qwen2 and dense Qwen3, every layer slides when the
            // window is on: the MoE attention does not read max_window_layers.
            if (config.use_sliding_window.value_or(false)) apply_window_everywhere(config);
            MixtureOfExperts& moe = config.moe;
            moe.sparse_layers.assign(config.sliding_windows.size(), false);
            for (std::size_t i = 0; i < moe.sparse_layers.size(); ++i) {
              const bool listed = std::find(moe.dense_layers.begin(), moe.dense_layers.end(),
                                            static_cast<int>(i)) != moe.dense_layers.end();
              moe.sparse_layers[i] =
                  !listed && moe.experts > 0 && (static_cast<int>(i) + 1) % moe.sparse_step == 0;
            }
          },
      // Qwen3MoeConfig's defaults.
      .defaults = R"({"num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
                      "norm_topk_prob": false, "decoder_sparse_step": 1, "mlp_only_layers": []})"};
  return architecture;
}

}  // namespace quire::engine::architectures
