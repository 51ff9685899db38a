#pragma once

// Private: one function per supported architecture, each in its own file.

#include "quire/engine/model/architecture.h"

namespace quire::engine::architectures {

const Architecture& llama();
const Architecture& mistral();
const Architecture& qwen2();

}  // namespace quire::engine::architectures
