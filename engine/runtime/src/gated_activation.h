#pragma once

// Private: the backend's name for a model's MLP activation.

#include "quire/engine/model/model_config.h"
#include "quire/kernels/backend.h"

namespace quire::engine::detail {

inline kernels::GatedActivation gated_activation_of(Activation activation) {
  return activation == Activation::GeluTanh ? kernels::GatedActivation::GeluTanh
                                            : kernels::GatedActivation::Silu;
}

}  // namespace quire::engine::detail
