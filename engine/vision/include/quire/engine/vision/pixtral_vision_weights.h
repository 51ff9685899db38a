#pragma once

// Mistral Small 3.x's vision tower (Pixtral) and projector (Mistral 3) as the
// files hold them: located under either checkpoint layout, checked against
// config.json, and copied into memory of their own.
//
//   as mistralai publishes it        as transformers >= 4.52 saves it
//   vision_tower.*                   model.vision_tower.*
//   multi_modal_projector.*          model.multi_modal_projector.*

#include <vector>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/vision/pixtral_vision_config.h"
#include "quire/engine/vision/vision_weights.h"

namespace quire::engine::vision {

struct PixtralLayerWeights {
  std::vector<float> attention_norm;  // RMSNorm weight
  DenseLinear q, k, v, o;             // no biases
  std::vector<float> ffn_norm;
  DenseLinear gate, up, down;  // no biases
};

struct PixtralWeights {
  // patch_conv, a stride-patch convolution without bias, as a linear over one
  // flattened patch (channel, row, column).
  DenseLinear patch_conv;
  std::vector<float> ln_pre;  // RMSNorm weight
  // Only the layers the projector's input needs (vision_feature_layer).
  std::vector<PixtralLayerWeights> layers;
};

struct Mistral3ProjectorWeights {
  std::vector<float> norm;    // RMSNorm weight, eps = text_config.rms_norm_eps
  DenseLinear merging_layer;  // [vision, vision x merge^2], no bias
  DenseLinear linear_1;       // [text, vision], bias when multimodal_projector_bias
  DenseLinear linear_2;       // [text, text]
};

struct Mistral3VisionWeights {
  PixtralWeights tower;
  Mistral3ProjectorWeights projector;
};

// Finds the tower's tensors and checks each one's dtype (F16, BF16 or F32)
// and shape against `config`. Throws ModelError naming the tensor and the
// directory: no tower under either layout; a tensor missing (or quantized,
// which Quire does not run for the tower); a shape that disagrees with
// config.json (both shapes named); a layer beyond num_hidden_layers; a bias
// that multimodal_projector_bias says is absent, or the other way round.
VisionTensorSummary check_mistral3_vision_tensors(const io::ModelTensors& tensors,
                                                  const Mistral3VisionConfig& config);

// check_mistral3_vision_tensors(), then copies every tensor the image's
// embeddings need out of the files.
Mistral3VisionWeights load_mistral3_vision_weights(const io::ModelTensors& tensors,
                                                   const Mistral3VisionConfig& config);

}  // namespace quire::engine::vision
