#pragma once

// Private: how ModelDescription::open reads one linear layer, one norm and
// one decoder layer from the files, checking each against config.json.

#include <string>

#include "quire/engine/runtime/model_description.h"

namespace quire::engine::detail {

LinearDescription describe_linear(const ModelDescription& model, const std::string& key,
                                  std::int64_t in, std::int64_t out, bool with_bias);

// A norm of `width` weights; where the architecture uses weights as (1 + w)
// the device holds them widened to F32 with the 1 added.
NormDescription describe_norm(const ModelDescription& model, const std::string& name,
                              std::int64_t width);

LayerDescription describe_layer(const ModelDescription& model, int index);

}  // namespace quire::engine::detail
