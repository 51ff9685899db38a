#pragma once

// Gemma 3's vision tower and projector as the files hold them: located under
// either checkpoint layout, checked against config.json, and copied into
// memory of their own.
//
//   as google/gemma-3-*-it publish it     as transformers >= 4.52 saves it
//   vision_tower.vision_model.*           model.vision_tower.vision_model.*
//   multi_modal_projector.*               model.multi_modal_projector.*
//
// The tower is dense FP16, BF16 or FP32 in every download Quire has seen,
// quantized ones included (exllamav2's and exllamav3's converters and GPTQ
// leave it alone).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/vision/gemma3_vision_config.h"
#include "quire/kernels/dtype.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::vision {

// Where one download keeps the two parts.
struct VisionTensorPrefixes {
  std::string tower;      // "vision_tower.vision_model." or "model.vision_tower.vision_model."
  std::string projector;  // "multi_modal_projector." or "model.multi_modal_projector."
};

// The tensors' prefixes, sizes and dtype, checked without reading their data.
struct VisionTensorSummary {
  VisionTensorPrefixes prefixes;
  kernels::DType dtype = kernels::DType::BF16;  // of the tower's patch embedding
  std::int64_t parameters = 0;
  std::int64_t bytes = 0;  // in the files
  // In memory once loaded: load_gemma3_vision_weights keeps the linears'
  // weights in their file dtype and widens the rest (biases, norms, the
  // position embedding) to FP32.
  std::int64_t memory_bytes = 0;
};

// Finds the tower's tensors and checks each one's dtype (F16, BF16 or F32)
// and shape against `config`. Throws ModelError naming the tensor and the
// directory: no tower under either layout; a tensor missing (or quantized,
// which Quire does not run for the tower); a shape that disagrees with
// vision_config (both shapes named).
VisionTensorSummary check_gemma3_vision_tensors(const io::ModelTensors& tensors,
                                                const Gemma3VisionConfig& config);

// y = x W^T + b with W [out, in] row-major, kept in the file's dtype, and the
// bias widened to FP32.
struct DenseLinear {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  kernels::DType dtype = kernels::DType::F16;
  std::vector<std::byte> weight;  // operator new's alignment suits every dtype
  std::vector<float> bias;        // empty: none

  kernels::LinearWeight view() const;
};

struct LayerNormWeights {
  std::vector<float> weight;
  std::vector<float> bias;
};

struct SiglipLayerWeights {
  LayerNormWeights norm1;
  DenseLinear q, k, v, out;
  LayerNormWeights norm2;
  DenseLinear fc1, fc2;
};

struct SiglipWeights {
  // The stride-patch convolution as a linear over one flattened patch
  // (channel, row, column), which is how Conv2d lays its [out, C, p, p] weight.
  DenseLinear patch_embedding;
  std::vector<float> position_embedding;  // [patches, hidden]
  std::vector<SiglipLayerWeights> layers;
  LayerNormWeights post_norm;
};

struct Gemma3ProjectorWeights {
  std::vector<float> norm_weight;  // mm_soft_emb_norm, used as (1 + w)
  // mm_input_projection_weight is stored [vision, text] and multiplied as
  // x W; held transposed, [text, vision], so that it is an ordinary linear.
  DenseLinear projection;
};

struct Gemma3VisionWeights {
  SiglipWeights tower;
  Gemma3ProjectorWeights projector;
};

// check_gemma3_vision_tensors(), then copies every tensor out of the files.
Gemma3VisionWeights load_gemma3_vision_weights(const io::ModelTensors& tensors,
                                               const Gemma3VisionConfig& config);

}  // namespace quire::engine::vision
