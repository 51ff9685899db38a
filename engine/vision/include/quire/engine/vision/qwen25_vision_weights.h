#pragma once

// Qwen2.5-VL's vision tower and patch merger as the files hold them: located
// under either checkpoint layout, checked against config.json, and copied
// into memory of their own.
//
//   as Qwen/Qwen2.5-VL-*-Instruct publish it    as transformers >= 4.52 saves it
//   visual.patch_embed.proj.weight              model.visual.patch_embed.proj.weight
//   visual.blocks.N.{norm1,attn.qkv,...}        model.visual.blocks.N....
//   visual.merger.{ln_q,mlp.0,mlp.2}            model.visual.merger....
//
// Every block: norm1 and norm2 (RMSNorm weights), attn.qkv [3 hidden, hidden]
// and attn.proj with biases, mlp.gate_proj, up_proj and down_proj with biases.

#include <vector>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/vision/qwen25_vision_config.h"
#include "quire/engine/vision/vision_weights.h"

namespace quire::engine::vision {

// Finds the tower's tensors and checks each one's dtype (F16, BF16 or F32)
// and shape against `config`. Throws ModelError naming the tensor and the
// directory: no tower under either layout; a tensor missing or quantized; a
// shape that disagrees with vision_config (both shapes named); a block
// beyond depth. The summary's prefixes are the tower's ("visual." or
// "model.visual.") and the merger's.
VisionTensorSummary check_qwen25_vision_tensors(const io::ModelTensors& tensors,
                                                const Qwen25VisionConfig& config);

struct Qwen25VisionBlockWeights {
  std::vector<float> norm1;  // RMSNorm: x / rms(x) * w
  DenseLinear qkv;           // rows: q, then k, then v
  DenseLinear proj;
  std::vector<float> norm2;
  DenseLinear gate, up, down;
};

struct Qwen25MergerWeights {
  std::vector<float> norm;  // ln_q
  DenseLinear fc1;          // mlp.0: [merge^2 hidden] -> [merge^2 hidden]
  DenseLinear fc2;          // mlp.2: -> out_hidden_size
};

struct Qwen25VisionWeights {
  // The Conv3d of kernel = stride = (temporal, patch, patch) without bias,
  // as a linear over one flattened patch (channel, time, row, column).
  DenseLinear patch_embed;
  std::vector<Qwen25VisionBlockWeights> blocks;
  Qwen25MergerWeights merger;
};

// check_qwen25_vision_tensors(), then copies every tensor out of the files.
Qwen25VisionWeights load_qwen25_vision_weights(const io::ModelTensors& tensors,
                                               const Qwen25VisionConfig& config);

}  // namespace quire::engine::vision
