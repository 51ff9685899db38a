#pragma once

// Private: the random tensors of a generated model, added to a writer in the
// order a reader would list them (embeddings, layer by layer, final norm, head).

#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::engine::modelgen::detail {

// Expects a validated spec.
void add_model_tensors(const RandomModelSpec& spec, io::SafetensorsWriter& writer);

}  // namespace quire::engine::modelgen::detail
