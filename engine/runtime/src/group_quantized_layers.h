#pragma once

// Private: the formats Quire repacks into GPTQ's layout at load (AutoAWQ's
// GEMM checkpoints, compressed-tensors' pack-quantized and naive int8),
// described from the files and the config, and repacked for the loader.

#include <string>

#include "quire/engine/formats/gptq_repacked.h"
#include "quire/engine/runtime/model_description.h"

namespace quire::engine::detail {

// Throws ModelError when config.json's quantization_config describes a
// format or scheme Quire does not run (naming it and what Quire runs).
void check_quantization_supported(const ModelDescription& model);

// Describes `key` into `linear` (its shape and bias already set) when its
// tensors are AWQ's (a qweight under quant_method "awq"), pack-quantized
// (a weight_packed) or naive int8 (an I8 weight); false otherwise.
bool describe_group_quantized(const ModelDescription& model, const std::string& key,
                              LinearDescription& linear);

// The layer's tensors rewritten into GPTQ's layout (linear.gptq), for the
// loader; `linear` is a description of one of those formats.
formats::GptqRepacked repack_group_quantized(const ModelDescription& model,
                                             const LinearDescription& linear);

}  // namespace quire::engine::detail
